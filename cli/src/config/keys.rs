//! The keys of `toolgate.toml`, as written. Unknown keys are errors; values that name
//! something (roles, networks, rates) keep where they were written, so a later check can
//! point at the line.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

use serde::Deserialize;
use toml::Spanned;

use toolgate_tools::duration::deserialize_optional as optional_duration;

/// The whole file.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ConfigFile {
    /// The roles, lowest first.
    pub roles: Spanned<Vec<String>>,
    /// The role whose holders may decide approvals (default: the highest).
    pub approver_role: Option<Spanned<String>>,
    /// `auto`, `prompt` (default) or `deny`.
    #[serde(default)]
    pub policy: PolicyKey,
    /// Time limit of a call without one of its own (default 30 s).
    #[serde(default, deserialize_with = "optional_duration")]
    pub default_timeout: Option<Duration>,
    /// Most calls of a batch running at once.
    pub max_concurrency: Option<usize>,
    /// Where state is kept: `memory` (default), `sqlite:PATH` or `postgres://...`.
    pub state: Option<Spanned<String>>,
    /// The environment variable holding the key approval tickets are signed with (needed
    /// when state is shared, so every process accepts the others' tickets).
    pub approval_key_env: Option<Spanned<String>>,
    /// An audit file (JSON lines, hash-chained), relative to this file.
    pub audit_file: Option<PathBuf>,
    /// Tool folders, relative to this file (default: `.toolgate/tools` beside it).
    pub tool_folders: Option<Vec<PathBuf>>,
    /// Also load the user's tool folder (`~/.config/toolgate/tools`; default: yes).
    #[serde(default = "yes")]
    pub user_tools: bool,
    /// Who may call, by name.
    #[serde(default)]
    pub callers: BTreeMap<String, CallerKey>,
    /// Callers identified by an identity provider's access tokens.
    pub auth: Option<Spanned<AuthKey>>,
    /// Cedar rules: a folder of `*.cedar` files (or one file), relative to this file,
    /// read again while serving when they change.
    pub policies: Option<Spanned<PathBuf>>,
    /// The token claims the rules may read, with their Cedar types:
    /// `{groups = "Set<String>", contractor = "Bool"}`.
    #[serde(default)]
    pub policy_claims: BTreeMap<String, Spanned<String>>,
    /// The clock the rules read (`context.hour`, ...), as an offset from UTC: `"+01:00"`.
    pub policy_utc_offset: Option<Spanned<String>>,
    /// Limits on a call's arguments.
    #[serde(default)]
    pub arguments: ArgumentsKey,
    /// Rate limits.
    #[serde(default)]
    pub rate_limits: RateLimitsKey,
    /// Ceilings on tokens, money and tool calls.
    #[serde(default)]
    pub budgets: BudgetsKey,
    /// The folder files and command tools are confined to.
    pub sandbox: Option<SandboxKey>,
    /// What web and HTTP tools may reach.
    #[serde(default)]
    pub web: WebKey,
    /// How programs run (`run_command` and command tools).
    #[serde(default)]
    pub commands: CommandsKey,
    /// Ready tool families to enable, each with its permission.
    #[serde(default)]
    pub ready: ReadyKey,
    /// MCP servers whose tools are imported.
    #[serde(default)]
    pub mcp: Vec<McpKey>,
    /// APIs that HTTP tool files share (`source: NAME`): a base URL, headers, a bearer
    /// token's variable.
    #[serde(default)]
    pub sources: BTreeMap<String, toolgate_tools::file_tools::HttpSource>,
    /// Providers every tool must be usable with: `openai`, `anthropic`, `gemini` (a tool
    /// file that is not is refused).
    #[serde(default)]
    pub providers: Vec<Spanned<String>>,
    /// The model `toolgate chat` talks to.
    pub model: Option<ModelKey>,
    /// Devices that connect to this hub (`toolgate device --hub`) and offer their tools,
    /// by id.
    #[serde(default)]
    pub devices: BTreeMap<String, Spanned<DeviceKey>>,
    /// OpenTelemetry: spans and metrics sent over OTLP.
    pub telemetry: Option<Spanned<TelemetryKey>>,
}

/// `[telemetry]`: spans of every call, model request and agent run, and metrics, sent over
/// OTLP. What is not written here comes from the standard `OTEL_EXPORTER_OTLP_*` and
/// `OTEL_SERVICE_NAME` variables.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TelemetryKey {
    /// The collector's base URL, e.g. `http://127.0.0.1:4318`.
    pub endpoint: Option<Spanned<String>>,
    /// `http/protobuf` (default) or `grpc`.
    pub protocol: Option<Spanned<String>>,
    /// The service's name in the traces (default `toolgate`).
    pub service_name: Option<String>,
    /// Put arguments (secrets redacted) and results on spans (default: no).
    #[serde(default)]
    pub capture_content: bool,
    /// How often metrics are sent (default 60 s).
    #[serde(default, deserialize_with = "optional_duration")]
    pub metric_interval: Option<Duration>,
}

