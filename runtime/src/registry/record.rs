//! The record of one call: what was decided along the way, and the outcome written to the
//! audit sinks and store when the call ends.

use std::any::Any;
use std::borrow::Cow;
use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use futures::FutureExt;
use serde_json::Value;
use smol_str::SmolStr;

use crate::audit::{
    AuditMode, AuditRecord, AuditSink, CallArguments, Ended, Facts, Names, RecordWatcher, redact,
};
use crate::call::{ToolCall, ToolOutcome};
use crate::caller::Caller;
use crate::definition::is_valid_tool_name;
use crate::error::ToolError;
use crate::events::EventKind;
use crate::output::{Produced, ProducedResult, ResultValue};
use crate::registry::Config;
use crate::registry::answer::{Answer, Ending};
use crate::registry::checked_arguments::Checked;
use crate::registry::config::Governance;
use crate::registry::contain::{contained, contained_panic};
use crate::registry::snapshot::Entry;
use crate::store_error::unavailable;
use crate::tool::ToolResult;
use crate::util::bounded::{MAX_QUOTED, clip};
use crate::util::time::Moment;

/// What the audit record says about a call, filled in as the call goes.
pub(crate) struct Trail<'r> {
    /// The arguments as recorded: secrets redacted, or what is kept of unreadable ones.
    pub(crate) arguments: CallArguments<'r>,
    /// Whether `arguments` are an approver's edit (the arguments the call ran with).
    pub(crate) edited: bool,
    pub(crate) decision: &'static str,
    pub(crate) approver: Option<String>,
    /// The agent run the call belongs to, for its events.
    pub(crate) run_id: Option<String>,
    /// The UI component of the tool, once the caller is known to see it.
    pub(crate) ui: Option<String>,
    /// Whether the tool's result is content blocks, once the caller is known to see it.
    pub(crate) content: bool,
    /// Whether the call named a tool the caller sees.
    pub(crate) found: bool,
    /// The tool's own name, when the call spelled it otherwise (as a provider does): what
    /// the record and the events name, so one tool is one name there.
    pub(crate) renamed: Option<SmolStr>,
    /// What the application's stages did to the call, if anything.
    pub(crate) stages: Option<Box<str>>,
}

impl Default for Trail<'_> {
    fn default() -> Self {
        Trail {
            arguments: CallArguments::default(),
            edited: false,
            decision: "not_reached",
            approver: None,
            run_id: None,
            ui: None,
            content: false,
            found: false,
            renamed: None,
            stages: None,
        }
    }
}

impl<'r> Trail<'r> {
    /// The trail of a call (of the agent run `run_id`), before anything is decided.
    #[inline]
    pub(crate) fn of(run_id: Option<&str>) -> Self {
        Trail {
            run_id: run_id.map(str::to_owned),
            ..Trail::default()
        }
    }

