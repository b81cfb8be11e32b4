//! The console's files, compiled in: no build step, nothing fetched from elsewhere.

/// The page: markup only; everything in it that comes from a call is added as text.
pub(super) const PAGE: &str = include_str!("assets/index.html");

/// The console's script.
pub(super) const SCRIPT: &str = include_str!("assets/console.js");

/// The form for calling a tool, made from its schema.
pub(super) const CALL_FORM: &str = include_str!("assets/call_form.js");

/// The usage panel, for approvers.
pub(super) const USAGE: &str = include_str!("assets/usage.js");

/// The console's style sheet.
pub(super) const STYLE: &str = include_str!("assets/console.css");

/// Only the console's own files may run or style the page; it talks only to its own site
/// and may not be framed.
pub(super) const CONTENT_SECURITY_POLICY: &str = "default-src 'none'; script-src 'self'; \
     style-src 'self'; img-src 'self' data:; connect-src 'self'; base-uri 'none'; \
     form-action 'none'; frame-ancestors 'none'";
