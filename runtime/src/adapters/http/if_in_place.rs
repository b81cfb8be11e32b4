//! What the HTTP endpoint asks of a call whose arguments it cut out of a request body on a
//! guess: the call is made only if its tool runs in place, else given up untouched.

use crate::call::ToolOutcome;
use crate::output::ResultForm;
use crate::registry::{Answer, Ending};

/// The answer of a call made only if its tool runs in place, its arguments read straight
/// from where they lie: none if it was given up. For arguments that may not be what they
/// seem (the HTTP endpoint's text cut out of a body on the guess that it is one JSON
/// object, which only a reader that takes the whole of it confirms); the caller makes a
/// call given up the usual way.
pub(crate) struct IfInPlace(pub(crate) Option<Answer>);

/// Taken on and ended on a path that waited (for an approval, say).
impl From<ToolOutcome> for IfInPlace {
    fn from(outcome: ToolOutcome) -> Self {
        IfInPlace(Some(Answer::from(outcome)))
    }
}

impl Ending for IfInPlace {
    const FORM: ResultForm = ResultForm::Text;
    const ONLY_IN_PLACE: bool = true;

    fn made(answer: Answer) -> Self {
        IfInPlace(Some(answer))
    }

    fn given_up() -> Self {
        IfInPlace(None)
    }
}
