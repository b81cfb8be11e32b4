//! Events across instances: what people act on, raised on one instance, reaches the
//! subscribers of every other, each event once; the model's streamed words do not.

use std::sync::Arc;
use std::time::Duration;

use serde_json::json;
use tokio::sync::broadcast::Receiver;
use toolgate::events::{Event, EventKind};
use toolgate::prelude::*;

use super::{Open, admin, alice, instance, ticket_for};

/// The next event `receiver` gets about call `call_id`, within ten seconds.
pub async fn next_about(receiver: &mut Receiver<Arc<Event>>, call_id: &str) -> Arc<Event> {
    let wait = async {
        loop {
            let event = receiver.recv().await.expect("the event stream stays open");
            if about(&event) == Some(call_id) {
                return event;
            }
        }
    };
    tokio::time::timeout(Duration::from_secs(10), wait)
        .await
        .unwrap_or_else(|_| panic!("no event about {call_id} within ten seconds"))
}

fn about(event: &Event) -> Option<&str> {
    match &event.kind {
        EventKind::ApprovalRequested { call_id, .. }
        | EventKind::ApprovalDecided { call_id, .. }
        | EventKind::CallFinished { call_id, .. }
        | EventKind::CallRequested { call_id, .. } => Some(call_id),
        _ => None,
    }
}

/// Returns once `to` hears of a call made on `from`, and `from` knows it is followed.
///
/// An instance shares its calls only while it knows another follows it, and looks about once
/// a second: the first call can pass before `from` has looked, and the next second's calls
/// go unshared if that look came before `to`'s follower took its lease. Once `to` has heard
/// one call its lease is taken; after a look interval `from` knows, which a second call
/// heard proves.
pub async fn warm_up(from: &Registry, to: &mut Receiver<Arc<Event>>, id: &str) {
    let wait = async {
        hear_one(from, to, id).await;
        tokio::time::sleep(Duration::from_millis(1500)).await;
        let _ = rest(to).await;
        hear_one(from, to, id).await;
    };
    tokio::time::timeout(Duration::from_secs(30), wait)
        .await
        .expect("the instances hear of each other's calls");
}

/// Calls on `from` until `to` hears of one within half a second.
async fn hear_one(from: &Registry, to: &mut Receiver<Arc<Event>>, id: &str) {
    loop {
        let call = ToolCall::new(id, "ping", json!({"note": "warming up"}));
        assert!(from.call(&alice(), call).await.result.is_ok());
        let heard = tokio::time::timeout(Duration::from_millis(500), next_about(to, id)).await;
        if heard.is_ok() {
            return;
        }
    }
}

/// Whatever `receiver` still gets within half a second.
pub async fn rest(receiver: &mut Receiver<Arc<Event>>) -> Vec<Arc<Event>> {
    let mut rest = Vec::new();
    while let Ok(Ok(event)) =
        tokio::time::timeout(Duration::from_millis(500), receiver.recv()).await
    {
        rest.push(event);
    }
    rest
}

/// A call waiting on A is seen on B; approved on C; A and B hear of the decision and of the
/// call's end; nobody hears of anything twice.
pub async fn approvals_are_heard_on_every_instance_once(open: Open) {
    let (a, b, c) = (
        instance(&open).await,
        instance(&open).await,
        instance(&open).await,
    );
    let (mut on_a, mut on_b) = (a.events(), b.events());
    warm_up(&a, &mut on_b, "warm-a-b").await;
    warm_up(&b, &mut on_a, "warm-b-a").await;
    let _ = (rest(&mut on_a).await, rest(&mut on_b).await);

    let ticket = ticket_for(&a, "seen-everywhere").await;
    let requested = next_about(&mut on_b, "c1").await;
    assert_eq!(requested.caller, "alice");
    let EventKind::ApprovalRequested { tool, .. } = &requested.kind else {
        panic!("B hears first that the call waits: {requested:?}");
    };
    assert_eq!(tool, "wipe");

    assert!(c.approve(&ticket, &admin()).await.unwrap().result.is_ok());
    for on in [&mut on_a, &mut on_b] {
        let mut kinds = Vec::new();
        while kinds.len() < 2 {
            let event = next_about(on, "c1").await;
            match &event.kind {
                EventKind::ApprovalDecided { decided_by, .. } => {
                    assert_eq!(decided_by, "root");
                    kinds.push("decided");
                }
                EventKind::CallFinished { ok: true, .. } => kinds.push("finished"),
                // What A heard of its own call before it waited.
                EventKind::CallRequested { .. }
                | EventKind::ApprovalRequested { .. }
                | EventKind::CallFinished { .. } => {}
                other => panic!("unexpected {other:?}"),
            }
        }
        assert_eq!(kinds, ["decided", "finished"]);
    }
    // Each once: nothing more about the call arrives.
    for on in [&mut on_a, &mut on_b] {
        let again: Vec<_> = rest(on)
            .await
            .into_iter()
            .filter(|event| about(event) == Some("c1"))
            .collect();
        assert!(again.is_empty(), "heard twice: {again:?}");
    }
}