    /// The trail, borrowing nothing: for a call that goes on in a future of its own, before
    /// its arguments are kept (arguments kept as text already are read back).
    pub(crate) fn detached(self) -> Trail<'static> {
        Trail {
            arguments: CallArguments::Value(self.arguments.into_value()),
            edited: self.edited,
            decision: self.decision,
            approver: self.approver,
            run_id: self.run_id,
            ui: self.ui,
            content: self.content,
            found: self.found,
            renamed: self.renamed,
            stages: self.stages,
        }
    }

    /// Takes in what the outcome says about the tool, once the caller is known to see it
    /// (a hidden tool's outcome stays identical to an unknown one's).
    #[inline(always)]
    pub(crate) fn seen(&mut self, entry: &Entry, called: &str) {
        let definition = &entry.definition;
        self.ui.clone_from(&definition.ui);
        self.content = definition.returns_content;
        self.found = true;
        if entry.aliased && definition.name != called {
            self.renamed = Some(SmolStr::from(definition.name.as_str()));
        }
    }

    /// Takes in what authorization decided.
    #[inline]
    pub(crate) fn note(&mut self, verdict: Verdict) {
        self.decision = verdict.decision;
        if let Some(more) = verdict.more {
            self.note_more(*more);
        }
    }

    /// Takes in who decided, what they changed and what the stages did.
    #[cold]
    #[inline(never)]
    fn note_more(&mut self, more: Decided) {
        if more.approver.is_some() {
            self.approver = more.approver;
        }
        if let Some(arguments) = more.edited_arguments {
            self.arguments = CallArguments::Value(arguments);
            self.edited = true;
        }
        if more.stages.is_some() {
            self.stages = more.stages;
        }
    }

    /// The decision as the record says it: with what the stages did, if they did anything.
    fn decision_text(&self) -> Cow<'static, str> {
        match &self.stages {
            None => Cow::Borrowed(self.decision),
            Some(stages) => Cow::Owned(format!("{} (stages: {stages})", self.decision)),
        }
    }

    /// Keeps the call's checked arguments for its record (unless an approver's edit took
    /// their place), secrets redacted. They are moved in, not copied.
    pub(crate) fn keep(&mut self, arguments: Checked, entry: &'r Arc<Entry>) {
        if !self.edited {
            self.arguments = arguments.into_kept(entry);
        }
    }

    /// What the record says the arguments are, before they are kept.
    fn arguments_of(&self, arguments: &Checked, entry: &Entry) -> Value {
        if self.edited {
            self.arguments.to_value()
        } else {
            redact(&arguments.value(entry), &entry.definition.secret_arguments)
        }
    }
}

/// What authorization decided about a call, for its record.
pub(crate) struct Verdict {
    /// `allow`, `approved`, `pending_approval`, ... (see [`AuditRecord::decision`]).
    pub(crate) decision: &'static str,
    /// Who decided, what they changed, what the stages did: most calls have none of it, and
    /// a verdict is moved along every call's path (boxed, it is two words).
    more: Option<Box<Decided>>,
}

/// The rare parts of a [`Verdict`].
#[derive(Default)]
struct Decided {
    /// Who was asked, if anyone.
    approver: Option<String>,
    /// The arguments an approver (or a stage) changed, redacted.
    edited_arguments: Option<Value>,
    /// What the application's stages did, if anything.
    stages: Option<Box<str>>,
}

impl Verdict {
    pub(crate) fn new(decision: &'static str) -> Self {
        Verdict {
            decision,
            more: None,
        }
    }

    fn more(&mut self) -> &mut Decided {
        self.more.get_or_insert_with(Box::default)
    }

    /// The verdict with what the stages did.
    #[inline]
    pub(crate) fn staged(mut self, stages: Option<Box<str>>) -> Self {
        if stages.is_some() {
            self.more().stages = stages;
        }
        self
    }

    /// The verdict of a call that runs with arguments an approver edited (kept redacted
    /// for its record).
    pub(crate) fn edited(mut self, edited: Value) -> Self {
        self.more().edited_arguments = Some(edited);
        self
    }

    /// The verdict of a call that runs with arguments a stage rewrote (kept redacted for
    /// its record, unless an approver's edit took their place).
    #[inline]
    pub(crate) fn rewritten(mut self, rewritten: Option<&Value>, entry: &Entry) -> Self {
        let Some(rewritten) = rewritten else {
            return self;
        };
        let edited = self
            .more
            .as_ref()
            .is_some_and(|more| more.edited_arguments.is_some());
        if !edited {
            let secrets = &entry.definition.secret_arguments;
            self.more().edited_arguments = Some(redact(rewritten, secrets));
        }
        self
    }

    pub(crate) fn by(mut self, approver: &str) -> Self {
        self.more().approver = Some(approver.to_owned());
        self
    }
}

/// The outcome of a call refused before it was looked at (e.g. its batch is too large).
pub(crate) async fn reject(
    config: &Config,
    caller: &Caller,
    call: ToolCall,
    error: ToolError,
) -> ToolOutcome {
    finish(
        config,
        caller,
        call.id,
        call.name,
        Err(error),
        crate::util::time::now(),
        &mut Trail::default(),
    )
    .written()
    .await
}

