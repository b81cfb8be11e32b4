//! Tool search for one caller: a hidden tool never shows (not in results, suggestions,
//! did-you-mean, nor as a change in a visible tool's score), results are deterministic,
//! the index follows run-time changes, odd queries are answered, and `search_tools` works
//! in every provider format and in the agent loop.

mod agent;

use agent::{Scripted, calls, last_results, text};
use serde_json::{Value, json};
use toolgate::agent::{Agent, RunStatus};
use toolgate::formats::Format;
use toolgate::search::{Scored, Scorer};
use toolgate::tool_search::{SEARCH_TOOLS, SearchTools, ToolSearch};
use toolgate::{Caller, ErrorCode, FnTool, Registry, RegistryBuilder, ToolCall, ToolDefinition};

fn tool(name: &str, description: &str, role: &str) -> FnTool {
    let schema = json!({
        "type": "object",
        "properties": {"city": {"type": "string", "description": "The city."}},
        "additionalProperties": false
    });
    let definition = ToolDefinition::new(name, description, role, schema);
    let answer = name.to_owned();
    FnTool::new(definition, move |_, _| {
        let answer = answer.clone();
        async move { Ok(json!({"ran": answer})) }
    })
}

fn base() -> RegistryBuilder {
    Registry::builder()
        .roles(["public", "staff"])
        .linked_tools(false)
        .tool(tool(
            "get_weather",
            "Current weather and forecast for a city.",
            "public",
        ))
        .tool(tool(
            "book_table",
            "Reserve a table at a restaurant.",
            "public",
        ))
        .tool(tool(
            "send_email",
            "Send an e-mail message to someone.",
            "public",
        ))
}

fn with_hidden() -> Registry {
    base()
        .tool(tool(
            "delete_weather_station",
            "Delete a weather station and its forecast history.",
            "staff",
        ))
        .build()
        .unwrap()
}

fn public() -> Caller {
    Caller::new("u1", "public")
}

fn names(hits: &[toolgate::search::SearchHit]) -> Vec<String> {
    hits.iter().map(|hit| hit.definition.name.clone()).collect()
}

#[test]
fn a_hidden_tool_is_never_found_and_changes_no_score() {
    let registry = with_hidden();
    let query = "delete the weather station forecast";
    let found = names(&registry.search(&public(), query, 10));
    assert_eq!(found, ["get_weather"]);
    let staff = Caller::new("s1", "staff");
    assert_eq!(
        names(&registry.search(&staff, query, 1)),
        ["delete_weather_station"]
    );
    // Scores for the public caller are those of a registry without the hidden tool.
    let without = base().build().unwrap();
    let scores = |registry: &Registry| -> Vec<(String, f64)> {
        let hits = registry.search(&public(), "weather forecast for Paris", 10);
        hits.iter()
            .map(|hit| (hit.definition.name.clone(), hit.score))
            .collect()
    };
    assert_eq!(scores(&registry), scores(&without));
    assert!(
        registry
            .suggest(&public(), "please delete the weather station", 5)
            .iter()
            .all(|hit| hit.definition.name != "delete_weather_station")
    );
    // A caller whose role is unknown finds nothing.
    assert!(
        registry
            .search(&Caller::new("x", "nobody"), "weather", 5)
            .is_empty()
    );
}

#[tokio::test]
async fn did_you_mean_names_close_visible_tools_only() {
    let registry = with_hidden();
    let outcome = registry
        .call(&public(), ToolCall::new("1", "get_wether", "{}"))
        .await;
    let error = outcome.error().unwrap();
    assert_eq!(error.code, ErrorCode::UnknownTool);
    assert!(
        error.message.contains("did you mean `get_weather`"),
        "{}",
        error.message
    );
    // Misspelling the hidden tool gives the answer an unknown name gets: no trace of it.
    let hidden = registry
        .call(
            &public(),
            ToolCall::new("2", "delete_weather_statoin", "{}"),
        )
        .await;
    let message = &hidden.error().unwrap().message;
    assert!(!message.contains("delete_weather_station"), "{message}");
    assert_eq!(hidden.error().unwrap().code, ErrorCode::UnknownTool);
    // Nothing alike: no guess, only the list.
    let none = registry
        .call(&public(), ToolCall::new("3", "zzqx", "{}"))
        .await;
    assert!(!none.error().unwrap().message.contains("did you mean"));
}

