//! A call's future: the call runs at once in its first poll where it can ([`now`]), and
//! only the rest of one that waits is a future of its own, boxed.

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

use crate::call::{ToolCall, ToolOutcome};
use crate::caller::Caller;
use crate::registry::execute::execute;
use crate::registry::now::{self, Begun, Continuation};
use crate::registry::run::Run;
use crate::registry::snapshot::Snapshot;
use crate::registry::{CallOptions, Registry};

/// What a call does in its first poll.
pub(crate) trait Begin<'a> {
    fn begin(self, context: &mut Context<'_>) -> Begun<'a>;
}

/// A call's future: [`Begin`] in its first poll, then the continuation, if any.
pub(crate) struct Calling<'a, B> {
    begin: Option<B>,
    waiting: Option<Continuation<'a>>,
}

impl<'a, B: Begin<'a> + Unpin> Calling<'a, B> {
    /// A call that begins when first polled.
    pub(crate) fn new(begin: B) -> Self {
        Calling {
            begin: Some(begin),
            waiting: None,
        }
    }

    /// A call that takes the full path from the start.
    pub(crate) fn waiting(continuation: Continuation<'a>) -> Self {
        Calling {
            begin: None,
            waiting: Some(continuation),
        }
    }
}

impl<'a, B: Begin<'a> + Unpin> Future for Calling<'a, B> {
    type Output = ToolOutcome;

    fn poll(self: Pin<&mut Self>, context: &mut Context<'_>) -> Poll<ToolOutcome> {
        let this = self.get_mut();
        if let Some(begin) = this.begin.take() {
            match begin.begin(context) {
                Begun::Done(outcome) => return Poll::Ready(outcome),
                Begun::Waiting(waiting) => this.waiting = Some(waiting),
            }
        }
        match &mut this.waiting {
            Some(waiting) => waiting.as_mut().poll(context),
            None => panic!("a call's future was polled after it finished"),
        }
    }
}

/// A call without options, to the registry's tools as they are when it begins.
pub(crate) struct Plain<'a> {
    pub(crate) registry: &'a Registry,
    pub(crate) caller: &'a Caller,
    pub(crate) call: ToolCall,
}

impl<'a> Begin<'a> for Plain<'a> {
    // Inlined: the outcome it gives is large, and a call boundary would copy it once more.
    #[inline]
    fn begin(self, context: &mut Context<'_>) -> Begun<'a> {
        let Plain {
            registry,
            caller,
            call,
        } = self;
        // A guard, not a counted reference: every core counting the one snapshot's references
        // would pass its cache line back and forth on every call.
        let snapshot = registry.inner.snapshot.load();
        let run = registry.run_for(caller, None);
        now::begin(run, &snapshot, call, context).unwrap_or_else(|call| {
            let options = CallOptions::default();
            Begun::Waiting(Box::pin(registry.call_fully(caller, call, options)))
        })
    }
}

/// A call of a batch, to the batch's tools.
pub(crate) struct InBatch<'a> {
    pub(crate) run: &'a Run<'a>,
    pub(crate) snapshot: &'a Snapshot,
    pub(crate) call: ToolCall,
}

impl<'a> Begin<'a> for InBatch<'a> {
    #[inline]
    fn begin(self, context: &mut Context<'_>) -> Begun<'a> {
        let InBatch {
            run,
            snapshot,
            call,
        } = self;
        now::begin(*run, snapshot, call, context)
            .unwrap_or_else(|call| Begun::Waiting(Box::pin(execute(run, snapshot, call))))
    }
}
