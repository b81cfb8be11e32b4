//! Three clinic processes on one PostgreSQL (a real server the test starts on 127.0.0.1),
//! their model a scripted OpenAI-compatible server on loopback: a chat on A waits for an
//! approval; the admin's console on B (headless Chromium) shows it live, and so does the
//! admin's `/events` on C; the admin approves on C; the staff member hears of it on A and
//! goes on there. Nobody hears another caller's events. A run waiting on an instance that is
//! killed is decided and finished on the others, once.

mod clinic_process;

use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::Json;
use futures::StreamExt;
use reqwest::{Client, StatusCode};
use serde_json::{Value, json};
use toolgate_test_support::{Chromium, Page, TempPostgres};

use clinic_process::Clinic;

/// A model that asks to note something in Rex's record, and once the tool has answered,
/// says it is done.
async fn scripted_model() -> String {
    let asked = Arc::new(AtomicUsize::new(0));
    let answer = move |Json(request): Json<Value>| {
        let asked = Arc::clone(&asked);
        async move {
            let messages = request["messages"].as_array().cloned().unwrap_or_default();
            let answered = messages.last().is_some_and(|last| last["role"] == "tool");
            let message = if answered {
                json!({"role": "assistant", "content": "The note is in Rex's record."})
            } else {
                let n = asked.fetch_add(1, Ordering::Relaxed);
                let arguments = json!({"pet_id": 1, "note": format!("Weighed, visit {n}.")});
                json!({"role": "assistant", "content": null, "tool_calls": [{
                    "id": format!("call_note_{n}"), "type": "function",
                    "function": {"name": "update_medical_record", "arguments": arguments.to_string()}
                }]})
            };
            Json(json!({
                "choices": [{"index": 0, "message": message}],
                "usage": {"prompt_tokens": 1, "completion_tokens": 1}
            }))
        }
    };
    let app = axum::Router::new().route("/v1/chat/completions", axum::routing::post(answer));
    let listener = tokio::net::TcpListener::bind(SocketAddr::from(([127, 0, 0, 1], 0)))
        .await
        .unwrap();
    let base = format!("http://{}/v1", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    base
}

/// Everything one `GET /events` stream brought, as it arrives.
#[derive(Clone)]
struct Heard(Arc<Mutex<Vec<Value>>>);

impl Heard {
    async fn listen(http: &Client, clinic: &Clinic, token: &str) -> Heard {
        let response = http
            .get(format!("{}/events", clinic.base))
            .bearer_auth(token)
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), StatusCode::OK);
        let heard = Heard(Arc::default());
        let sink = Arc::clone(&heard.0);
        tokio::spawn(async move {
            let mut stream = response.bytes_stream();
            let mut buffer = String::new();
            while let Some(Ok(chunk)) = stream.next().await {
                buffer.push_str(&String::from_utf8_lossy(&chunk));
                while let Some(end) = buffer.find("\n\n") {
                    let block: String = buffer.drain(..end + 2).collect();
                    let data = block.lines().filter_map(|line| line.strip_prefix("data: "));
                    sink.lock()
                        .unwrap()
                        .extend(data.filter_map(|d| serde_json::from_str(d).ok()));
                }
            }
        });
        heard
    }

    fn all(&self) -> Vec<Value> {
        self.0.lock().unwrap().clone()
    }

    /// The first event `matches` accepts, waiting up to twenty seconds for it.
    async fn wait_for(&self, what: &str, matches: impl Fn(&Value) -> bool) -> Value {
        for _ in 0..400 {
            if let Some(found) = self.all().into_iter().find(&matches) {
                return found;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        panic!("never heard {what}; heard {:?}", self.all());
    }
}

async fn post(http: &Client, url: String, token: &str, body: Value) -> (StatusCode, Value) {
    let response = http
        .post(url)
        .bearer_auth(token)
        .json(&body)
        .send()
        .await
        .unwrap();
    (response.status(), response.json().await.unwrap())
}

/// Calls `tool` on `clinic` as the holder of `token`, with the call id `id`.
async fn call(http: &Client, clinic: &Clinic, token: &str, id: &str, tool: &str) -> Value {
    let body = json!({"id": id, "name": tool, "arguments": {"day": "monday"}});
    post(http, format!("{}/tools/call", clinic.base), token, body)
        .await
        .1
}

fn finished(id: &str) -> impl Fn(&Value) -> bool + '_ {
    move |event| event["type"] == "call_finished" && event["call_id"] == id
}

/// Signs in to `clinic`'s console as the admin; waits for the live feed.
async fn admin_console(browser: &Chromium, clinic: &Clinic) -> Page {
    let mut page = browser.page().await;
    page.open(&format!("{}/console", clinic.base)).await;
    page.wait_for(
        "!document.getElementById('sign-in').hidden",
        "the sign-in form",
    )
    .await;
    page.eval(
        "document.getElementById('token').value = 'admin-token'; \
         document.getElementById('sign-in').requestSubmit(); true",
    )
    .await;
    page.wait_for("document.body.dataset.live === 'on'", "the live feed")
        .await;
    page
}

