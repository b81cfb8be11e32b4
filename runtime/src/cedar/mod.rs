//! Rules over who, which tool and which arguments, in Cedar (feature `cedar`), checked
//! against the tools' own schemas.
//!
//! A role (`permission = "staff"`) says whether a role may use a tool at all. Rules say the
//! rest: *staff may refund up to 100, above that an admin must approve*; *a customer may
//! read only their own pet's records*; *nobody runs destructive tools outside 08:00–18:00*;
//! *contractors never see billing tools*. They are
//! [Cedar](https://www.cedarpolicy.com) policies, evaluated by the `cedar-policy` crate,
//! over the **typed, validated arguments** of each call:
//!
//! ```cedar
//! @id("refunds over 100 need an admin")
//! @approval("refunds over 100 are approved by an admin")
//! permit (principal in Role::"staff", action == Action::"call:refund", resource)
//! when { context.arguments.amount > 100 };
//!
//! @id("no destructive tools at night")
//! @reason("destructive tools run only from 08:00 to 18:00")
//! forbid (principal, action in Action::"call", resource)
//! when { resource.destructive && (context.hour < 8 || context.hour >= 18) };
//!
//! @id("contractors never see billing")
//! forbid (principal, action in [Action::"see", Action::"call"], resource)
//! when { resource has group && resource.group == "billing"
//!        && principal.claims has contractor && principal.claims.contractor };
//! ```
//!
//! # What the rules see
//!
//! - **principal** `Caller::"<id>"`: `id`, `role`, `issuer` (a token's), `claims` (the
//!   token's claims the application [declares](CedarPolicies::claim), with their types);
//!   it is `in` its role and every role below (`principal in Role::"staff"`).
//! - **action** `Action::"see"` (listed, searched, suggested), `Action::"call:<tool>"` in
//!   the group `Action::"call"`, `Action::"approve:<tool>"` in `Action::"approve"` (may
//!   decide a waiting call).
//! - **resource** `Tool::"<name>"`: `name`, `group`, `permission` (a `Role`), `risk`,
//!   `read_only`, `destructive`, `idempotent`, `open_world`, `tags`, `source` (`rust`,
//!   `file`, `other`).
//! - **context**: `now` (a `datetime`), `hour`, `minute`, `weekday` (1 is Monday) on the
//!   application's clock ([`utc_offset_minutes`](CedarPolicies::utc_offset_minutes)); for
//!   `call:<tool>`, `arguments` (typed by the tool's schema), `front` (`library`, `http`,
//!   `mcp`, `agent`, `cli`) and `run_id`; for `approve:<tool>`, `arguments` and
//!   `requester` (`id`, `role`).
//!
//! # Checked against the tools
//!
//! The Cedar schema is generated from the registry: every tool's argument JSON Schema is
//! the type of `context.arguments` of its actions, so a rule naming an argument the tool
//! does not have, comparing it with the wrong type, naming an unknown role, claim, action
//! or tool, or not parsing, fails [`build`](crate::RegistryBuilder::build) with the file,
//! the line and Cedar's hint (`did you mean amount?`). Arguments with no exact Cedar type
//! (numbers with fractions, unions, open maps) are left out of the typed context, and a
//! rule naming one is a build problem saying why.
//!
//! # Decisions
//!
//! `forbid` beats `permit`, and nothing permitted is refused. A refused call is answered
//! `denied` with the deciding forbid's `@reason("...")`; a permit carrying
//! `@approval("...")` among the deciding rules sends the call to a person first (the
//! registry's usual tickets, console, approver or caller's client). A rule that fails to
//! evaluate refuses the call. The rules that decided are in the call's audit record
//! (`allow (stages: cedar: permitted by ...)`) and in the refusal. A tool no rule lets a
//! caller `see` is unknown to it, in every list and to every call, exactly like a tool
//! that does not exist.
//!
//! # Rules and roles
//!
//! **Rules narrow a role, never widen it.** The registry's role check comes first: a tool
//! above a caller's role is unknown to it whatever a rule permits. The roles themselves are
//! also a rule, generated (`toolgate.roles`: within its role, a caller may see and call),
//! so an application adds `forbid`s and `@approval` permits; with
//! [`without_role_rules`](CedarPolicies::without_role_rules) nothing is permitted but what
//! its own rules permit. Deciding waiting calls is for the registry's approver role, and
//! `approve` rules narrow who of them may decide which.
//!
//! # Where rules live
//!
//! In code ([`text`](CedarPolicies::text)), files ([`file`](CedarPolicies::file)) or a
//! folder of `*.cedar` files ([`folder`](CedarPolicies::folder)), given to
//! [`RegistryBuilder::cedar`](crate::RegistryBuilder::cedar).
//! [`Registry::reload_rules`](crate::Registry::reload_rules) reads them again while
//! serving: the new set decides from then on, atomically, or, if it does not compile, the
//! last good set keeps deciding and the problems are returned with their lines. When tools
//! come and go, the rules are checked against them again.
//!
//! ```
//! use toolgate::cedar::CedarPolicies;
//! use toolgate::Registry;
//!
//! let rules = CedarPolicies::new()
//!     .text("night.cedar", r#"
//!         @id("quiet hours")
//!         forbid (principal, action in Action::"call", resource)
//!         when { resource.destructive && context.hour < 6 };"#)
//!     .claim("groups", "Set<String>");
//! let registry = Registry::builder().roles(["public", "staff"]).cedar(rules).build();
//! assert!(registry.is_ok());
//! ```

