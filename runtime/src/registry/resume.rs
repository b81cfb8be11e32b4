//! A call that waited with a ticket, taken up again after a person decided: approved, it runs
//! as its original caller (checked again, since the tool may have changed); denied, its
//! outcome carries the reason. Both end in one audited outcome.

use std::time::Instant;

use crate::approval::PendingCall;
use crate::arguments::ToolArguments;
use crate::audit::redact;
use crate::call::ToolOutcome;
use crate::caller::Caller;
use crate::context::CancellationToken;
use crate::registry::Config;
use crate::registry::execute::{find, perform, read_arguments};
use crate::registry::govern::refused_by_a_person;
use crate::registry::record::{Trail, finish};
use crate::registry::snapshot::Snapshot;

/// What the approver decided.
pub(crate) enum Resolution<'a> {
    Approve,
    Deny { reason: &'a str },
}

pub(crate) async fn resume(
    config: &Config,
    snapshot: &Snapshot,
    pending: PendingCall,
    approver: &Caller,
    resolution: Resolution<'_>,
) -> ToolOutcome {
    let started = Instant::now();
    let PendingCall {
        caller,
        call_id,
        tool,
        arguments,
        ..
    } = pending;
    let mut trail = Trail {
        approver: Some(approver.id().to_owned()),
        ..Trail::default()
    };
    let result = match resolution {
        Resolution::Approve => {
            trail.decision = "approved";
            let rank = config.roles.rank(caller.role());
            let cancel = CancellationToken::new();
            async {
                let entry = find(config, snapshot, rank, &tool)?;
                let arguments =
                    read_arguments(config, entry, ToolArguments::Value(arguments), &mut trail)?;
                perform(config, entry, &caller, &call_id, arguments, &cancel).await
            }
            .await
        }
        Resolution::Deny { reason } => {
            trail.decision = "approval_denied";
            let secrets = snapshot
                .any(&tool)
                .map(|entry| entry.definition.secret_arguments.as_slice())
                .unwrap_or_default();
            trail.arguments = redact(&arguments, secrets);
            Err(refused_by_a_person(reason))
        }
    };
    finish(config, &caller, call_id, tool, result, started, trail)
}
