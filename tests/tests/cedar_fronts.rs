//! The same rules over HTTP, MCP and an agent's run: lists and calls agree with the rules
//! in every front end, rules read `context.front`, and approval asked by a rule goes
//! through the usual tickets.

mod agent;
mod cedar_world;

use axum::http::request::Parts;
use cedar_world::*;
use rmcp::model::CallToolRequestParams;
use serde_json::{Value, json};
use toolgate::agent::Agent;
use toolgate::cedar::CedarPolicies;
use toolgate::http::{AuthError, HttpOptions, router};
use toolgate::mcp::McpServer;
use toolgate::prelude::*;
use toolgate_tests::connect_in_memory;

/// The clinic's rules and two that depend on the front end.
const FRONT_RULES: &str = r#"
@id("small refunds only over MCP")
@reason("over MCP, refunds are at most 20")
forbid (principal, action == Action::"call:refund", resource)
when { context.front == "mcp" && context.arguments.amount > 20 };

@id("the assistant never deletes")
@reason("the assistant does not delete records")
forbid (principal, action == Action::"call:delete_records", resource)
when { context.front == "agent" && context has run_id };
"#;

fn clinic_with_fronts() -> Registry {
    registry_with(rules_at(12).text("fronts.cedar", FRONT_RULES))
}

/// Serves the clinic over HTTP: bearer tokens name the callers.
async fn http(registry: Registry) -> (String, reqwest::Client) {
    let authenticate = |parts: &Parts| -> Result<Caller, AuthError> {
        let token = parts
            .headers
            .get("authorization")
            .and_then(|v| v.to_str().ok());
        match token.and_then(|token| token.strip_prefix("Bearer ")) {
            Some("ann") => Ok(staff("ann")),
            Some("ben") => Ok(staff("ben")),
            Some("temp") => Ok(contractor("temp")),
            _ => Err(AuthError::unauthenticated("unknown token")),
        }
    };
    let app = router(registry, authenticate, HttpOptions::default());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await });
    (base, reqwest::Client::new())
}

async fn post(client: &reqwest::Client, url: String, token: &str, body: Value) -> Value {
    let response = client
        .post(url)
        .bearer_auth(token)
        .json(&body)
        .send()
        .await
        .unwrap();
    response.json().await.unwrap()
}

async fn get(client: &reqwest::Client, url: String, token: &str) -> Value {
    let response = client.get(url).bearer_auth(token).send().await.unwrap();
    response.json().await.unwrap()
}

fn names(tools: &Value) -> Vec<String> {
    tools
        .as_array()
        .unwrap()
        .iter()
        .map(|tool| tool["name"].as_str().unwrap().to_owned())
        .collect()
}

#[tokio::test]
async fn over_http_lists_calls_and_approvals_follow_the_rules() {
    let (base, client) = http(clinic_with_fronts()).await;
    let call = |token: &'static str, tool: &'static str, arguments: Value| {
        let (client, url) = (client.clone(), format!("{base}/tools/call"));
        async move {
            post(
                &client,
                url,
                token,
                json!({"name": tool, "arguments": arguments}),
            )
            .await
        }
    };
    // 1-2: the lists.
    let seen_by_ann = names(&get(&client, format!("{base}/tools"), "ann").await["tools"]);
    assert!(seen_by_ann.contains(&"invoice_list".to_owned()));
    let seen_by_temp = names(&get(&client, format!("{base}/tools"), "temp").await["tools"]);
    assert!(!seen_by_temp.contains(&"invoice_list".to_owned()));
    // 3-5: calls, over HTTP (the MCP-only rule does not apply here).
    assert_eq!(
        call("ann", "refund", json!({"amount": 50})).await["result"],
        "refunded 50"
    );
    let huge = call("ann", "refund", json!({"amount": 5000})).await;
    assert_eq!(huge["error"]["code"], "denied", "{huge}");
    assert!(
        huge["error"]["message"]
            .as_str()
            .unwrap()
            .contains("never made")
    );
    let hidden = call("temp", "invoice_list", json!({})).await;
    assert_eq!(hidden["error"]["code"], "unknown_tool");
    // 6-8: a rule's demand for approval goes through the usual tickets.
    let waiting = call("ann", "refund", json!({"amount": 300})).await;
    assert_eq!(waiting["error"]["code"], "approval_required", "{waiting}");
    let ticket = waiting["error"]["details"]["ticket"]
        .as_str()
        .unwrap()
        .to_owned();
    let for_ann = get(&client, format!("{base}/approvals"), "ann").await;
    assert!(
        for_ann["pending"].as_array().unwrap().is_empty(),
        "not her own: {for_ann}"
    );
    let for_ben = get(&client, format!("{base}/approvals"), "ben").await;
    assert_eq!(for_ben["pending"].as_array().unwrap().len(), 1, "{for_ben}");
    let approved = post(
        &client,
        format!("{base}/approvals/approve"),
        "ben",
        json!({"ticket": ticket}),
    )
    .await;
    assert_eq!(approved["result"], "refunded 300", "{approved}");
}