#[test]
fn results_are_deterministic_with_ties_broken_by_name() {
    let registry = Registry::builder()
        .roles(["public"])
        .linked_tools(false)
        .tool(tool("b_twin", "Check the tide.", "public"))
        .tool(tool("a_twin", "Check the tide.", "public"))
        .build()
        .unwrap();
    let first = registry.search(&public(), "tide", 5);
    assert_eq!(names(&first), ["a_twin", "b_twin"]);
    assert_eq!(first[0].score, first[1].score);
    for _ in 0..20 {
        let again = registry.search(&public(), "tide", 5);
        assert_eq!(names(&again), names(&first));
        assert_eq!(again[0].score, first[0].score);
    }
    assert_eq!(names(&registry.search(&public(), "tide", 1)), ["a_twin"]);
}

#[test]
fn the_index_follows_register_and_unregister() {
    let registry = base().build().unwrap();
    assert!(registry.search(&public(), "translate text", 5).is_empty());
    registry
        .register(tool(
            "translate",
            "Translate text into another language.",
            "public",
        ))
        .unwrap();
    assert_eq!(
        names(&registry.search(&public(), "translate text", 5)),
        ["translate"]
    );
    assert!(registry.unregister("translate"));
    assert!(registry.search(&public(), "translate text", 5).is_empty());
    // Registered again with other words: found by the new ones only.
    registry
        .register(tool("translate", "Render a document in French.", "public"))
        .unwrap();
    assert!(
        registry
            .search(&public(), "translate text language", 5)
            .iter()
            .all(|hit| { hit.definition.description == "Render a document in French." })
    );
    assert_eq!(
        names(&registry.search(&public(), "french document", 5)),
        ["translate"]
    );
}

#[test]
fn empty_odd_and_unicode_queries_are_answered() {
    let registry = base()
        .tool(tool("获取工单", "获取客户的支持工单列表", "public").renamed("get_tickets_zh"))
        .tool(
            tool(
                "résumé_parser",
                "Lire un résumé et en extraire les expériences.",
                "public",
            )
            .renamed("resume_parser"),
        )
        .build()
        .unwrap();
    for query in ["", "   ", "?!…", "🙂🙂", "\u{200b}", "a"] {
        assert!(registry.search(&public(), query, 5).is_empty(), "{query:?}");
    }
    assert_eq!(
        names(&registry.search(&public(), "获取阿迪达斯的工单", 1)),
        ["get_tickets_zh"]
    );
    assert_eq!(
        names(&registry.search(&public(), "extraire les expériences", 1)),
        ["resume_parser"]
    );
    // A huge query is read up to its limit, not refused, and answers quickly enough to test.
    let huge = "weather ".repeat(200_000);
    assert_eq!(
        names(&registry.search(&public(), &huge, 1)),
        ["get_weather"]
    );
    assert!(registry.search(&public(), "weather", 0).is_empty());
    assert_eq!(registry.search(&public(), "weather", usize::MAX).len(), 1);
}

trait Renamed {
    fn renamed(self, name: &str) -> FnTool;
}

impl Renamed for FnTool {
    fn renamed(self, name: &str) -> FnTool {
        use toolgate::Tool;
        let mut definition = self.definition();
        definition.name = name.to_owned();
        FnTool::new(definition, |_, _| async { Ok(json!("ran")) })
    }
}