/// In [`AuditMode::BeforeRun`], records that an authorized call is about to run; the call
/// must not run if that fails.
pub(crate) async fn before_run(
    config: &Config,
    caller: &Caller,
    call_id: &str,
    (arguments, entry): (&Checked, &Entry),
    trail: &Trail<'_>,
) -> Result<(), ToolError> {
    let governance = &config.governance;
    let Some(store) = governance
        .audit
        .as_ref()
        .filter(|_| governance.audit_mode == AuditMode::BeforeRun)
    else {
        return Ok(());
    };
    let record = AuditRecord {
        time_ms: crate::util::time::now_millis(),
        caller: caller.recorded_id().to_string(),
        issuer: caller.issuer().map(str::to_owned),
        role: caller.role().to_owned(),
        // The tool's own name, however the call spelled it.
        tool: entry.definition.name.clone(),
        call_id: call_id.to_owned(),
        arguments: trail.arguments_of(arguments, entry),
        decision: trail.decision_text().into_owned(),
        approver: trail.approver.clone(),
        outcome: "started".to_owned(),
        duration_ms: 0.0,
    };
    store.append(record).await.map_err(unavailable)
}

/// The writing of a call's record where that takes waiting (a sink, or a store other than
/// the default history).
pub(crate) type Writing<'a> = Pin<Box<dyn Future<Output = ()> + Send + 'a>>;

/// A call's outcome, and the writing of its record if that waits. Returned whole, not as a
/// future: most calls' records go to the history at once, and their outcome is handed on
/// as it is (every layer of future or option around it would be one more copy of it).
pub(crate) struct Concluded<'a> {
    pub(crate) outcome: ToolOutcome,
    pub(crate) writing: Option<Writing<'a>>,
}

impl<'a> Concluded<'a> {
    /// The outcome, once its record is written: an answered call has its record.
    pub(crate) fn written(self) -> Finished<'a> {
        Finished {
            outcome: Some(self.outcome),
            writing: self.writing,
        }
    }
}

/// A call's outcome, given once its record is written (see [`Concluded::written`]). A
/// future of its own, not an `async fn`: that would hold the outcome twice, and every
/// call's future would carry both.
pub(crate) struct Finished<'a> {
    outcome: Option<ToolOutcome>,
    writing: Option<Writing<'a>>,
}

impl Future for Finished<'_> {
    type Output = ToolOutcome;

    fn poll(mut self: Pin<&mut Self>, context: &mut Context<'_>) -> Poll<ToolOutcome> {
        if let Some(writing) = &mut self.writing {
            std::task::ready!(writing.as_mut().poll(context));
            self.writing = None;
        }
        Poll::Ready(
            self.outcome
                .take()
                .expect("a finished call is awaited once"),
        )
    }
}

/// The outcome, audited (see [`Concluded`]); what the record keeps is taken from `trail`.
#[inline]
pub(crate) fn finish<'a>(
    config: &'a Config,
    caller: &Caller,
    call_id: SmolStr,
    tool: SmolStr,
    result: ToolResult,
    started: Moment,
    trail: &mut Trail<'_>,
) -> Concluded<'a> {
    let audited = audit(config, caller, (&call_id, &tool), &result, started, trail);
    let outcome = audited.outcome(call_id, tool, result.map(Produced::Value), trail);
    Concluded {
        outcome,
        writing: audited.writing,
    }
}

/// What auditing a call leaves: how long it took, and the writing of its record if that
/// waits. The outcome is made from it apart (see [`Audited::outcome`]).
pub(crate) struct Audited<'a> {
    duration: Duration,
    pub(crate) writing: Option<Writing<'a>>,
}

impl Audited<'_> {
    /// The call's outcome (or answer, see [`Ending`]). Apart from [`audit`], which only
    /// borrows the call: a caller that returns the outcome at once makes it where it
    /// returns it, not once more before.
    #[inline(always)]
    pub(crate) fn outcome<O: Ending>(
        &self,
        call_id: SmolStr,
        tool: SmolStr,
        result: ProducedResult,
        trail: &mut Trail<'_>,
    ) -> O {
        O::made(Answer {
            call_id,
            tool,
            is_content: trail.content && result.is_ok(),
            result,
            duration: self.duration,
            ui: trail.ui.take(),
        })
    }
}

