//! `[model]`: the agent `toolgate chat` runs, on the registry the config builds.

use toolgate::Registry;
use toolgate::agent::models::{Anthropic, Gemini, HttpSettings, OpenAiChat, OpenAiResponses};
use toolgate::agent::{Agent, Example, Model};

use super::Config;
use super::keys::ModelKey;
use toolgate_tools::Problem;

/// The wire formats `api` may name.
const APIS: &str = "\"openai-chat\", \"openai-responses\", \"anthropic\", \"gemini\"";

impl Config {
    /// The agent of `[model]` on `registry`; `None` when the config has no `[model]`.
    pub fn agent(&self, registry: Registry) -> Result<Option<Agent>, Problem> {
        let Some(key) = &self.file.model else {
            return Ok(None);
        };
        let api_key = match &key.api_key_env {
            Some(variable) => Some(std::env::var(variable).map_err(|_| {
                self.problem(format!(
                    "the environment variable `{variable}` ([model] api_key_env) is not set"
                ))
            })?),
            None => None,
        };
        let examples = self.examples(&registry, key)?;
        let mut http = HttpSettings::default();
        if let Some(timeout) = key.timeout {
            http.timeout = timeout;
        }
        macro_rules! configured {
            ($client:expr) => {{
                let mut client = $client.http(http);
                if let Some(api_key) = api_key {
                    client = client.api_key(api_key);
                }
                for (name, value) in &key.params {
                    let value = serde_json::to_value(value).unwrap_or(serde_json::Value::Null);
                    client = client.param(name.as_str(), value);
                }
                agent(registry, client, key, examples)
            }};
        }
        let agent = match key.api.get_ref().as_str() {
            "openai-chat" => configured!(OpenAiChat::new(&key.url, &key.name)),
            "openai-responses" => configured!(OpenAiResponses::new(&key.url, &key.name)),
            "anthropic" => configured!(Anthropic::new(&key.url, &key.name)),
            "gemini" => configured!(Gemini::new(&key.url, &key.name)),
            other => {
                return Err(self.problem_at(
                    key.api.span(),
                    format!("`{other}` is not an API; use one of {APIS}"),
                ));
            }
        };
        Ok(Some(agent))
    }
}

fn agent(registry: Registry, model: impl Model, key: &ModelKey, examples: Vec<Example>) -> Agent {
    let mut builder = Agent::builder(registry, model).max_turns(key.max_turns.unwrap_or(8));
    if let Some(system) = &key.system {
        builder = builder.system(system);
    }
    for example in examples {
        builder = builder.example(example);
    }
    builder.build()
}

impl Config {
    /// `[[model.examples]]`, each call's tool checked against the config's tools.
    fn examples(&self, registry: &Registry, key: &ModelKey) -> Result<Vec<Example>, Problem> {
        let top = registry.roles().names().last().cloned().unwrap_or_default();
        let everyone = toolgate::Caller::new("config", top.as_str());
        let mut examples = Vec::new();
        for written in &key.examples {
            let mut example = Example::new(&written.user).answer(&written.answer);
            for call in &written.calls {
                let tool = call.tool.get_ref();
                if registry.definition(&everyone, tool).is_none() {
                    return Err(self.problem_at(
                        call.tool.span(),
                        format!("[[model.examples]] calls `{tool}`, which is no tool of this config; name one that `toolgate tools list` shows"),
                    ));
                }
                example = example.call(tool, as_json(&call.arguments), as_json(&call.result));
            }
            examples.push(example);
        }
        Ok(examples)
    }
}

/// A TOML value as JSON.
fn as_json(value: &impl serde::Serialize) -> serde_json::Value {
    serde_json::to_value(value).unwrap_or(serde_json::Value::Null)
}
