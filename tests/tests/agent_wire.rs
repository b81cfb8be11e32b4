//! The model clients against loopback servers that speak each provider's wire format: the
//! tools go out in the provider's shape, results come back matched to call ids in order,
//! streams are read piece by piece, and failures (429, 500, garbage) end as clear statuses.

mod agent;

use std::time::Duration;

use agent::server::{ModelServer, Recorded, Reply};
use agent::{Ran, builder};
use serde_json::{Value, json};
use toolgate::Caller;
use toolgate::agent::models::{Anthropic, Gemini, HttpSettings, OpenAiChat, OpenAiResponses};
use toolgate::agent::{Agent, CallDecision, Model, ModelError, ModelErrorKind, Run, RunStatus};
use toolgate::events::EventKind;

fn customer() -> Caller {
    Caller::new("cust-1", "customer")
}

fn agent(ran: &Ran, model: impl Model) -> Agent {
    Agent::builder(builder(ran).build().unwrap(), model)
        .system("Be brief.")
        .build()
}

fn quick_retries() -> HttpSettings {
    HttpSettings {
        max_retries: 2,
        initial_backoff: Duration::from_millis(1),
        ..HttpSettings::default()
    }
}

/// Why the run's model failed; any other status fails the test.
fn model_failure(run: &Run) -> &ModelError {
    match run.status() {
        RunStatus::ModelFailed { error } => error,
        other => panic!("expected model_failed, got {other:?}"),
    }
}

fn names(tools: &Value, pointer: &str) -> Vec<String> {
    tools
        .as_array()
        .unwrap()
        .iter()
        .map(|tool| tool.pointer(pointer).unwrap().as_str().unwrap().to_owned())
        .collect()
}

