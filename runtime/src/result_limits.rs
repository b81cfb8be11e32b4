//! How much of a content result is sent on: at most so many blocks, so many bytes of text
//! and so many bytes of media (images, sound, embedded files), whatever the mix. What does
//! not fit is left out, and a last text block says what, so whoever reads the result knows
//! it is incomplete.

use crate::content::{Content, Resource};
use crate::util::bounded::clip;

/// Bounds on one content result (a tool returning [`Content`] blocks), applied by the
/// registry to what every front end sends
/// ([`RegistryBuilder::result_limits`](crate::RegistryBuilder::result_limits)) and, tighter,
/// by an agent to what its model reads
/// ([`AgentBuilder::result_limits`](crate::agent::AgentBuilder::result_limits)).
///
/// Blocks are kept in order while they fit; a text block that does not fit whole is cut;
/// an image, sound or file that does not fit is left out whole. When anything was left
/// out, a last text block says how many blocks of which kind and how many bytes.
///
/// ```
/// use toolgate::ResultLimits;
///
/// let limits = ResultLimits { max_media_bytes: 1024 * 1024, ..ResultLimits::default() };
/// # let _ = limits;
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ResultLimits {
    /// Most bytes of text over all blocks (text blocks, embedded text, names and links).
    pub max_text_bytes: usize,
    /// Most bytes of media over all blocks, counted as sent (base64).
    pub max_media_bytes: usize,
    /// Most blocks (the closing note about what was left out comes on top).
    pub max_blocks: usize,
}

impl Default for ResultLimits {
    /// What a registry sends: 1 MiB of text, 16 MiB of media, 256 blocks.
    fn default() -> Self {
        ResultLimits {
            max_text_bytes: 1024 * 1024,
            max_media_bytes: 16 * 1024 * 1024,
            max_blocks: 256,
        }
    }
}

/// Below this much room, a text block is left out rather than cut to a stub.
const SMALLEST_CUT: usize = 64;

/// `blocks` within `limits`, with a closing note when anything was left out.
pub(crate) fn bound(blocks: Vec<Content>, limits: &ResultLimits) -> Vec<Content> {
    let total = blocks.len();
    let mut room = Room {
        text: limits.max_text_bytes,
        media: limits.max_media_bytes,
    };
    let mut kept = Vec::with_capacity(total.min(limits.max_blocks));
    let mut left_out = LeftOut::default();
    for block in blocks {
        if kept.len() >= limits.max_blocks {
            left_out.add(&block);
            continue;
        }
        match room.take(block) {
            Ok(block) => kept.push(block),
            Err(block) => left_out.add(&block),
        }
    }
    if left_out.blocks > 0 {
        kept.push(Content::text(left_out.note(total, limits)));
    }
    kept
}

/// What is left to fill.
struct Room {
    text: usize,
    media: usize,
}

impl Room {
    /// The block as it fits (a text cut to the room left), or back when it does not.
    fn take(&mut self, block: Content) -> Result<Content, Content> {
        let (text, media) = weight(&block);
        if text <= self.text && media <= self.media {
            self.text -= text;
            self.media -= media;
            return Ok(block);
        }
        match block {
            Content::Text { text } if media == 0 && self.text >= SMALLEST_CUT => {
                let cut = cut_to(&text, self.text);
                self.text = self.text.saturating_sub(cut.len());
                Ok(Content::Text { text: cut })
            }
            block => Err(block),
        }
    }
}

/// `text` cut so that it and the note of what was cut fit in `room` bytes.
fn cut_to(text: &str, room: usize) -> String {
    let note_room = 48;
    clip(text, room.saturating_sub(note_room)).into_owned()
}

/// Bytes of text and bytes of media a block sends.
fn weight(block: &Content) -> (usize, usize) {
    match block {
        Content::Text { text } => (text.len(), 0),
        Content::Image { data, mime_type } | Content::Audio { data, mime_type } => {
            (mime_type.len(), data.len())
        }
        Content::Resource { resource } => resource_weight(resource),
        Content::ResourceLink {
            uri,
            name,
            description,
            mime_type,
        } => {
            let optional = |text: &Option<String>| text.as_ref().map_or(0, String::len);
            let text = uri.len() + name.len() + optional(description) + optional(mime_type);
            (text, 0)
        }
    }
}

