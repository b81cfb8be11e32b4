//! An empty registry is a loud warning, not a silence: most often a crate of tools was
//! not linked.

use toolgate::Registry;
use toolgate_tests::capture_logs;

#[test]
fn building_an_empty_registry_warns_with_the_linking_hint() {
    let (registry, log) = capture_logs(|| Registry::builder().roles(["public"]).build().unwrap());
    assert!(registry.is_empty());
    assert!(log.contains("WARN"), "{log}");
    assert!(log.contains("the tool registry is empty"), "{log}");
    assert!(log.contains("use my_tools as _;"), "{log}");
}
