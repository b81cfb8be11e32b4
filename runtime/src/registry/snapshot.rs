//! An immutable view of the registry's tools, with every role's listing precomputed.
//! Changes at run time build a new snapshot; calls in flight keep the one they started with.

use std::borrow::Cow;
use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex};

use serde_json::Value;

use crate::arguments::integral_floats_as_integers;
use crate::context::{StateMap, StateRequirement, ToolContext};
use crate::definition::{ToolDefinition, is_valid_tool_name, is_valid_ui_name, provider_tool_name};
use crate::error::ToolError;
use crate::formats::{Format, Provider};
use crate::registry::problems::BuildProblem;
use crate::registry::proof::{self, ExactRead};
use crate::roles::Roles;
use crate::schema::nulls;
use crate::static_tool::StaticTool;
use crate::tool::{Tool, ToolFuture};
use crate::util::sync::lock;
use crate::validation::ArgumentValidator;

/// Most tool names quoted in an unknown-tool message.
const MAX_NAMED_TOOLS: usize = 30;

/// How a tool is run.
#[derive(Clone)]
pub(crate) enum Handler {
    /// A `#[tool]` function.
    Static(&'static StaticTool),
    /// A tool registered at run time.
    Dynamic(Arc<dyn Tool>),
}

impl Handler {
    /// Starts the tool. A `#[tool]` function reads its typed arguments from `arguments`
    /// before its future is made, so they stay the caller's (for the call's record); a tool
    /// registered at run time takes a copy.
    /// The context is made (by `context`) only for a function that takes part of it.
    pub(crate) fn start(
        &self,
        context: &mut dyn FnMut() -> ToolContext,
        arguments: &Value,
    ) -> ToolFuture {
        match self {
            Handler::Static(tool) => (tool.invoke)(context, arguments),
            Handler::Dynamic(tool) => tool.call(context(), arguments.clone()),
        }
    }

    pub(crate) fn review(
        &self,
        context: &ToolContext,
        arguments: &Value,
    ) -> Result<Option<Value>, ToolError> {
        match self {
            Handler::Static(_) => Ok(None),
            Handler::Dynamic(tool) => tool.review(context, arguments),
        }
    }

    /// Goes on with a call that stopped at a step waiting for a person (see
    /// [`Tool::go_on`]); a `#[tool]` function makes no steps.
    pub(crate) fn go_on(
        &self,
        context: ToolContext,
        state: serde_json::Value,
        step: crate::ToolOutcome,
    ) -> ToolFuture {
        match self {
            Handler::Static(_) => crate::tool::cannot_go_on(),
            Handler::Dynamic(tool) => tool.go_on(context, state, step),
        }
    }
}

/// A tool waiting to be checked and added.
pub(crate) struct Candidate {
    pub(crate) definition: ToolDefinition,
    pub(crate) handler: Handler,
    pub(crate) requirements: Vec<StateRequirement>,
}

impl Candidate {
    /// A tool given to the builder or registered at run time.
    pub(crate) fn dynamic(tool: Arc<dyn Tool>) -> Self {
        Candidate {
            definition: tool.definition(),
            requirements: tool.requirements(),
            handler: Handler::Dynamic(tool),
        }
    }
}

/// A checked tool.
pub(crate) struct Entry {
    pub(crate) definition: Arc<ToolDefinition>,
    /// Rank of the tool's permission in the role hierarchy.
    pub(crate) rank: usize,
    pub(crate) handler: Handler,
    pub(crate) validator: ArgumentValidator,
    /// Whether `null` may stand for an omitted optional property that does not accept
    /// `null` (see `schema::nulls`).
    pub(crate) strips_nulls: bool,
    /// How to read arguments straight into the parameter types, where that is proven to
    /// accept only what the schema accepts.
    pub(crate) exact: Option<ExactRead>,
    /// Whether providers spell the name otherwise (`files/read` as `files_read`): only
    /// then may a call name the tool by another name than its own.
    pub(crate) aliased: bool,
}

impl Entry {
    /// Arguments made ready for the function and checked against the input schema: `null`
    /// for omitted optionals dropped, integral floats made integers (the schema and serde
    /// then agree on `1.0`), every violation reported without quoting secret values.
    pub(crate) fn check(&self, mut arguments: Value) -> Result<Value, ToolError> {
        self.check_in_place(&mut arguments)?;
        Ok(arguments)
    }

    /// [`check`](Self::check), leaving the arguments (normalized) with the caller either way.
    pub(crate) fn check_in_place(&self, arguments: &mut Value) -> Result<(), ToolError> {
        self.normalize(arguments);
        self.validator
            .check(arguments, &self.definition.secret_arguments)
    }

