//! An empty registry is a loud warning, not a silence: most often a crate of tools was
//! not linked.

use std::io::Write;
use std::sync::{Arc, Mutex};

use toolgate::Registry;

#[derive(Clone, Default)]
struct Captured(Arc<Mutex<Vec<u8>>>);

impl Write for Captured {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(bytes);
        Ok(bytes.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

#[test]
fn building_an_empty_registry_warns_with_the_linking_hint() {
    let captured = Captured::default();
    let writer = captured.clone();
    let subscriber = tracing_subscriber::fmt()
        .with_writer(move || writer.clone())
        .with_ansi(false)
        .finish();
    let registry = tracing::subscriber::with_default(subscriber, || {
        Registry::builder().roles(["public"]).build().unwrap()
    });
    assert!(registry.is_empty());
    let log = String::from_utf8(captured.0.lock().unwrap().clone()).unwrap();
    assert!(log.contains("WARN"), "{log}");
    assert!(log.contains("the tool registry is empty"), "{log}");
    assert!(log.contains("use my_tools as _;"), "{log}");
}
