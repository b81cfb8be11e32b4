//! Who is calling and how: what every step of a call's path is given.

use std::sync::Arc;

use crate::approval::AskCaller;
use crate::caller::Caller;
use crate::events::EventKind;
use crate::input::ClientInput;
use crate::paused::StepOf;
use crate::progress::{LogSink, ProgressSink};
use crate::registry::Config;
use crate::registry::cancel::Cancel;
use crate::registry::snapshot::Entry;

/// Who is calling and how (the tools they call from are the snapshot's, passed beside).
#[derive(Clone, Copy)]
pub(crate) struct Run<'a> {
    pub(crate) config: &'a Config,
    pub(crate) rank: Option<usize>,
    pub(crate) caller: &'a Caller,
    pub(crate) cancel: Cancel<'a>,
    pub(crate) dry_run: bool,
    /// The agent run the call belongs to, for its events.
    pub(crate) run_id: Option<&'a str>,
    /// Where the call came in.
    pub(crate) front: crate::FrontEnd,
    /// What the caller's client brings (single calls only).
    pub(crate) client: Option<&'a ClientSide>,
}

/// What the caller's client brings to one call ([`CallOptions`](crate::CallOptions)).
#[derive(Default)]
pub(crate) struct ClientSide {
    pub(crate) progress: Option<ProgressSink>,
    pub(crate) log: Option<LogSink>,
    pub(crate) input: Option<Arc<ClientInput>>,
    pub(crate) ask_caller: Option<AskCaller>,
    /// The tool call this call is a step of.
    pub(crate) step_of: Option<StepOf>,
}

impl ClientSide {
    /// Whether the client brings nothing.
    pub(crate) fn is_empty(&self) -> bool {
        // Taken apart, so that a new part cannot be forgotten here.
        let ClientSide {
            progress,
            log,
            input,
            ask_caller,
            step_of,
        } = self;
        let asks = ask_caller.is_some() || step_of.is_some();
        progress.is_none() && log.is_none() && input.is_none() && !asks
    }
}

/// Who a call runs for, and what goes with it.
#[derive(Clone, Copy)]
pub(crate) struct Running<'a> {
    pub(crate) caller: &'a Caller,
    pub(crate) call_id: &'a str,
    /// The agent run the call belongs to.
    pub(crate) run_id: Option<&'a str>,
    pub(crate) client: Option<&'a ClientSide>,
}

impl<'r> Run<'r> {
    /// What the tool of call `call_id` runs with.
    pub(crate) fn running<'a>(&'a self, call_id: &'a str) -> Running<'a> {
        Running {
            caller: self.caller,
            call_id,
            run_id: self.run_id,
            client: self.client,
        }
    }

    /// The call `call_id` of `entry`'s tool, on its way to a decision.
    pub(crate) fn asking<'a>(&'a self, entry: &'a Arc<Entry>, call_id: &'a str) -> Asking<'a> {
        Asking {
            config: self.config,
            entry,
            caller: self.caller,
            call_id,
            cancel: self.cancel,
            run_id: self.run_id,
            front: self.front,
            ask_caller: self.client.and_then(|client| client.ask_caller.as_ref()),
            step_of: self.client.and_then(|client| client.step_of.as_ref()),
        }
    }
}

/// One call on its way to a decision.
pub(crate) struct Asking<'a> {
    pub(crate) config: &'a Config,
    pub(crate) entry: &'a Arc<Entry>,
    pub(crate) caller: &'a Caller,
    pub(crate) call_id: &'a str,
    pub(crate) cancel: Cancel<'a>,
    /// The agent run the call belongs to, for its events.
    pub(crate) run_id: Option<&'a str>,
    /// Where the call came in.
    pub(crate) front: crate::FrontEnd,
    /// How to ask the caller's own client, where the caller may decide the call.
    pub(crate) ask_caller: Option<&'a AskCaller>,
    /// The tool call this call is a step of, which waits with it.
    pub(crate) step_of: Option<&'a StepOf>,
}

impl Asking<'_> {
    /// Reports an event about this call.
    pub(crate) fn report(&self, kind: impl FnOnce() -> EventKind) {
        let governance = &self.config.governance;
        governance.events.publish(|| {
            let run = self.run_id.map(str::to_owned);
            (self.caller.id().to_owned(), run, kind())
        });
    }

    /// Reports an approval's event (a person asked, or answering).
    pub(crate) fn report_approval(&self, kind: impl FnOnce() -> EventKind) {
        let governance = &self.config.governance;
        governance.events.publish_approval(|| {
            let run = self.run_id.map(str::to_owned);
            (self.caller.id().to_owned(), run, kind())
        });
    }
}
