//! Reading tool files into tools, and registering them beside the registry's other tools.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde_json::Value;
use toolgate::{
    BuildProblem, Caller, Hints, Registry, SourceLocation, Tool, ToolContext, ToolDefinition,
    ToolError, ToolFuture, is_valid_tool_name,
};

use super::FileTools;
use super::command::{CommandTool, resolve_program};
use super::environment;
use super::http::{self, HttpTool};
use super::parameters::input_schema;
use super::spec::{HttpSource, HttpSpec, ParsedFile, parse};
use crate::problem::{Problem, line_of_key};
use toolgate::workflow::{Workflow, WorkflowTool};

/// A tool read from a file.
#[derive(Clone)]
pub struct FileTool {
    kind: Kind,
    file: PathBuf,
    text: std::sync::Arc<str>,
}

#[derive(Clone)]
enum Kind {
    Command(CommandTool),
    Http(HttpTool),
    Workflow(Box<FileWorkflow>),
}

/// A workflow read from a file: checked against the registry when it is registered.
#[derive(Clone)]
struct FileWorkflow {
    workflow: Workflow,
    tool: Option<Arc<WorkflowTool>>,
}

impl FileWorkflow {
    fn tool(&self) -> Result<&WorkflowTool, ToolError> {
        let tool = self.tool.as_deref();
        tool.ok_or_else(|| ToolError::execution("the workflow was read but not registered"))
    }
}

impl FileTool {
    /// The file it was read from.
    pub fn file(&self) -> &Path {
        &self.file
    }

    /// The file's text when it was read.
    pub fn text(&self) -> &str {
        &self.text
    }

    /// Whether it runs a program (`"command"`) or sends a request (`"http"`).
    pub fn kind(&self) -> &'static str {
        match self.kind {
            Kind::Command(_) => "command",
            Kind::Http(_) => "http",
            Kind::Workflow(_) => "workflow",
        }
    }
}

impl Tool for FileTool {
    fn definition(&self) -> ToolDefinition {
        match &self.kind {
            Kind::Command(tool) => tool.definition(),
            Kind::Http(tool) => tool.definition(),
            Kind::Workflow(file) => file.workflow.definition().clone(),
        }
    }

    fn call(&self, context: ToolContext, arguments: Value) -> ToolFuture {
        match &self.kind {
            Kind::Command(tool) => tool.call(context, arguments),
            Kind::Http(tool) => tool.call(context, arguments),
            Kind::Workflow(file) => match file.tool() {
                Ok(tool) => tool.call(context, arguments),
                Err(error) => Box::pin(async move { Err(error) }),
            },
        }
    }

    fn review(&self, context: &ToolContext, arguments: &Value) -> Result<Option<Value>, ToolError> {
        match &self.kind {
            Kind::Command(tool) => tool.review(context, arguments),
            Kind::Http(tool) => tool.review(context, arguments),
            Kind::Workflow(file) => file.tool()?.review(context, arguments),
        }
    }
}

/// Largest tool file read (a tool file is a page of text, not data).
const MAX_FILE_BYTES: u64 = 256 * 1024;

/// The tool files of `folders`: `*.md` and `*.toml`, each folder's sorted by name; missing
/// folders are skipped.
pub fn tool_files(folders: &[PathBuf]) -> Vec<PathBuf> {
    let mut files = Vec::new();
    for folder in folders {
        let Ok(entries) = std::fs::read_dir(folder) else {
            continue;
        };
        let mut found: Vec<PathBuf> = entries
            .filter_map(|entry| entry.ok().map(|entry| entry.path()))
            .filter(|path| {
                path.is_file()
                    && matches!(
                        path.extension().and_then(|e| e.to_str()),
                        Some("md" | "toml")
                    )
            })
            .collect();
        found.sort();
        files.extend(found);
    }
    files
}

/// Reads one tool file: its keys, its schema, how it runs.
pub fn load_file(path: &Path, settings: &FileTools) -> Result<FileTool, Problem> {
    let size = std::fs::metadata(path)
        .map(|metadata| metadata.len())
        .unwrap_or(0);
    if size > MAX_FILE_BYTES {
        return Err(Problem::new(
            path,
            None,
            format!("is {size} bytes; a tool file has at most {MAX_FILE_BYTES}"),
        ));
    }
    let text = std::fs::read_to_string(path)
        .map_err(|error| Problem::new(path, None, format!("cannot be read: {error}")))?;
    let parsed = parse(path, &text)?;
    let definition = definition(path, &parsed)?;
    let kind = kind_of(path, &parsed, definition, settings)?;
    Ok(FileTool {
        kind,
        file: path.to_owned(),
        text: text.into(),
    })
}

