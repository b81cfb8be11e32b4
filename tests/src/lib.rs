//! Cross-crate tests of toolgate: the integration tests in `tests/`, and the examples of the
//! README and of `docs/`, which are compiled and run as this crate's doc tests. The compile-fail and pass
//! suites of `#[tool]` live in the `compile-suite` crate beside this one.
#![doc = include_str!("../../README.md")]

/// The pages of `docs/`, whose examples are compiled and run like the README's.
pub mod docs {
    #[doc = include_str!("../../docs/stores.md")]
    pub mod stores {}
    #[doc = include_str!("../../docs/ready-tools.md")]
    pub mod ready_tools {}
    #[doc = include_str!("../../docs/mcp.md")]
    pub mod mcp {}
    #[doc = include_str!("../../docs/performance.md")]
    pub mod performance {}
    #[doc = include_str!("../../docs/stages.md")]
    pub mod stages {}
    #[doc = include_str!("../../docs/telemetry.md")]
    pub mod telemetry {}
    #[doc = include_str!("../../docs/agent.md")]
    pub mod agent {}
    #[doc = include_str!("../../docs/tools-without-rust.md")]
    pub mod tools_without_rust {}
    #[doc = include_str!("../../docs/cedar.md")]
    pub mod cedar {}
    #[doc = include_str!("../../docs/identity.md")]
    pub mod identity {}
    #[doc = include_str!("../../docs/devices.md")]
    pub mod devices {}
    #[doc = include_str!("../../docs/search.md")]
    pub mod search {}
}

use std::io::Write;
use std::sync::{Arc, LazyLock, Mutex, PoisonError};

use toolgate::policy::{Decision, Policy, PolicyRequest};

/// Runs `work` with a `tracing` subscriber that writes into a string (events at INFO and
/// above), and returns what `work` returned with everything it logged.
pub fn capture_logs<T>(work: impl FnOnce() -> T) -> (T, String) {
    capture_filtered("info", work)
}

/// Makes `tracing` ask every live subscriber, not only the current thread's, whether it
/// wants a span or event the first time any thread reaches it. Call it before installing a
/// subscriber for one test.
///
/// `tracing` caches that answer for the whole process. While a single subscriber is
/// registered, it asks only the reaching thread's own: a sibling test's thread, which has
/// none, gets "never", cached, and a span the test's own subscriber waits for is never made.
/// A second subscriber registered for good (one that wants nothing) makes `tracing` ask
/// them all, the test's included.
pub fn share_callsite_interest() {
    static SECOND: LazyLock<tracing::Dispatch> =
        LazyLock::new(|| tracing::Dispatch::new(tracing::subscriber::NoSubscriber::default()));
    LazyLock::force(&SECOND);
}

/// [`capture_logs`] of the events `filter` (`EnvFilter` directives, e.g. `"trace"`) lets
/// through.
pub fn capture_filtered<T>(filter: &str, work: impl FnOnce() -> T) -> (T, String) {
    share_callsite_interest();
    #[derive(Clone, Default)]
    struct Captured(Arc<Mutex<Vec<u8>>>);
    impl Write for Captured {
        fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
            self.0
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .extend_from_slice(bytes);
            Ok(bytes.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let captured = Captured::default();
    let writer = captured.clone();
    let subscriber = tracing_subscriber::fmt()
        .with_env_filter(tracing_subscriber::EnvFilter::new(filter))
        .with_writer(move || writer.clone())
        .with_ansi(false)
        .finish();
    let result = tracing::subscriber::with_default(subscriber, work);
    let log = String::from_utf8_lossy(&captured.0.lock().unwrap_or_else(PoisonError::into_inner))
        .into_owned();
    (result, log)
}

/// [`capture_filtered`] of a future, run on a fresh single-threaded runtime (so that the
/// tasks it spawns log on this thread too).
pub fn capture_async<T>(filter: &str, work: impl Future<Output = T>) -> (T, String) {
    capture_filtered(filter, || {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("a runtime")
            .block_on(work)
    })
}

/// Connects an MCP client to toolgate's MCP server over an in-memory pipe, both on `rmcp`.
pub async fn connect_in_memory<C: rmcp::ClientHandler>(
    server: toolgate::mcp::McpServer,
    client: C,
) -> rmcp::service::RunningService<rmcp::RoleClient, C> {
    use rmcp::ServiceExt;
    let (server_side, client_side) = tokio::io::duplex(64 * 1024);
    tokio::spawn(async move {
        let running = server
            .serve(tokio::io::split(server_side))
            .await
            .expect("the server starts");
        let _ = running.waiting().await;
    });
    client
        .serve(tokio::io::split(client_side))
        .await
        .expect("the client connects")
}

/// A policy that allows every call and remembers the arguments it was shown, in order.
#[derive(Clone, Default)]
pub struct RememberingPolicy {
    /// The arguments of every call it decided.
    pub seen: Arc<Mutex<Vec<serde_json::Value>>>,
}

impl Policy for RememberingPolicy {
    fn decide(&self, request: &PolicyRequest<'_>) -> Decision {
        let mut seen = self.seen.lock().unwrap_or_else(PoisonError::into_inner);
        seen.push(request.arguments().clone());
        Decision::Allow
    }
}
