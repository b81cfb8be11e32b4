//! Why a registry could not be built: every problem found, at once.

use std::fmt;

use crate::definition::SourceLocation;
use crate::formats::{Incompatibility, Provider};

/// One problem found while building (or changing) a registry.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum BuildProblem {
    /// No roles were configured.
    NoRoles,
    /// A Cedar rule (or a set of them) is not usable: it does not parse, or names what the
    /// tools, roles or declared claims do not have, or compares it with the wrong type.
    Rule {
        /// The file, or the name the rules were given in code.
        file: String,
        /// The 1-based line, where one is known.
        line: Option<usize>,
        /// What is wrong, and the fix where one is known.
        message: String,
    },
    /// A role name appears twice in the hierarchy.
    DuplicateRole {
        /// The repeated role.
        role: String,
    },
    /// A tool's permission names no configured role.
    UnknownPermission {
        /// The tool.
        tool: String,
        /// Where it is defined.
        location: Option<SourceLocation>,
        /// The permission it asks for.
        permission: String,
        /// The configured roles, lowest first.
        known_roles: Vec<String>,
    },
    /// Two tools share a name.
    DuplicateName {
        /// The shared name.
        name: String,
        /// Where each is defined (`None` for tools registered at run time).
        locations: Vec<Option<SourceLocation>>,
    },
    /// A tool takes `State<T>` but the registry was given no `T`.
    MissingState {
        /// The tool.
        tool: String,
        /// Where it is defined.
        location: Option<SourceLocation>,
        /// The state's type.
        type_name: &'static str,
    },
    /// Two tools would have the same name at providers that take no `.` or `/`
    /// ([`provider_tool_name`](crate::provider_tool_name)).
    ProviderNameClash {
        /// The provider name they share.
        provider_name: String,
        /// The tools' own names.
        tools: Vec<String>,
    },
    /// A run-time tool's name breaks [`is_valid_tool_name`](crate::is_valid_tool_name).
    InvalidName {
        /// The name.
        name: String,
    },
    /// A tool names a UI component that breaks
    /// [`is_valid_ui_name`](crate::is_valid_ui_name).
    InvalidUiName {
        /// The tool.
        tool: String,
        /// The component's name.
        ui: String,
    },
    /// A tool cannot be shown to a provider the application requires.
    Incompatible {
        /// The tool.
        tool: String,
        /// The provider.
        provider: Provider,
        /// Every reason, each with its JSON path.
        incompatibilities: Vec<Incompatibility>,
    },
    /// Tools the application said it expects
    /// ([`RegistryBuilder::expect_tools`](crate::RegistryBuilder::expect_tools)) are not in
    /// the registry: most often their crate was not linked.
    MissingTools {
        /// The missing tools.
        names: Vec<String>,
    },
    /// Groups the application said it expects
    /// ([`RegistryBuilder::expect_groups`](crate::RegistryBuilder::expect_groups)) have no tool.
    MissingGroups {
        /// The empty groups.
        groups: Vec<String>,
    },
    /// The approver role named in the builder is not a configured role.
    UnknownApproverRole {
        /// The role named.
        role: String,
        /// The configured roles, lowest first.
        known_roles: Vec<String>,
    },
    /// A tool's input schema is not a valid JSON Schema with an object root.
    InvalidSchema {
        /// The tool.
        tool: String,
        /// What is wrong.
        reason: String,
    },
}

fn quoted(names: &[String]) -> String {
    let quoted: Vec<String> = names.iter().map(|name| format!("`{name}`")).collect();
    quoted.join(", ")
}

/// `"public", "staff"`: the configured roles, as a problem lists them.
fn roles_list(roles: &[String]) -> String {
    let quoted: Vec<String> = roles.iter().map(|role| format!("\"{role}\"")).collect();
    quoted.join(", ")
}

/// Where each of two same-named tools was defined, `a and b`.
fn places(locations: &[Option<SourceLocation>]) -> String {
    let places: Vec<String> = locations
        .iter()
        .map(|location| match location {
            Some(location) => location.to_string(),
            None => "a tool registered at run time".to_owned(),
        })
        .collect();
    places.join(" and ")
}

/// Expected tools or groups that are missing, and where such tools usually went.
fn missing(f: &mut fmt::Formatter<'_>, what: &str) -> fmt::Result {
    write!(
        f,
        "the expected {what}; if the tools are defined in another crate, make sure it is \
         linked (`use that_crate as _;`), and that no filter drops them"
    )
}

