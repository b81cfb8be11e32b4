//! The console of `toolgate serve http`, in headless Chromium: a person signs in with a
//! caller's token, picks a tool, fills a field per parameter (typed, with enums, defaults and
//! required ones as the schema says), sees the JSON that will be sent, calls, and reads the
//! result.

use serde_json::{Value, json};
use toolgate_test_support::{Chromium, Page};

use crate::support::{BASE, Project, Serving};

const BOOK: &str = "---
name: book
description: Book an appointment for a pet.
permission: public
parameters:
  pet: {type: string, description: The pet's name.}
  minutes: {type: integer, default: 30, minimum: 15, maximum: 120}
  kind: {type: string, enum: [checkup, vaccine, grooming], description: What the visit is for.}
  urgent: {type: boolean, required: false}
  notes: {type: array, items: {type: string}, required: false}
command: {program: cat, output: json}
---
";

const CONFIG: &str = "\n[callers.ann]\nrole = \"admin\"\ntoken_env = \"ANN_TOKEN\"\n";

async fn eval(page: &mut Page, script: &str) -> Value {
    page.eval(script).await
}

/// Sets a field as a person would, so the page hears of it.
async fn fill(page: &mut Page, name: &str, value: &str) {
    let script = format!(
        "(() => {{ const input = document.getElementById('param-{name}'); input.value = {}; \
         input.dispatchEvent(new Event('input', {{bubbles: true}})); \
         input.dispatchEvent(new Event('change', {{bubbles: true}})); return true; }})()",
        json!(value)
    );
    page.eval(&script).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tool_is_called_through_the_form_its_schema_makes() {
    let project = Project::new(&format!("{BASE}{CONFIG}"));
    project.write(".toolgate/tools/book.md", BOOK);
    let envs = [("ANN_TOKEN", "ann-token")];
    let server = Serving::start(&project, &["http", "127.0.0.1:0"], &envs);
    assert!(
        server.said.contains("/console"),
        "the console's address is said: {}",
        server.said
    );

    let browser = Chromium::start().await;
    let mut page = browser.page().await;
    page.open(&format!("{}/console", server.url)).await;
    page.wait_for(
        "!document.getElementById('sign-in').hidden",
        "the sign-in form",
    )
    .await;
    page.eval(
        "document.getElementById('token').value = 'ann-token'; \
         document.getElementById('sign-in').requestSubmit(); true",
    )
    .await;
    page.wait_for(
        "document.getElementById('param-pet') !== null",
        "the tool's fields",
    )
    .await;

    // A field per parameter, as the schema says.
    let fields = eval(
        &mut page,
        "[...document.querySelectorAll('#call-fields .param')].map(p => p.dataset.param)",
    )
    .await;
    assert_eq!(
        fields,
        json!(["kind", "pet", "minutes", "notes", "urgent"]),
        "required ones first"
    );
    let required = eval(&mut page, "['pet', 'minutes', 'kind', 'urgent'].map(n => document.getElementById('param-' + n).required)").await;
    assert_eq!(
        required,
        json!([true, false, true, false]),
        "a parameter with a default or `required: false` is optional"
    );
    assert_eq!(
        eval(&mut page, "document.getElementById('param-minutes').type").await,
        "number"
    );
    assert_eq!(
        eval(&mut page, "document.getElementById('param-minutes').value").await,
        "30",
        "the default is filled in"
    );
    let kinds = eval(
        &mut page,
        "[...document.getElementById('param-kind').options].map(o => o.textContent)",
    )
    .await;
    assert_eq!(kinds, json!(["checkup", "vaccine", "grooming"]));
    let help = eval(
        &mut page,
        "document.querySelector('[data-param=pet] .help').textContent",
    )
    .await;
    assert_eq!(help, "The pet's name.");

    // Filled in: the JSON view shows what will be sent.
    fill(&mut page, "pet", "Rex <b>the dog</b>").await;
    fill(&mut page, "kind", "\"vaccine\"").await;
    fill(&mut page, "urgent", "true").await;
    fill(&mut page, "notes", "[\"shy\", \"hungry\"]").await;
    let sent = eval(
        &mut page,
        "JSON.parse(document.getElementById('call-arguments').value)",
    )
    .await;
    let expected = json!({"pet": "Rex <b>the dog</b>", "minutes": 30, "kind": "vaccine", "urgent": true, "notes": ["shy", "hungry"]});
    assert_eq!(sent, expected);

    // The JSON edited by hand: the fields follow.
    page.eval(
        "(() => { const json = document.getElementById('call-arguments'); \
         json.value = JSON.stringify({pet: 'Mia', minutes: 45, kind: 'checkup'}); \
         json.dispatchEvent(new Event('input', {bubbles: true})); return true; })()",
    )
    .await;
    assert_eq!(
        eval(&mut page, "document.getElementById('param-minutes').value").await,
        "45"
    );
    assert_eq!(
        eval(&mut page, "document.getElementById('param-pet').value").await,
        "Mia"
    );

    // Called: the result comes back into the feed.
    fill(&mut page, "pet", "Rex").await;
    page.eval("document.getElementById('call-form').requestSubmit(); true")
        .await;
    let result = page
        .wait_for(
            "document.querySelector('#feed li[data-tool=book][data-status=executed] pre.json')?.textContent",
            "the call's result",
        )
        .await;
    let result: Value = serde_json::from_str(result.as_str().unwrap()).unwrap();
    assert_eq!(
        result,
        json!({"pet": "Rex", "minutes": 45, "kind": "checkup"})
    );

    // The usage panel (ann approves): the call is counted once it is refreshed.
    page.eval("document.getElementById('usage-refresh').click(); true")
        .await;
    let counted = page
        .wait_for(
            "document.querySelector('#usage tr[data-tool=book] td:nth-child(2)')?.textContent",
            "the book tool's row in the usage panel",
        )
        .await;
    assert_eq!(counted, "1");
    let unused = eval(
        &mut page,
        "document.getElementById('usage-unused').textContent",
    )
    .await;
    assert_eq!(unused, "Every tool was used.");

    // A field that is not JSON is said before anything is sent.
    fill(&mut page, "notes", "[not json").await;
    page.eval("document.getElementById('call-form').requestSubmit(); true")
        .await;
    let error = page
        .wait_for(
            "document.getElementById('call-error').textContent || null",
            "the field's error",
        )
        .await;
    assert!(
        error.as_str().unwrap().contains("notes: not JSON"),
        "{error}"
    );
    assert!(page.problems().is_empty(), "{:?}", page.problems());
}