#[tokio::test]
async fn over_mcp_lists_and_calls_follow_the_rules_and_the_front_end() {
    let clinic = clinic_with_fronts();
    // 9-10: the contractor's list, and a call of what it does not see.
    let temp = connect_in_memory(
        McpServer::for_caller(clinic.clone(), contractor("temp")),
        (),
    )
    .await;
    let tools = temp.peer().list_all_tools().await.unwrap();
    assert!(tools.iter().all(|tool| tool.name != "invoice_list"));
    assert!(tools.iter().any(|tool| tool.name == "refund"));
    let hidden = temp
        .peer()
        .call_tool(CallToolRequestParams::new("invoice_list"))
        .await;
    assert!(
        hidden.is_err(),
        "an unknown tool is a protocol error: {hidden:?}"
    );
    // 11-12: the rule on MCP's own calls.
    let ann = connect_in_memory(McpServer::for_caller(clinic.clone(), staff("ann")), ()).await;
    let refund = |amount: i64| {
        let arguments = json!({"amount": amount}).as_object().unwrap().clone();
        CallToolRequestParams::new("refund").with_arguments(arguments)
    };
    let small = ann.peer().call_tool(refund(10)).await.unwrap();
    assert_ne!(small.is_error, Some(true), "{small:?}");
    let over = ann.peer().call_tool(refund(50)).await.unwrap();
    assert_eq!(over.is_error, Some(true));
    assert!(
        format!("{:?}", over.content).contains("over MCP, refunds are at most 20"),
        "{over:?}"
    );
    // 13: in process, the same 50 is fine.
    let in_process = call(&clinic, &staff("ann"), "refund", json!({"amount": 50})).await;
    assert!(in_process.result.is_ok());
}

#[tokio::test]
async fn an_agents_calls_are_decided_as_the_agents() {
    let clinic = clinic_with_fronts();
    let model = agent::Scripted::new([
        agent::calls(&[
            ("c1", "delete_records", r#"{"before": "2020-01-01"}"#),
            ("c2", "refund", r#"{"amount": 5000}"#),
            ("c3", "refund", r#"{"amount": 40}"#),
        ]),
        agent::text("done"),
    ]);
    let agent = Agent::builder(clinic, model.clone()).build();
    agent
        .run(&staff("ann"), "clean up and refund")
        .await
        .unwrap();
    let results = agent::last_results(&model.seen()[1]);
    let message = |index: usize| results[index].1.as_ref().unwrap_err().message.clone();
    // 14-16.
    assert!(
        message(0).contains("the assistant does not delete records"),
        "{}",
        message(0)
    );
    assert!(message(1).contains("never made"), "{}", message(1));
    assert_eq!(results[2].1.as_ref().unwrap(), "refunded 40");
}

#[tokio::test]
async fn rules_see_the_claims_the_identity_put_on_the_caller() {
    let rules = CedarPolicies::new()
        .text(
            "groups.cedar",
            r#"@id("only the night team deletes") @reason("deleting records is the night team's")
               forbid (principal, action == Action::"call:delete_records", resource)
               unless { principal.claims has groups && principal.claims.groups.contains("night-team") };"#,
        )
        .claim("groups", "Set<String>")
        .claim("contractor", "Bool");
    let clinic = registry_with(rules);
    let with_groups = |groups: Value| {
        let claims = json!({"sub": "kim", "groups": groups});
        staff("kim").with_identity(
            "https://id.example.com",
            claims.as_object().unwrap().clone(),
        )
    };
    let arguments = json!({"before": "2020-01-01"});
    // 17-19: in the group, out of it, and a claim of the wrong type (absent to the rules).
    let night = call(
        &clinic,
        &with_groups(json!(["night-team"])),
        "delete_records",
        arguments.clone(),
    )
    .await;
    assert_eq!(
        night.error().unwrap().code,
        ErrorCode::ApprovalRequired,
        "the rules let it on: {night:?}"
    );
    let day = call(
        &clinic,
        &with_groups(json!(["day-team"])),
        "delete_records",
        arguments.clone(),
    )
    .await;
    assert!(day.error().unwrap().message.contains("night team's"));
    let odd = call(
        &clinic,
        &with_groups(json!("night-team")),
        "delete_records",
        arguments,
    )
    .await;
    assert!(
        odd.error().unwrap().message.contains("night team's"),
        "a string is not a set: {odd:?}"
    );
}
