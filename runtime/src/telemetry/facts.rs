//! The registry's own facts about a call, written onto its span by the steps that see
//! them: the record step (decision, who approved, the arguments as recorded), the
//! approval steps' events (when a person was asked and answered), and the arguments'
//! secret values (to keep them out of what is captured).

use std::sync::Arc;
use std::time::Instant;

use opentelemetry::trace::TraceContextExt;
use opentelemetry::{Context, KeyValue};

use super::Shared;
use super::capture::secret_values;
use super::conventions as name;
use super::tool_span::CallMark;
use crate::audit::{Ended, RecordWatcher};
use crate::events::{Event, EventKind};
use crate::stage::{CallStage, StageCall, StageVerdict};
use crate::util::sync::lock;

/// Writes what a call's record says onto the call's span, as the call ends.
pub(crate) struct Facts(pub(crate) Arc<Shared>);

impl RecordWatcher for Facts {
    fn ended(&self, ended: &Ended<'_>) {
        Context::map_current(|context| {
            let Some(mark) = context.get::<CallMark>() else {
                return;
            };
            if *mark.call_id != *ended.call_id {
                return;
            }
            let span = context.span();
            span.set_attributes([
                KeyValue::new(name::DECISION, ended.decision),
                KeyValue::new(name::OUTCOME, ended.outcome.clone()),
            ]);
            if let Some(approver) = ended.approver {
                span.set_attribute(KeyValue::new(name::APPROVER, approver.to_owned()));
            }
            match (ended.decision, ended.outcome.as_ref()) {
                ("dry_run", _) => span.set_attribute(KeyValue::new(name::DRY_RUN, true)),
                (_, "rate_limited") => span.set_attribute(KeyValue::new(name::RATE_LIMITED, true)),
                _ => {}
            }
            let mut noted = lock(&mark.noted);
            if ended.found {
                noted.tool = Some(ended.tool.to_owned());
            }
            // Only arguments the schema accepted: in others a secret may sit under a name
            // the tool does not know (and so not redact).
            if self.0.capture.content && ended.decision != "not_reached" {
                // As recorded: `#[secret]` ones are redacted there already.
                let arguments = ended.arguments.to_value();
                let shown = self.0.capture.shown(&arguments, &noted.secrets);
                span.set_attribute(KeyValue::new(name::TOOL_ARGUMENTS, shown));
            }
        });
    }

    fn reads_arguments(&self) -> bool {
        self.0.capture.content
    }
}

/// Notes on the call's span when a person is asked and when they answer.
pub(crate) fn watcher(shared: Arc<Shared>) -> crate::events::Watcher {
    Box::new(move |event: &Event| {
        Context::map_current(|context| {
            let Some(mark) = context.get::<CallMark>() else {
                return;
            };
            match &event.kind {
                EventKind::ApprovalRequested {
                    call_id, ticket, ..
                } if **call_id == *mark.call_id => asked(&shared, context, mark, ticket.is_some()),
                EventKind::ApprovalDecided {
                    call_id,
                    decided_by,
                    decision,
                    ..
                } if **call_id == *mark.call_id => {
                    answered(&shared, context, mark, (decided_by, decision));
                }
                _ => {}
            }
        });
    })
}

fn asked(shared: &Shared, context: &Context, mark: &CallMark, with_ticket: bool) {
    shared.instruments.approvals_waiting.add(1, &[]);
    lock(&mark.noted).asked = Some((Instant::now(), with_ticket));
    let span = context.span();
    span.set_attribute(KeyValue::new(name::APPROVAL_ASKED, true));
    if with_ticket {
        span.set_attribute(KeyValue::new(name::APPROVAL_TICKET, true));
    }
    let how = if with_ticket { "ticket" } else { "in_process" };
    span.add_event(
        "toolgate.approval.requested",
        vec![KeyValue::new("toolgate.approval.how", how)],
    );
}

fn answered(shared: &Shared, context: &Context, mark: &CallMark, (by, decision): (&str, &str)) {
    let span = context.span();
    let asked = lock(&mark.noted).asked.take();
    if let Some((since, _)) = asked {
        let waited = since.elapsed().as_secs_f64();
        shared.instruments.approvals_waiting.add(-1, &[]);
        shared.instruments.approval_wait.record(waited, &[]);
        span.set_attribute(KeyValue::new(name::APPROVAL_WAIT, waited));
    }
    span.set_attribute(KeyValue::new(name::APPROVER, by.to_owned()));
    span.add_event(
        "toolgate.approval.decided",
        vec![
            KeyValue::new(name::APPROVER, by.to_owned()),
            KeyValue::new(name::DECISION, decision.to_owned()),
        ],
    );
}

/// Reads a call's `#[secret]` values (only of tools that have some), so that what is
/// captured of its result never shows them. Never changes the call.
pub(crate) struct SecretsSeen;

impl CallStage for SecretsSeen {
    fn name(&self) -> &str {
        "telemetry"
    }

    fn check(&self, call: &StageCall<'_>) -> StageVerdict {
        let secrets = &call.tool.secret_arguments;
        if secrets.is_empty() {
            return StageVerdict::Continue;
        }
        Context::map_current(|context| {
            let Some(mark) = context.get::<CallMark>() else {
                return;
            };
            let arguments = call.arguments();
            let mut values = Vec::new();
            for secret in secrets {
                if let Some(value) = arguments.get(secret) {
                    secret_values(value, &mut values);
                }
            }
            lock(&mark.noted).secrets = values;
        });
        StageVerdict::Continue
    }

    fn needs_secrets(&self) -> bool {
        true
    }
}
