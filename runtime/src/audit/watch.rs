//! What sees each call's record as the call ends without a record being made (the
//! telemetry, which writes it onto the call's span).

use std::borrow::Cow;

use super::CallArguments;

/// What a call's record says as the call ends, shown to a [`RecordWatcher`] without a
/// record being made.
// Read only by the telemetry (feature `otel`), the one watcher there is.
#[cfg_attr(not(feature = "otel"), allow(dead_code))]
pub(crate) struct Ended<'a> {
    pub(crate) call_id: &'a str,
    /// The tool's own name, or the name as called when no tool the caller sees has it.
    pub(crate) tool: &'a str,
    /// Whether the call named a tool the caller sees.
    pub(crate) found: bool,
    pub(crate) decision: &'static str,
    pub(crate) approver: Option<&'a str>,
    /// `ok`, or the error code.
    pub(crate) outcome: Cow<'static, str>,
    /// The arguments as recorded (secrets redacted), if the call got as far as reading them.
    pub(crate) arguments: &'a CallArguments<'a>,
}

/// Sees what each call's record says as the call ends, on the calling task (the telemetry
/// writes it onto the call's span): cheaper than an [`AuditSink`](super::AuditSink), which is handed
/// whole records.
pub(crate) trait RecordWatcher: Send + Sync + 'static {
    fn ended(&self, ended: &Ended<'_>);

    /// Whether it reads the arguments (they are then kept for every call).
    fn reads_arguments(&self) -> bool;
}