/// `[model]`: a model server for `toolgate chat`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ModelKey {
    /// The wire format: `openai-chat` (default; also llama.cpp, vLLM, Ollama),
    /// `openai-responses`, `anthropic` or `gemini`.
    #[serde(default = "openai_chat")]
    pub api: Spanned<String>,
    /// The API's base URL, e.g. `https://api.openai.com/v1`.
    pub url: String,
    /// The model's name.
    pub name: String,
    /// The environment variable holding the API key.
    pub api_key_env: Option<String>,
    /// The system prompt.
    pub system: Option<String>,
    /// Most model calls per message (default 8).
    pub max_turns: Option<u32>,
    /// Extra fields of every request, e.g. `{temperature = 0}`.
    #[serde(default)]
    pub params: BTreeMap<String, toml::Value>,
    /// Time limit of one model request.
    #[serde(default, deserialize_with = "optional_duration")]
    pub timeout: Option<Duration>,
    /// What the model's tokens cost, per million (for cost budgets): `{input = 0.15,
    /// output = 0.60}`.
    pub price: Option<PriceKey>,
    /// Example exchanges shown to the model before every conversation (`[[model.examples]]`):
    /// small models learn from them how a tool is called.
    #[serde(default)]
    pub examples: Vec<ExampleKey>,
}

/// `[[model.examples]]`: what the user wrote, the calls the assistant made with what they
/// returned, and its answer.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ExampleKey {
    /// What the user wrote.
    pub user: String,
    /// `[[model.examples.calls]]`: each call, in order.
    #[serde(default)]
    pub calls: Vec<ExampleCallKey>,
    /// The assistant's answer.
    pub answer: String,
}

/// One call of an example.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ExampleCallKey {
    /// The tool (a tool of this config).
    pub tool: Spanned<String>,
    /// Its arguments.
    #[serde(default)]
    pub arguments: BTreeMap<String, toml::Value>,
    /// What it returned.
    pub result: toml::Value,
}

fn openai_chat() -> Spanned<String> {
    Spanned::new(0..0, "openai-chat".to_owned())
}

fn yes() -> bool {
    true
}

/// The policy mode.
#[derive(Debug, Clone, Copy, Default, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum PolicyKey {
    /// Everything runs.
    Auto,
    /// Risky calls wait for approval.
    #[default]
    Prompt,
    /// Risky calls are refused.
    Deny,
}

/// `[callers.NAME]`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CallerKey {
    /// The caller's role.
    pub role: Spanned<String>,
    /// The environment variable holding the caller's bearer token (for serving).
    pub token_env: Option<String>,
}

/// `[auth]`: access tokens of an OpenID provider (or OAuth authorization server), their
/// claims mapped to roles. Static `[callers]` still work beside it.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AuthKey {
    /// The issuer, exactly as its tokens' `iss` says (its keys are found from its metadata).
    pub issuer: Option<Spanned<String>>,
    /// Or several issuers (their users' ids are qualified as `name#id`).
    #[serde(default)]
    pub issuers: Vec<IssuerKey>,
    /// This server's resource identifier, which a token's `aud` must name: the URL clients
    /// use, e.g. `https://tools.example.com/mcp`.
    pub audience: Spanned<String>,
    /// The signature algorithms accepted (default: the asymmetric ones).
    #[serde(default)]
    pub algorithms: Vec<Spanned<String>>,
    /// Clock skew allowed on `exp` and `nbf` (default 30 s).
    #[serde(default, deserialize_with = "optional_duration")]
    pub leeway: Option<Duration>,
    /// The claim a caller's id comes from (default `sub`, else `client_id`).
    pub id_claim: Option<String>,
    /// The role of a valid token no rule maps (default: such a token is refused).
    pub default_role: Option<Spanned<String>>,
    /// Rules from claims to roles; the highest role among those matching wins.
    #[serde(default)]
    pub roles: Vec<RoleRuleKey>,
    /// Scopes capping the role: `"tools:read" = "customer"`.
    #[serde(default)]
    pub scopes: BTreeMap<String, Spanned<String>>,
    /// Scopes every token must hold.
    #[serde(default)]
    pub required_scopes: Vec<String>,
    /// Opaque tokens of `issuer` are looked up at its introspection endpoint.
    pub introspection: Option<IntrospectionKey>,
}

