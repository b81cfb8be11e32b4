//! The application's stages (see [`crate::stage`]), held in the order they were added and
//! walked at their steps of the call's path: call stages where the call is authorized,
//! result stages where the tool's result is made, wrappers around the whole call, listing
//! stages wherever a caller's tools are found or listed. A registry without stages keeps
//! every call on its path as it is.

use std::borrow::Cow;
use std::cell::OnceCell;
use std::collections::BTreeMap;
use std::panic::AssertUnwindSafe;

use futures::FutureExt;
use futures::future::BoxFuture;
use serde_json::Value;
use smol_str::SmolStr;

use crate::audit::{redact, unredacted};
use crate::call::ToolOutcome;
use crate::caller::Caller;
use crate::definition::ToolDefinition;
use crate::error::{ErrorCode, ToolError};
use crate::front::FrontEnd;
use crate::registry::checked_arguments::Arguments;
use crate::registry::contain::{contained, contained_panic};
use crate::registry::snapshot::Entry;
use crate::stage::{
    CallStage, CallWrapper, ListingStage, ResultCall, ResultStage, ShownArguments, StageCall,
    StageVerdict, WrappedCall,
};
use crate::tool::ToolResult;

/// The stages a registry was built with.
#[derive(Default)]
pub(crate) struct Stages {
    /// Each with whether it needs secrets in clear (asked once).
    calls: Vec<(Box<dyn CallStage>, bool)>,
    results: Vec<Box<dyn ResultStage>>,
    wrappers: Vec<Box<dyn CallWrapper>>,
    listings: Vec<Box<dyn ListingStage>>,
    /// Whether a listing stage hides tools from calls too (not from lists only).
    hides_from_calls: bool,
}

/// What the call stages decided about one call.
pub(crate) enum Staged {
    /// Every stage let the call through as it is.
    Untouched,
    /// None refused: the arguments as rewritten (if a stage did), the reason for approval
    /// (if a stage asked for it), and what the stages did, for the record.
    Passed {
        rewritten: Option<Value>,
        approval: Option<String>,
        notes: Option<Box<str>>,
    },
    /// A stage refused the call (or failed, or rewrote it into arguments the schema refuses).
    Refused {
        error: ToolError,
        notes: Option<Box<str>>,
    },
}

impl Stages {
    pub(crate) fn add_call(&mut self, stage: Box<dyn CallStage>) {
        let clear = stage.needs_secrets();
        self.calls.push((stage, clear));
    }

    pub(crate) fn add_result(&mut self, stage: Box<dyn ResultStage>) {
        self.results.push(stage);
    }

    pub(crate) fn add_wrapper(&mut self, wrapper: Box<dyn CallWrapper>) {
        self.wrappers.push(wrapper);
    }

    /// A wrapper around all the others (the telemetry's span covers the whole call).
    #[cfg(feature = "otel")]
    pub(crate) fn add_outer_wrapper(&mut self, wrapper: Box<dyn CallWrapper>) {
        self.wrappers.insert(0, wrapper);
    }

    /// A call stage before all the others.
    #[cfg(feature = "otel")]
    pub(crate) fn add_first_call(&mut self, stage: Box<dyn CallStage>) {
        let clear = stage.needs_secrets();
        self.calls.insert(0, (stage, clear));
    }

    pub(crate) fn add_listing(&mut self, stage: Box<dyn ListingStage>) {
        self.hides_from_calls |= !stage.lists_only();
        self.listings.push(stage);
    }

    /// Whether calls are checked by stages before they are authorized.
    #[inline]
    pub(crate) fn checks_calls(&self) -> bool {
        !self.calls.is_empty()
    }

    /// Whether tools' results are checked by stages (they must then be values).
    #[inline]
    pub(crate) fn check_results(&self) -> bool {
        !self.results.is_empty()
    }

    /// Whether calls are wrapped (their path then waits: it is a future of its own).
    #[inline]
    pub(crate) fn wrap_calls(&self) -> bool {
        !self.wrappers.is_empty()
    }

    /// Whether a stage may hide tools from a caller (lists are then made per caller).
    #[inline]
    pub(crate) fn hide_tools(&self) -> bool {
        !self.listings.is_empty()
    }

    /// Whether a stage may hide a tool from a caller's calls.
    #[inline]
    pub(crate) fn hide_from_calls(&self) -> bool {
        self.hides_from_calls
    }

    /// Whether a listing stage hides `tool` from `caller`'s lists. A stage that panics hides
    /// it: what cannot be decided is not shown.
    #[inline(never)]
    pub(crate) fn hides(&self, caller: &Caller, tool: &ToolDefinition) -> bool {
        self.listings
            .iter()
            .any(|stage| Self::hidden_by(stage.as_ref(), caller, tool))
    }

