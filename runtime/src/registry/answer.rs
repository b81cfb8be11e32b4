//! What a single call's future gives: its [`ToolOutcome`], or, for a caller that writes the
//! outcome out as JSON (the HTTP endpoint), an [`Answer`] whose result may be text already.

use std::time::Duration;

use smol_str::SmolStr;

use crate::call::ToolOutcome;
use crate::error::ToolError;
use crate::output::{Produced, ResultForm, into_tool_result};

/// What a call's future ends with: made from its [`Answer`], or from an outcome made
/// elsewhere (on a path that waited, where results are values).
pub(crate) trait Ending: From<ToolOutcome> {
    /// The form a tool that runs in place is asked for its result in.
    const FORM: ResultForm;

    /// Whether the call is made only if its tool runs in place with its arguments read
    /// straight into its parameters, and else given up ([`given_up`](Self::given_up)).
    const ONLY_IN_PLACE: bool = false;

    /// The ending of a call that ended so.
    fn made(answer: Answer) -> Self;

    /// The ending of a call given up: found no tool that runs in place, or arguments its
    /// exact reader did not take whole, before anything was decided or recorded.
    fn given_up() -> Self {
        unreachable!("only a call made only in place is given up")
    }
}

impl Ending for ToolOutcome {
    const FORM: ResultForm = ResultForm::Value;

    #[inline(always)]
    fn made(answer: Answer) -> Self {
        ToolOutcome::from(answer)
    }
}

/// A call's outcome, whose result may be its value's JSON text (see [`ResultForm::Text`]):
/// what a caller that writes the outcome out needs, without the value made and dropped.
pub(crate) struct Answer {
    /// The call's id.
    pub(crate) call_id: SmolStr,
    /// The tool's name.
    pub(crate) tool: SmolStr,
    /// The result, as a value or as its text, or the error.
    pub(crate) result: Result<Produced, ToolError>,
    /// How long the call took.
    pub(crate) duration: Duration,
    /// The tool's UI component.
    pub(crate) ui: Option<String>,
    /// Whether the result is content blocks.
    pub(crate) is_content: bool,
}

impl Ending for Answer {
    const FORM: ResultForm = ResultForm::Text;

    #[inline(always)]
    fn made(answer: Answer) -> Self {
        answer
    }
}

impl From<ToolOutcome> for Answer {
    fn from(outcome: ToolOutcome) -> Self {
        Answer {
            call_id: outcome.call_id,
            tool: outcome.tool,
            result: outcome.result.map(Produced::Value),
            duration: outcome.duration,
            ui: outcome.ui,
            is_content: outcome.is_content,
        }
    }
}

impl From<Answer> for ToolOutcome {
    #[inline(always)]
    fn from(answer: Answer) -> Self {
        ToolOutcome {
            call_id: answer.call_id,
            tool: answer.tool,
            result: into_tool_result(answer.result),
            duration: answer.duration,
            ui: answer.ui,
            is_content: answer.is_content,
        }
    }
}
