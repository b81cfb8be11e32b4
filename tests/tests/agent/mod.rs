//! What the agent tests share: a scripted model that records what it was sent, and a small
//! registry (a read-only lookup, a risky transfer that needs approval, an admin-only tool).

#![allow(dead_code)]

pub mod server;

use std::collections::VecDeque;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use serde_json::{Value, json};
use toolgate::agent::{Message, Model, ModelCall, ModelFuture, ModelReply, ModelRequest};
use toolgate::{FnTool, Registry, RegistryBuilder, Risk, ToolDefinition, ToolError};

/// What the model was sent on one turn.
#[derive(Debug, Clone)]
pub struct Seen {
    pub system: Option<String>,
    pub messages: Vec<Message>,
    pub tools: Vec<String>,
}

/// A model that answers from a script, one reply per turn, and records every request.
#[derive(Clone, Default)]
pub struct Scripted {
    replies: Arc<Mutex<VecDeque<ModelReply>>>,
    pub seen: Arc<Mutex<Vec<Seen>>>,
}

impl Scripted {
    pub fn new(replies: impl IntoIterator<Item = ModelReply>) -> Self {
        Scripted {
            replies: Arc::new(Mutex::new(replies.into_iter().collect())),
            seen: Arc::default(),
        }
    }

    pub fn seen(&self) -> Vec<Seen> {
        self.seen.lock().unwrap().clone()
    }
}

impl Model for Scripted {
    fn respond<'a>(&'a self, request: ModelRequest<'a>) -> ModelFuture<'a> {
        self.seen.lock().unwrap().push(Seen {
            system: request.system.map(str::to_owned),
            messages: request.messages.to_vec(),
            tools: request.tools.iter().map(|tool| tool.name.clone()).collect(),
        });
        let reply = self.replies.lock().unwrap().pop_front();
        Box::pin(async move { Ok(reply.unwrap_or_else(|| text("(script ended)"))) })
    }
}

/// A reply with text only.
pub fn text(text: &str) -> ModelReply {
    ModelReply {
        text: Some(text.to_owned()),
        ..ModelReply::default()
    }
}

/// A reply calling tools: `(id, name, arguments JSON text)`.
pub fn calls(calls: &[(&str, &str, &str)]) -> ModelReply {
    ModelReply {
        calls: calls
            .iter()
            .map(|(id, name, arguments)| ModelCall {
                id: (*id).to_owned(),
                name: (*name).to_owned(),
                arguments: (*arguments).to_owned(),
            })
            .collect(),
        ..ModelReply::default()
    }
}

/// The results the model was given in its last request, as `(call id, result)`.
pub fn last_results(seen: &Seen) -> Vec<(String, Result<Value, ToolError>)> {
    match seen.messages.last() {
        Some(Message::ToolResults { results }) => results
            .iter()
            .map(|result| (result.call_id.clone(), result.result.clone()))
            .collect(),
        other => panic!("the last message is not tool results: {other:?}"),
    }
}

/// Counts of how often each tool really ran.
#[derive(Clone, Default)]
pub struct Ran {
    pub transfers: Arc<AtomicUsize>,
    pub lookups: Arc<AtomicUsize>,
}

impl Ran {
    pub fn transfers(&self) -> usize {
        self.transfers.load(Ordering::SeqCst)
    }
}

fn object_schema(properties: Value, required: &[&str]) -> Value {
    json!({"type": "object", "properties": properties, "required": required, "additionalProperties": false})
}

/// `lookup_pet` (public, read-only), `transfer` (customer, high risk: needs approval),
/// `delete_everything` (admin only).
pub fn builder(ran: &Ran) -> RegistryBuilder {
    let lookups = Arc::clone(&ran.lookups);
    let mut lookup = ToolDefinition::new(
        "lookup_pet",
        "Look up a pet by name.",
        "public",
        object_schema(
            json!({"name": {"type": "string", "minLength": 1}}),
            &["name"],
        ),
    );
    lookup.hints.read_only = true;
    let lookup = FnTool::new(lookup, move |_, arguments| {
        lookups.fetch_add(1, Ordering::SeqCst);
        async move { Ok(json!({"pet": arguments["name"], "species": "dog"})) }
    });
    let transfers = Arc::clone(&ran.transfers);
    let mut transfer = ToolDefinition::new(
        "transfer",
        "Send money.",
        "customer",
        object_schema(
            json!({"amount": {"type": "integer", "minimum": 1}, "to": {"type": "string"}}),
            &["amount", "to"],
        ),
    );
    transfer.risk = Risk::High;
    let transfer = FnTool::new(transfer, move |_, arguments| {
        transfers.fetch_add(1, Ordering::SeqCst);
        async move { Ok(json!({"sent": arguments["amount"], "to": arguments["to"]})) }
    });
    let admin = FnTool::new(
        ToolDefinition::new(
            "delete_everything",
            "Delete all data.",
            "admin",
            object_schema(json!({}), &[]),
        ),
        |_, _| async { Ok(json!("deleted")) },
    );
    Registry::builder()
        .roles(["public", "customer", "staff", "admin"])
        .approver_role("staff")
        .linked_tools(false)
        .tool(lookup)
        .tool(transfer)
        .tool(admin)
}