/// Ends a call's record (`trail`) with its result: the event of its end published, and
/// the record kept in the history or written to the sinks and store.
#[inline]
pub(crate) fn audit<'a>(
    config: &'a Config,
    caller: &Caller,
    (call_id, tool): (&SmolStr, &SmolStr),
    result: &Result<impl ResultValue, ToolError>,
    started: Moment,
    trail: &mut Trail<'_>,
) -> Audited<'a> {
    let ended = crate::util::time::now();
    let duration = ended.saturating_duration_since(started);
    let governance = &config.governance;
    // The tool's own name, where the call spelled it otherwise.
    let tool = trail.renamed.as_ref().unwrap_or(tool);
    governance.events.publish(|| {
        let kind = EventKind::CallFinished {
            call_id: call_id.to_string(),
            tool: tool.to_string(),
            ok: result.is_ok(),
            result: result.as_ref().ok().map(ResultValue::value),
            error: result.as_ref().err().cloned(),
            duration_ms: crate::util::time::millis(duration),
            ui: trail.ui.clone(),
        };
        (caller.id().to_owned(), trail.run_id.clone(), kind)
    });
    if let Some(watcher) = &governance.record_watcher {
        show_ended(
            watcher.as_ref(),
            (call_id, tool),
            result.as_ref().err(),
            trail,
        );
    }
    let mut writing = None;
    if governance.audits() {
        let stamp = crate::util::time::stamp(ended);
        let facts = Facts {
            order: stamp.order,
            time_ms: stamp.millis,
            decision: trail.decision_text(),
            approver: trail.approver.take(),
            outcome: match result {
                Ok(_) => Cow::Borrowed("ok"),
                Err(error) => error.code.wire(),
            },
            duration_ms: crate::util::time::millis(duration),
        };
        let sinks_want = governance
            .sinks
            .iter()
            .any(|sink| wants(sink.as_ref(), tool));
        // Only a caller refused for its id has it escaped (its refusals are recorded too).
        let escaped;
        let caller_id = if caller.id_is_storable() {
            caller.id_text()
        } else {
            escaped = caller.recorded_id();
            &escaped
        };
        let names = Names {
            caller: caller_id,
            role: caller.role_text(),
            tool,
            call_id,
            issuer: caller.issuer_text(),
        };
        match &governance.history {
            // The field, not `take_arguments`: `tool` may still borrow the trail's name.
            Some(history) if !sinks_want => {
                history.keep(facts, names, std::mem::take(&mut trail.arguments))
            }
            _ => {
                let arguments = std::mem::take(&mut trail.arguments);
                let record = facts.into_record(names, arguments.into_value());
                writing = Some(Box::pin(write(governance, record)) as _);
            }
        }
    }
    Audited { duration, writing }
}

/// Shows a call's end to the record's watcher (application code aside, it is contained
/// like it).
#[cold]
fn show_ended(
    watcher: &dyn RecordWatcher,
    (call_id, tool): (&str, &str),
    error: Option<&ToolError>,
    trail: &Trail<'_>,
) {
    let ended = Ended {
        call_id,
        tool,
        found: trail.found,
        decision: trail.decision,
        approver: trail.approver.as_deref(),
        outcome: error.map_or(Cow::Borrowed("ok"), |error| error.code.wire()),
        arguments: &trail.arguments,
    };
    contained("the telemetry", tool, || watcher.ended(&ended));
}

/// Whether a sink wants a call's record (application code, contained: a sink that panics
/// when asked is given the record, and its `record` is contained too).
fn wants(sink: &dyn AuditSink, tool: &str) -> bool {
    contained("an audit sink", tool, || sink.wants_records()).unwrap_or(true)
}

