//! A registry's rules while it runs: compiled at build for its tools, compiled again when
//! tools come and go, read again on demand. A set that does not compile never replaces the
//! one deciding: the last good set keeps deciding, and the problems are kept to be read.

use std::sync::{Arc, Mutex};

use arc_swap::ArcSwap;

use super::CedarPolicies;
use super::compiled::{Compiled, Settings, compile};
use super::problem::CedarProblem;
use super::schema::claim_type;
use super::sources::{Parsed, parse, read};
use super::typing::CedarType;
use crate::definition::ToolDefinition;
use crate::util::sync::lock;

/// The rules a registry decides with.
pub(crate) struct CedarRules {
    policies: CedarPolicies,
    roles: Vec<String>,
    claims: Vec<(String, CedarType)>,
    /// What decides now.
    pub(crate) compiled: ArcSwap<Compiled>,
    /// The rules as last read and the tools as last seen; held while compiling, so
    /// changes of rules and of tools take effect one at a time.
    state: Mutex<State>,
    /// What kept the last change from taking effect.
    problems: Mutex<Vec<CedarProblem>>,
}

struct State {
    parsed: Parsed,
    tools: Vec<Arc<ToolDefinition>>,
}

impl CedarRules {
    /// The rules of `policies`, compiled for `tools`; every problem, with file and line.
    pub(crate) fn build(
        policies: CedarPolicies,
        roles: &[String],
        tools: Vec<Arc<ToolDefinition>>,
    ) -> Result<CedarRules, Vec<CedarProblem>> {
        let claims = typed_claims(&policies)?;
        let parsed = parse(read(&policies.sources)?)?;
        let settings = Settings {
            roles,
            claims: &claims,
            role_rules: policies.role_rules,
        };
        let definitions: Vec<&ToolDefinition> = tools.iter().map(|tool| &**tool).collect();
        let (compiled, problems) = match compile(&parsed, &definitions, &settings) {
            Ok(compiled) => (compiled, Vec::new()),
            // Tools the rules name may be registered after the build: until the rules
            // compile, they refuse what they decide.
            Err(problems) if policies.tools_later => {
                for problem in &problems {
                    tracing::warn!(%problem, "the rules refuse what they decide until they compile against the tools");
                }
                (Compiled::refusing(&settings), problems)
            }
            Err(problems) => return Err(problems),
        };
        Ok(CedarRules {
            policies,
            roles: roles.to_vec(),
            claims,
            compiled: ArcSwap::from_pointee(compiled),
            state: Mutex::new(State { parsed, tools }),
            problems: Mutex::new(problems),
        })
    }

    /// The application's offset from UTC, in minutes.
    pub(crate) fn utc_offset(&self) -> i32 {
        self.policies.utc_offset_minutes
    }

    /// Compiles the rules for the registry's tools as they are now.
    pub(crate) fn follow(&self, tools: Vec<Arc<ToolDefinition>>) {
        let mut state = lock(&self.state);
        match self.compile(&state.parsed, &tools) {
            Ok(compiled) => {
                self.compiled.store(Arc::new(compiled));
                lock(&self.problems).clear();
            }
            Err(problems) => self.keep_last_good(problems),
        }
        state.tools = tools;
    }

    /// Reads the rules' sources again and decides with them, if they compile; otherwise
    /// the rules deciding now stay, and the problems are returned.
    pub(crate) fn reload(&self) -> Result<(), Vec<CedarProblem>> {
        let mut state = lock(&self.state);
        let fresh = read(&self.policies.sources).and_then(parse);
        let compiled = fresh.and_then(|parsed| Ok((self.compile(&parsed, &state.tools)?, parsed)));
        match compiled {
            Ok((compiled, parsed)) => {
                self.compiled.store(Arc::new(compiled));
                state.parsed = parsed;
                lock(&self.problems).clear();
                Ok(())
            }
            Err(problems) => {
                self.keep_last_good(problems.clone());
                Err(problems)
            }
        }
    }

    /// What kept the last change of rules or tools from taking effect.
    pub(crate) fn problems(&self) -> Vec<CedarProblem> {
        lock(&self.problems).clone()
    }

    fn compile(
        &self,
        parsed: &Parsed,
        tools: &[Arc<ToolDefinition>],
    ) -> Result<Compiled, Vec<CedarProblem>> {
        let settings = Settings {
            roles: &self.roles,
            claims: &self.claims,
            role_rules: self.policies.role_rules,
        };
        compile(
            parsed,
            &tools.iter().map(|tool| &**tool).collect::<Vec<_>>(),
            &settings,
        )
    }

    fn keep_last_good(&self, problems: Vec<CedarProblem>) {
        for problem in &problems {
            tracing::error!(%problem, "the rules were not changed: the last good set keeps deciding");
        }
        *lock(&self.problems) = problems;
    }
}

/// The declared claims, typed; an unknown type is a problem.
fn typed_claims(policies: &CedarPolicies) -> Result<Vec<(String, CedarType)>, Vec<CedarProblem>> {
    let mut typed = Vec::new();
    let mut problems = Vec::new();
    for (name, declared) in &policies.claims {
        match claim_type(declared) {
            Some(ty) => typed.push((name.clone(), ty)),
            None => problems.push(CedarProblem::of(
                "claims",
                format!("the claim `{name}` is declared as `{declared}`; use String, Long, Bool or Set<...> of one of them"),
            )),
        }
    }
    if problems.is_empty() {
        Ok(typed)
    } else {
        Err(problems)
    }
}
