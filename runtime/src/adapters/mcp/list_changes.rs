//! Telling one MCP client that its tool list changed, and only when it did.

use std::future::Future;
use std::sync::Arc;

use crate::caller::Caller;
use crate::formats::Format;
use crate::registry::{Registry, Snapshot};

/// The registry's tools at the moment a client was shown them (run-time changes make new
/// ones), to tell later whether what that client may see changed since.
pub(super) type ToolsAsOf = Arc<Snapshot>;

/// Calls `notify` whenever what `caller` sees differs from what it saw when `since` was
/// taken, until `notify` answers `false` or, at any change of the registry, `gone` answers
/// `true` (the client left; checked at every change, seen or not, so that watchers of closed
/// connections do not pile up while only tools hidden from them change).
///
/// `since` closes the gap between promising a client notifications and starting to watch: a
/// change in between is announced at once. Changes to tools above the caller's role are
/// never announced: that would tell the caller that something it cannot see exists.
pub(super) async fn notify_visible_changes<Notify, Sent>(
    registry: Registry,
    caller: Caller,
    since: ToolsAsOf,
    gone: impl Fn() -> bool,
    mut notify: Notify,
) where
    Notify: FnMut() -> Sent,
    Sent: Future<Output = bool>,
{
    // Subscribed before the first comparison, so no change can fall between the two.
    let mut changes = registry.changes();
    let mut seen = registry.export_from(&since, &caller, Format::Mcp);
    loop {
        // Exports are cached per role: one comparison of two listings per change.
        let now = registry.export(&caller, Format::Mcp);
        if now != seen {
            seen = now;
            if !notify().await {
                return;
            }
        }
        if changes.changed().await.is_err() || gone() {
            return;
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;
    use tokio::sync::mpsc;

    use super::*;
    use crate::{FnTool, ToolDefinition};

    fn echo(name: &str, permission: &str) -> FnTool {
        let definition = ToolDefinition::new(
            name,
            "Echo.",
            permission,
            json!({"type": "object", "properties": {}}),
        );
        FnTool::new(definition, |_, arguments| async move { Ok(arguments) })
    }

    fn user_and_admin() -> Registry {
        Registry::builder()
            .roles(["user", "admin"])
            .linked_tools(false)
            .build()
            .unwrap()
    }

    /// Watches for `user` from `since`; each announcement arrives as one message.
    fn announcements(registry: &Registry, since: ToolsAsOf) -> mpsc::UnboundedReceiver<()> {
        let (sent, received) = mpsc::unbounded_channel();
        tokio::spawn(notify_visible_changes(
            registry.clone(),
            Caller::new("u", "user"),
            since,
            || false,
            move || {
                let sent = sent.clone();
                async move { sent.send(()).is_ok() }
            },
        ));
        received
    }

    /// Lets the watching task run until it waits again (one thread, so this is exact).
    async fn settle() {
        for _ in 0..10 {
            tokio::task::yield_now().await;
        }
    }

    #[tokio::test(flavor = "current_thread")]
    async fn only_changes_the_caller_can_see_are_announced() {
        let registry = user_and_admin();
        let mut received = announcements(&registry, registry.tools_now());
        settle().await;

        registry.register(echo("admin_only", "admin")).unwrap();
        settle().await;
        assert!(received.try_recv().is_err(), "a hidden tool was announced");

        registry.register(echo("for_users", "user")).unwrap();
        settle().await;
        assert!(
            received.try_recv().is_ok(),
            "a visible tool was not announced"
        );

        assert!(registry.unregister("admin_only"));
        settle().await;
        assert!(
            received.try_recv().is_err(),
            "removing a hidden tool was announced"
        );

        assert!(registry.unregister("for_users"));
        settle().await;
        assert!(
            received.try_recv().is_ok(),
            "removing a visible tool was not announced"
        );
    }

    #[tokio::test(flavor = "current_thread")]
    async fn a_change_before_watching_starts_is_announced() {
        let registry = user_and_admin();
        let promised = registry.tools_now();
        registry.register(echo("hidden", "admin")).unwrap();
        let hidden_only = registry.tools_now();
        registry.register(echo("visible", "user")).unwrap();

        let mut received = announcements(&registry, promised);
        settle().await;
        assert!(
            received.try_recv().is_ok(),
            "the change in the gap was lost"
        );
        assert!(received.try_recv().is_err(), "announced twice");

        // Now the user sees what it saw before `hidden` came: measured against a moment that
        // differed only in a hidden tool, there is nothing to announce.
        assert!(registry.unregister("visible"));
        let mut heard = announcements(&registry, hidden_only);
        settle().await;
        assert!(heard.try_recv().is_err(), "a hidden tool was announced");
    }

    #[tokio::test(flavor = "current_thread")]
    async fn stops_when_a_notification_cannot_be_sent() {
        let registry = user_and_admin();
        let watching = tokio::spawn(notify_visible_changes(
            registry.clone(),
            Caller::new("u", "user"),
            registry.tools_now(),
            || false,
            || async { false },
        ));
        settle().await;
        registry.register(echo("first", "user")).unwrap();
        settle().await;
        assert!(watching.is_finished());
    }

    #[tokio::test(flavor = "current_thread")]
    async fn stops_at_a_hidden_change_once_the_client_left() {
        let registry = user_and_admin();
        let watching = tokio::spawn(notify_visible_changes(
            registry.clone(),
            Caller::new("u", "user"),
            registry.tools_now(),
            || true,
            || async { panic!("nothing visible changed") },
        ));
        settle().await;
        assert!(!watching.is_finished());
        registry.register(echo("admin_only", "admin")).unwrap();
        settle().await;
        assert!(watching.is_finished());
        watching.await.expect("ended without announcing");
    }
}