/// One of `[[auth.issuers]]`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct IssuerKey {
    /// The issuer identifier.
    pub url: Spanned<String>,
    /// A short name qualifying its users' ids (default: its identifier).
    pub name: Option<String>,
    /// Its opaque tokens are looked up (one issuer at most).
    pub introspection: Option<IntrospectionKey>,
}

/// `introspection = {client_id = "...", secret_env = "..."}`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct IntrospectionKey {
    /// The client toolgate introspects as.
    pub client_id: String,
    /// The environment variable holding its secret.
    pub secret_env: Spanned<String>,
}

/// One of `[[auth.roles]]`: a token whose `claim` holds `value` gets `role`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RoleRuleKey {
    /// The claim's name, or a JSON Pointer into nested claims (`/realm_access/roles`).
    pub claim: String,
    /// The value it must hold.
    pub value: String,
    /// The role it gives.
    pub role: Spanned<String>,
}

/// `price` of `[model]`: per million tokens, in the currency cost budgets are written in.
#[derive(Debug, Clone, Copy, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PriceKey {
    /// Per million tokens read.
    pub input: f64,
    /// Per million tokens written.
    pub output: f64,
}

/// `[budgets]`: ceilings per agent run (`[budgets.per_run]`) and per caller per period
/// (`[budgets.per_caller]`, with `every`).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BudgetsKey {
    /// Each agent run's ceilings.
    pub per_run: Option<Spanned<BudgetKey>>,
    /// Each caller's ceilings per period.
    pub per_caller: Option<Spanned<BudgetKey>>,
}

/// The ceilings of one `[budgets.*]` table.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BudgetKey {
    /// The period (`per_caller` only), e.g. `"1day"`, `"12h"`.
    #[serde(default, deserialize_with = "optional_duration")]
    pub every: Option<Duration>,
    /// Tokens read and written.
    pub tokens: Option<u64>,
    /// Tokens read.
    pub input_tokens: Option<u64>,
    /// Tokens written.
    pub output_tokens: Option<u64>,
    /// Money, at the model's `price`.
    pub cost: Option<f64>,
    /// Tool calls that ran.
    pub tool_calls: Option<u64>,
}

/// `[arguments]`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ArgumentsKey {
    /// Largest argument text, in bytes.
    pub max_bytes: Option<usize>,
    /// Deepest nesting.
    pub max_depth: Option<usize>,
}

/// `[rate_limits]`: rates written as `"60/min"` (`s`, `min`, `h`, `day`).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RateLimitsKey {
    /// Calls per caller, over all tools.
    pub per_caller: Option<Spanned<String>>,
    /// Calls per caller of one tool, by tool name.
    #[serde(default)]
    pub tools: BTreeMap<String, Spanned<String>>,
}

/// `[sandbox]`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SandboxKey {
    /// The folder, relative to this file (command tools start in it).
    pub root: Spanned<PathBuf>,
    /// More folders, by the name that addresses them as a path's first component
    /// (`docs = "../docs"` makes `docs/guide.md` a path of the sandbox).
    #[serde(default)]
    pub roots: BTreeMap<String, Spanned<PathBuf>>,
}

/// `[web]`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WebKey {
    /// Networks that may be reached although not public, e.g. `"127.0.0.0/8"`.
    #[serde(default)]
    pub allow_networks: Vec<Spanned<String>>,
    /// Time limit of a request.
    #[serde(default, deserialize_with = "optional_duration")]
    pub timeout: Option<Duration>,
    /// Most body bytes read.
    pub max_bytes: Option<usize>,
}

/// `[commands]`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CommandsKey {
    /// Time limit of a program run.
    #[serde(default, deserialize_with = "optional_duration")]
    pub timeout: Option<Duration>,
    /// Most bytes kept of stdout and of stderr.
    pub max_output_bytes: Option<usize>,
    /// Confine programs with Landlock where the kernel has it (default: yes).
    pub confine: Option<bool>,
}

/// `[ready]`: the ready tool families.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ReadyKey {
    /// `read_file`, `write_file`, ... (needs `[sandbox]`).
    pub files: Option<FamilyKey>,
    /// `fetch_webpage`.
    pub web: Option<FamilyKey>,
    /// `get_device_info`.
    pub system: Option<FamilyKey>,
    /// `run_command` (needs `[sandbox]`).
    pub programs: Option<ProgramsKey>,
    /// `create_task`, `list_tasks`, `complete_task`.
    pub tasks: Option<TasksKey>,
    /// `web_search`.
    pub search: Option<SearchKey>,
    /// `create_skill` (needs `[sandbox]`).
    pub skills: Option<FamilyKey>,
}

