//! The span of one tool call (`execute_tool {tool}`), held open over the whole call as a
//! [`CallWrapper`]: from finding the tool to the recorded outcome.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use futures::future::BoxFuture;
use opentelemetry::context::FutureExt as _;
use opentelemetry::trace::{Link, SpanKind, Status, TraceContextExt, Tracer};
use opentelemetry::{Context, KeyValue};

use super::Shared;
use super::capture::scrubbed;
use super::conventions as name;
use super::propagation::{context_from_traceparent, traceparent_of};
use crate::call::ToolOutcome;
use crate::stage::{CallWrapper, ResumedCall, WrappedCall};
use crate::util::bounded::{MAX_QUOTED, clip};
use crate::util::sync::lock;

/// The wrapper's name: what it keeps with a waiting call is kept under it.
pub(crate) const NAME: &str = "telemetry";

/// Makes each call's span.
pub(crate) struct ToolSpans(pub(crate) Arc<Shared>);

/// What the other telemetry stages of one call find in its context: that the current span
/// is this call's, and what they noted on the way.
pub(crate) struct CallMark {
    pub(crate) call_id: Box<str>,
    pub(crate) noted: Mutex<Noted>,
}

/// What the stages of a call noted on the way.
#[derive(Default)]
pub(crate) struct Noted {
    /// When a person was asked in process (or a ticket made), until they answer.
    pub(crate) asked: Option<(Instant, bool)>,
    /// The call's secret values, to take out of what is captured of its result.
    pub(crate) secrets: Vec<String>,
    /// The tool's own name, once found.
    pub(crate) tool: Option<String>,
}

impl CallWrapper for ToolSpans {
    fn name(&self) -> &str {
        NAME
    }

    fn wrap<'a>(
        &'a self,
        call: &WrappedCall<'_>,
        inner: BoxFuture<'a, ToolOutcome>,
    ) -> BoxFuture<'a, ToolOutcome> {
        let context = self.begin(call);
        let shared = &self.0;
        Box::pin(async move {
            let started = Instant::now();
            let outcome = inner.with_context(context.clone()).await;
            end(shared, &context, &outcome, started.elapsed());
            outcome
        })
    }

    fn keep(&self) -> Option<String> {
        Context::map_current(|context| {
            context.get::<CallMark>()?;
            traceparent_of(context)
        })
    }
}

impl ToolSpans {
    /// The call's span, started in the current context, with what is known before the call.
    fn begin(&self, call: &WrappedCall<'_>) -> Context {
        let tool = clip(call.tool, MAX_QUOTED);
        let mut attributes = vec![
            KeyValue::new(name::OPERATION_NAME, "execute_tool"),
            KeyValue::new(name::TOOL_NAME, tool.to_string()),
            KeyValue::new(
                name::TOOL_CALL_ID,
                clip(call.call_id, MAX_QUOTED).into_owned(),
            ),
            KeyValue::new(name::TOOL_TYPE, "function"),
            KeyValue::new(name::ROLE, call.caller.role().to_owned()),
            KeyValue::new(name::FRONT, call.front.as_str()),
        ];
        if let Some(run) = call.run_id {
            attributes.push(KeyValue::new(name::RUN_ID, run.to_owned()));
        }
        let mut builder = self
            .0
            .tracer
            .span_builder(format!("execute_tool {tool}"))
            .with_kind(SpanKind::Internal);
        if let Some(resumed) = &call.resumed {
            let (links, decided) = self.resumed(resumed);
            builder = builder.with_links(links);
            attributes.extend(decided);
        }
        let parent = Context::current();
        let span = self
            .0
            .tracer
            .build_with_context(builder.with_attributes(attributes), &parent);
        let mark = CallMark {
            call_id: call.call_id.into(),
            noted: Mutex::default(),
        };
        parent.with_span(span).with_value(mark)
    }

    /// A call a person decided under its ticket: linked to the span that asked, with how
    /// long it waited (and no longer counted as waiting).
    fn resumed(&self, resumed: &ResumedCall<'_>) -> (Vec<Link>, Vec<KeyValue>) {
        let asked = resumed.kept(NAME).and_then(context_from_traceparent);
        let links = asked
            .map(|span| vec![Link::with_context(span)])
            .unwrap_or_default();
        let now = crate::util::time::now_secs();
        let waited = now.saturating_sub(resumed.requested) as f64;
        let instruments = &self.0.instruments;
        instruments.approvals_waiting.add(-1, &[]);
        instruments.approval_wait.record(waited, &[]);
        let decided = vec![
            KeyValue::new(name::APPROVAL_ASKED, true),
            KeyValue::new(name::APPROVAL_TICKET, true),
            KeyValue::new(name::APPROVER, resumed.decided_by.to_owned()),
            KeyValue::new(name::APPROVAL_WAIT, waited),
        ];
        (links, decided)
    }
}

/// The call's end on its span: its outcome (a refused or failed call is an error span),
/// its metrics, and the span ended.
fn end(shared: &Shared, context: &Context, outcome: &ToolOutcome, took: Duration) {
    let span = context.span();
    let noted = context
        .get::<CallMark>()
        .map(|mark| std::mem::take(&mut *lock(&mark.noted)))
        .unwrap_or_default();
    if let Some((_, false)) = noted.asked {
        // Asked in process and never answered (the call was cancelled while it waited).
        shared.instruments.approvals_waiting.add(-1, &[]);
    }
    let code = outcome.error().map(|error| error.code.wire());
    // A name no tool the caller sees has is one label, whatever the caller wrote: metrics
    // stay bounded, and a hidden tool stays unseen.
    let tool = noted.tool.as_deref().unwrap_or("_unknown");
    shared.instruments.tool_call(
        tool,
        code.clone().unwrap_or(std::borrow::Cow::Borrowed("ok")),
        took.as_secs_f64(),
    );
    match outcome.error() {
        None => {
            if shared.capture.content {
                let result = outcome.result.as_ref().ok();
                let shown = result.map(|value| shared.capture.shown(value, &noted.secrets));
                span.set_attribute(KeyValue::new(name::TOOL_RESULT, shown.unwrap_or_default()));
            }
        }
        Some(error) => {
            let code = error.code.wire().into_owned();
            span.set_attribute(KeyValue::new(name::ERROR_TYPE, code));
            let message = scrubbed(&error.message, &noted.secrets);
            span.set_status(Status::error(clip(&message, 1024).into_owned()));
        }
    }
    span.end();
}