/// How the file's tool runs: exactly one of `command`, `http` and `workflow`.
fn kind_of(
    path: &Path,
    parsed: &ParsedFile,
    definition: ToolDefinition,
    settings: &FileTools,
) -> Result<Kind, Problem> {
    let spec = &parsed.spec;
    let given = [
        spec.command.is_some(),
        spec.http.is_some(),
        spec.workflow.is_some(),
    ];
    if given.iter().filter(|given| **given).count() > 1 {
        let why = "a tool file has one of `command`, `http` and `workflow`, not several";
        return Err(parsed.problem_at(path, "http", why));
    }
    if let Some(command) = &spec.command {
        let folder = path.parent().unwrap_or(Path::new("."));
        let sandbox = settings.sandbox.clone().ok_or_else(|| {
            parsed.problem_at(path, "command", "command tools run in a sandbox, and none is configured (set `[sandbox] root` in toolgate.toml)")
        })?;
        let program = resolve_program(&command.program, folder)
            .map_err(|why| parsed.problem_at(path, "program", why))?;
        check_variables(path, parsed, command.env.values())?;
        let commands = settings.commands.clone();
        return Ok(Kind::Command(CommandTool::new(
            definition, command, program, sandbox, commands,
        )));
    }
    if let Some(request) = &spec.http {
        let request = &with_source(path, parsed, request, &settings.sources)?;
        let method = http::method(request).map_err(|why| parsed.problem_at(path, "method", why))?;
        check_placeholders(path, parsed, &definition, &request.url)?;
        check_query(path, parsed, &definition, &request.query)?;
        check_variables(path, parsed, request.headers.values())?;
        return Ok(Kind::Http(HttpTool::new(
            definition,
            request,
            method,
            settings.web.clone(),
        )));
    }
    if let Some(workflow) = &spec.workflow {
        let workflow = Workflow::new(definition, workflow.steps.clone());
        return Ok(Kind::Workflow(Box::new(FileWorkflow {
            workflow,
            tool: None,
        })));
    }
    Err(Problem::new(
        path,
        None,
        "a tool file says how it runs: add `command` (a program), `http` (a request) or `workflow` (steps)",
    ))
}

fn definition(path: &Path, parsed: &ParsedFile) -> Result<ToolDefinition, Problem> {
    let spec = &parsed.spec;
    if !is_valid_tool_name(&spec.name) {
        return Err(parsed.problem_at(
            path,
            "name",
            format!(
                "the tool name {:?} is invalid: use 1 to 64 ASCII letters, digits, `_`, `-`, `.` or `/`",
                spec.name
            ),
        ));
    }
    let description = [
        spec.description.as_deref().unwrap_or("").trim(),
        parsed.body.as_str(),
    ]
    .into_iter()
    .filter(|part| !part.is_empty())
    .collect::<Vec<_>>()
    .join("\n\n");
    if description.is_empty() {
        return Err(Problem::new(
            path,
            Some(1),
            "a tool needs a description: add `description`, or (in Markdown) a body after the front matter",
        ));
    }
    let schema = input_schema(spec.parameters.as_ref())
        .map_err(|why| parsed.problem_at(path, "parameters", why))?;
    let properties = schema["properties"].as_object();
    if let Some(unknown) = spec
        .secret
        .iter()
        .find(|name| properties.is_none_or(|p| !p.contains_key(*name)))
    {
        return Err(parsed.problem_at(
            path,
            "secret",
            format!("`secret` names `{unknown}`, which is not a parameter"),
        ));
    }
    if let Some(ui) = spec
        .ui
        .as_ref()
        .filter(|ui| !toolgate::is_valid_ui_name(ui))
    {
        return Err(parsed.problem_at(
            path,
            "ui",
            format!(
                "`ui` names the component {ui:?}: use 1 to 64 ASCII letters, digits, `_` or `-`, starting with a letter"
            ),
        ));
    }
    let mut definition = ToolDefinition::new(&spec.name, description, &spec.permission, schema);
    // A program's output or a server's answer: data from outside.
    definition.untrusted_results = true;
    definition.title = spec.title.clone();
    definition.group = spec.group.clone();
    definition.tags = spec.tags.clone();
    definition.risk = spec.risk;
    definition.hints = Hints {
        read_only: spec.read_only,
        destructive: spec.destructive,
        idempotent: spec.idempotent,
        open_world: spec.open_world || spec.http.is_some(),
    };
    definition.output_schema = spec.output_schema.clone();
    definition.timeout = spec.timeout;
    definition.secret_arguments = spec.secret.clone();
    definition.ui = spec.ui.clone();
    definition.source = Some(SourceLocation {
        file: path.display().to_string(),
        line: line_of_key(&parsed.text, "name").unwrap_or(1) as u32,
    });
    Ok(definition)
}

