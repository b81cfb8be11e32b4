//! A call's progress reports as MCP progress notifications, for a client that asked for
//! them with a progress token: sent in order, all before the call's result.

use rmcp::model::{ProgressNotificationParam, ProgressToken};
use rmcp::{Peer, RoleServer};
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

use crate::progress::{Progress, ProgressSink};

/// The notifications on their way; [`finish`](Forwarding::finish) sends what is left.
pub(super) struct Forwarding {
    /// `None` marks the end: reports after it (from work the tool left behind) are dropped.
    sender: mpsc::UnboundedSender<Option<Progress>>,
    task: JoinHandle<()>,
}

/// A sink that notifies `peer` under `token`, and its forwarder.
pub(super) fn forward(peer: Peer<RoleServer>, token: ProgressToken) -> (ProgressSink, Forwarding) {
    let (sender, mut receiver) = mpsc::unbounded_channel::<Option<Progress>>();
    let task = tokio::spawn(async move {
        while let Some(Some(report)) = receiver.recv().await {
            let mut param = ProgressNotificationParam::new(token.clone(), report.done);
            if let Some(total) = report.total {
                param = param.with_total(total);
            }
            if let Some(message) = report.message {
                param = param.with_message(message);
            }
            if peer.notify_progress(param).await.is_err() {
                break; // the client is gone
            }
        }
    });
    let reports = sender.clone();
    let sink = ProgressSink::new(move |report| {
        // A closed channel means the call is over or the client gone: nothing to tell.
        let _ = reports.send(Some(report));
    });
    (sink, Forwarding { sender, task })
}

impl Forwarding {
    /// Waits until every report made so far has been sent.
    pub(super) async fn finish(self) {
        let _ = self.sender.send(None);
        let _ = self.task.await;
    }
}
