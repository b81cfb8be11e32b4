//! Results that are more than JSON: images, audio, embedded resources and links to
//! resources, beside text.
//!
//! A tool whose result type is [`Content`] or `Vec<Content>` returns content blocks. Its
//! definition says so ([`ToolDefinition::returns_content`](crate::ToolDefinition)), its
//! outcome too ([`ToolOutcome::content`](crate::ToolOutcome::content)), and each way out
//! carries the blocks in its nearest form: MCP as they are; Anthropic as text, image and
//! PDF document blocks; OpenAI's Responses API as text, image and file parts; Gemini as
//! inline data beside the function response; OpenAI's Chat Completions (text only) and
//! anything else a provider cannot take as a short description the model can read.
//!
//! ```rust,standalone_crate
//! use toolgate::content::Content;
//! use toolgate::prelude::*;
//!
//! /// Draw the clinic's logo.
//! #[tool(permission = "public", read_only)]
//! fn logo() -> Vec<Content> {
//!     vec![Content::text("The clinic's logo:"), Content::image(b"\x89PNG...", "image/png")]
//! }
//! # fn main() {}
//! ```

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::error::ToolError;

/// One block of a tool's result, in MCP's shape (`{"type": "image", "data", "mimeType"}`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
#[non_exhaustive]
pub enum Content {
    /// Text.
    Text {
        /// The text.
        text: String,
    },
    /// An image.
    Image {
        /// The image, base64.
        data: String,
        /// Its media type, e.g. `image/png`.
        #[serde(rename = "mimeType")]
        mime_type: String,
    },
    /// A sound.
    Audio {
        /// The sound, base64.
        data: String,
        /// Its media type, e.g. `audio/wav`.
        #[serde(rename = "mimeType")]
        mime_type: String,
    },
    /// A resource with its contents.
    Resource {
        /// The resource.
        resource: Resource,
    },
    /// A link to a resource the client may read.
    ResourceLink {
        /// Where it is.
        uri: String,
        /// Its name.
        name: String,
        /// What it is.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        description: Option<String>,
        /// Its media type.
        #[serde(default, rename = "mimeType", skip_serializing_if = "Option::is_none")]
        mime_type: Option<String>,
    },
}

/// An embedded resource: its address and its contents, as text or as base64 bytes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Resource {
    /// Where it is.
    pub uri: String,
    /// Its media type.
    #[serde(default, rename = "mimeType", skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
    /// Its contents as text ...
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    /// ... or as base64 bytes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub blob: Option<String>,
}

impl Content {
    /// A text block.
    pub fn text(text: impl Into<String>) -> Self {
        Content::Text { text: text.into() }
    }

    /// An image from its bytes (encoded here).
    pub fn image(bytes: impl AsRef<[u8]>, mime_type: impl Into<String>) -> Self {
        Content::Image {
            data: STANDARD.encode(bytes),
            mime_type: mime_type.into(),
        }
    }

    /// A sound from its bytes (encoded here).
    pub fn audio(bytes: impl AsRef<[u8]>, mime_type: impl Into<String>) -> Self {
        Content::Audio {
            data: STANDARD.encode(bytes),
            mime_type: mime_type.into(),
        }
    }

    /// An embedded resource holding text.
    pub fn resource_text(
        uri: impl Into<String>,
        mime_type: impl Into<String>,
        text: impl Into<String>,
    ) -> Self {
        Content::Resource {
            resource: Resource {
                uri: uri.into(),
                mime_type: Some(mime_type.into()),
                text: Some(text.into()),
                blob: None,
            },
        }
    }

    /// An embedded resource holding bytes (encoded here).
    pub fn resource_bytes(
        uri: impl Into<String>,
        mime_type: impl Into<String>,
        bytes: impl AsRef<[u8]>,
    ) -> Self {
        Content::Resource {
            resource: Resource {
                uri: uri.into(),
                mime_type: Some(mime_type.into()),
                text: None,
                blob: Some(STANDARD.encode(bytes)),
            },
        }
    }

    /// A link to a resource.
    pub fn link(uri: impl Into<String>, name: impl Into<String>) -> Self {
        Content::ResourceLink {
            uri: uri.into(),
            name: name.into(),
            description: None,
            mime_type: None,
        }
    }

    /// What a model that cannot take this block reads instead: the text itself, a
    /// resource's text, or a line naming what is there.
    pub fn describe(&self) -> String {
        match self {
            Content::Text { text } => text.clone(),
            Content::Image { data, mime_type } => {
                format!("[image {mime_type}, {} bytes]", decoded_len(data))
            }
            Content::Audio { data, mime_type } => {
                format!("[audio {mime_type}, {} bytes]", decoded_len(data))
            }
            Content::Resource { resource } => match (&resource.text, &resource.blob) {
                (Some(text), _) => format!("[resource {}]\n{text}", resource.uri),
                (None, Some(blob)) => format!(
                    "[resource {} {}, {} bytes]",
                    resource.uri,
                    resource
                        .mime_type
                        .as_deref()
                        .unwrap_or("application/octet-stream"),
                    decoded_len(blob)
                ),
                (None, None) => format!("[resource {}]", resource.uri),
            },
            Content::ResourceLink { uri, name, .. } => format!("[resource link {name}: {uri}]"),
        }
    }
}

/// The blocks of a result that is content, checked: a tool that says it returns content
/// but returned something else fails with an error that says so.
pub(crate) fn blocks_of(value: &Value) -> Result<Vec<Content>, ToolError> {
    let blocks = match value {
        Value::Array(_) => value.clone(),
        object @ Value::Object(_) => Value::Array(vec![object.clone()]),
        _ => Value::Null,
    };
    let blocks: Vec<Content> = serde_json::from_value(blocks).map_err(|error| {
        ToolError::execution(format!(
            "the tool's result is not a list of content blocks: {error}"
        ))
    })?;
    for block in &blocks {
        check_base64(block)?;
    }
    Ok(blocks)
}

fn check_base64(block: &Content) -> Result<(), ToolError> {
    let data = match block {
        Content::Image { data, .. } | Content::Audio { data, .. } => Some(data),
        Content::Resource { resource } => resource.blob.as_ref(),
        _ => None,
    };
    match data {
        Some(data) if STANDARD.decode(data).is_err() => Err(ToolError::execution(
            "the tool's result holds a content block whose data is not base64",
        )),
        _ => Ok(()),
    }
}

/// Bytes of base64 `data`, without decoding it.
fn decoded_len(data: &str) -> usize {
    let padding = data.bytes().rev().take_while(|byte| *byte == b'=').count();
    (data.len() / 4 * 3).saturating_sub(padding)
}

/// The text of a list of blocks for a reader of text only: text as is, the rest described,
/// one block per line.
pub fn describe_all(blocks: &[Content]) -> String {
    blocks
        .iter()
        .map(Content::describe)
        .collect::<Vec<_>>()
        .join("\n")
}

/// Implemented by the result types that are content (sealed): `#[tool]` marks a tool
/// returning one of them as returning content.
pub trait ContentResult: sealed::Sealed {}
impl ContentResult for Content {}
impl ContentResult for Vec<Content> {}

mod sealed {
    pub trait Sealed {}
    impl Sealed for super::Content {}
    impl Sealed for Vec<super::Content> {}
}
