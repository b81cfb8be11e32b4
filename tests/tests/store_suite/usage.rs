//! Usage figures counted from a shared audit store: calls made on two instances, counted
//! on a third, match what is counted by hand.

use std::collections::BTreeMap;

use serde_json::json;
use toolgate::audit::Approvals;
use toolgate::prelude::*;

use super::{Open, admin, alice, instance, ticket_for};

pub async fn usage_is_counted_across_instances(open: Open) {
    let (a, b) = (instance(&open).await, instance(&open).await);
    // Records are stamped by the wall clock carried forward by the clock that times calls
    // (read again each second): a stamp may be a millisecond or so behind `now_ms`. The store
    // is this test's own, so a second of slack takes in nothing else.
    let since = now_ms().saturating_sub(1_000);
    for (index, registry) in [&a, &a, &a, &a, &b, &b].into_iter().enumerate() {
        let call = ToolCall::new(format!("p{index}"), "ping", json!({"note": "hi"}));
        assert!(registry.call(&alice(), call).await.result.is_ok());
    }
    let wrong = a
        .call(&alice(), ToolCall::new("bad", "ping", json!({})))
        .await;
    assert_eq!(wrong.result.unwrap_err().code, ErrorCode::InvalidArguments);
    // Approved on another instance, denied on another, one left waiting.
    let approved = ticket_for(&a, "usage-disk-1").await;
    assert!(b.approve(&approved, &admin()).await.unwrap().result.is_ok());
    let denied = ticket_for(&b, "usage-disk-2").await;
    a.deny(&denied, &admin(), "not that one").await.unwrap();
    ticket_for(&a, "usage-disk-3").await;

    let counter = instance(&open).await;
    let report = counter.usage(&admin(), since, now_ms() + 1).await.unwrap();
    assert_eq!(report.calls, 7 + 2, "{report:#?}");
    let ping = &report.by_tool[0];
    assert_eq!((ping.name.as_str(), ping.calls, ping.ok), ("ping", 7, 6));
    assert_eq!(
        ping.errors,
        BTreeMap::from([("invalid_arguments".to_owned(), 1)])
    );
    assert!(ping.p50_ms.is_some() && ping.p95_ms >= ping.p50_ms);
    let wipe = &report.by_tool[1];
    assert_eq!((wipe.name.as_str(), wipe.calls, wipe.ok), ("wipe", 2, 1));
    assert_eq!(
        wipe.errors,
        BTreeMap::from([("approval_denied".to_owned(), 1)])
    );
    let expected = Approvals {
        asked: 3,
        granted: 1,
        refused: 1,
        expired: 0,
        waiting: 1,
    };
    assert_eq!(wipe.approvals, expected);
    assert_eq!(report.by_role.len(), 1);
    assert_eq!(
        (report.by_role[0].name.as_str(), report.by_role[0].calls),
        ("user", 9)
    );
    assert!(report.unused.is_empty(), "{:?}", report.unused);

    // A period before the calls counts none of them.
    let before = counter
        .usage(&admin(), since - 60_000, since)
        .await
        .unwrap();
    assert_eq!(before.calls, 0);
    assert_eq!(before.unused, ["ping", "wipe"]);
}

fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as u64
}