    /// `null` for omitted optionals dropped, integral floats made integers.
    pub(crate) fn normalize(&self, arguments: &mut Value) {
        if self.strips_nulls {
            nulls::remove_optional_nulls(&self.definition.input_schema, arguments);
        }
        integral_floats_as_integers(arguments);
    }
}

/// What one role sees.
#[derive(Default)]
pub(crate) struct RoleView {
    pub(crate) tools: Arc<[Arc<ToolDefinition>]>,
    /// Visible names, for the unknown-tool message.
    pub(crate) names: Arc<str>,
    /// `tools` in each format (the canonical JSON included), each made on first request.
    exports: Mutex<HashMap<Format, Arc<Value>>>,
}

impl RoleView {
    /// The tools in `format`, made once and then shared.
    pub(crate) fn export(&self, format: Format) -> Arc<Value> {
        let mut exports = lock(&self.exports);
        Arc::clone(
            exports
                .entry(format)
                .or_insert_with(|| Arc::new(format.tools(&self.tools))),
        )
    }
}

#[derive(Default)]
pub(crate) struct Snapshot {
    entries: Vec<Arc<Entry>>,
    /// Looked up on every call: a fast hash (the keys are the registry's own tool names, so
    /// no caller can choose colliding ones).
    by_name: foldhash::HashMap<String, usize>,
    views: Vec<RoleView>,
}

impl Snapshot {
    /// Checks candidates and joins them with already checked entries.
    pub(crate) fn assemble(
        rules: &Rules<'_>,
        existing: Vec<Arc<Entry>>,
        candidates: Vec<Candidate>,
    ) -> Result<Snapshot, Vec<BuildProblem>> {
        let roles = rules.roles;
        let mut problems = role_problems(roles);
        let mut entries = existing;
        for candidate in candidates {
            match check(rules, candidate) {
                Ok(entry) => entries.push(Arc::new(entry)),
                Err(mut found) => problems.append(&mut found),
            }
        }
        entries.sort_by(|a, b| a.definition.name.cmp(&b.definition.name));
        problems.extend(duplicate_names(&entries));
        problems.extend(provider_name_clashes(&entries));
        if !problems.is_empty() {
            return Err(problems);
        }
        // A tool is found by its name, and by its provider name where that differs (a model
        // of OpenAI or Anthropic calls `files_read` for `files/read`).
        let mut by_name = foldhash::HashMap::default();
        by_name.reserve(entries.len());
        for (index, entry) in entries.iter().enumerate() {
            let name = &entry.definition.name;
            if let Cow::Owned(provider_name) = provider_tool_name(name) {
                by_name.insert(provider_name, index);
            }
            by_name.insert(name.clone(), index);
        }
        let views = (0..roles.names().len())
            .map(|rank| view_for(&entries, rank))
            .collect();
        Ok(Snapshot {
            entries,
            by_name,
            views,
        })
    }

    pub(crate) fn entries(&self) -> &[Arc<Entry>] {
        &self.entries
    }

    /// The entry of `name` if a caller of `rank` may see it. Inlined: every call looks
    /// its tool up.
    #[inline]
    pub(crate) fn visible(&self, rank: Option<usize>, name: &str) -> Option<&Arc<Entry>> {
        let entry = &self.entries[*self.by_name.get(name)?];
        (entry.rank <= rank?).then_some(entry)
    }

    /// The entry of `name` whatever its permission.
    pub(crate) fn any(&self, name: &str) -> Option<&Arc<Entry>> {
        Some(&self.entries[*self.by_name.get(name)?])
    }

    pub(crate) fn view(&self, rank: Option<usize>) -> Option<&RoleView> {
        self.views.get(rank?)
    }
}

fn role_problems(roles: &Roles) -> Vec<BuildProblem> {
    let mut problems = Vec::new();
    if roles.names().is_empty() {
        problems.push(BuildProblem::NoRoles);
    }
    for role in roles.duplicates() {
        problems.push(BuildProblem::DuplicateRole {
            role: role.to_owned(),
        });
    }
    problems
}

/// What every tool is checked against.
pub(crate) struct Rules<'a> {
    pub(crate) roles: &'a Roles,
    pub(crate) states: &'a StateMap,
    pub(crate) providers: &'a [Provider],
}

