//! Example exchanges shown to the model before every conversation of an agent: a user's
//! message, the tools the assistant called with what they returned, and its answer. Small
//! models that never call a tool unprompted learn the shape of a call from them.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::message::{Message, ModelCall, ToolResult};

/// One example exchange ([`AgentBuilder::example`](super::AgentBuilder::example)). It is
/// shown to a caller only when every tool it calls is offered to that caller in that turn
/// (an example must not tell of a tool the caller may not see), and it is never part of a
/// run's transcript.
///
/// ```
/// use serde_json::json;
/// use toolgate::agent::Example;
///
/// let example = Example::new("What files are in my Documents folder?")
///     .call("list_directory", json!({"path": "Documents"}), json!("report.pdf\nnotes.txt"))
///     .answer("Your Documents folder holds report.pdf and notes.txt.");
/// # let _ = example;
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Example {
    /// What the user wrote.
    pub user: String,
    /// The calls the assistant made, in order, with what each returned.
    #[serde(default)]
    pub calls: Vec<ExampleCall>,
    /// What the assistant answered at the end.
    pub answer: String,
}

/// A call of an [`Example`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ExampleCall {
    /// The tool.
    pub tool: String,
    /// Its arguments (an object).
    #[serde(default = "empty_object")]
    pub arguments: Value,
    /// What it returned.
    pub result: Value,
}

fn empty_object() -> Value {
    Value::Object(Default::default())
}

impl Example {
    /// An example that begins with the user writing `user`.
    pub fn new(user: impl Into<String>) -> Self {
        Example {
            user: user.into(),
            calls: Vec::new(),
            answer: String::new(),
        }
    }

    /// The assistant calls `tool` with `arguments`, which returns `result`.
    pub fn call(mut self, tool: impl Into<String>, arguments: Value, result: Value) -> Self {
        self.calls.push(ExampleCall {
            tool: tool.into(),
            arguments,
            result,
        });
        self
    }

    /// The assistant's answer at the end.
    pub fn answer(mut self, answer: impl Into<String>) -> Self {
        self.answer = answer.into();
        self
    }

    /// The tools it calls.
    pub fn tools(&self) -> impl Iterator<Item = &str> {
        self.calls.iter().map(|call| call.tool.as_str())
    }

    /// The messages the model is shown, its calls' ids numbered from `number`.
    pub(crate) fn messages(&self, number: usize) -> Vec<Message> {
        let mut messages = vec![Message::User {
            text: self.user.clone(),
        }];
        if !self.calls.is_empty() {
            let id = |index: usize| format!("example_{number}_{index}");
            let calls = self
                .calls
                .iter()
                .enumerate()
                .map(|(index, call)| ModelCall {
                    id: id(index),
                    name: call.tool.clone(),
                    arguments: call.arguments.to_string(),
                });
            let results = self
                .calls
                .iter()
                .enumerate()
                .map(|(index, call)| ToolResult {
                    call_id: id(index),
                    tool: call.tool.clone(),
                    result: Ok(call.result.clone()),
                    is_content: false,
                });
            messages.push(Message::Assistant {
                text: None,
                calls: calls.collect(),
            });
            messages.push(Message::ToolResults {
                results: results.collect(),
            });
        }
        messages.push(Message::Assistant {
            text: Some(self.answer.clone()),
            calls: Vec::new(),
        });
        messages
    }
}
