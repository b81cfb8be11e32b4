//! Content blocks in each provider's nearest form: what a provider cannot take becomes a
//! line of text describing it ([`Content::describe`]), so the model is never told about an
//! image it does not get without being told it was left out.

use serde_json::{Value, json};

use crate::content::{Content, Resource};

/// Images Anthropic and OpenAI take inline.
const INLINE_IMAGE_TYPES: [&str; 4] = ["image/png", "image/jpeg", "image/gif", "image/webp"];

fn inline_image(mime_type: &str) -> bool {
    INLINE_IMAGE_TYPES.contains(&mime_type)
}

/// The bytes (base64) of a PDF resource, which Anthropic and OpenAI take as a document.
fn pdf(resource: &Resource) -> Option<&str> {
    match resource.mime_type.as_deref() {
        Some("application/pdf") => resource.blob.as_deref(),
        _ => None,
    }
}

/// Anthropic `tool_result` content: text, image and PDF document blocks.
pub(crate) fn anthropic(blocks: &[Content]) -> Value {
    let blocks = blocks.iter().map(|block| match block {
        Content::Image { data, mime_type } if inline_image(mime_type) => json!({
            "type": "image",
            "source": {"type": "base64", "media_type": mime_type, "data": data}
        }),
        Content::Resource { resource } if pdf(resource).is_some() => json!({
            "type": "document",
            "source": {"type": "base64", "media_type": "application/pdf", "data": pdf(resource)}
        }),
        other => json!({"type": "text", "text": other.describe()}),
    });
    Value::Array(blocks.collect())
}

/// OpenAI Responses `function_call_output` output: text, image and file parts.
pub(crate) fn openai_responses(blocks: &[Content]) -> Value {
    let parts = blocks.iter().map(|block| match block {
        Content::Image { data, mime_type } if inline_image(mime_type) => json!({
            "type": "input_image",
            "image_url": format!("data:{mime_type};base64,{data}")
        }),
        Content::Resource { resource } if pdf(resource).is_some() => json!({
            "type": "input_file",
            "filename": file_name(&resource.uri),
            "file_data": format!("data:application/pdf;base64,{}", pdf(resource).unwrap_or_default())
        }),
        other => json!({"type": "input_text", "text": other.describe()}),
    });
    Value::Array(parts.collect())
}

/// Media Gemini takes inline in a function response, by exact type: anything else (SVG, a
/// type with parameters or line breaks, a made-up type) is described in text instead.
const GEMINI_INLINE_TYPES: [&str; 15] = [
    "image/png",
    "image/jpeg",
    "image/webp",
    "image/heic",
    "image/heif",
    "audio/wav",
    "audio/mp3",
    "audio/mpeg",
    "audio/aiff",
    "audio/aac",
    "audio/ogg",
    "audio/flac",
    "audio/webm",
    "audio/x-wav",
    "application/pdf",
];

fn gemini_inline(mime_type: &str) -> bool {
    GEMINI_INLINE_TYPES.contains(&mime_type)
}

/// Gemini: the text in the function response, the media as `inlineData` parts of it.
pub(crate) fn gemini(blocks: &[Content]) -> (String, Vec<Value>) {
    let mut text = Vec::new();
    let mut parts = Vec::new();
    for block in blocks {
        let inline = match block {
            Content::Image { data, mime_type } | Content::Audio { data, mime_type } => {
                Some((mime_type.as_str(), data.as_str()))
            }
            Content::Resource { resource } => resource.blob.as_deref().map(|blob| {
                let mime_type = resource.mime_type.as_deref();
                (mime_type.unwrap_or("application/octet-stream"), blob)
            }),
            _ => None,
        };
        match inline.filter(|(mime_type, _)| gemini_inline(mime_type)) {
            Some((mime_type, data)) => {
                parts.push(json!({"inlineData": {"mimeType": mime_type, "data": data}}));
            }
            None => text.push(block.describe()),
        }
    }
    (text.join("\n"), parts)
}

/// The last segment of a URI, for a file's name.
fn file_name(uri: &str) -> &str {
    uri.rsplit('/')
        .find(|segment| !segment.is_empty())
        .unwrap_or("file.pdf")
}
