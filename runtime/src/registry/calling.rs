//! A call's future: the call walks its path ([`path`](super::path)) in its first poll, and
//! only the rest of one that waits is a future of its own, boxed.
//!
//! The call stays where the future holds it, and is read there: taking it out whole in the
//! first poll would copy it right after it was written, which stalls the processor (the
//! copy reads in wider pieces than the writes were made in).

use std::future::Future;
use std::marker::PhantomData;
use std::pin::Pin;
use std::task::{Context, Poll};

use std::sync::Arc;

use serde_json::Value;

use crate::call::{ToolCall, ToolOutcome};
use crate::caller::Caller;
use crate::context::CancellationToken;
use crate::registry::answer::Ending;
use crate::registry::cancel::Cancel;
use crate::registry::path::{self, AtStart, Continuation, Entrance, Rest, wait_on};
use crate::registry::record::reject;
use crate::registry::run::{ClientSide, Run};
use crate::registry::snapshot::Snapshot;
use crate::registry::{CallOptions, Registry};
use crate::stage::WrappedCall;

/// What a call does in its first poll: runs as far as it goes, to its outcome, or to a
/// continuation in `waiting`, polled once already. Called once: it takes out of `self` what
/// it keeps, and what is left is dropped with the future.
pub(crate) trait Begin<'a> {
    /// What the call's future gives.
    type Ending: From<ToolOutcome>;

    fn begin(
        &mut self,
        context: &mut Context<'_>,
        waiting: &mut Option<Continuation<'a>>,
    ) -> Poll<Self::Ending>;
}

/// A call's future: [`Begin`] in its first poll, then the continuation, if any.
pub(crate) struct Calling<'a, B> {
    begin: B,
    begun: bool,
    waiting: Option<Continuation<'a>>,
}

impl<'a, B: Begin<'a> + Unpin> Calling<'a, B> {
    /// A call that begins when first polled.
    pub(crate) fn new(begin: B) -> Self {
        Calling {
            begin,
            begun: false,
            waiting: None,
        }
    }
}

impl<'a, B: Begin<'a> + Unpin> Future for Calling<'a, B> {
    type Output = B::Ending;

    fn poll(self: Pin<&mut Self>, context: &mut Context<'_>) -> Poll<B::Ending> {
        let this = self.get_mut();
        if !this.begun {
            this.begun = true;
            // The outcome of a call that ends here is written where this poll's goes.
            return this.begin.begin(context, &mut this.waiting);
        }
        match &mut this.waiting {
            Some(waiting) => waiting.as_mut().poll(context).map(B::Ending::from),
            None => panic!("a call's future was polled after it finished"),
        }
    }
}

/// A single call, to the registry's tools as they are when it begins, ending in `E` (a
/// [`ToolOutcome`], an [`Answer`](super::answer::Answer) for a caller that writes it out,
/// or an answer if the call ran in place, `IfInPlace` (the HTTP adapter's)).
pub(crate) struct Single<'a, E = ToolOutcome> {
    registry: &'a Registry,
    caller: &'a Caller,
    call: ToolCall,
    /// Its options, if any are set (apart: most calls have none, and every call's future
    /// would carry their room; shared with what goes on after a wait, which needs them too).
    options: Option<Arc<Options>>,
    /// Where a call without options came in (a call with options has it in them).
    front: crate::FrontEnd,
    ending: PhantomData<fn() -> E>,
}

impl<'a, E> Single<'a, E> {
    /// A call of `registry`'s tools for `caller`, with its options if any are set.
    pub(crate) fn new(
        registry: &'a Registry,
        caller: &'a Caller,
        call: ToolCall,
        options: Option<Arc<Options>>,
    ) -> Self {
        Single {
            registry,
            caller,
            call,
            options,
            front: crate::FrontEnd::Library,
            ending: PhantomData,
        }
    }

    /// The call, as come in through `front`.
    pub(crate) fn from(mut self, front: crate::FrontEnd) -> Self {
        self.front = front;
        self
    }
}

impl<'a, E: Ending> Begin<'a> for Single<'a, E> {
    type Ending = E;

    // Inlined: the outcome it gives is large, and a call boundary would copy it once more.
    #[inline]
    fn begin(
        &mut self,
        context: &mut Context<'_>,
        waiting: &mut Option<Continuation<'a>>,
    ) -> Poll<E> {
        let Single {
            registry,
            caller,
            call,
            options,
            front,
            ..
        } = self;
        let (registry, caller) = (*registry, *caller);
        let config = &registry.inner.config;
        if config.governance.stages.wrap_calls() {
            // The whole call inside the application's wrappers: a future of its own.
            if E::ONLY_IN_PLACE {
                return Poll::Ready(E::given_up());
            }
            let (call, options) = (call.take(), options.take());
            let wrapped = Box::pin(registry.call_wrapped(caller, call, options, *front));
            return wait_on(waiting, wrapped, context).map(E::from);
        }
        // A guard, not a counted reference: every core counting the one snapshot's references
        // would pass its cache line back and forth on every call.
        let snapshot = registry.inner.snapshot.load();
        match &*options {
            None => {
                let run = registry.run_from(caller, *front);
                let go_on = |rest: Rest| Box::pin(rest.go_on(run)) as Continuation<'a>;
                let run = (run, AtStart);
                path::begin(run, config, &snapshot, call, context, go_on, waiting)
            }
            Some(options) => {
                // What goes on after a wait holds the options too.
                let go_on = |rest: Rest| {
                    let options = Arc::clone(options);
                    let going = async move { rest.go_on(options.run(registry, caller)).await };
                    Box::pin(going) as Continuation<'a>
                };
                let run = (options.run(registry, caller), AtStart);
                path::begin(run, config, &snapshot, call, context, go_on, waiting)
            }
        }
    }
}