/// Starts a chat on `clinic` as the staff member: it waits for approval; its id.
async fn waiting_chat(http: &Client, clinic: &Clinic) -> String {
    let message = json!({"message": "Rex was weighed today, note it."});
    let (status, run) = post(
        http,
        format!("{}/chat", clinic.base),
        "staff-token",
        message,
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{run}");
    assert_eq!(run["status"]["status"], "needs_approval", "{run}");
    run["run_id"].as_str().unwrap().to_owned()
}

/// The admin approves every call waiting in `run`, on `clinic`.
async fn approve_run(http: &Client, clinic: &Clinic, run: &str, call_id: &str) {
    let decisions = json!({"decisions": [{"call_id": call_id, "decision": "approve"}]});
    let url = format!("{}/chat/{run}/resume", clinic.base);
    let (status, decided) = post(http, url, "admin-token", decisions).await;
    assert_eq!(status, StatusCode::OK, "{decided}");
    assert_eq!(decided["outcomes"][0]["ok"], true, "{decided}");
}

/// The staff member goes on with `run` on `clinic`.
async fn resume(http: &Client, clinic: &Clinic, run: &str) -> (StatusCode, Value) {
    let url = format!("{}/chat/{run}/resume", clinic.base);
    post(http, url, "staff-token", json!({})).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_waiting_on_one_instance_is_seen_decided_and_finished_on_the_others() {
    let server = tokio::task::spawn_blocking(TempPostgres::start)
        .await
        .unwrap();
    let database = server.new_database();
    let folder = tempfile::tempdir().unwrap();
    let model = scripted_model().await;
    let environment = [("CLINIC_MODEL_URL", model.as_str())];
    let start = || Clinic::start_with(folder.path(), &database, 0, &environment);
    let (a, b, c) = (start(), start(), start());
    let http = Client::new();

    // Who listens where: the staff member on A, the admin on C (and in B's console), Alice
    // on C. Each instance has heard of another's call before the test goes on.
    let staff_on_a = Heard::listen(&http, &a, "staff-token").await;
    let admin_on_c = Heard::listen(&http, &c, "admin-token").await;
    let alice_on_c = Heard::listen(&http, &c, "alice-token").await;
    let browser = Chromium::start().await;
    let mut console_on_b = admin_console(&browser, &b).await;
    for n in 0.. {
        let id = format!("warm-{n}");
        call(&http, &b, "staff-token", &id, "get_clinic_hours").await;
        call(&http, &a, "admin-token", &id, "get_clinic_hours").await;
        tokio::time::sleep(Duration::from_millis(200)).await;
        let seen_on_b =
            format!("document.querySelector('#feed li[data-call-id=\"{id}\"]') !== null");
        let b_heard = console_on_b.eval(&seen_on_b).await == json!(true);
        let (a_heard, c_heard) = (&staff_on_a.all(), &admin_on_c.all());
        if b_heard && a_heard.iter().any(finished(&id)) && c_heard.iter().any(finished(&id)) {
            break;
        }
        assert!(n < 100, "the instances never heard of each other's calls");
    }

    // A chat on A waits for the admin.
    let run = waiting_chat(&http, &a).await;
    console_on_b
        .wait_for(
            "document.querySelectorAll('#approvals article.approval[data-tool=\"update_medical_record\"]').length === 1",
            "the call waiting on A, in B's console, without a reload",
        )
        .await;
    let requested = admin_on_c
        .wait_for("the approval request on C", |event| {
            event["type"] == "approval_requested" && event["run"] == run.as_str()
        })
        .await;
    assert_eq!(requested["caller"], "dr-lee");
    let call_id = requested["call_id"].as_str().unwrap().to_owned();

    // Approved on C: A's owner hears of it, goes on on A, and the run finishes.
    approve_run(&http, &c, &run, &call_id).await;
    staff_on_a
        .wait_for("the decision on A", |event| {
            event["type"] == "approval_decided" && event["call_id"] == call_id.as_str()
        })
        .await;
    let (status, finished_run) = resume(&http, &a, &run).await;
    assert_eq!(status, StatusCode::OK, "{finished_run}");
    assert_eq!(
        finished_run["status"]["status"], "finished",
        "{finished_run}"
    );
    assert_eq!(finished_run["text"], "The note is in Rex's record.");
    console_on_b
        .wait_for(
            "document.querySelectorAll('#approvals article.approval').length === 0",
            "the decided call gone from B's console",
        )
        .await;

    // Nobody heard another caller's events.
    let staff_heard = staff_on_a.all();
    assert!(
        staff_heard.iter().all(|event| event["caller"] == "dr-lee"),
        "{staff_heard:?}"
    );
    let alice_heard = alice_on_c.all();
    assert!(
        alice_heard.is_empty(),
        "Alice heard others' events: {alice_heard:?}"
    );
    for event in admin_on_c.all() {
        let approvals = ["approval_requested", "approval_decided"];
        let about_approval = approvals.contains(&event["type"].as_str().unwrap_or_default());
        assert!(event["caller"] == "root" || about_approval, "{event}");
    }
    assert!(
        console_on_b.problems().is_empty(),
        "{:?}",
        console_on_b.problems()
    );

    // A run waiting on A, which is killed: decided on C, finished on B, once.
    let run = waiting_chat(&http, &a).await;
    let requested = admin_on_c
        .wait_for("the second approval request", |event| {
            event["type"] == "approval_requested" && event["run"] == run.as_str()
        })
        .await;
    a.kill();
    approve_run(&http, &c, &run, requested["call_id"].as_str().unwrap()).await;
    let (status, finished_run) = resume(&http, &b, &run).await;
    assert_eq!(
        finished_run["status"]["status"], "finished",
        "{status} {finished_run}"
    );
    let (again, _) = resume(&http, &c, &run).await;
    assert_eq!(
        again,
        StatusCode::CONFLICT,
        "a finished run does not go on twice"
    );

    drop((b, c, browser));
    tokio::task::spawn_blocking(move || drop(server))
        .await
        .unwrap();
}
