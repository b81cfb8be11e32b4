//! The approval console in a real browser: headless Chromium (Debian's package) against the
//! clinic on 127.0.0.1. People sign in with their tokens; calls are made over HTTP as an
//! assistant would make them, and the console must show them without a reload.

use std::net::SocketAddr;

use axum::Router;
use axum::http::request::Parts;
use reqwest::{Client, StatusCode};
use serde_json::{Value, json};
use tempfile::TempDir;
use toolgate::console::{Console, SignIn};
use toolgate::http::{AuthError, HttpOptions, router};
use toolgate::prelude::*;
use toolgate_examples::clinic::open_app;
use toolgate_test_support::{Chromium, Page};

/// A note no page may run: markup and script that would set `window.__pwned`.
const HOSTILE_NOTE: &str =
    r#"<img src=x onerror="window.__pwned=1"><script>window.__pwned=2</script> "quoted" & more"#;

struct Site {
    base: String,
    client: Client,
    _directory: TempDir,
}

async fn serve(app: Router, directory: TempDir) -> Site {
    let listener = tokio::net::TcpListener::bind(SocketAddr::from(([127, 0, 0, 1], 0)))
        .await
        .unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    Site {
        base,
        client: Client::new(),
        _directory: directory,
    }
}

/// The clinic on a free loopback port, with a fresh database.
async fn clinic() -> Site {
    let directory = TempDir::new().unwrap();
    let app = open_app(&directory.path().join("clinic.db")).unwrap();
    serve(app, directory).await
}

impl Site {
    /// `POST path` as the holder of `token`: the status and the JSON answer.
    async fn post(&self, token: &str, path: &str, body: Value) -> (StatusCode, Value) {
        let response = self
            .client
            .post(format!("{}{path}", self.base))
            .bearer_auth(token)
            .json(&body)
            .send()
            .await
            .unwrap();
        (response.status(), response.json().await.unwrap())
    }

    async fn call(&self, token: &str, tool: &str, arguments: Value) -> Value {
        let body = json!({"name": tool, "arguments": arguments});
        self.post(token, "/tools/call", body).await.1
    }
}

/// Opens the console and signs in with `token`, as a person would; waits until the live
/// feed is connected.
async fn sign_in(page: &mut Page, site: &Site, token: &str) {
    sign_in_at(page, &format!("{}/console", site.base), token).await;
}

/// [`sign_in`] to the console at `url`.
async fn sign_in_at(page: &mut Page, url: &str, token: &str) {
    page.open(url).await;
    page.wait_for(
        "!document.getElementById('sign-in').hidden",
        "the sign-in form",
    )
    .await;
    page.eval(&format!(
        "document.getElementById('token').value = {}; \
         document.getElementById('sign-in').requestSubmit(); true",
        json!(token)
    ))
    .await;
    page.wait_for("document.body.dataset.live === 'on'", "the live feed")
        .await;
}

/// A browser with two tabs, the clinic's admin and its staff member, both signed in. The
/// browser goes when it is dropped, so it is returned too.
async fn admin_and_staff(site: &Site) -> (Chromium, Page, Page) {
    let browser = Chromium::start().await;
    let mut admin = browser.page().await;
    let mut staff = browser.page().await;
    sign_in(&mut admin, site, "admin-token").await;
    sign_in(&mut staff, site, "staff-token").await;
    (browser, admin, staff)
}

/// Calls `tool` through the console's own form, with `arguments` as typed into it.
async fn call_through_form(page: &mut Page, tool: &str, arguments: &str) {
    page.eval(&format!(
        "document.getElementById('call-tool').value = {}; \
         document.getElementById('call-arguments').value = {}; \
         document.getElementById('call-form').requestSubmit(); true",
        json!(tool),
        json!(arguments)
    ))
    .await;
}

async fn text_of(page: &mut Page, selector: &str) -> String {
    let expression = format!("document.querySelector({}).textContent", json!(selector));
    page.eval(&expression)
        .await
        .as_str()
        .unwrap_or_default()
        .to_owned()
}

