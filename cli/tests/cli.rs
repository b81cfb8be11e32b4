//! The `toolgate` command, driven as a user drives it: the real binary on temporary project
//! folders, real scripts, a loopback HTTP server, the official Python MCP SDK, a real OpenID provider, a real OpenTelemetry backend.

#[path = "cli/support.rs"]
mod support;

#[path = "cli/approvals.rs"]
mod approvals;
#[path = "cli/audit.rs"]
mod audit;
#[path = "cli/auth.rs"]
mod auth;
#[path = "cli/chat.rs"]
mod chat;
#[path = "cli/command_tools.rs"]
mod command_tools;
#[path = "cli/config_effects.rs"]
mod config_effects;
#[path = "cli/config_errors.rs"]
mod config_errors;
#[path = "cli/console.rs"]
mod console;
#[path = "cli/devices.rs"]
mod devices;
#[path = "cli/http_tools.rs"]
mod http_tools;
#[path = "cli/install.rs"]
mod install;
#[path = "cli/loading.rs"]
mod loading;
#[path = "cli/mcp_any.rs"]
mod mcp_any;
#[path = "cli/openapi.rs"]
mod openapi;
#[path = "cli/rules.rs"]
mod rules;
#[path = "cli/serve_mcp.rs"]
mod serve_mcp;
#[path = "cli/starting.rs"]
mod starting;
#[path = "cli/telemetry.rs"]
mod telemetry;
#[path = "cli/wheel.rs"]
mod wheel;
#[path = "cli/workflows.rs"]
mod workflows;