mod compiled;
mod decide;
mod deciders;
mod problem;
mod rules;
mod schema;
mod sources;
mod stages;
mod typing;

use std::path::PathBuf;

pub use problem::CedarProblem;

pub(crate) use rules::CedarRules;
pub(crate) use stages::{CallRules, SeeRules};

use sources::Source;

/// A registry's Cedar rules: where they are, which token claims they may read, and the
/// application's clock. Give it to [`RegistryBuilder::cedar`](crate::RegistryBuilder::cedar).
#[derive(Debug, Clone)]
pub struct CedarPolicies {
    sources: Vec<Source>,
    claims: Vec<(String, String)>,
    utc_offset_minutes: i32,
    role_rules: bool,
    tools_later: bool,
}

impl Default for CedarPolicies {
    fn default() -> Self {
        CedarPolicies::new()
    }
}

impl CedarPolicies {
    /// No rules yet; the roles' own rule included.
    pub fn new() -> Self {
        CedarPolicies {
            sources: Vec::new(),
            claims: Vec::new(),
            utc_offset_minutes: 0,
            role_rules: true,
            tools_later: false,
        }
    }

    /// Rules given as text; `name` stands for a file name in problems and rule ids.
    pub fn text(mut self, name: impl Into<String>, text: impl Into<String>) -> Self {
        self.sources.push(Source::Text {
            name: name.into(),
            text: text.into(),
        });
        self
    }

    /// Rules in a file, read at build and by every reload.
    pub fn file(mut self, path: impl Into<PathBuf>) -> Self {
        self.sources.push(Source::File(path.into()));
        self
    }

    /// Every `*.cedar` file of a folder, in name order, read at build and by every reload.
    pub fn folder(mut self, path: impl Into<PathBuf>) -> Self {
        self.sources.push(Source::Folder(path.into()));
        self
    }

    /// A token claim the rules may read as `principal.claims.<name>`, with its Cedar type:
    /// `String`, `Long`, `Bool`, or `Set<...>` of one of them. A claim missing from a token,
    /// or not of this type, is absent (rules test it with `has`). A rule naming a claim
    /// not declared is a build problem.
    pub fn claim(mut self, name: impl Into<String>, cedar_type: impl Into<String>) -> Self {
        self.claims.push((name.into(), cedar_type.into()));
        self
    }

    /// The application's clock, in minutes from UTC, for `context.hour`, `minute` and
    /// `weekday` (default 0: UTC). `context.now` is always UTC.
    pub fn utc_offset_minutes(mut self, minutes: i32) -> Self {
        self.utc_offset_minutes = minutes;
        self
    }

    /// The rules may name tools registered after the build (tool files, imported MCP
    /// servers): the build does not fail for rules that do not compile yet. Until they
    /// compile against the tools, they refuse every call and hide every tool they decide, and
    /// [`Registry::rule_problems`](crate::Registry::rule_problems) says why; each tool
    /// registered compiles them again.
    pub fn tools_registered_later(mut self) -> Self {
        self.tools_later = true;
        self
    }

    /// Leaves out the roles' own rule: nothing is permitted but what the application's
    /// rules permit (still within each caller's role).
    pub fn without_role_rules(mut self) -> Self {
        self.role_rules = false;
        self
    }
}