/// `[ready.search]`: `web_search` and its backends (the first is the default).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SearchKey {
    /// The lowest role that may search.
    pub permission: Spanned<String>,
    /// SearXNG instances by name, e.g. `{local = "http://127.0.0.1:8888"}`.
    #[serde(default)]
    pub searxng: BTreeMap<String, String>,
    /// The environment variable of a Brave Search API key (adds the backend `brave`).
    pub brave_key_env: Option<String>,
}

/// One family: its permission, and optionally which of its tools.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FamilyKey {
    /// The lowest role that may use the family's tools.
    pub permission: Spanned<String>,
    /// Only these tools of the family (default: all).
    pub tools: Option<Spanned<Vec<String>>>,
}

/// `[ready.programs]`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProgramsKey {
    /// The lowest role that may use `run_command`.
    pub permission: Spanned<String>,
    /// Allowed programs: a preset (`"git_read_only"`, `"ls"`, `"find"`) or a policy.
    #[serde(default)]
    pub allow: BTreeMap<String, Spanned<ProgramKey>>,
}

/// How one program may be called.
#[derive(Debug, Clone, Deserialize)]
#[serde(untagged)]
pub enum ProgramKey {
    /// A preset's name.
    Preset(String),
    /// A policy.
    Policy(ProgramPolicyKey),
}

/// A program's argument policy.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProgramPolicyKey {
    /// Allowed subcommands (the first argument).
    #[serde(default)]
    pub subcommands: Vec<String>,
    /// Allowed flags (globs such as `--format=*`).
    #[serde(default)]
    pub flags: Vec<String>,
    /// What positional arguments may be: `path`, `text` or `number` (default: none).
    pub positionals: Option<String>,
}

/// `[ready.tasks]`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TasksKey {
    /// The lowest role that may use the task tools.
    pub permission: Spanned<String>,
    /// The task database, relative to this file (default: the user's data folder).
    pub database: Option<PathBuf>,
}

/// `[devices.ID]`: one device the hub accepts, and what of it.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DeviceKey {
    /// The environment variable holding the device's token...
    pub token_env: Option<Spanned<String>>,
    /// ...or the SHA-256 of the token, in hex (so the token itself is on the device only).
    pub token_sha256: Option<Spanned<String>>,
    /// The lowest role that may use the device's tools.
    pub permission: Spanned<String>,
    /// The device's tools the hub offers (by the device's names), as `ID__TOOL`.
    pub tools: Spanned<Vec<String>>,
    /// Of those, the ones that need a higher role than `permission`:
    /// `{delete_directory = "admin"}`.
    #[serde(default)]
    pub permissions: BTreeMap<String, Spanned<String>>,
    /// Of those, the ones whose every call a person approves first.
    #[serde(default)]
    pub approve: Vec<String>,
    /// Of those, the ones the hub vouches only read.
    #[serde(default)]
    pub read_only: Vec<String>,
    /// The values an argument may take, by argument name: `{path = ["/home/ada/**"]}`.
    #[serde(default)]
    pub allow: BTreeMap<String, Vec<String>>,
}

/// `[[mcp]]`: one server to import tools from.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct McpKey {
    /// The server's name (tools are named `mcp_NAME_TOOL` unless `prefix` says otherwise).
    pub name: String,
    /// A program to start (spoken to over stdin/stdout)...
    pub command: Option<String>,
    /// ...with these arguments.
    #[serde(default)]
    pub args: Vec<String>,
    /// Environment variables of the program; `${NAME}` takes one of toolgate's.
    #[serde(default)]
    pub env: BTreeMap<String, String>,
    /// Or a Streamable HTTP server's URL.
    pub url: Option<String>,
    /// The environment variable holding a bearer token for the URL.
    pub token_env: Option<String>,
    /// The lowest role that may use the imported tools.
    pub permission: Spanned<String>,
    /// Only these tools.
    pub allow: Option<Vec<String>>,
    /// Not these tools.
    #[serde(default)]
    pub deny: Vec<String>,
    /// The prefix of imported names.
    pub prefix: Option<String>,
    /// Time limit of one remote call.
    #[serde(default, deserialize_with = "optional_duration")]
    pub call_timeout: Option<Duration>,
    /// How long connecting (and the first tool list) may take before the server is given
    /// up on (default 30 s).
    #[serde(default, deserialize_with = "optional_duration")]
    pub connect_timeout: Option<Duration>,
}