fn resource_weight(resource: &Resource) -> (usize, usize) {
    let optional = |text: &Option<String>| text.as_ref().map_or(0, String::len);
    let text = resource.uri.len() + optional(&resource.mime_type) + optional(&resource.text);
    (text, optional(&resource.blob))
}

/// What was left out, by kind.
#[derive(Default)]
struct LeftOut {
    blocks: usize,
    bytes: usize,
    kinds: std::collections::BTreeMap<&'static str, usize>,
}

impl LeftOut {
    fn add(&mut self, block: &Content) {
        let (text, media) = weight(block);
        self.blocks += 1;
        self.bytes += text + media;
        *self.kinds.entry(kind(block)).or_default() += 1;
    }

    fn note(&self, total: usize, limits: &ResultLimits) -> String {
        let kinds: Vec<String> = self
            .kinds
            .iter()
            .map(|(kind, count)| format!("{count} {kind}"))
            .collect();
        format!(
            "[{} of {total} content blocks left out ({}; {} bytes): a result may hold at most {} blocks, {} bytes of text and {} bytes of media]",
            self.blocks,
            kinds.join(", "),
            self.bytes,
            limits.max_blocks,
            limits.max_text_bytes,
            limits.max_media_bytes,
        )
    }
}

fn kind(block: &Content) -> &'static str {
    match block {
        Content::Text { .. } => "text",
        Content::Image { .. } => "image",
        Content::Audio { .. } => "audio",
        Content::Resource { .. } => "resource",
        Content::ResourceLink { .. } => "resource link",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SMALL: ResultLimits = ResultLimits {
        max_text_bytes: 200,
        max_media_bytes: 1000,
        max_blocks: 4,
    };

    fn note_of(blocks: &[Content]) -> &str {
        match blocks.last() {
            Some(Content::Text { text }) => text,
            other => panic!("no closing note: {other:?}"),
        }
    }

    #[test]
    fn what_fits_is_kept_as_it_is() {
        let blocks = vec![Content::text("hi"), Content::image([1u8; 30], "image/png")];
        assert_eq!(bound(blocks.clone(), &SMALL), blocks);
    }

    #[test]
    fn a_large_image_is_left_out_and_the_note_says_so() {
        let blocks = vec![
            Content::text("the scan:"),
            Content::image(vec![0u8; 12 * 1024], "image/png"),
        ];
        let bounded = bound(blocks, &SMALL);
        assert_eq!(bounded.len(), 2);
        assert_eq!(bounded[0], Content::text("the scan:"));
        let note = note_of(&bounded);
        assert!(
            note.starts_with("[1 of 2 content blocks left out (1 image;"),
            "{note}"
        );
    }

    #[test]
    fn many_small_blocks_are_bounded_in_number() {
        let blocks: Vec<Content> = (0..100_000).map(|_| Content::text("x")).collect();
        let bounded = bound(blocks, &SMALL);
        assert_eq!(bounded.len(), SMALL.max_blocks + 1);
        assert!(
            note_of(&bounded).starts_with("[99996 of 100000 content blocks left out (99996 text;")
        );
    }

    #[test]
    fn a_long_text_is_cut_to_the_room_left() {
        let bounded = bound(vec![Content::text("y".repeat(5000))], &SMALL);
        let Content::Text { text } = &bounded[0] else {
            panic!("{bounded:?}")
        };
        assert!(text.len() <= SMALL.max_text_bytes, "{}", text.len());
        assert!(text.contains("more bytes left out"), "{text}");
        assert_eq!(bounded.len(), 1, "nothing was left out whole");
    }

    #[test]
    fn media_in_embedded_files_and_sound_counts_too() {
        let blocks = vec![
            Content::audio(vec![0u8; 600], "audio/wav"),
            Content::resource_bytes("file:///a.bin", "application/octet-stream", [0u8; 600]),
        ];
        let bounded = bound(blocks, &SMALL);
        assert!(matches!(bounded[0], Content::Audio { .. }));
        assert!(note_of(&bounded).contains("1 resource"));
    }
}
