//! The registry's Cedar rules (feature `cedar`): compiled at build for its tools, taken onto
//! the call's path as a call stage and a listing stage, compiled again as tools change.

use std::sync::Arc;

use crate::cedar::{CallRules, CedarPolicies, CedarProblem, CedarRules, SeeRules};
use crate::registry::config::Governance;
use crate::registry::problems::{BuildError, BuildProblem};
use crate::registry::snapshot::Snapshot;
use crate::roles::Roles;

impl Governance {
    /// Decides with `policies` too, checked against the tools of `snapshot`: after every
    /// call stage (on the arguments as they will run), and in every listing.
    pub(crate) fn decide_with_rules(
        &mut self,
        policies: CedarPolicies,
        roles: &Roles,
        snapshot: &Snapshot,
    ) -> Result<(), BuildError> {
        let rules = CedarRules::build(policies, roles.names(), definitions(snapshot))
            .map_err(|problems| BuildError::new(problems.into_iter().map(problem).collect()))?;
        let rules = Arc::new(rules);
        self.stages
            .add_call(Box::new(CallRules(Arc::clone(&rules))));
        self.stages
            .add_listing(Box::new(SeeRules(Arc::clone(&rules))));
        self.cedar = Some(rules);
        Ok(())
    }

    /// Checks the rules against the tools of `snapshot`, before it is the registry's.
    pub(crate) fn follow_tools(&self, snapshot: &Snapshot) {
        if let Some(rules) = &self.cedar {
            rules.follow(definitions(snapshot));
        }
    }
}

fn definitions(snapshot: &Snapshot) -> Vec<Arc<crate::ToolDefinition>> {
    snapshot
        .entries()
        .iter()
        .map(|entry| Arc::clone(&entry.definition))
        .collect()
}

fn problem(problem: CedarProblem) -> BuildProblem {
    BuildProblem::Rule {
        file: problem.file,
        line: problem.line,
        message: problem.message,
    }
}
