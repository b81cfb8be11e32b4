//! `[model]`: the agent `toolgate chat` runs, on the registry the config builds.

use toolgate::Registry;
use toolgate::agent::models::{Anthropic, Gemini, HttpSettings, OpenAiChat, OpenAiResponses};
use toolgate::agent::{Agent, Model};

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
                agent(registry, client, key)
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

fn agent(registry: Registry, model: impl Model, key: &ModelKey) -> Agent {
    let mut builder = Agent::builder(registry, model).max_turns(key.max_turns.unwrap_or(8));
    if let Some(system) = &key.system {
        builder = builder.system(system);
    }
    builder.build()
}
