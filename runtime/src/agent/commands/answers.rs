//! The answers of the slash commands, as text for the person.

use serde_json::Value;

use super::arguments;
use crate::call::ToolCall;
use crate::caller::Caller;
use crate::registry::Registry;
use crate::search::SearchHit;

pub(super) fn list(registry: &Registry, caller: &Caller) -> String {
    let tools = registry.visible_to(caller);
    if tools.is_empty() {
        return format!("no tool is open to your role ({})", caller.role());
    }
    tools
        .iter()
        .map(|tool| format!("{:<24} {}", tool.name, first_line(&tool.description)))
        .collect::<Vec<_>>()
        .join("\n")
}

pub(super) fn permissions(registry: &Registry, caller: &Caller) -> String {
    let tools = registry.visible_to(caller);
    let mut lines = vec![format!(
        "you are {} (role {}); you may use {} tools:",
        caller.id(),
        caller.role(),
        tools.len()
    )];
    lines.extend(tools.iter().map(|tool| {
        let kind = match (tool.hints.read_only, tool.hints.destructive) {
            (true, _) => ", reads only",
            (_, true) => ", destructive",
            _ => "",
        };
        format!(
            "{:<24} permission {}, risk {}{kind}",
            tool.name, tool.permission, tool.risk
        )
    }));
    lines.join("\n")
}

pub(super) fn hits(hits: Vec<SearchHit>) -> String {
    if hits.is_empty() {
        return "no tool fits".to_owned();
    }
    hits.iter()
        .map(|hit| {
            let tool = &hit.definition;
            format!(
                "{:<24} {:.2}  {}",
                tool.name,
                hit.relevance,
                first_line(&tool.description)
            )
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// `/tool NAME --param value ...`, called as the caller.
pub(super) async fn call(registry: &Registry, caller: &Caller, rest: &str) -> String {
    let words = match arguments::words(rest) {
        Ok(words) => words,
        Err(problem) => return problem,
    };
    let Some((name, flags)) = words.split_first() else {
        return "usage: /tool NAME --param value ...".to_owned();
    };
    // A hidden tool is answered as an unknown one: by the registry's own call.
    let schema = registry
        .definition(caller, name)
        .map(|tool| tool.input_schema.clone())
        .unwrap_or(Value::Null);
    let arguments = match arguments::typed(flags, &schema) {
        Ok(arguments) => arguments,
        Err(problem) => return problem,
    };
    let outcome = registry
        .call(
            caller,
            ToolCall::new("chat-command", name.as_str(), arguments),
        )
        .await;
    match outcome.result {
        Ok(Value::String(text)) => text,
        Ok(value) => serde_json::to_string_pretty(&value).unwrap_or_default(),
        Err(error) => format!("{}: {}", error.code, error.message),
    }
}

fn first_line(text: &str) -> &str {
    text.lines().next().unwrap_or_default()
}
