//! A call made only if its tool runs in place with its arguments read straight into its
//! parameters: given up, before anything is decided or recorded, where the tool is not found
//! or its arguments are not so read; its caller then makes it the usual way. Its path is the
//! plain call's ([`begin`](super::begin)), which gives up where its ending
//! ([`IfInPlace`]) asks it to.

use std::task::{Context, Poll};

use super::{Continuation, Rest};
use crate::call::ToolCall;
use crate::caller::Caller;
use crate::registry::Registry;
use crate::registry::answer::IfInPlace;
use crate::registry::calling::Begin;

/// A single call to be made only in place (see the module).
pub(crate) struct InPlaceOnly<'a> {
    pub(crate) registry: &'a Registry,
    pub(crate) caller: &'a Caller,
    pub(crate) call: ToolCall,
}

impl<'a> Begin<'a> for InPlaceOnly<'a> {
    type Ending = IfInPlace;

    #[inline]
    fn begin(
        &mut self,
        context: &mut Context<'_>,
        waiting: &mut Option<Continuation<'a>>,
    ) -> Poll<IfInPlace> {
        let InPlaceOnly {
            registry,
            caller,
            call,
        } = self;
        let (registry, caller) = (*registry, *caller);
        let config = &registry.inner.config;
        // Nothing runs in place where the call's path waits from the start.
        if !super::immediate_in(config, false) {
            return Poll::Ready(IfInPlace(None));
        }
        let snapshot = registry.inner.snapshot.load();
        let run = registry.run_for(caller, None);
        let go_on = |rest: Rest| Box::pin(rest.go_on(run)) as Continuation<'a>;
        super::begin(run, config, &snapshot, call, context, go_on, waiting)
    }
}
