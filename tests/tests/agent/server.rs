//! A scripted model server on loopback: answers each request with the next scripted reply
//! and records every request (path, headers, JSON body) for the tests to check.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

use axum::body::Bytes;
use axum::http::{HeaderMap, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use serde_json::Value;

/// One scripted answer.
#[derive(Clone)]
pub struct Reply {
    pub status: u16,
    pub headers: Vec<(&'static str, String)>,
    pub body: String,
}

impl Reply {
    pub fn json(body: Value) -> Self {
        Reply {
            status: 200,
            headers: vec![("content-type", "application/json".into())],
            body: body.to_string(),
        }
    }

    /// Server-sent events, one `data:` per value (with an `event:` name if given).
    pub fn events(events: &[(Option<&str>, Value)], done: bool) -> Self {
        let mut body = String::new();
        for (name, data) in events {
            if let Some(name) = name {
                body.push_str(&format!("event: {name}\n"));
            }
            body.push_str(&format!("data: {data}\n\n"));
        }
        if done {
            body.push_str("data: [DONE]\n\n");
        }
        Reply {
            status: 200,
            headers: vec![("content-type", "text/event-stream".into())],
            body,
        }
    }

    pub fn status(status: u16, body: &str) -> Self {
        Reply {
            status,
            headers: vec![("content-type", "application/json".into())],
            body: body.to_owned(),
        }
    }

    pub fn header(mut self, name: &'static str, value: &str) -> Self {
        self.headers.push((name, value.to_owned()));
        self
    }
}

/// A request as the server received it.
#[derive(Debug, Clone)]
pub struct Recorded {
    pub path: String,
    pub headers: HeaderMap,
    pub body: Value,
}

#[derive(Clone, Default)]
struct Script {
    replies: Arc<Mutex<VecDeque<Reply>>>,
    recorded: Arc<Mutex<Vec<Recorded>>>,
}

/// The running server.
pub struct ModelServer {
    pub base: String,
    script: Script,
}

impl ModelServer {
    pub async fn start(replies: impl IntoIterator<Item = Reply>) -> Self {
        let script = Script::default();
        script.replies.lock().unwrap().extend(replies);
        let state = script.clone();
        let app = axum::Router::new().fallback(move |uri: Uri, headers: HeaderMap, body: Bytes| {
            let state = state.clone();
            async move { answer(state, uri, headers, body) }
        });
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let base = format!("http://{}", listener.local_addr().unwrap());
        tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
        ModelServer { base, script }
    }

    /// Every request so far.
    pub fn requests(&self) -> Vec<Recorded> {
        self.script.recorded.lock().unwrap().clone()
    }
}

fn answer(script: Script, uri: Uri, headers: HeaderMap, body: Bytes) -> Response {
    let body = serde_json::from_slice(&body).unwrap_or(Value::Null);
    script.recorded.lock().unwrap().push(Recorded {
        path: uri.path().to_owned(),
        headers,
        body,
    });
    let Some(reply) = script.replies.lock().unwrap().pop_front() else {
        return (StatusCode::GONE, "the script has no more replies").into_response();
    };
    let mut response = Response::builder().status(reply.status);
    for (name, value) in &reply.headers {
        response = response.header(*name, value);
    }
    response.body(axum::body::Body::from(reply.body)).unwrap()
}