fn at(location: &Option<SourceLocation>) -> String {
    match location {
        Some(location) => format!(" (defined at {location})"),
        None => " (registered at run time)".to_owned(),
    }
}

impl fmt::Display for BuildProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BuildProblem::NoRoles => write!(
                f,
                "no roles are configured; call `.roles([\"public\", \"staff\", ...])`, lowest first"
            ),
            BuildProblem::Rule {
                file,
                line: Some(line),
                message,
            } => write!(f, "{file}:{line}: {message}"),
            BuildProblem::Rule { file, message, .. } => write!(f, "{file}: {message}"),
            BuildProblem::DuplicateRole { role } => {
                write!(
                    f,
                    "the role \"{role}\" appears more than once in `.roles(..)`"
                )
            }
            BuildProblem::MissingTools { names } => missing(
                f,
                &format!("tools {} are not in the registry", quoted(names)),
            ),
            BuildProblem::MissingGroups { groups } => {
                missing(f, &format!("groups {} have no tool", quoted(groups)))
            }
            BuildProblem::UnknownApproverRole { role, known_roles } => write!(
                f,
                "the approver role \"{role}\" is not a configured role; the roles are {}",
                roles_list(known_roles)
            ),
            tool_problem => tool_problem.describe_tool(f),
        }
    }
}

impl BuildProblem {
    /// Writes a problem of one tool's definition (the registry's own are written by `fmt`).
    fn describe_tool(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BuildProblem::UnknownPermission {
                tool,
                location,
                permission,
                known_roles,
            } => write!(
                f,
                "tool `{tool}`{} requires permission \"{permission}\", which is not a configured role; the roles are {}",
                at(location),
                roles_list(known_roles)
            ),
            BuildProblem::DuplicateName { name, locations } => write!(
                f,
                "two tools are named `{name}`: {}; rename one with `#[tool(name = \"...\")]`",
                places(locations)
            ),
            BuildProblem::ProviderNameClash {
                provider_name,
                tools,
            } => write!(
                f,
                "tools {} would all be named `{provider_name}` at OpenAI and Anthropic, whose names cannot hold `.` or `/`; rename one",
                quoted(tools).replace(", ", " and ")
            ),
            BuildProblem::MissingState {
                tool,
                location,
                type_name,
            } => write!(
                f,
                "tool `{tool}`{} takes `State<{type_name}>`, but the registry has no `{type_name}`; add `.state(..)` with one",
                at(location)
            ),
            BuildProblem::InvalidName { name } => write!(
                f,
                "the tool name {name:?} is invalid: use 1 to 64 ASCII letters, digits, `_`, `-`, `.` or `/`"
            ),
            BuildProblem::InvalidUiName { tool, ui } => write!(
                f,
                "tool `{tool}` names the UI component {ui:?}, which is invalid: use 1 to 64 ASCII \
                 letters, digits, `_` or `-`, starting with a letter"
            ),
            BuildProblem::Incompatible {
                tool,
                provider,
                incompatibilities,
            } => {
                write!(f, "tool `{tool}` cannot be used with {}", provider.name())?;
                let mut separator = ": ";
                for incompatibility in incompatibilities {
                    write!(f, "{separator}{incompatibility}")?;
                    separator = "; ";
                }
                Ok(())
            }
            BuildProblem::InvalidSchema { tool, reason } => {
                write!(f, "tool `{tool}` has an invalid input schema: {reason}")
            }
            setup => unreachable!("`fmt` writes the registry's own problems: {setup:?}"),
        }
    }
}

/// The registry could not be built (or a tool could not be registered at run time); lists
/// every problem found.
///
/// Its `Debug` form is the same readable list as its `Display` form, so
/// `fn main() -> Result<(), BuildError>` prints the problems, not a struct dump.
#[derive(Clone, PartialEq, Eq)]
pub struct BuildError {
    problems: Vec<BuildProblem>,
}

impl BuildError {
    pub(crate) fn new(problems: Vec<BuildProblem>) -> Self {
        BuildError { problems }
    }

    /// Each problem found.
    pub fn problems(&self) -> &[BuildProblem] {
        &self.problems
    }
}

impl fmt::Display for BuildError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let count = self.problems.len();
        write!(
            f,
            "the tool registry could not be built ({count} problem{}):",
            if count == 1 { "" } else { "s" }
        )?;
        for problem in &self.problems {
            write!(f, "\n  - {problem}")?;
        }
        Ok(())
    }
}

impl fmt::Debug for BuildError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

impl std::error::Error for BuildError {}