    /// Whether a listing stage hides `tool` from `caller`'s calls (a stage hiding it from
    /// lists only lets the call reach the tool).
    #[inline(never)]
    pub(crate) fn hides_call(&self, caller: &Caller, tool: &ToolDefinition) -> bool {
        self.listings
            .iter()
            .filter(|stage| !stage.lists_only())
            .any(|stage| Self::hidden_by(stage.as_ref(), caller, tool))
    }

    fn hidden_by(stage: &dyn ListingStage, caller: &Caller, tool: &ToolDefinition) -> bool {
        contained("a listing stage", &tool.name, || stage.hides(caller, tool)).unwrap_or(true)
    }

    /// Walks the call stages over one call of `entry`'s tool, in order.
    #[inline(always)]
    pub(crate) fn check_call(
        &self,
        caller: &Caller,
        entry: &Entry,
        (call_id, origin): (&str, (FrontEnd, Option<&str>)),
        arguments: Arguments<'_>,
    ) -> Staged {
        let tool = &entry.definition;
        let mut shown = Shown::new(entry, arguments);
        let (mut rewritten, mut approval, mut notes) = (false, None, Notes::default());
        for (stage, clear) in &self.calls {
            let clear = *clear;
            let call = StageCall::new((caller, tool, call_id), origin, &shown, clear);
            // Most stages let most calls through: that verdict is not moved about.
            let checked = contained("a call stage", &tool.name, || {
                match stage.check_explained(&call) {
                    (StageVerdict::Continue, None) => None,
                    (verdict, why) => Some(Box::new((verdict, why))),
                }
            });
            let (verdict, why) = match checked {
                Some(None) => continue,
                Some(Some(verdict)) => *verdict,
                None => {
                    notes.add(stage.name(), "failed");
                    let error = failed_stage(stage.name());
                    return Staged::Refused {
                        error,
                        notes: notes.done(),
                    };
                }
            };
            if let Some(why) = &why {
                notes.add(stage.name(), why);
            }
            match verdict {
                StageVerdict::Continue => {}
                StageVerdict::Refuse(error) => {
                    notes.add(stage.name(), "refused the call");
                    return Staged::Refused {
                        error,
                        notes: notes.done(),
                    };
                }
                StageVerdict::RequireApproval { reason } => {
                    notes.add(stage.name(), "required approval");
                    approval.get_or_insert(reason);
                }
                StageVerdict::Rewrite(value) => match rewritten_to(entry, value, clear, &shown) {
                    Ok(value) => {
                        notes.add(stage.name(), "rewrote the arguments");
                        shown = Shown::rewritten(entry, value);
                        rewritten = true;
                    }
                    Err(error) => {
                        notes.add(
                            stage.name(),
                            "rewrote the arguments into ones the schema refuses",
                        );
                        let error = refused_rewrite(stage.name(), error);
                        return Staged::Refused {
                            error,
                            notes: notes.done(),
                        };
                    }
                },
            }
        }
        // Every rewrite and every demand for approval is noted: no note, nothing done.
        if notes.is_empty() {
            return Staged::Untouched;
        }
        Staged::Passed {
            rewritten: rewritten.then(|| shown.into_value()),
            approval,
            notes: notes.done(),
        }
    }

    /// The tool's result, as the result stages pass it on (in order).
    pub(crate) fn check_result(
        &self,
        caller: &Caller,
        tool: &ToolDefinition,
        call_id: &str,
        mut result: ToolResult,
    ) -> ToolResult {
        let call = ResultCall {
            caller,
            tool,
            call_id,
        };
        for stage in &self.results {
            // The stage takes the result; if it panics, the result is gone with it.
            result = contained("a result stage", &tool.name, || stage.check(&call, result))
                .unwrap_or_else(|| Err(failed_stage(stage.name())));
        }
        result
    }

    /// `call`'s future inside the wrappers, the first added outermost. A wrapper that
    /// panics while wrapping before it took the call is left out; one that panics after
    /// taking it has dropped the call, which never began: the error to record for it.
    pub(crate) fn wrapped<'a>(
        &'a self,
        seen: &WrappedCall<'_>,
        inner: BoxFuture<'a, ToolOutcome>,
    ) -> Result<BoxFuture<'a, ToolOutcome>, ToolError> {
        let (id, name) = (SmolStr::from(seen.call_id), SmolStr::from(seen.tool));
        let mut future = inner;
        for wrapper in self.wrappers.iter().rev() {
            // Handed over through a slot, to tell a wrapper that panicked with the call
            // taken from one that panicked before.
            let mut slot = Some(future);
            let wrapped = contained("a call wrapper", &name, || {
                let inner = slot.take().expect("the call is handed to one wrapper");
                wrapper.wrap(seen, inner)
            });
            let names = (id.clone(), name.clone());
            future = match (wrapped, slot) {
                (Some(wrapped), _) => contain_wrapped(wrapper.name(), names, wrapped),
                (None, Some(inner)) => inner,
                (None, None) => return Err(failed_stage(wrapper.name())),
            };
        }
        Ok(future)
    }

    /// What the wrappers keep with a call of `tool` that waits under a ticket, by wrapper
    /// name (a wrapper that panics keeps nothing).
    pub(crate) fn kept(&self, tool: &str) -> BTreeMap<String, String> {
        let keep = |wrapper: &dyn CallWrapper| {
            let text = contained("a call wrapper", tool, || wrapper.keep()).flatten()?;
            Some((wrapper.name().to_owned(), text))
        };
        let wrappers = self.wrappers.iter().map(AsRef::as_ref);
        wrappers.filter_map(keep).collect()
    }
}