fn assert_no_problems(page: &Page, who: &str) {
    assert!(
        page.problems().is_empty(),
        "{who}'s page had problems: {:?}",
        page.problems()
    );
}

/// The width and height of a PNG, from its header.
fn png_size(png: &[u8]) -> (u32, u32) {
    assert!(png.starts_with(b"\x89PNG\r\n\x1a\n"), "not a PNG");
    let number = |at: usize| u32::from_be_bytes(png[at..at + 4].try_into().unwrap());
    (number(16), number(20))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_admin_sees_a_call_appear_approves_it_and_it_runs_once() {
    let site = clinic().await;
    let (_browser, mut admin, mut staff) = admin_and_staff(&site).await;
    assert_eq!(text_of(&mut admin, "#signed-in").await, "root (admin)");
    assert_eq!(
        staff
            .eval("document.getElementById('approvals-section').hidden")
            .await,
        json!(true),
        "staff may decide nothing in the clinic: no approvals section"
    );

    // The admin's own call, made elsewhere (by an assistant, say), shows in the admin's feed
    // with the card its tool names.
    let rex = site
        .call("admin-token", "get_pet_records", json!({"pet_id": 1}))
        .await;
    assert_eq!(rex["ui"], "pet_card", "{rex}");
    admin
        .wait_for(
            "document.querySelector('#feed .pet-card')",
            "the pet card in the admin's feed",
        )
        .await;
    assert!(text_of(&mut admin, "#feed .pet-card").await.contains("Rex"));

    // An admin-only call: nothing of it may reach the staff member's page.
    let stats = site.call("admin-token", "system_stats", json!({})).await;
    assert_eq!(stats["ok"], true, "{stats}");

    // The assistant, as dr-lee, asks for a change that waits for an admin.
    let waiting = site
        .call(
            "staff-token",
            "update_medical_record",
            json!({"pet_id": 2, "note": HOSTILE_NOTE}),
        )
        .await;
    assert_eq!(waiting["error"]["code"], "approval_required", "{waiting}");
    let ticket = waiting["error"]["details"]["ticket"]
        .as_str()
        .unwrap()
        .to_owned();

    // It appears on the admin's page without a reload, with everything a person needs.
    admin
        .wait_for(
            "document.querySelectorAll('#approvals article.approval').length === 1",
            "the waiting call on the admin's page",
        )
        .await;
    let card = text_of(&mut admin, "#approvals article.approval").await;
    for expected in [
        "Update a medical record",
        "update_medical_record",
        "risk: high",
        "high risk and needs a person's approval",
        "dr-lee",
        "Add a note to a pet's medical record",
        "expires at",
        HOSTILE_NOTE.replace('"', "\\\"").as_str(),
    ] {
        assert!(
            card.contains(expected),
            "the card lacks {expected:?}: {card}"
        );
    }
    let arguments = text_of(&mut admin, "#approvals pre.arguments").await;
    let shown: Value = serde_json::from_str(&arguments).unwrap();
    assert_eq!(
        shown,
        json!({"pet_id": 2, "note": HOSTILE_NOTE}),
        "the arguments, as text"
    );
    assert_eq!(
        admin
            .eval("document.querySelectorAll('main img, main script').length")
            .await,
        json!(0),
        "the note's markup stays text"
    );
    staff
        .wait_for(
            "document.querySelector('#feed li[data-tool=update_medical_record]')?.dataset.status === 'waiting'",
            "the staff's own call waiting in its feed",
        )
        .await;

    // What the admin sees: a screenshot, kept for people to look at.
    let png = admin.screenshot().await;
    let (width, height) = png_size(&png);
    assert!(width >= 800 && height >= 600, "{width}x{height}");
    assert!(
        png.len() > 10_000,
        "a screenshot of {} bytes is blank",
        png.len()
    );
    let kept = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("console.png");
    std::fs::write(&kept, &png).unwrap();

    admin
        .eval("document.querySelector('#approvals button[data-action=approve]').click(); true")
        .await;
    admin
        .wait_for(
            "document.querySelector('#decided .verdict.executed')",
            "the approved call executed",
        )
        .await;
    assert_eq!(
        admin
            .eval("document.querySelectorAll('#approvals article').length")
            .await,
        json!(0)
    );
    let decided = text_of(&mut admin, "#decided article").await;
    assert!(
        decided.contains("Asked by dr-lee") && decided.contains("\"added\""),
        "the decided call, with its result: {decided}"
    );
    staff
        .wait_for(
            "document.querySelector('#feed li[data-tool=update_medical_record]')?.dataset.status === 'executed'",
            "the staff's feed showing the call executed",
        )
        .await;

    let seen_by_staff = staff.eval("document.documentElement.outerHTML").await;
    assert!(
        !seen_by_staff.as_str().unwrap().contains("system_stats"),
        "a staff member sees no admin-only call"
    );
    assert_eq!(
        admin
            .eval("document.querySelectorAll('#feed li[data-tool=system_stats]').length")
            .await,
        json!(1),
        "the admin sees its own"
    );

    // Executed once: the ticket is spent, and the note is on the record once.
    let (status, again) = site
        .post(
            "admin-token",
            "/approvals/approve",
            json!({"ticket": ticket}),
        )
        .await;
    assert_eq!(status, StatusCode::CONFLICT, "{again}");
    let record = site
        .call("admin-token", "get_pet_records", json!({"pet_id": 2}))
        .await;
    let notes = record["result"]["notes"].as_array().unwrap();
    assert_eq!(
        notes.iter().filter(|note| *note == HOSTILE_NOTE).count(),
        1,
        "{record}"
    );
    assert_eq!(
        admin.eval("typeof window.__pwned").await,
        json!("undefined"),
        "nothing a call carried ran"
    );
    assert_eq!(
        staff.eval("typeof window.__pwned").await,
        json!("undefined")
    );

    assert_no_problems(&admin, "the admin");
    assert_no_problems(&staff, "the staff member");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_denied_call_shows_the_reason_to_the_approver_and_the_caller() {
    let site = clinic().await;
    let (_browser, mut admin, mut staff) = admin_and_staff(&site).await;

    let waiting = site
        .call(
            "staff-token",
            "update_medical_record",
            json!({"pet_id": 1, "note": "Allergic to penicillin."}),
        )
        .await;
    assert_eq!(waiting["error"]["code"], "approval_required", "{waiting}");
    admin
        .wait_for(
            "document.querySelector('#approvals article.approval')",
            "the waiting call",
        )
        .await;
    let reason = "Needs the vet's signature <b>first</b>";
    admin
        .eval(&format!(
            "document.querySelector('#approvals .deny-reason').value = {}; \
             document.querySelector('#approvals button[data-action=deny]').click(); true",
            json!(reason)
        ))
        .await;
    admin
        .wait_for(
            "document.querySelector('#decided .verdict.denied')",
            "the denial",
        )
        .await;
    assert_eq!(
        text_of(&mut admin, "#decided .denial").await,
        reason,
        "the reason, as written"
    );
    staff
        .wait_for(
            "document.querySelector('#feed li[data-tool=update_medical_record]')?.dataset.status === 'denied'",
            "the denial in the caller's feed",
        )
        .await;
    let row = text_of(&mut staff, "#feed li[data-tool=update_medical_record]").await;
    assert!(row.contains(reason), "the caller reads why: {row}");
    assert_eq!(
        staff
            .eval("document.querySelectorAll('#feed b').length")
            .await,
        json!(0)
    );
    let record = site
        .call("admin-token", "get_pet_records", json!({"pet_id": 1}))
        .await;
    assert!(
        !record.to_string().contains("penicillin"),
        "a denied call did not run: {record}"
    );
    assert_no_problems(&admin, "the admin");
    assert_no_problems(&staff, "the staff member");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_result_is_shown_by_the_component_its_tool_names() {
    let site = clinic().await;
    let browser = Chromium::start().await;
    let mut alice = browser.page().await;
    sign_in(&mut alice, &site, "alice-token").await;
    let tools = alice
        .eval("[...document.querySelectorAll('#call-tool option')].map(o => o.value)")
        .await;
    assert!(
        tools
            .as_array()
            .unwrap()
            .contains(&json!("get_pet_records")),
        "{tools}"
    );
    assert!(!tools.to_string().contains("system_stats"), "{tools}");

    call_through_form(&mut alice, "get_pet_records", r#"{"pet_id": 2}"#).await;
    alice
        .wait_for("document.querySelector('#feed .pet-card')", "the pet card")
        .await;
    let card = text_of(&mut alice, "#feed .pet-card").await;
    assert!(
        card.contains("Mia") && card.contains("cat") && card.contains("alice"),
        "{card}"
    );
    assert_eq!(
        alice
            .eval("document.querySelector('#feed .component').dataset.ui")
            .await,
        json!("pet_card")
    );

    // A tool without a component: its result as JSON.
    call_through_form(&mut alice, "list_services", "{}").await;
    let json_text = alice
        .wait_for(
            "document.querySelector('#feed li[data-tool=list_services][data-status=executed] pre.json')?.textContent",
            "the services as JSON",
        )
        .await;
    let services: Value = serde_json::from_str(json_text.as_str().unwrap()).unwrap();
    assert_eq!(services[0]["service"], "checkup");

    // Arguments that are not JSON are refused in the page, before any call.
    call_through_form(&mut alice, "get_pet_records", "{pet_id: 2").await;
    let error = alice
        .wait_for(
            "document.getElementById('call-error').textContent",
            "the JSON error",
        )
        .await;
    assert!(error.as_str().unwrap().contains("not JSON"), "{error}");
    assert_no_problems(&alice, "alice");
}

// Tools of the approver test below: a staff-level change and an admin-only one.

/// Reschedule the day's rota.
#[tool(permission = "staff", group = "console_test", destructive)]
fn change_rota(
    /// The new rota.
    rota: String,
    /// The manager's PIN.
    #[secret]
    pin: String,
) -> String {
    format!("{rota} ({} digits of PIN)", pin.len())
}

/// Delete every record of a pet.
#[tool(
    permission = "admin",
    group = "console_test",
    destructive,
    risk = "critical"
)]
fn purge_records(
    /// The pet.
    pet_id: i64,
) -> i64 {
    pet_id
}

/// A site where staff members approve: each approver sees only the calls of tools its own
/// role may use.
async fn staff_approved_site() -> Site {
    let registry = Registry::builder()
        .roles(["public", "staff", "admin"])
        .filter_linked(|tool| tool.group.as_deref() == Some("console_test"))
        .approver_role("staff")
        .build()
        .unwrap();
    let authenticate = |parts: &Parts| -> Result<Caller, AuthError> {
        let token = parts
            .headers
            .get("authorization")
            .and_then(|value| value.to_str().ok())
            .and_then(|value| value.strip_prefix("Bearer "));
        match token {
            Some("sam-token") => Ok(Caller::new("sam", "staff")),
            Some("tess-token") => Ok(Caller::new("tess", "staff")),
            Some("ada-token") => Ok(Caller::new("ada", "admin")),
            _ => Err(AuthError::unauthenticated("sign in with your token")),
        }
    };
    let console = Console::new()
        .at("/approve")
        .api("/api")
        .sign_in(SignIn::BearerToken);
    let app = Router::new()
        .nest(
            "/api",
            router(registry, authenticate, HttpOptions::default()),
        )
        .merge(console.router());
    serve(app, TempDir::new().unwrap()).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_approver_never_sees_a_call_above_its_role() {
    let site = staff_approved_site().await;
    let browser = Chromium::start().await;
    let mut sam = browser.page().await;
    let mut ada = browser.page().await;
    let console = format!("{}/approve/", site.base);
    sign_in_at(&mut sam, &console, "sam-token").await;
    sign_in_at(&mut ada, &console, "ada-token").await;

    // The admin-only call first, then the staff one: when sam's page shows the second, it
    // has had every chance to show the first.
    let (_, purge) = site
        .post(
            "ada-token",
            "/api/tools/call",
            json!({"name": "purge_records", "arguments": {"pet_id": 7}}),
        )
        .await;
    assert_eq!(purge["error"]["code"], "approval_required", "{purge}");
    let (_, rota) = site
        .post(
            "tess-token",
            "/api/tools/call",
            json!({"name": "change_rota", "arguments": {"rota": "early", "pin": "4711-SECRET"}}),
        )
        .await;
    assert_eq!(rota["error"]["code"], "approval_required", "{rota}");

    sam.wait_for(
        "document.querySelector('#approvals article[data-tool=change_rota]')",
        "the staff-level call on a staff approver's page",
    )
    .await;
    ada.wait_for(
        "document.querySelectorAll('#approvals article').length === 2",
        "both calls on the admin's page",
    )
    .await;
    assert_eq!(
        sam.eval("[...document.querySelectorAll('#approvals article')].map(a => a.dataset.tool)")
            .await,
        json!(["change_rota"])
    );
    let everything = sam.eval("document.documentElement.outerHTML").await;
    let everything = everything.as_str().unwrap();
    assert!(
        !everything.contains("purge_records"),
        "nothing of the admin-only tool reaches a staff approver's page"
    );
    assert!(
        !everything.contains("4711-SECRET") && everything.contains("[redacted]"),
        "a secret argument is shown redacted"
    );

    // A staff approver cannot decide it through the API either.
    let (_, pending) = site
        .post(
            "ada-token",
            "/api/tools/call",
            json!({"name": "purge_records", "arguments": {"pet_id": 8}}),
        )
        .await;
    let ticket = pending["error"]["details"]["ticket"].as_str().unwrap();
    let (status, refused) = site
        .post(
            "sam-token",
            "/api/approvals/approve",
            json!({"ticket": ticket}),
        )
        .await;
    assert_eq!(status, StatusCode::CONFLICT, "{refused}");
    assert_no_problems(&sam, "sam");
    assert_no_problems(&ada, "ada");
}

/// The console as a clinic's admin sees it on an ordinary morning: two changes waiting, the
/// admin's own lookup in the feed. The screenshot (`console-clinic.png` in the tests'
/// folder) is the README's picture.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_console_on_an_ordinary_morning() {
    let site = clinic().await;
    let (_browser, mut admin, _staff) = admin_and_staff(&site).await;
    let note = "Limping on the left hind leg since Monday; X-ray booked for Thursday.";
    let waiting = site
        .call(
            "staff-token",
            "update_medical_record",
            json!({"pet_id": 2, "note": note}),
        )
        .await;
    assert_eq!(waiting["error"]["code"], "approval_required", "{waiting}");
    let refund =
        json!({"pet_id": 3, "amount_eur": 150, "reason": "Appointment cancelled by the clinic."});
    let refund = site.call("staff-token", "refund_payment", refund).await;
    assert_eq!(refund["error"]["code"], "approval_required", "{refund}");
    site.call("admin-token", "get_pet_records", json!({"pet_id": 1}))
        .await;
    admin
        .wait_for(
            "document.querySelectorAll('#approvals article.approval').length === 2 \
             && document.querySelector('#feed .pet-card')",
            "both waiting calls and the admin's own lookup",
        )
        .await;
    let cards = text_of(&mut admin, "#approvals").await;
    assert!(
        cards.contains("X-ray booked") && cards.contains("refund_payment"),
        "{cards}"
    );
    let png = admin.screenshot().await;
    assert!(
        png.len() > 10_000,
        "a screenshot of {} bytes is blank",
        png.len()
    );
    let kept = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("console-clinic.png");
    std::fs::write(&kept, &png).unwrap();
    assert_no_problems(&admin, "the admin");
}