/// The request with its source's URL and headers put in (a tool's own headers win).
fn with_source(
    path: &Path,
    parsed: &ParsedFile,
    request: &HttpSpec,
    sources: &BTreeMap<String, HttpSource>,
) -> Result<HttpSpec, Problem> {
    let Some(name) = &request.source else {
        if request.url.is_empty() {
            let why = "an HTTP tool needs a `url`, or a `source` and a `path`";
            return Err(parsed.problem_at(path, "http", why));
        }
        return Ok(request.clone());
    };
    let Some(source) = sources.get(name) else {
        let known = sources
            .keys()
            .map(String::as_str)
            .collect::<Vec<_>>()
            .join(", ");
        let why = format!(
            "`source: {name}` names no source; define `[sources.{name}]` (url, headers) in toolgate.toml (defined: {})",
            if known.is_empty() { "none" } else { &known }
        );
        return Err(parsed.problem_at(path, "source", why));
    };
    if !request.url.is_empty() {
        let why = "a tool with a `source` gives a `path`, not a `url`";
        return Err(parsed.problem_at(path, "url", why));
    }
    let tail = request.path.as_deref().unwrap_or("");
    let mut resolved = request.clone();
    resolved.url = format!(
        "{}/{}",
        source.url.trim_end_matches('/'),
        tail.trim_start_matches('/')
    );
    resolved.headers = source.all_headers();
    resolved.headers.extend(request.headers.clone());
    Ok(resolved)
}

/// Every name in `query` is a parameter.
fn check_query(
    path: &Path,
    parsed: &ParsedFile,
    definition: &ToolDefinition,
    query: &[String],
) -> Result<(), Problem> {
    let properties = definition.input_schema["properties"].as_object();
    match query
        .iter()
        .find(|name| properties.is_none_or(|p| !p.contains_key(*name)))
    {
        Some(unknown) => Err(parsed.problem_at(
            path,
            "query",
            format!("`query` names `{unknown}`, which is no parameter"),
        )),
        None => Ok(()),
    }
}

fn check_placeholders(
    path: &Path,
    parsed: &ParsedFile,
    definition: &ToolDefinition,
    url: &str,
) -> Result<(), Problem> {
    let properties = definition.input_schema["properties"].as_object();
    match http::placeholders(url)
        .into_iter()
        .find(|name| properties.is_none_or(|p| !p.contains_key(*name)))
    {
        Some(unknown) => Err(parsed.problem_at(
            path,
            "url",
            format!("the URL's `{{{unknown}}}` names no parameter"),
        )),
        None => Ok(()),
    }
}

/// Every `${NAME}` names a variable (their values are read when a call runs).
fn check_variables<'a>(
    path: &Path,
    parsed: &ParsedFile,
    texts: impl Iterator<Item = &'a String>,
) -> Result<(), Problem> {
    for text in texts {
        for name in environment::names(text) {
            let valid =
                !name.is_empty() && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
            if !valid {
                let line = parsed
                    .text
                    .lines()
                    .position(|line| line.contains(text.as_str()))
                    .map(|index| index + 1);
                return Err(Problem::new(
                    path,
                    line,
                    format!("`${{{name}}}` is not an environment variable's name"),
                ));
            }
        }
    }
    Ok(())
}

/// What came of registering the tool files of [`FileTools::folders`].
#[derive(Default)]
pub struct Registered {
    /// The tools registered, by name, with their files.
    pub tools: BTreeMap<String, FileTool>,
    /// The files that could not be used.
    pub problems: Vec<Problem>,
}

