//! Tools defined in another crate register once that crate is linked.

// Nothing else here refers to the crate; without this line the linker drops it, and its
// tools with it.
use toolgate_linked_tools as _;

use serde_json::json;
use toolgate::prelude::*;

#[tokio::test]
async fn tools_of_a_linked_crate_are_registered_and_run() {
    let registry = Registry::builder().roles(["public"]).build().unwrap();
    let caller = Caller::new("c", "public");
    let names: Vec<_> = registry
        .visible_to(&caller)
        .iter()
        .map(|t| t.name.clone())
        .collect();
    assert_eq!(names, ["celsius_to_fahrenheit"]);
    let outcome = registry
        .call(
            &caller,
            ToolCall::new("1", "celsius_to_fahrenheit", json!({"celsius": 100.0})),
        )
        .await;
    assert_eq!(outcome.result.unwrap(), 212.0);
}
