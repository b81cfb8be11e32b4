//! The HTTP server span of each request (feature `otel`): the parent is what the request's
//! `traceparent` names, and the calls the request makes are its children.

use axum::extract::{MatchedPath, Request, State};
use axum::middleware::Next;
use axum::response::Response;
use opentelemetry::KeyValue;
use opentelemetry::context::FutureExt as _;
use opentelemetry::trace::SpanKind;

use crate::telemetry::conventions as name;
use crate::telemetry::{OperationSpan, Telemetry, propagation};

/// Adds the span to every route of `router` that the registry's telemetry (if any) traces.
pub(crate) fn traced<S: Clone + Send + Sync + 'static>(
    router: axum::Router<S>,
    telemetry: Option<&Telemetry>,
) -> axum::Router<S> {
    match telemetry {
        Some(telemetry) => {
            let layer = axum::middleware::from_fn_with_state(telemetry.clone(), in_span);
            router.route_layer(layer)
        }
        None => router,
    }
}

/// Runs the request in its span.
async fn in_span(State(telemetry): State<Telemetry>, request: Request, next: Next) -> Response {
    let parent = propagation::from_headers(request.headers());
    let method = request.method().as_str().to_owned();
    let route = request
        .extensions()
        .get::<MatchedPath>()
        .map(|path| path.as_str().to_owned());
    let mut attributes = vec![
        KeyValue::new(name::HTTP_METHOD, method.clone()),
        KeyValue::new(name::URL_PATH, request.uri().path().to_owned()),
    ];
    let span_name = match &route {
        Some(route) => format!("{method} {route}"),
        None => method,
    };
    if let Some(route) = route {
        attributes.push(KeyValue::new(name::HTTP_ROUTE, route));
    }
    let span = OperationSpan::start(
        &telemetry,
        (span_name, SpanKind::Server),
        &parent,
        attributes,
    );
    let response = next.run(request).with_context(span.context().clone()).await;
    let status = response.status();
    span.set([KeyValue::new(name::HTTP_STATUS, i64::from(status.as_u16()))]);
    if status.is_server_error() {
        span.fail(
            status.as_str(),
            status.canonical_reason().unwrap_or("server error"),
        );
    }
    span.end();
    response
}