impl FileTools {
    /// Reads every tool file and registers each tool in `registry`, checked as at build
    /// time. A file whose tool's name is taken (by a tool of the registry or an earlier
    /// file) is refused with both places named; every broken file is one problem and the
    /// others are still registered.
    pub fn register(&self, registry: &Registry) -> Registered {
        let mut registered = Registered::default();
        let mut workflows = Vec::new();
        for file in tool_files(&self.folders) {
            match load_file(&file, self) {
                Ok(tool) if tool.is_workflow() => workflows.push(tool),
                Ok(tool) => registered.keep(register_file_tool(registry, tool)),
                Err(problem) => registered.problems.push(problem),
            }
        }
        // Workflows last, each once the tools it calls are in (a workflow may call another).
        loop {
            let before = workflows.len();
            let mut waiting = Vec::new();
            for tool in workflows {
                match register_file_tool(registry, tool.clone()) {
                    Ok(tool) => registered.keep(Ok(tool)),
                    Err(_) => waiting.push(tool),
                }
            }
            workflows = waiting;
            if workflows.is_empty() || workflows.len() == before {
                break;
            }
        }
        for tool in workflows {
            registered.keep(register_file_tool(registry, tool));
        }
        registered
    }
}

impl Registered {
    fn keep(&mut self, outcome: Result<FileTool, Problem>) {
        match outcome {
            Ok(tool) => {
                self.tools.insert(tool.definition().name, tool);
            }
            Err(problem) => self.problems.push(problem),
        }
    }
}

/// Registers one file tool in `registry`, checked as at build time; a name already taken
/// (by any tool of the registry) is refused with both places named.
pub fn register_file_tool(registry: &Registry, tool: FileTool) -> Result<FileTool, Problem> {
    if let Some(first) = existing(registry, &tool.definition().name) {
        return Err(taken(&tool, &first));
    }
    let tool = tool.bound_to(registry)?;
    registry.register(tool.clone()).map_err(|error| {
        let key = error.problems().first().map_or("name", problem_key);
        let line = line_of_key(&tool.text, key);
        let messages: Vec<String> = error.problems().iter().map(ToString::to_string).collect();
        Problem::new(&tool.file, line, messages.join("; "))
    })?;
    Ok(tool)
}

impl FileTool {
    /// A workflow checked against `registry`'s tools (each problem at its step's line);
    /// other tools as they are.
    fn bound_to(mut self, registry: &Registry) -> Result<FileTool, Problem> {
        let Kind::Workflow(file) = &mut self.kind else {
            return Ok(self);
        };
        match file.workflow.clone().tool_for(registry) {
            Ok(tool) => file.tool = Some(Arc::new(tool)),
            Err(problems) => {
                let first = &problems[0];
                let line = first
                    .step
                    .as_deref()
                    .and_then(|step| line_of_step(&self.text, step));
                let messages: Vec<String> = problems.iter().map(ToString::to_string).collect();
                return Err(Problem::new(
                    &self.file,
                    line.or_else(|| line_of_key(&self.text, "workflow")),
                    messages.join("; "),
                ));
            }
        }
        Ok(self)
    }

    fn is_workflow(&self) -> bool {
        matches!(self.kind, Kind::Workflow(_))
    }
}

/// The line where step `id` is written (`id: search`, `id = "search"`).
fn line_of_step(text: &str, id: &str) -> Option<usize> {
    text.lines()
        .position(|line| {
            let line = line
                .trim()
                .trim_start_matches("- ")
                .trim_start_matches('{')
                .trim();
            let value = line
                .strip_prefix("id:")
                .or_else(|| line.strip_prefix("id ="))
                .map(str::trim);
            value.is_some_and(|value| {
                value
                    .trim_matches(['"', '\'', ','])
                    .split([',', '}'])
                    .next()
                    == Some(id)
            })
        })
        .map(|index| index + 1)
}

/// `tool`'s name is taken by `first`: both places are named.
pub(crate) fn taken(tool: &FileTool, first: &ToolDefinition) -> Problem {
    let place = match &first.source {
        Some(source) => format!("the tool defined at {source}"),
        None => "a tool registered at run time (e.g. imported from an MCP server)".to_owned(),
    };
    let line = line_of_key(&tool.text, "name");
    Problem::new(
        &tool.file,
        line,
        format!(
            "the name `{}` is taken by {place}; rename one of them",
            first.name
        ),
    )
}

/// The key of a tool file a registration problem is about.
fn problem_key(problem: &BuildProblem) -> &'static str {
    match problem {
        BuildProblem::UnknownPermission { .. } => "permission",
        BuildProblem::Incompatible { .. } | BuildProblem::InvalidSchema { .. } => "parameters",
        _ => "name",
    }
}

/// The registry's tool with this name, whoever may see it.
pub(crate) fn existing(registry: &Registry, name: &str) -> Option<std::sync::Arc<ToolDefinition>> {
    let top = registry.roles().names().last()?;
    registry.definition(&Caller::new("toolgate-file-tools", top.as_str()), name)
}
