//! Writes that wait at the same moment go to the database together: each writer queues its
//! item, and whoever takes the next turn writes everything queued by then in one go (one
//! transaction), then tells each writer how it went. Under load a write costs a share of one
//! transaction's round trips instead of all of them; alone, it costs the same.

use std::future::Future;
use std::sync::Mutex;

use tokio::sync::oneshot;

use crate::store::StoreError;
use crate::util::sync::lock;

/// Where a writer hears how its item's write went.
type Answer = oneshot::Sender<Result<(), StoreError>>;

/// Items waiting to be written, and the turn to write them.
pub(crate) struct GroupCommit<T> {
    queue: Mutex<Vec<(T, Answer)>>,
    turn: tokio::sync::Mutex<()>,
}

impl<T> Default for GroupCommit<T> {
    fn default() -> Self {
        GroupCommit {
            queue: Mutex::new(Vec::new()),
            turn: tokio::sync::Mutex::new(()),
        }
    }
}

impl<T: Send + 'static> GroupCommit<T> {
    /// Writes `item` with whatever else waits, by `write` (all of them, in the order they
    /// came, or none): `Ok` once it is written. The writing runs as a task of its own, so
    /// a writer dropped meanwhile does not cut it short for the others.
    pub(crate) async fn submit<W, F>(&self, item: T, write: W) -> Result<(), StoreError>
    where
        W: FnOnce(Vec<T>) -> F,
        F: Future<Output = Result<(), StoreError>> + Send + 'static,
    {
        let (sender, receiver) = oneshot::channel();
        lock(&self.queue).push((item, sender));
        {
            let _turn = self.turn.lock().await;
            let batch = std::mem::take(&mut *lock(&self.queue));
            if !batch.is_empty() {
                let (items, senders): (Vec<T>, Vec<_>) = batch.into_iter().unzip();
                let writing = write(items);
                let written = tokio::spawn(async move {
                    let written = writing.await;
                    for sender in senders {
                        let _ = sender.send(written.clone());
                    }
                });
                // Its outcome comes through the senders; a panic loses them, which is said below.
                let _ = written.await;
            }
        }
        receiver.await.unwrap_or_else(|_| {
            Err(StoreError::unavailable(
                "the audit writer",
                "the write was interrupted (its task ended without an answer)",
            ))
        })
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};

    use super::*;

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn writes_waiting_together_go_together_in_order_and_each_is_answered() {
        let group = Arc::new(GroupCommit::<usize>::default());
        let written = Arc::new(Mutex::new(Vec::new()));
        let batches = Arc::new(AtomicUsize::new(0));
        let writers = (0..64).map(|item| {
            let (group, written, batches) = (group.clone(), written.clone(), batches.clone());
            tokio::spawn(async move {
                group
                    .submit(item, move |items| async move {
                        batches.fetch_add(1, Ordering::SeqCst);
                        tokio::time::sleep(std::time::Duration::from_millis(5)).await;
                        lock(&written).extend(items);
                        Ok(())
                    })
                    .await
            })
        });
        for writer in futures::future::join_all(writers).await {
            writer.unwrap().unwrap();
        }
        let mut all = lock(&written).clone();
        all.sort_unstable();
        assert_eq!(all, (0..64).collect::<Vec<_>>(), "every item written once");
        assert!(batches.load(Ordering::SeqCst) < 64, "some went together");
    }

    #[tokio::test]
    async fn a_failed_write_fails_every_item_in_it() {
        let group = GroupCommit::<u8>::default();
        let failed = group
            .submit(1, |_| async { Err(StoreError::unavailable("db", "down")) })
            .await;
        assert!(failed.unwrap_err().to_string().contains("down"));
    }
}