/// A scorer that names every tool it knows, ignoring levels (as a careless one might).
#[derive(Default)]
struct Careless(Vec<String>);

impl Scorer for Careless {
    fn insert(&mut self, tool: &ToolDefinition, _: usize) {
        self.0.push(tool.name.clone());
    }
    fn remove(&mut self, name: &str) {
        self.0.retain(|known| known != name);
    }
    fn search(&self, _: &str, _: usize, limit: usize) -> Vec<Scored> {
        let scored = self.0.iter().map(|name| Scored {
            name: name.clone(),
            score: 1.0,
            relevance: 1.0,
        });
        scored.take(limit).collect()
    }
}

struct Panicking;

impl Scorer for Panicking {
    fn insert(&mut self, _: &ToolDefinition, _: usize) {}
    fn remove(&mut self, _: &str) {}
    fn search(&self, _: &str, _: usize, _: usize) -> Vec<Scored> {
        panic!("the scorer broke")
    }
}

#[tokio::test]
async fn an_application_scorer_is_used_but_cannot_reveal_or_break_anything() {
    let registry = base()
        .tool(tool("delete_weather_station", "Delete a station.", "staff"))
        .search_scorer(Careless::default())
        .build()
        .unwrap();
    let found = names(&registry.search(&public(), "anything", 10));
    assert_eq!(found.len(), 3);
    assert!(!found.contains(&"delete_weather_station".to_owned()));

    let broken = base().search_scorer(Panicking).build().unwrap();
    assert!(broken.search(&public(), "weather", 5).is_empty());
    let outcome = broken
        .call(&public(), ToolCall::new("1", "get_wether", "{}"))
        .await;
    assert_eq!(outcome.error().unwrap().code, ErrorCode::UnknownTool);
    let outcome = broken
        .call(&public(), ToolCall::new("2", "get_weather", "{}"))
        .await;
    assert!(outcome.result.is_ok());
}

#[test]
fn suggestions_keep_only_relevant_tools() {
    let registry = base().build().unwrap();
    let offered = names(&registry.suggest(
        &public(),
        "User: hi!\nAssistant: hello\nUser: what's the weather forecast in Oslo?",
        3,
    ));
    assert_eq!(offered, ["get_weather"]);
    assert!(
        registry
            .suggest(&public(), "tell me a joke about cats", 3)
            .is_empty()
    );
    // A date adds the word "date" to a query; a tool matched by nothing else does not rank
    // and is never offered, however low the threshold.
    let lenient = base()
        .tool(tool("pick_date", "Pick a date.", "public"))
        .suggestion_threshold(0.0)
        .build()
        .unwrap();
    let query = "dinosaurs of 2023-10-01";
    let found = lenient.search(&public(), query, 3);
    assert_eq!(names(&found), ["pick_date"], "found, ranking nowhere");
    assert_eq!((found[0].score, found[0].relevance), (0.0, 0.0));
    assert!(lenient.suggest(&public(), query, 3).is_empty());
    let strict = base().suggestion_threshold(1.0).build().unwrap();
    assert!(
        strict
            .suggest(&public(), "weather in Oslo and send an email", 3)
            .len()
            <= 1
    );
}

/// Where each format puts a tool's name and schema.
fn listed_name(format: Format, tool: &Value) -> Option<&str> {
    match format {
        Format::OpenAiChat { .. } => tool["function"]["name"].as_str(),
        _ => tool["name"].as_str(),
    }
}

fn listed_schema(format: Format, tool: &Value) -> &Value {
    match format {
        Format::OpenAiChat { .. } => &tool["function"]["parameters"],
        Format::OpenAiResponses { .. } => &tool["parameters"],
        Format::Anthropic { .. } | Format::Canonical => &tool["input_schema"],
        Format::Gemini => &tool["parameters"],
        _ => &tool["inputSchema"],
    }
}