/// Writes a call's record to the sinks and the store (other than the default history, which
/// takes records as the call holds them).
async fn write(governance: &Governance, record: AuditRecord) {
    let sinks = governance.sinks.iter();
    for sink in sinks.filter(|sink| wants(sink.as_ref(), &record.tool)) {
        // A failing sink loses its own record, never the call's answer.
        contained("an audit sink", &record.tool, || sink.record(&record));
    }
    let Some(store) = &governance.audit else {
        return;
    };
    let (tool, call_id) = (record.tool.clone(), record.call_id.clone());
    // A failing or panicking store loses the record, never the call's answer: the tool has
    // run, and hiding its answer would have it repeated.
    let stored = AssertUnwindSafe(async { store.append(record).await })
        .catch_unwind()
        .await;
    let error = match stored {
        Ok(Ok(())) => None,
        Ok(Err(error)) => Some(error.to_string()),
        Err(_) => Some("the audit store panicked".to_owned()),
    };
    if let Some(error) = error {
        tracing::error!(%error, %tool, %call_id, "a call's audit record could not be stored");
    }
}

/// What a call's path gives before its outcome is made: its result, or the panic of
/// application code on the way (a store, a limit).
pub(crate) type Walked = Result<ToolResult, Box<dyn Any + Send>>;

/// The outcome of a decided call of `caller`, audited (see [`Concluded`]). Always inlined:
/// left to itself the compiler calls it, and every call's outcome would be moved once more
/// (45 instructions a call, measured).
#[inline(always)]
pub(crate) fn conclude<'a>(
    config: &'a Config,
    caller: &Caller,
    id: SmolStr,
    name: SmolStr,
    walked: Walked,
    started: Moment,
    trail: &mut Trail<'_>,
) -> Concluded<'a> {
    let (name, result) = settle(name, walked, trail);
    finish(config, caller, id, name, result, started, trail)
}

/// The name an outcome gives back, and the call's result (the error for a panic on the
/// way where there was one).
#[inline(always)]
pub(crate) fn settle(name: SmolStr, walked: Walked, trail: &Trail<'_>) -> (SmolStr, ToolResult) {
    let name = settled_name(name, trail);
    let result = walked.unwrap_or_else(|payload| Err(failed_on_the_way(&name, payload)));
    (name, result)
}

/// The name an outcome gives back: a name no tool has is not echoed back whole (it may be
/// huge); a tool's own is valid, so only a name no tool answered to is checked.
#[inline(always)]
pub(crate) fn settled_name(name: SmolStr, trail: &Trail<'_>) -> SmolStr {
    if trail.found || is_valid_tool_name(&name) {
        name
    } else {
        SmolStr::from(clip(&name, MAX_QUOTED))
    }
}

/// Application code on the call's path (a store, a limit) panicked.
pub(crate) fn failed_on_the_way(tool: &str, payload: Box<dyn Any + Send>) -> ToolError {
    contained_panic(tool, payload, "the call")
}

/// What a record of a model request stands under for its tool: no tool can have this name.
pub(crate) const MODEL_REQUEST: &str = "(model request)";

/// A record the agent loop writes for what it answered itself: a model request a budget
/// stopped, a repeated call answered from its first result.
pub(crate) struct LoopRecord {
    pub(crate) call_id: String,
    pub(crate) tool: String,
    pub(crate) arguments: Value,
    pub(crate) decision: &'static str,
    pub(crate) outcome: String,
}

impl crate::Registry {
    /// Writes `record` of `caller` to the audit sinks and store (if any).
    pub(crate) async fn record_from_loop(&self, caller: &Caller, record: LoopRecord) {
        let governance = self.governance();
        if !governance.audits() {
            return;
        }
        let record = AuditRecord {
            time_ms: crate::util::time::now_millis(),
            caller: caller.recorded_id().to_string(),
            issuer: caller.issuer().map(str::to_owned),
            role: caller.role().to_owned(),
            tool: record.tool,
            call_id: record.call_id,
            arguments: record.arguments,
            decision: record.decision.to_owned(),
            approver: None,
            outcome: record.outcome,
            duration_ms: 0.0,
        };
        write(governance, record).await;
    }
}