/// The options of a call that has some, taken apart.
pub(crate) struct Options {
    cancel: Option<CancellationToken>,
    dry_run: bool,
    run_id: Option<String>,
    front: crate::FrontEnd,
    client: ClientSide,
}

impl From<CallOptions> for Options {
    fn from(options: CallOptions) -> Self {
        let CallOptions {
            cancel,
            dry_run,
            run_id,
            front,
            progress,
            log,
            input,
            ask_caller,
            step_of,
        } = options;
        Options {
            cancel,
            dry_run,
            run_id,
            front,
            client: ClientSide {
                progress,
                log,
                input: input.map(Arc::new),
                ask_caller,
                step_of,
            },
        }
    }
}

impl Options {
    /// Whether these are no options at all (a plain call).
    pub(crate) fn is_plain(&self) -> bool {
        self.cancel.is_none()
            && !self.dry_run
            && self.run_id.is_none()
            && self.front == crate::FrontEnd::Library
            && self.client.is_empty()
    }

    /// How a call with these options runs for `caller`.
    pub(crate) fn run<'r>(&'r self, registry: &'r Registry, caller: &'r Caller) -> Run<'r> {
        Run {
            cancel: Cancel(self.cancel.as_ref()),
            dry_run: self.dry_run,
            run_id: self.run_id.as_deref(),
            front: self.front,
            ..registry.run_for(caller, Some(&self.client))
        }
    }
}

/// A call of a batch, to the batch's tools (inside the application's wrappers, if it has
/// any).
pub(crate) struct InBatch<'a> {
    pub(crate) run: &'a Run<'a>,
    pub(crate) snapshot: &'a Snapshot,
    pub(crate) call: ToolCall,
}

impl<'a> Begin<'a> for InBatch<'a> {
    type Ending = ToolOutcome;

    #[inline]
    fn begin(
        &mut self,
        context: &mut Context<'_>,
        waiting: &mut Option<Continuation<'a>>,
    ) -> Poll<ToolOutcome> {
        let InBatch {
            run,
            snapshot,
            call,
        } = self;
        let (run, snapshot) = (*run, *snapshot);
        if run.config.governance.stages.wrap_calls() {
            let wrapped = Box::pin(execute(run, snapshot, call.take(), AtStart));
            return wait_on(waiting, wrapped, context);
        }
        let go_on = |rest: Rest| Box::pin(rest.go_on(*run)) as Continuation<'a>;
        let run_at = (*run, AtStart);
        path::begin(run_at, run.config, snapshot, call, context, go_on, waiting)
    }
}

/// A call of a run, entering the path at `entrance`, inside no wrapper (those around it
/// are the caller's to make).
struct Unwrapped<'a, N> {
    run: &'a Run<'a>,
    snapshot: &'a Snapshot,
    call: ToolCall,
    entrance: N,
}

impl<'a, N: Entrance + Unpin> Begin<'a> for Unwrapped<'a, N> {
    type Ending = ToolOutcome;

    fn begin(
        &mut self,
        context: &mut Context<'_>,
        waiting: &mut Option<Continuation<'a>>,
    ) -> Poll<ToolOutcome> {
        let run = self.run;
        let go_on = |rest: Rest| Box::pin(rest.go_on(*run)) as Continuation<'a>;
        let run_at = (*run, self.entrance);
        path::begin(
            run_at,
            run.config,
            self.snapshot,
            &mut self.call,
            context,
            go_on,
            waiting,
        )
    }
}

/// A call of `run` down its path from `entrance`, inside no wrapper.
pub(crate) fn unwrapped<'a, N: Entrance + Unpin + Send + 'a>(
    run: &'a Run<'a>,
    snapshot: &'a Snapshot,
    call: ToolCall,
    entrance: N,
) -> impl Future<Output = ToolOutcome> + Send + 'a {
    Calling::new(Unwrapped {
        run,
        snapshot,
        call,
        entrance,
    })
}

/// A call of `run` down its path from `entrance`, inside the application's wrappers: each
/// wrapper sees the whole call, refusals and waits for approval included.
pub(crate) async fn execute<'a, N: Entrance + Unpin + Send + 'a>(
    run: &'a Run<'a>,
    snapshot: &'a Snapshot,
    call: ToolCall,
    entrance: N,
) -> ToolOutcome {
    let stages = &run.config.governance.stages;
    let (id, name) = (call.id.clone(), call.name.clone());
    let inner = unwrapped(run, snapshot, call, entrance);
    if !stages.wrap_calls() {
        return inner.await;
    }
    let seen = WrappedCall {
        caller: run.caller,
        tool: &name,
        call_id: &id,
        front: run.front,
        run_id: run.run_id,
        resumed: None,
    };
    match stages.wrapped(&seen, Box::pin(inner)) {
        Ok(wrapped) => wrapped.await,
        Err(error) => {
            // The call never began: its refusal is recorded like any other.
            let call = ToolCall::new(id, name, Value::Object(Default::default()));
            reject(run.config, run.caller, call, error).await
        }
    }
}
