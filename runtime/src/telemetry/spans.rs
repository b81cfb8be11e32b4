//! A span the adapters hold over one operation of theirs (an HTTP request, an MCP request,
//! an agent run, a model request): started under a parent, current while the operation
//! runs, ended with its outcome.

use opentelemetry::trace::{SpanKind, Status, TraceContextExt, Tracer};
use opentelemetry::{Context, KeyValue};

use super::Telemetry;
use super::conventions as name;

/// One operation's span, in the context its work runs in.
pub(crate) struct OperationSpan {
    context: Context,
}

impl OperationSpan {
    /// Starts `name` under `parent`.
    pub(crate) fn start(
        telemetry: &Telemetry,
        (name, kind): (String, SpanKind),
        parent: &Context,
        attributes: Vec<KeyValue>,
    ) -> Self {
        let tracer = &telemetry.shared().tracer;
        let builder = tracer
            .span_builder(name)
            .with_kind(kind)
            .with_attributes(attributes);
        let span = tracer.build_with_context(builder, parent);
        OperationSpan {
            context: parent.with_span(span),
        }
    }

    /// The context the operation's work runs in (its span current).
    pub(crate) fn context(&self) -> &Context {
        &self.context
    }

    /// Sets attributes learnt as the operation goes.
    pub(crate) fn set(&self, attributes: impl IntoIterator<Item = KeyValue>) {
        self.context.span().set_attributes(attributes);
    }

    /// Marks the operation failed, with `error_type` (`error.type`) and what went wrong.
    pub(crate) fn fail(&self, error_type: &str, message: &str) {
        let span = self.context.span();
        span.set_attribute(KeyValue::new(name::ERROR_TYPE, error_type.to_owned()));
        let message = crate::util::bounded::clip(message, 1024).into_owned();
        span.set_status(Status::error(message));
    }

    /// Ends the span.
    pub(crate) fn end(self) {
        self.context.span().end();
    }
}
