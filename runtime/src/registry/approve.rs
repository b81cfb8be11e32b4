//! A call the policy (or a stage) wants approved: a standing grant, the tool's review, then
//! whoever may decide it (an in-process approver, the caller's client, or an approver with
//! a ticket).

use serde_json::Value;

use crate::error::ToolError;
use crate::registry::authorize::{Authorized, Staging};
use crate::registry::confirm;
use crate::registry::decide::decide_now;
use crate::registry::record::Verdict;
use crate::registry::review::review;
use crate::registry::run::Asking;
use crate::registry::tickets::defer;
use crate::store_error::unavailable;

/// A call the policy wants approved: a standing grant, the tool's review, then whoever may
/// decide it (an in-process approver, the caller's client, or an approver with a ticket).
pub(crate) async fn require_approval(
    asking: &Asking<'_>,
    arguments: &Value,
    reason: String,
    staging: Option<Box<Staging>>,
) -> (Verdict, Result<Authorized, ToolError>) {
    let Some(staging) = staging else {
        return seek_approval(asking, arguments, reason).await;
    };
    let Staging { rewritten, notes } = *staging;
    let arguments = rewritten.as_ref().unwrap_or(arguments);
    let (verdict, result) = seek_approval(asking, arguments, reason).await;
    let verdict = verdict
        .staged(notes)
        .rewritten(rewritten.as_ref(), asking.entry);
    match (result, rewritten) {
        // Approved as asked: as the stages rewrote it.
        (Ok(Authorized::Run(None)), Some(rewritten)) => {
            (verdict, Ok(Authorized::Run(Some(rewritten))))
        }
        (result, _) => (verdict, result),
    }
}

/// [`require_approval`] of the call's arguments as they are.
async fn seek_approval(
    asking: &Asking<'_>,
    arguments: &Value,
    reason: String,
) -> (Verdict, Result<Authorized, ToolError>) {
    let governance = &asking.config.governance;
    let tool = &asking.entry.definition.name;
    match governance.grants.granted(asking.caller.id(), tool).await {
        Ok(true) => {
            let verdict = Verdict::new("approved_always");
            return (verdict, Ok(Authorized::Run(None)));
        }
        Ok(false) => {}
        Err(error) => return (Verdict::new("require_approval"), Err(unavailable(error))),
    }
    // The tool looks first: a call it would refuse is refused before a person is bothered.
    let review = match review(asking, arguments) {
        Ok(review) => review,
        Err(error) => return (Verdict::new("review_refused"), Err(error)),
    };
    // Asking someone keeps (or may edit) the arguments: the slow path has its own copy.
    let arguments = arguments.clone();
    if let Some((approver_name, approver)) = &governance.approver {
        let approver = approver.as_ref();
        return decide_now(asking, approver_name, approver, arguments, reason, review).await;
    }
    if let Some(ask_caller) = asking.ask_caller
        && governance.may_decide_call(
            asking.config,
            asking.caller,
            asking.entry,
            (asking.caller, &arguments),
        )
    {
        return confirm::by_caller(asking, ask_caller, arguments, reason, review).await;
    }
    match defer(asking, arguments, reason, review).await {
        Ok(waiting) => (Verdict::new("pending_approval"), Err(waiting)),
        Err(error) => (Verdict::new("require_approval"), Err(unavailable(error))),
    }
}