/// A call's arguments as the stages are shown them: made into a value (and a redacted
/// copy) only when a stage first reads them.
struct Shown<'a> {
    entry: &'a Entry,
    /// The call's arguments, until a stage rewrites them (the value is then set).
    arguments: Option<Arguments<'a>>,
    clear: OnceCell<Cow<'a, Value>>,
    redacted: OnceCell<Value>,
}

impl<'a> Shown<'a> {
    fn new(entry: &'a Entry, arguments: Arguments<'a>) -> Self {
        Shown {
            entry,
            arguments: Some(arguments),
            clear: OnceCell::new(),
            redacted: OnceCell::new(),
        }
    }

    /// The arguments a stage rewrote the call's into.
    fn rewritten(entry: &'a Entry, value: Value) -> Self {
        Shown {
            entry,
            arguments: None,
            clear: OnceCell::from(Cow::Owned(value)),
            redacted: OnceCell::new(),
        }
    }

    fn into_value(mut self) -> Value {
        self.shown(true);
        self.clear.take().map(Cow::into_owned).unwrap_or_default()
    }
}

impl ShownArguments for Shown<'_> {
    fn shown(&self, clear: bool) -> &Value {
        let value = self.clear.get_or_init(|| match self.arguments {
            Some(arguments) => arguments.value(self.entry),
            None => unreachable!("rewritten arguments are set when made"),
        });
        let secrets = &self.entry.definition.secret_arguments;
        if clear || secrets.is_empty() {
            return value;
        }
        self.redacted.get_or_init(|| redact(value, secrets))
    }
}

/// A wrapped call whose wrapper panics while it runs ends with an error, not a lost task
/// (the call itself is recorded inside the wrapper, if it got that far).
fn contain_wrapped<'a>(
    wrapper: &str,
    (id, tool): (SmolStr, SmolStr),
    wrapped: BoxFuture<'a, ToolOutcome>,
) -> BoxFuture<'a, ToolOutcome> {
    let wrapper = wrapper.to_owned();
    Box::pin(async move {
        match AssertUnwindSafe(wrapped).catch_unwind().await {
            Ok(outcome) => outcome,
            Err(payload) => {
                let panic = contained_panic(&tool, payload, "a call wrapper");
                let message = format!(
                    "the stage `{wrapper}` around this call failed ({})",
                    panic.message
                );
                ToolOutcome {
                    call_id: id,
                    tool,
                    result: Err(ToolError::new(ErrorCode::Panicked, message)),
                    duration: std::time::Duration::ZERO,
                    ui: None,
                    is_content: false,
                }
            }
        }
    })
}

/// A stage on the call's path panicked: the call is refused, not lost.
fn failed_stage(stage: &str) -> ToolError {
    ToolError::new(
        ErrorCode::Panicked,
        format!(
            "the stage `{stage}` failed (an internal error, not a problem with your arguments); the call did not run as asked"
        ),
    )
}

/// A stage rewrote the arguments into ones the tool's schema refuses.
/// A stage's rewritten arguments, with the secrets it saw redacted put back (a stage that
/// sees them in clear wrote them itself), or why the tool's schema refuses them.
#[cold]
fn rewritten_to(
    entry: &Entry,
    value: Value,
    clear: bool,
    shown: &Shown<'_>,
) -> Result<Value, ToolError> {
    let secrets = &entry.definition.secret_arguments;
    let mut value = match clear || secrets.is_empty() {
        true => value,
        false => unredacted(value, shown.shown(true), secrets),
    };
    entry.check_in_place(&mut value)?;
    Ok(value)
}

fn refused_rewrite(stage: &str, error: ToolError) -> ToolError {
    let message = format!(
        "the stage `{stage}` rewrote this call's arguments into ones the tool's schema refuses, so the call did not run ({})",
        error.message
    );
    let refused = ToolError::new(ErrorCode::Denied, message);
    match error.details {
        Some(details) => refused.with_details(details),
        None => refused,
    }
}

/// What the stages did to a call, for its record: `name: what; name: what`.
#[derive(Default)]
struct Notes(String);

impl Notes {
    fn add(&mut self, stage: &str, what: &str) {
        if !self.0.is_empty() {
            self.0.push_str("; ");
        }
        self.0.push_str(stage);
        self.0.push_str(": ");
        self.0.push_str(what);
    }

    fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    fn done(self) -> Option<Box<str>> {
        (!self.0.is_empty()).then(|| self.0.into_boxed_str())
    }
}
