//! Every error as JSON: `{"error": {"code", "message"}}`.

use std::any::Any;

use axum::Json;
use axum::body::Body;
use axum::http::{Response, StatusCode, header};
use axum::response::IntoResponse;
use serde_json::json;

/// An HTTP error with a stable code, answered as JSON.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApiError {
    /// The status.
    pub status: StatusCode,
    /// A stable code, e.g. `malformed_body`.
    pub code: &'static str,
    /// What went wrong and how to fix the request.
    pub message: String,
}

impl ApiError {
    pub(crate) fn new(status: StatusCode, code: &'static str, message: impl Into<String>) -> Self {
        ApiError {
            status,
            code,
            message: message.into(),
        }
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> axum::response::Response {
        (
            self.status,
            Json(json!({"error": {"code": self.code, "message": self.message}})),
        )
            .into_response()
    }
}

/// The answer when a handler panicked: JSON, never an HTML page or a dropped connection.
pub(crate) fn panic_response(_payload: Box<dyn Any + Send + 'static>) -> Response<Body> {
    tracing::error!("an HTTP handler panicked; answered 500");
    let body = json!({"error": {"code": "internal_error", "message": "the server failed to handle this request"}});
    Response::builder()
        .status(StatusCode::INTERNAL_SERVER_ERROR)
        .header(header::CONTENT_TYPE, "application/json")
        .body(Body::from(body.to_string()))
        .unwrap_or_default()
}
