//! A call's progress reports and log messages as MCP notifications, for a client that asked
//! for them (a progress token; a log level): sent in order, all before the call's result.

// Logging is deprecated by SEP-2577 for a later revision, and still part of 2026-07-28.
#![allow(deprecated)]

use rmcp::model::{
    LoggingLevel, LoggingMessageNotificationParam, ProgressNotificationParam, ProgressToken,
};
use rmcp::{Peer, RoleServer};
use tokio::sync::mpsc;

use crate::progress::{LogLevel, LogMessage, LogSink, Progress, ProgressSink};

/// What goes to the client, in the order the tool made it.
enum Update {
    Progress(Progress),
    Log(LogMessage),
}

/// What the client asked to hear about one call.
pub(super) struct Listening {
    /// Progress, under this token.
    pub(super) progress: Option<ProgressToken>,
    /// Log messages at this level or above, named after this tool.
    pub(super) log: Option<(LogLevel, String)>,
}

/// The sinks a call's tool reports into, and their forwarder.
pub(super) struct Forwarded {
    pub(super) progress: Option<ProgressSink>,
    pub(super) log: Option<LogSink>,
    pub(super) forwarding: Option<Forwarding>,
}

/// The notifications on their way, sent by [`beside`](Forwarding::beside) while the call
/// runs, in the call's own task (no task of their own: most calls report nothing, and a
/// spawned forwarder cost a task and a wake-up per call).
pub(super) struct Forwarding {
    /// `None` marks the end: updates after it (from work the tool left behind) are dropped.
    sender: mpsc::UnboundedSender<Option<Update>>,
    receiver: mpsc::UnboundedReceiver<Option<Update>>,
    peer: Peer<RoleServer>,
    token: Option<ProgressToken>,
    logger: Option<String>,
}

/// Sinks that notify `peer` of what it asked to hear (none when it asked for nothing).
pub(super) fn forward(peer: Peer<RoleServer>, listening: Listening) -> Forwarded {
    if listening.progress.is_none() && listening.log.is_none() {
        return Forwarded {
            progress: None,
            log: None,
            forwarding: None,
        };
    }
    let (sender, receiver) = mpsc::unbounded_channel::<Option<Update>>();
    let token = listening.progress.clone();
    let logger = listening.log.as_ref().map(|(_, tool)| tool.clone());
    // A closed channel means the call is over or the client gone: nothing to tell.
    let progress = listening.progress.map(|_| {
        let updates = sender.clone();
        ProgressSink::new(move |report| drop(updates.send(Some(Update::Progress(report)))))
    });
    let log = listening.log.map(|(least, _)| {
        let updates = sender.clone();
        LogSink::new(move |message: LogMessage| {
            if message.level >= least {
                drop(updates.send(Some(Update::Log(message))));
            }
        })
    });
    let forwarding = Some(Forwarding {
        sender,
        receiver,
        peer,
        token,
        logger,
    });
    Forwarded {
        progress,
        log,
        forwarding,
    }
}

fn progress_param(token: &ProgressToken, report: Progress) -> ProgressNotificationParam {
    let mut param = ProgressNotificationParam::new(token.clone(), report.done);
    if let Some(total) = report.total {
        param = param.with_total(total);
    }
    if let Some(message) = report.message {
        param = param.with_message(message);
    }
    param
}

fn log_param(logger: Option<String>, message: LogMessage) -> LoggingMessageNotificationParam {
    let mut param = LoggingMessageNotificationParam::new(rmcp_level(message.level), message.data);
    param.logger = logger;
    param
}

fn rmcp_level(level: LogLevel) -> LoggingLevel {
    match level {
        LogLevel::Debug => LoggingLevel::Debug,
        LogLevel::Info => LoggingLevel::Info,
        LogLevel::Notice => LoggingLevel::Notice,
        LogLevel::Warning => LoggingLevel::Warning,
        LogLevel::Error => LoggingLevel::Error,
        LogLevel::Critical => LoggingLevel::Critical,
        LogLevel::Alert => LoggingLevel::Alert,
        LogLevel::Emergency => LoggingLevel::Emergency,
    }
}

/// The level a client asked for, in toolgate's terms.
pub(super) fn level_of(level: LoggingLevel) -> LogLevel {
    let name = serde_json::to_value(level).ok();
    name.as_ref()
        .and_then(serde_json::Value::as_str)
        .and_then(LogLevel::parse)
        .unwrap_or(LogLevel::Debug)
}

impl Forwarding {
    /// Runs `call`, sending the updates it makes as they come; done when the call is and
    /// every update made until then has been sent.
    pub(super) async fn beside<T>(self, call: impl Future<Output = T>) -> T {
        let Forwarding {
            sender,
            mut receiver,
            peer,
            token,
            logger,
        } = self;
        let call = async move {
            let result = call.await;
            let _ = sender.send(None);
            result
        };
        let send = async move {
            while let Some(Some(update)) = receiver.recv().await {
                // Boxed: a notification's future is large, and most calls send none; unboxed,
                // every call's future would carry its size.
                let sent = match update {
                    Update::Progress(report) => match &token {
                        Some(token) => {
                            let param = progress_param(token, report);
                            Box::pin(peer.notify_progress(param)).await
                        }
                        None => Ok(()),
                    },
                    Update::Log(message) => {
                        let param = log_param(logger.clone(), message);
                        Box::pin(peer.notify_logging_message(param)).await
                    }
                };
                if sent.is_err() {
                    break; // the client is gone
                }
            }
        };
        tokio::join!(call, send).0
    }
}