fn chat_completion(message: Value) -> Reply {
    Reply::json(json!({
        "choices": [{"index": 0, "message": message, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 10, "completion_tokens": 3}
    }))
}

fn chat_calls(calls: &[(&str, &str, &str)]) -> Reply {
    let calls: Vec<Value> = calls
        .iter()
        .map(|(id, name, arguments)| json!({"id": id, "type": "function", "function": {"name": name, "arguments": arguments}}))
        .collect();
    chat_completion(json!({"role": "assistant", "content": null, "tool_calls": calls}))
}

fn chat_text(text: &str) -> Reply {
    chat_completion(json!({"role": "assistant", "content": text}))
}

#[tokio::test]
async fn openai_chat_sends_the_callers_tools_and_answers_each_call_by_id_in_order() {
    let server = ModelServer::start([
        chat_calls(&[
            ("call_b", "lookup_pet", r#"{"name": "Rex"}"#),
            ("call_a", "delete_everything", "{}"),
        ]),
        chat_text("Rex is a dog."),
    ])
    .await;
    let model = OpenAiChat::new(format!("{}/v1", server.base), "test-model")
        .api_key("sk-test")
        .param("temperature", 0);
    let ran = Ran::default();
    let run = agent(&ran, model)
        .run(&customer(), "What is Rex?")
        .await
        .unwrap();
    assert_eq!(run.text(), Some("Rex is a dog."));
    assert_eq!(run.usage().input_tokens, 20);

    let requests = server.requests();
    let first = &requests[0];
    assert_eq!(first.path, "/v1/chat/completions");
    assert_eq!(first.headers["authorization"], "Bearer sk-test");
    assert_eq!(first.body["model"], "test-model");
    assert_eq!(first.body["temperature"], 0);
    assert_eq!(
        first.body["messages"][0],
        json!({"role": "system", "content": "Be brief."})
    );
    assert_eq!(
        names(&first.body["tools"], "/function/name"),
        ["lookup_pet", "transfer"]
    );
    assert_eq!(first.body["tools"][0]["type"], "function");

    let messages = requests[1].body["messages"].as_array().unwrap().clone();
    let tail = &messages[messages.len() - 3..];
    assert_eq!(tail[0]["role"], "assistant");
    assert_eq!(tail[0]["tool_calls"][0]["id"], "call_b");
    assert_eq!(
        tail[0]["tool_calls"][1]["function"]["name"],
        "delete_everything"
    );
    assert_eq!(
        (tail[1]["role"].as_str(), tail[1]["tool_call_id"].as_str()),
        (Some("tool"), Some("call_b"))
    );
    assert_eq!(tail[1]["content"], r#"{"pet":"Rex","species":"dog"}"#);
    assert_eq!(tail[2]["tool_call_id"], "call_a");
    // The hidden tool is answered like an unknown one, as a tool error the model can read.
    assert!(
        tail[2]["content"]
            .as_str()
            .unwrap()
            .contains("unknown_tool")
    );
}

#[tokio::test]
async fn openai_chat_streams_text_and_tool_call_pieces() {
    let chunk = |delta: Value| (None, json!({"choices": [{"index": 0, "delta": delta}]}));
    let first = Reply::events(
        &[
            chunk(
                json!({"role": "assistant", "tool_calls": [{"index": 0, "id": "call_1", "type": "function", "function": {"name": "lookup_pet", "arguments": ""}}]}),
            ),
            chunk(json!({"tool_calls": [{"index": 0, "function": {"arguments": "{\"na"}}]})),
            chunk(
                json!({"tool_calls": [{"index": 0, "function": {"arguments": "me\": \"Rex\"}"}}]}),
            ),
            (
                None,
                json!({"choices": [], "usage": {"prompt_tokens": 7, "completion_tokens": 5}}),
            ),
        ],
        true,
    );
    let second = Reply::events(
        &[
            chunk(json!({"content": "Rex "})),
            chunk(json!({"content": "is a dog."})),
        ],
        true,
    );
    let server = ModelServer::start([first, second]).await;
    let model = OpenAiChat::new(format!("{}/v1", server.base), "m").stream(true);
    let ran = Ran::default();
    let agent = agent(&ran, model);
    let mut events = agent.registry().events();
    let run = agent.run(&customer(), "What is Rex?").await.unwrap();
    assert_eq!(run.text(), Some("Rex is a dog."));
    assert_eq!(run.calls()[0].arguments, json!({"name": "Rex"}));
    assert_eq!(run.usage().input_tokens, 7);
    assert_eq!(server.requests()[0].body["stream"], true);

    let mut text = String::new();
    let mut arguments = String::new();
    while let Ok(event) = events.try_recv() {
        match &event.kind {
            EventKind::TextDelta { text: piece, .. } => text.push_str(piece),
            EventKind::ToolCallDelta {
                arguments: piece, ..
            } => arguments.push_str(piece),
            _ => {}
        }
    }
    assert_eq!(text, "Rex is a dog.");
    assert_eq!(arguments, r#"{"name": "Rex"}"#);
}

#[tokio::test]
async fn openai_responses_sends_function_calls_and_their_outputs_by_call_id() {
    let server = ModelServer::start([
        Reply::json(json!({"status": "completed", "output": [
            {"type": "function_call", "id": "fc_1", "call_id": "call_9", "name": "lookup_pet", "arguments": "{\"name\": \"Rex\"}"}
        ], "usage": {"input_tokens": 5, "output_tokens": 2}})),
        Reply::json(json!({"status": "completed", "output": [
            {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "A dog."}]}
        ]})),
    ])
    .await;
    let model = OpenAiResponses::new(format!("{}/v1", server.base), "m");
    let run = agent(&Ran::default(), model)
        .run(&customer(), "Rex?")
        .await
        .unwrap();
    assert_eq!(run.text(), Some("A dog."));
    let requests = server.requests();
    assert_eq!(requests[0].path, "/v1/responses");
    assert_eq!(requests[0].body["instructions"], "Be brief.");
    assert_eq!(
        names(&requests[0].body["tools"], "/name"),
        ["lookup_pet", "transfer"]
    );
    let input = requests[1].body["input"].as_array().unwrap();
    assert_eq!(input[0], json!({"role": "user", "content": "Rex?"}));
    assert_eq!(input[1]["type"], "function_call");
    assert_eq!(input[1]["call_id"], "call_9");
    assert_eq!(input[2]["type"], "function_call_output");
    assert_eq!(input[2]["call_id"], "call_9");
}

/// An Anthropic stream: each event named by its `type`, as the API names them.
fn anthropic_stream(events: &[Value]) -> Reply {
    let named: Vec<(Option<&str>, Value)> = events
        .iter()
        .map(|data| (data["type"].as_str(), data.clone()))
        .collect();
    Reply::events(&named, false)
}

fn anthropic_message(content: Value) -> Reply {
    Reply::json(
        json!({"type": "message", "role": "assistant", "content": content,
        "usage": {"input_tokens": 11, "output_tokens": 4}}),
    )
}

#[tokio::test]
async fn anthropic_sends_tool_results_in_one_user_message_in_call_order() {
    let server = ModelServer::start([
        anthropic_message(json!([
            {"type": "text", "text": "Checking."},
            {"type": "tool_use", "id": "toolu_2", "name": "lookup_pet", "input": {"name": "Rex"}},
            {"type": "tool_use", "id": "toolu_1", "name": "lookup_pet", "input": {"name": ""}}
        ])),
        anthropic_message(json!([{"type": "text", "text": "Rex is a dog."}])),
    ])
    .await;
    let model = Anthropic::new(&server.base, "claude-test")
        .api_key("sk-ant")
        .max_tokens(256);
    let run = agent(&Ran::default(), model)
        .run(&customer(), "Rex?")
        .await
        .unwrap();
    assert_eq!(run.text(), Some("Rex is a dog."));
    let requests = server.requests();
    let first = &requests[0];
    assert_eq!(first.path, "/v1/messages");
    assert_eq!(first.headers["x-api-key"], "sk-ant");
    assert_eq!(first.headers["anthropic-version"], "2023-06-01");
    assert_eq!(first.body["max_tokens"], 256);
    assert_eq!(first.body["system"], "Be brief.");
    assert_eq!(
        names(&first.body["tools"], "/name"),
        ["lookup_pet", "transfer"]
    );
    assert!(first.body["tools"][0]["input_schema"].is_object());

    let messages = requests[1].body["messages"].as_array().unwrap();
    assert_eq!(messages[1]["role"], "assistant");
    assert_eq!(messages[1]["content"][1]["type"], "tool_use");
    let results = &messages[2];
    assert_eq!(results["role"], "user");
    assert_eq!(results["content"][0]["tool_use_id"], "toolu_2");
    assert_eq!(results["content"][0]["is_error"], false);
    assert_eq!(results["content"][1]["tool_use_id"], "toolu_1");
    assert_eq!(results["content"][1]["is_error"], true);
}

#[tokio::test]
async fn anthropic_streams_text_and_tool_input_pieces() {
    let events = [
        json!({"type": "message_start", "message": {"usage": {"input_tokens": 9}}}),
        json!({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}),
        json!({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "Looking"}}),
        json!({"type": "content_block_start", "index": 1, "content_block": {"type": "tool_use", "id": "toolu_9", "name": "lookup_pet", "input": {}}}),
        json!({"type": "content_block_delta", "index": 1, "delta": {"type": "input_json_delta", "partial_json": "{\"name\":"}}),
        json!({"type": "content_block_delta", "index": 1, "delta": {"type": "input_json_delta", "partial_json": " \"Rex\"}"}}),
        json!({"type": "message_delta", "delta": {"stop_reason": "tool_use"}, "usage": {"output_tokens": 12}}),
        json!({"type": "message_stop"}),
    ];
    let server = ModelServer::start([
        anthropic_stream(&events),
        anthropic_message(json!([{"type": "text", "text": "A dog."}])),
    ])
    .await;
    let model = Anthropic::new(&server.base, "claude-test").stream(true);
    let run = agent(&Ran::default(), model)
        .run(&customer(), "Rex?")
        .await
        .unwrap();
    assert_eq!(run.text(), Some("A dog."));
    assert_eq!(run.calls()[0].call_id, "toolu_9");
    assert_eq!(run.calls()[0].arguments, json!({"name": "Rex"}));
    assert_eq!(run.usage().input_tokens, 9 + 11);
    assert_eq!(server.requests()[0].body["stream"], true);
}

#[tokio::test]
async fn gemini_sends_function_responses_by_name_and_id() {
    let server = ModelServer::start([
        Reply::json(
            json!({"candidates": [{"content": {"role": "model", "parts": [
            {"functionCall": {"id": "g1", "name": "lookup_pet", "args": {"name": "Rex"}}}
        ]}}], "usageMetadata": {"promptTokenCount": 3, "candidatesTokenCount": 1}}),
        ),
        Reply::json(
            json!({"candidates": [{"content": {"role": "model", "parts": [{"text": "A dog."}]}}]}),
        ),
    ])
    .await;
    let model = Gemini::new(&server.base, "gemini-test").api_key("g-key");
    let run = agent(&Ran::default(), model)
        .run(&customer(), "Rex?")
        .await
        .unwrap();
    assert_eq!(run.text(), Some("A dog."));
    let requests = server.requests();
    assert_eq!(
        requests[0].path,
        "/v1beta/models/gemini-test:generateContent"
    );
    assert_eq!(requests[0].headers["x-goog-api-key"], "g-key");
    assert_eq!(
        requests[0].body["systemInstruction"]["parts"][0]["text"],
        "Be brief."
    );
    let declarations = &requests[0].body["tools"][0]["functionDeclarations"];
    assert_eq!(names(declarations, "/name"), ["lookup_pet", "transfer"]);
    let contents = requests[1].body["contents"].as_array().unwrap();
    assert_eq!(contents[1]["role"], "model");
    assert_eq!(contents[1]["parts"][0]["functionCall"]["id"], "g1");
    let response = &contents[2]["parts"][0]["functionResponse"];
    assert_eq!(
        (response["name"].as_str(), response["id"].as_str()),
        (Some("lookup_pet"), Some("g1"))
    );
    assert_eq!(
        response["response"]["output"],
        json!({"pet": "Rex", "species": "dog"})
    );
}

#[tokio::test]
async fn a_429_is_retried_after_its_retry_after_and_then_succeeds() {
    let server = ModelServer::start([
        Reply::status(429, r#"{"error": {"message": "slow down"}}"#).header("retry-after", "0"),
        Reply::status(503, r#"{"error": {"message": "busy"}}"#),
        chat_text("hello"),
    ])
    .await;
    let model = OpenAiChat::new(&server.base, "m").http(quick_retries());
    let run = agent(&Ran::default(), model)
        .run(&customer(), "hi")
        .await
        .unwrap();
    assert_eq!(run.text(), Some("hello"));
    assert_eq!(server.requests().len(), 3);
}

#[tokio::test]
async fn a_server_that_keeps_failing_ends_the_run_with_its_status_and_body_after_bounded_retries() {
    let failing = |n: usize| {
        Reply::status(
            500,
            &format!(r#"{{"error": {{"message": "the GPU caught fire ({n})"}}}}"#),
        )
    };
    let server = ModelServer::start((1..=5).map(failing).collect::<Vec<_>>()).await;
    let model = OpenAiChat::new(&server.base, "m").http(quick_retries());
    let run = agent(&Ran::default(), model)
        .run(&customer(), "hi")
        .await
        .unwrap();
    let error = model_failure(&run);
    assert_eq!(error.kind, ModelErrorKind::Status);
    assert_eq!(error.status, Some(500));
    assert!(
        error
            .body
            .as_deref()
            .unwrap()
            .contains("the GPU caught fire")
    );
    assert_eq!(server.requests().len(), 3, "one try and two retries");
}

#[tokio::test]
async fn the_same_refusal_twice_is_not_tried_a_third_time() {
    // What llama-server answers a history it cannot take: the same 500, every time.
    let refusal = Reply::status(
        500,
        r#"{"error": {"message": "Failed to parse tool call"}}"#,
    );
    let server = ModelServer::start(vec![refusal; 5]).await;
    let model = OpenAiChat::new(&server.base, "m").http(HttpSettings {
        max_retries: 4,
        ..quick_retries()
    });
    let run = agent(&Ran::default(), model)
        .run(&customer(), "hi")
        .await
        .unwrap();
    assert_eq!(model_failure(&run).status, Some(500));
    assert_eq!(server.requests().len(), 2, "a try, a retry, and no more");
}

/// A reply cut off mid-call: the call is answered as a tool error and the history the
/// server reads back carries `{}` for its arguments, in both OpenAI formats.
#[tokio::test]
async fn a_call_cut_off_mid_arguments_is_an_error_and_the_history_stays_readable() {
    let server = ModelServer::start([
        chat_calls(&[("call_1", "lookup_pet", r#"{"name"#)]),
        chat_text("Sorry."),
    ])
    .await;
    let model = OpenAiChat::new(&server.base, "m");
    let run = agent(&Ran::default(), model)
        .run(&customer(), "Rex?")
        .await
        .unwrap();
    assert_eq!(run.text(), Some("Sorry."));
    let messages = server.requests()[1].body["messages"]
        .as_array()
        .unwrap()
        .clone();
    let tail = &messages[messages.len() - 2..];
    assert_eq!(tail[0]["tool_calls"][0]["function"]["arguments"], "{}");
    let answer = tail[1]["content"].as_str().unwrap();
    assert!(answer.contains("invalid_arguments"), "{answer}");

    let server = ModelServer::start([
        Reply::json(json!({"status": "completed", "output": [
            {"type": "function_call", "id": "fc_1", "call_id": "call_1", "name": "lookup_pet", "arguments": "[1, 2"}
        ]})),
        Reply::json(json!({"status": "completed", "output": [
            {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "Sorry."}]}
        ]})),
    ])
    .await;
    let model = OpenAiResponses::new(&server.base, "m");
    let run = agent(&Ran::default(), model)
        .run(&customer(), "Rex?")
        .await
        .unwrap();
    assert_eq!(run.text(), Some("Sorry."));
    let input = server.requests()[1].body["input"]
        .as_array()
        .unwrap()
        .clone();
    assert_eq!(input[1]["arguments"], "{}");
    assert!(
        input[2]["output"]
            .as_str()
            .unwrap()
            .contains("invalid_arguments")
    );
}

#[tokio::test]
async fn a_retry_after_beyond_the_limit_is_not_waited_for() {
    let server = ModelServer::start([
        Reply::status(429, "{}").header("retry-after", "3600"),
        chat_text("late"),
    ])
    .await;
    let model = OpenAiChat::new(&server.base, "m").http(quick_retries());
    let run = agent(&Ran::default(), model)
        .run(&customer(), "hi")
        .await
        .unwrap();
    let error = model_failure(&run);
    assert_eq!(error.kind, ModelErrorKind::RateLimited);
    assert_eq!(server.requests().len(), 1);
}

#[tokio::test]
async fn a_client_error_is_not_retried_and_garbage_is_reported_as_malformed() {
    let server =
        ModelServer::start([Reply::status(400, r#"{"error": {"message": "bad tools"}}"#)]).await;
    let model = OpenAiChat::new(&server.base, "m").http(quick_retries());
    let run = agent(&Ran::default(), model)
        .run(&customer(), "hi")
        .await
        .unwrap();
    let error = model_failure(&run);
    assert_eq!(
        (error.kind, error.status),
        (ModelErrorKind::Status, Some(400))
    );
    assert_eq!(server.requests().len(), 1);

    for garbage in [
        "<html>oops</html>",
        r#"{"choices": []}"#,
        r#"{"choices": [{"message": {"tool_calls": "x"}}]}"#,
    ] {
        let server = ModelServer::start([Reply::status(200, garbage)]).await;
        let model = OpenAiChat::new(&server.base, "m").http(quick_retries());
        let run = agent(&Ran::default(), model)
            .run(&customer(), "hi")
            .await
            .unwrap();
        let error = model_failure(&run);
        assert_eq!(error.kind, ModelErrorKind::Malformed, "{garbage}: {error}");
    }
    let unreachable = OpenAiChat::new("http://127.0.0.1:9", "m").http(quick_retries());
    let run = agent(&Ran::default(), unreachable)
        .run(&customer(), "hi")
        .await
        .unwrap();
    let error = model_failure(&run);
    assert_eq!(error.kind, ModelErrorKind::Connect);
}

#[tokio::test]
async fn over_the_wire_an_approval_interrupt_then_resume_runs_the_call_once() {
    let server = ModelServer::start([
        chat_calls(&[("call_pay", "transfer", r#"{"amount": 3, "to": "bob"}"#)]),
        chat_text("Sent."),
    ])
    .await;
    let ran = Ran::default();
    let agent = agent(&ran, OpenAiChat::new(&server.base, "m"));
    let run = agent.run(&customer(), "pay bob").await.unwrap();
    assert_eq!(run.pending()[0].call_id, "call_pay");
    assert_eq!(server.requests().len(), 1);
    let staff = Caller::new("dr-lee", "staff");
    agent
        .decide(&staff, run.id(), [CallDecision::approve("call_pay")])
        .await
        .unwrap();
    let run = agent.resume(&customer(), run.id(), []).await.unwrap();
    assert_eq!(run.text(), Some("Sent."));
    assert_eq!(ran.transfers(), 1);
    let requests: Vec<Recorded> = server.requests();
    let messages = requests[1].body["messages"].as_array().unwrap();
    let last = messages.last().unwrap();
    assert_eq!(
        (last["role"].as_str(), last["tool_call_id"].as_str()),
        (Some("tool"), Some("call_pay"))
    );
    assert_eq!(last["content"], r#"{"sent":3,"to":"bob"}"#);
}

/// The status of a run whose model answered once with `reply`.
async fn one_answer(reply: Reply, model: impl Fn(&str) -> Box<dyn Model>) -> RunStatus {
    let server = ModelServer::start([reply]).await;
    let run = agent(&Ran::default(), model(&server.base))
        .run(&customer(), "Tell me everything.")
        .await
        .unwrap();
    run.status().clone()
}

#[tokio::test]
async fn an_answer_cut_off_at_the_output_limit_is_its_own_status_in_every_format() {
    let cut = RunStatus::CutOff {
        text: "Rex is a".into(),
    };
    let chat = Reply::json(json!({"choices": [{"index": 0, "finish_reason": "length",
        "message": {"role": "assistant", "content": "Rex is a"}}]}));
    let status = one_answer(chat, |base| Box::new(OpenAiChat::new(base, "m"))).await;
    assert_eq!(status, cut);
    assert!(
        status.to_string().contains("raise its `max_tokens`"),
        "{status}"
    );

    let chunk = |delta: Value, finish: Value| {
        (
            None,
            json!({"choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}),
        )
    };
    let streamed = Reply::events(
        &[
            chunk(json!({"content": "Rex "}), Value::Null),
            chunk(json!({"content": "is a"}), json!("length")),
        ],
        true,
    );
    let status = one_answer(streamed, |base| {
        Box::new(OpenAiChat::new(base, "m").stream(true))
    })
    .await;
    assert_eq!(status, cut);

    let responses = Reply::json(json!({"status": "incomplete",
        "incomplete_details": {"reason": "max_output_tokens"}, "output": [
        {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "Rex is a"}]}
    ]}));
    let status = one_answer(responses, |base| Box::new(OpenAiResponses::new(base, "m"))).await;
    assert_eq!(status, cut);

    let anthropic = Reply::json(json!({"type": "message", "role": "assistant",
        "stop_reason": "max_tokens", "content": [{"type": "text", "text": "Rex is a"}]}));
    let status = one_answer(anthropic, |base| Box::new(Anthropic::new(base, "c"))).await;
    assert_eq!(status, cut);

    let anthropic_stream = anthropic_stream(&[
        json!({"type": "message_start", "message": {"usage": {"input_tokens": 9}}}),
        json!({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}),
        json!({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "Rex is a"}}),
        json!({"type": "message_delta", "delta": {"stop_reason": "max_tokens"}, "usage": {"output_tokens": 3}}),
        json!({"type": "message_stop"}),
    ]);
    let status = one_answer(anthropic_stream, |base| {
        Box::new(Anthropic::new(base, "c").stream(true))
    })
    .await;
    assert_eq!(status, cut);

    let gemini = Reply::json(json!({"candidates": [{"finishReason": "MAX_TOKENS",
        "content": {"role": "model", "parts": [{"text": "Rex is a"}]}}]}));
    let status = one_answer(gemini, |base| Box::new(Gemini::new(base, "g"))).await;
    assert_eq!(status, cut);
}

#[tokio::test]
async fn a_call_cut_off_at_the_output_limit_is_refused_as_such_and_whole_calls_run() {
    let cut_reply = Reply::json(json!({"choices": [{"index": 0, "finish_reason": "length",
    "message": {"role": "assistant", "content": null, "tool_calls": [
        {"id": "c1", "type": "function", "function": {"name": "lookup_pet", "arguments": "{\"name\": \"Rex\"}"}},
        {"id": "c2", "type": "function", "function": {"name": "lookup_pet", "arguments": "{\"name\": \"Bel"}}
    ]}}]}));
    let server = ModelServer::start([cut_reply, chat_text("Rex is a dog.")]).await;
    let ran = Ran::default();
    let run = agent(&ran, OpenAiChat::new(&server.base, "m"))
        .run(&customer(), "Rex and Bella?")
        .await
        .unwrap();
    assert_eq!(run.text(), Some("Rex is a dog."));
    assert_eq!(ran.lookups.load(std::sync::atomic::Ordering::SeqCst), 1);
    let error = run.calls()[1].result.as_ref().unwrap_err();
    assert_eq!(error.code.as_str(), "cut_off");
    assert!(error.message.contains("output limit"), "{}", error.message);
    let messages = server.requests()[1].body["messages"]
        .as_array()
        .unwrap()
        .clone();
    let answer = messages.last().unwrap()["content"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(answer.contains("cut_off"), "{answer}");
}
