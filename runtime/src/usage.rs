//! Tokens a model read and wrote: counted by the agent loop, reported in its events.

use serde::{Deserialize, Serialize};

/// Tokens read and written.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Usage {
    /// Tokens of the prompts.
    pub input_tokens: u64,
    /// Tokens of the replies.
    pub output_tokens: u64,
}

impl std::ops::AddAssign for Usage {
    fn add_assign(&mut self, other: Usage) {
        self.input_tokens += other.input_tokens;
        self.output_tokens += other.output_tokens;
    }
}