#[tokio::test]
async fn search_tools_round_trips_in_every_format() {
    let formats = [
        Format::Canonical,
        Format::OpenAiChat { strict: true },
        Format::OpenAiResponses { strict: false },
        Format::Anthropic { strict: false },
        Format::Gemini,
        Format::Mcp,
    ];
    for format in formats {
        let registry = with_hidden();
        registry
            .register(SearchTools::new(&registry, format))
            .unwrap();
        let call = ToolCall::new(
            "s",
            SEARCH_TOOLS,
            r#"{"query": "weather forecast", "limit": 3}"#,
        );
        let result = registry.call(&public(), call).await.result.unwrap();
        assert_eq!(result["found"], json!(["get_weather"]), "{format:?}");
        let listed = match format {
            Format::Gemini => result["tools"][0]["functionDeclarations"].clone(),
            _ => result["tools"].clone(),
        };
        let listed = listed
            .as_array()
            .unwrap_or_else(|| panic!("{format:?}: {result}"));
        assert_eq!(listed.len(), 1, "{format:?}");
        assert_eq!(
            listed_name(format, &listed[0]),
            Some("get_weather"),
            "{format:?}"
        );
        assert!(
            listed_schema(format, &listed[0])["properties"]["city"].is_object(),
            "{format:?}: {result}"
        );
        // The model then calls what it found, by name.
        let found = registry
            .call(
                &public(),
                ToolCall::new("c", "get_weather", r#"{"city": "Oslo"}"#),
            )
            .await;
        assert_eq!(found.result.unwrap(), json!({"ran": "get_weather"}));
    }
}

#[tokio::test]
async fn search_tools_refuses_bad_arguments_and_never_returns_itself() {
    let registry = base().build().unwrap();
    registry
        .register(SearchTools::new(&registry, Format::Mcp))
        .unwrap();
    for arguments in [
        r#"{}"#,
        r#"{"query": ""}"#,
        r#"{"query": "x", "limit": 0}"#,
        r#"{"query": "x", "limit": 99}"#,
    ] {
        let outcome = registry
            .call(&public(), ToolCall::new("1", SEARCH_TOOLS, arguments))
            .await;
        assert_eq!(
            outcome.error().unwrap().code,
            ErrorCode::InvalidArguments,
            "{arguments}"
        );
    }
    let call = ToolCall::new("2", SEARCH_TOOLS, r#"{"query": "search the tools"}"#);
    let result = registry.call(&public(), call).await.result.unwrap();
    assert!(
        !result["found"]
            .as_array()
            .unwrap()
            .contains(&json!(SEARCH_TOOLS))
    );
}

#[test]
fn deferred_exports_mark_all_but_the_chosen_tools() {
    let registry = with_hidden();
    let anthropic = registry
        .export_deferred(
            &public(),
            Format::Anthropic { strict: false },
            &["send_email"],
        )
        .unwrap();
    let list = anthropic.as_array().unwrap();
    assert_eq!(list.len(), 4, "three visible tools and the search tool");
    assert_eq!(list[3]["type"], "tool_search_tool_bm25_20251119");
    for tool in &list[..3] {
        let deferred = tool.get("defer_loading") == Some(&json!(true));
        assert_eq!(deferred, tool["name"] != "send_email", "{tool}");
    }
    let responses = registry
        .export_deferred(&public(), Format::OpenAiResponses { strict: false }, &[])
        .unwrap();
    assert_eq!(responses[0], json!({"type": "tool_search"}));
    assert!(
        responses.as_array().unwrap()[1..]
            .iter()
            .all(|tool| tool["defer_loading"] == true)
    );
    let error = registry
        .export_deferred(&public(), Format::Gemini, &[])
        .unwrap_err();
    assert!(error.to_string().contains("search_tools"));
}

#[tokio::test]
async fn the_agent_shows_what_search_tools_found_on_the_next_turn() {
    let registry = with_hidden();
    registry
        .register(SearchTools::new(
            &registry,
            Format::OpenAiChat { strict: false },
        ))
        .unwrap();
    let model = Scripted::new([
        calls(&[(
            "s1",
            SEARCH_TOOLS,
            r#"{"query": "reserve a restaurant table"}"#,
        )]),
        calls(&[("c1", "book_table", r#"{"city": "Oslo"}"#)]),
        text("Booked."),
    ]);
    let agent = Agent::builder(registry.clone(), model.clone())
        .select_tools(ToolSearch::new(&registry).always(["send_email"]))
        .build();
    let run = agent
        .run(&public(), "Book me a table in Oslo")
        .await
        .unwrap();
    assert!(
        matches!(run.status(), RunStatus::Finished { .. }),
        "{:?}",
        run.status()
    );
    let seen = model.seen();
    let mut first = seen[0].tools.clone();
    first.sort();
    assert_eq!(first, [SEARCH_TOOLS, "send_email"]);
    let mut second = seen[1].tools.clone();
    second.sort();
    assert_eq!(second, ["book_table", SEARCH_TOOLS, "send_email"]);
    let results = last_results(&seen[2]);
    assert_eq!(
        results[0].1.as_ref().unwrap(),
        &json!({"ran": "book_table"})
    );
}

fn by_token(parts: &axum::http::request::Parts) -> Result<Caller, toolgate::http::AuthError> {
    match parts
        .headers
        .get("authorization")
        .map(|value| value.as_bytes())
    {
        Some(b"Bearer staff") => Ok(Caller::new("s1", "staff")),
        _ => Ok(public()),
    }
}

async fn get(router: &axum::Router, uri: &str, token: Option<&str>) -> (u16, Value) {
    use tower::ServiceExt;
    let mut request = axum::http::Request::get(uri);
    if let Some(token) = token {
        request = request.header("authorization", format!("Bearer {token}"));
    }
    let response = router
        .clone()
        .oneshot(request.body(axum::body::Body::empty()).unwrap())
        .await
        .unwrap();
    let status = response.status().as_u16();
    let bytes = axum::body::to_bytes(response.into_body(), 1 << 20)
        .await
        .unwrap();
    (status, serde_json::from_slice(&bytes).unwrap())
}

#[tokio::test]
async fn http_search_serves_each_caller_its_own_tools() {
    let router = toolgate::http::router(with_hidden(), by_token, Default::default());
    let (status, body) = get(
        &router,
        "/tools/search?q=delete%20weather%20station&format=anthropic",
        None,
    )
    .await;
    assert_eq!(status, 200);
    assert_eq!(body["hits"][0]["name"], "get_weather");
    assert_eq!(body["hits"].as_array().unwrap().len(), 1);
    assert_eq!(body["tools"][0]["name"], "get_weather");
    assert!(body["tools"][0]["input_schema"].is_object());
    let (_, body) = get(
        &router,
        "/tools/search?q=delete%20weather%20station&limit=1",
        Some("staff"),
    )
    .await;
    assert_eq!(body["hits"][0]["name"], "delete_weather_station");
    for (uri, code) in [
        ("/tools/search", "missing_query"),
        ("/tools/search?q=%20", "missing_query"),
        ("/tools/search?q=x&format=yaml", "unknown_format"),
        ("/tools/search?q=x&limit=many", "malformed_query"),
    ] {
        let (status, body) = get(&router, uri, None).await;
        assert_eq!(status, 400, "{uri}");
        assert_eq!(body["error"]["code"], code, "{uri}: {body}");
    }
    let (_, body) = get(
        &router,
        "/tools/search?q=tell%20me%20a%20joke&suggest=true",
        None,
    )
    .await;
    assert_eq!(body["hits"], json!([]));
}

/// A stand-in for an embedding model: a few words share a meaning ("rain" and "weather").
struct Meanings {
    fail: bool,
}

impl toolgate::search::Embedder for Meanings {
    fn embed(&self, texts: &[String]) -> Result<Vec<Vec<f32>>, toolgate::search::EmbedError> {
        if self.fail {
            return Err(toolgate::search::EmbedError("the model is away".into()));
        }
        let meanings: [&[&str]; 4] = [
            &["weather", "rain", "sunny", "forecast"],
            &["restaurant", "table", "dinner", "eat"],
            &["email", "mail", "message", "write"],
            &["station", "delete"],
        ];
        Ok(texts
            .iter()
            .map(|text| {
                let text = text.to_lowercase();
                meanings
                    .iter()
                    .map(|words| words.iter().filter(|word| text.contains(*word)).count() as f32)
                    .collect()
            })
            .collect())
    }
}

#[test]
fn hybrid_search_finds_by_meaning_and_keeps_to_the_callers_tools() {
    use toolgate::search::Hybrid;
    let registry = base()
        .tool(tool(
            "delete_weather_station",
            "Delete a weather station.",
            "staff",
        ))
        .search_scorer(Hybrid::new(Meanings { fail: false }))
        .build()
        .unwrap();
    // No tool says "rain" or "dinner": words alone find nothing, meaning does.
    assert!(
        base()
            .build()
            .unwrap()
            .search(&public(), "will it rain", 3)
            .is_empty()
    );
    assert_eq!(
        names(&registry.search(&public(), "will it rain", 1)),
        ["get_weather"]
    );
    assert_eq!(
        names(&registry.search(&public(), "dinner for two", 1)),
        ["book_table"]
    );
    let found = names(&registry.search(&public(), "delete station rain", 10));
    assert!(
        !found.contains(&"delete_weather_station".to_owned()),
        "{found:?}"
    );
    // Run-time changes reach the semantic side too.
    registry
        .register(tool("eat_out", "Eat at a restaurant tonight.", "public"))
        .unwrap();
    assert!(names(&registry.search(&public(), "dinner", 5)).contains(&"eat_out".to_owned()));
    assert!(registry.unregister("eat_out"));
    assert!(!names(&registry.search(&public(), "dinner", 5)).contains(&"eat_out".to_owned()));

    // An embedder that fails leaves search to the words.
    let fallback = base()
        .search_scorer(Hybrid::new(Meanings { fail: true }))
        .build()
        .unwrap();
    assert_eq!(
        names(&fallback.search(&public(), "weather", 3)),
        ["get_weather"]
    );
    assert!(fallback.search(&public(), "will it rain", 3).is_empty());
}

#[tokio::test]
async fn did_you_mean_also_finds_tools_by_the_words_of_the_name() {
    let registry = base().build().unwrap();
    // Spelled nothing alike, but its words are those of a tool.
    let outcome = registry
        .call(
            &public(),
            ToolCall::new("1", "reserve_restaurant_table", "{}"),
        )
        .await;
    let message = &outcome.error().unwrap().message;
    assert!(message.contains("did you mean `book_table`?"), "{message}");
    // Words that match nothing relevant enough suggest nothing.
    let outcome = registry
        .call(&public(), ToolCall::new("2", "no_such_tool", "{}"))
        .await;
    let message = &outcome.error().unwrap().message;
    assert!(!message.contains("did you mean"), "{message}");
}

#[tokio::test]
async fn the_agent_can_preload_the_tools_that_fit_the_users_message() {
    let registry = with_hidden();
    let model = Scripted::new([text("It is sunny.")]);
    let agent = Agent::builder(registry.clone(), model.clone())
        .select_tools(ToolSearch::new(&registry).preload(2))
        .build();
    agent
        .run(&public(), "What's the weather forecast for Oslo?")
        .await
        .unwrap();
    // Without `search_tools` registered, only what fits the message is shown; never the
    // staff tool, which fits it too.
    assert_eq!(model.seen()[0].tools, ["get_weather"]);
}