fn check(rules: &Rules<'_>, candidate: Candidate) -> Result<Entry, Vec<BuildProblem>> {
    let (roles, states) = (rules.roles, rules.states);
    let Candidate {
        mut definition,
        handler,
        requirements,
    } = candidate;
    // Schemas as serde_json's own build holds them, whichever build this is: what each
    // provider is shown, and what is reported of it, is the same everywhere.
    definition.input_schema.sort_all_objects();
    if let Some(schema) = &mut definition.output_schema {
        schema.sort_all_objects();
    }
    let mut problems = Vec::new();
    for provider in rules.providers {
        let incompatibilities = provider.incompatibilities(&definition);
        if !incompatibilities.is_empty() {
            problems.push(BuildProblem::Incompatible {
                tool: definition.name.clone(),
                provider: *provider,
                incompatibilities,
            });
        }
    }
    if !is_valid_tool_name(&definition.name) {
        problems.push(BuildProblem::InvalidName {
            name: definition.name.clone(),
        });
    }
    if let Some(ui) = definition.ui.as_ref().filter(|ui| !is_valid_ui_name(ui)) {
        problems.push(BuildProblem::InvalidUiName {
            tool: definition.name.clone(),
            ui: ui.clone(),
        });
    }
    let rank = roles.rank(&definition.permission);
    if rank.is_none() && !roles.names().is_empty() {
        problems.push(BuildProblem::UnknownPermission {
            tool: definition.name.clone(),
            location: definition.source.clone(),
            permission: definition.permission.clone(),
            known_roles: roles.names().to_vec(),
        });
    }
    for requirement in requirements {
        if !states.contains(requirement.type_id) {
            problems.push(BuildProblem::MissingState {
                tool: definition.name.clone(),
                location: definition.source.clone(),
                type_name: requirement.type_name,
            });
        }
    }
    let validator = match schema_problem(&definition.input_schema) {
        Some(reason) => Err(reason),
        None => ArgumentValidator::compile(&definition.input_schema),
    };
    let validator = validator.map_err(|reason| {
        problems.push(BuildProblem::InvalidSchema {
            tool: definition.name.clone(),
            reason,
        })
    });
    match (problems.is_empty(), rank, validator) {
        (true, Some(rank), Ok(validator)) => Ok(Entry {
            strips_nulls: nulls::has_optional_non_nullable(&definition.input_schema),
            exact: exact_read(&handler, &definition),
            aliased: matches!(provider_tool_name(&definition.name), Cow::Owned(_)),
            definition: Arc::new(definition),
            rank,
            handler,
            validator,
        }),
        _ => Err(problems),
    }
}

/// The direct way in, for a `#[tool]` function whose schema is proven to say no more than
/// its parameter types (and which takes no secrets: their values are never read twice).
fn exact_read(handler: &Handler, definition: &ToolDefinition) -> Option<ExactRead> {
    let Handler::Static(tool) = handler else {
        return None;
    };
    let fields = (tool.exact_fields)()?;
    let proven =
        definition.secret_arguments.is_empty() && proof::proven(&fields, &definition.input_schema);
    proven.then(|| ExactRead {
        invoke: tool.invoke_exact,
        now: tool.invoke_now,
        depth: proof::depth(&fields),
    })
}

fn schema_problem(schema: &Value) -> Option<String> {
    match schema.get("type") {
        Some(Value::String(kind)) if kind == "object" => None,
        Some(other) => Some(format!(
            "the root must have `\"type\": \"object\"`, not {other}"
        )),
        None => Some("the root must have `\"type\": \"object\"`".to_owned()),
    }
}

fn duplicate_names(entries: &[Arc<Entry>]) -> Vec<BuildProblem> {
    let mut problems = Vec::new();
    // Entries are sorted by name, so equal names are neighbours.
    for group in entries.chunk_by(|a, b| a.definition.name == b.definition.name) {
        if group.len() > 1 {
            problems.push(BuildProblem::DuplicateName {
                name: group[0].definition.name.clone(),
                locations: group
                    .iter()
                    .map(|entry| entry.definition.source.clone())
                    .collect(),
            });
        }
    }
    problems
}

/// Tools whose provider names are equal, or equal another tool's own name.
fn provider_name_clashes(entries: &[Arc<Entry>]) -> Vec<BuildProblem> {
    let mut claimed: BTreeMap<Cow<'_, str>, Vec<String>> = BTreeMap::new();
    for entry in entries {
        let name = &entry.definition.name;
        claimed
            .entry(provider_tool_name(name))
            .or_default()
            .push(name.clone());
    }
    claimed
        .into_iter()
        .filter(|(_, tools)| tools.len() > 1 && tools.iter().any(|tool| tool.contains(['.', '/'])))
        .map(|(provider_name, tools)| BuildProblem::ProviderNameClash {
            provider_name: provider_name.into_owned(),
            tools,
        })
        .collect()
}

fn view_for(entries: &[Arc<Entry>], rank: usize) -> RoleView {
    let tools: Vec<Arc<ToolDefinition>> = entries
        .iter()
        .filter(|entry| entry.rank <= rank)
        .map(|entry| Arc::clone(&entry.definition))
        .collect();
    RoleView::of(tools)
}

impl RoleView {
    /// The view of these tools.
    pub(crate) fn of(tools: Vec<Arc<ToolDefinition>>) -> RoleView {
        let mut names: Vec<String> = tools
            .iter()
            .take(MAX_NAMED_TOOLS)
            .map(|tool| format!("`{}`", tool.name))
            .collect();
        if tools.len() > MAX_NAMED_TOOLS {
            names.push(format!("and {} more", tools.len() - MAX_NAMED_TOOLS));
        }
        RoleView {
            names: names.join(", ").into(),
            tools: tools.into(),
            exports: Mutex::default(),
        }
    }
}

/// What one caller sees: its role's view, or (where a stage hides tools from callers) a
/// view of its own.
pub(crate) enum CallerView<'s> {
    Role(&'s RoleView),
    Own(RoleView),
}

impl std::ops::Deref for CallerView<'_> {
    type Target = RoleView;

    fn deref(&self) -> &RoleView {
        match self {
            CallerView::Role(view) => view,
            CallerView::Own(view) => view,
        }
    }
}
