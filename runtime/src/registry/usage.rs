//! Usage figures: the audit trail counted per tool and per role, as a viewer may see it.

use crate::audit::{AuditRecord, Tally, UsageReport};
use crate::caller::Caller;
use crate::registry::Registry;
use crate::store_error::StoreError;

/// Records read from the store at a time.
const PAGE: usize = 10_000;

impl Registry {
    /// What the tools were used for from `since_ms` to `until_ms` (milliseconds since the
    /// Unix epoch), counted from the registry's audit store: per tool and per role, calls,
    /// outcomes by error code, p50/p95 duration, approvals asked, granted, refused and
    /// expired, the last use, and the tools nobody used. Only tools `viewer` may see are
    /// counted or named.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// use toolgate::{Caller, Registry, ToolCall};
    ///
    /// let registry = Registry::builder().roles(["public"]).build().unwrap();
    /// let viewer = Caller::new("ann", "public");
    /// registry.call(&viewer, ToolCall::new("1", "nope", "{}")).await;
    /// let report = registry.usage(&viewer, 0, u64::MAX).await.unwrap();
    /// assert_eq!(report.calls, 0, "a tool that does not exist is nobody's");
    /// # }
    /// ```
    pub async fn usage(
        &self,
        viewer: &Caller,
        since_ms: u64,
        until_ms: u64,
    ) -> Result<UsageReport, StoreError> {
        let Some(store) = self.governance().audit.as_ref() else {
            return Err(StoreError::unavailable(
                "the audit store",
                "this registry keeps no audit records (no audit store, history capacity 0)",
            ));
        };
        let visible = |tool: &str| self.definition(viewer, tool).is_some();
        let mut tally = Tally::new((since_ms, until_ms), self.ticket_lifetime_ms(), &visible);
        let mut after = 0;
        loop {
            let page = store.records_after(after, PAGE).await?;
            for (_, record) in &page {
                tally.add(record);
            }
            match page.last() {
                Some((position, _)) if page.len() == PAGE => after = *position,
                _ => break,
            }
        }
        Ok(tally.report(&self.tool_names(viewer)))
    }

    /// [`usage`](Self::usage) counted from records read elsewhere (an audit file, say).
    pub fn usage_of(
        &self,
        viewer: &Caller,
        records: impl IntoIterator<Item = AuditRecord>,
        since_ms: u64,
        until_ms: u64,
    ) -> UsageReport {
        let visible = |tool: &str| self.definition(viewer, tool).is_some();
        let mut tally = Tally::new((since_ms, until_ms), self.ticket_lifetime_ms(), &visible);
        for record in records {
            tally.add(&record);
        }
        tally.report(&self.tool_names(viewer))
    }

    fn ticket_lifetime_ms(&self) -> u64 {
        self.governance().signer.lifetime().as_millis() as u64
    }

    fn tool_names(&self, viewer: &Caller) -> Vec<String> {
        self.visible_to(viewer)
            .iter()
            .map(|tool| tool.name.clone())
            .collect()
    }
}
