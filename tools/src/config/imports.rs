//! Importing the tools of the config's MCP servers.

use toolgate::Registry;
use toolgate::mcp::McpImport;

use super::Config;
use super::build::ImportStatus;
use super::keys::McpKey;

impl Config {
    /// Connects each MCP server and registers its tools; a server that cannot be reached
    /// is reported, and the rest is served.
    pub(super) async fn import_mcp(&self, registry: &Registry) -> Vec<ImportStatus> {
        let mut statuses = Vec::new();
        for server in &self.file.mcp {
            let (import, address) = match self.import_of(server) {
                Ok(found) => found,
                Err(why) => {
                    statuses.push(ImportStatus {
                        name: server.name.clone(),
                        address: String::new(),
                        outcome: Err(why),
                    });
                    continue;
                }
            };
            let outcome = match import.connect().await {
                Ok(connected) => {
                    let tools = connected.tools();
                    let count = tools.len();
                    let refused: Vec<String> = tools
                        .into_iter()
                        .filter_map(|tool| {
                            registry.register(tool).err().map(|error| error.to_string())
                        })
                        .collect();
                    if refused.is_empty() {
                        Ok(count)
                    } else {
                        Err(refused.join("; "))
                    }
                }
                Err(error) => Err(error.to_string()),
            };
            if let Err(error) = &outcome {
                tracing::warn!(server = %server.name, %error, "an MCP server's tools were not imported");
            }
            statuses.push(ImportStatus {
                name: server.name.clone(),
                address,
                outcome,
            });
        }
        statuses
    }

    fn import_of(&self, server: &McpKey) -> Result<(McpImport, String), String> {
        let mut import = match (&server.command, &server.url) {
            (Some(command), None) => {
                let mut import =
                    McpImport::command(&server.name, command, server.args.iter().cloned());
                for (key, value) in &server.env {
                    let value =
                        crate::file_tools::interpolate_env(value).map_err(|error| error.message)?;
                    import = import.env(key, value);
                }
                (
                    import,
                    format!("{command} {}", server.args.join(" "))
                        .trim()
                        .to_owned(),
                )
            }
            (None, Some(url)) => {
                let mut import = McpImport::http(&server.name, url);
                if let Some(variable) = &server.token_env {
                    let token = std::env::var(variable).map_err(|_| {
                        format!("the environment variable `{variable}` (its token) is not set")
                    })?;
                    import = import.bearer_token(token);
                }
                (import, url.clone())
            }
            _ => return Err("an MCP server has either `command` or `url`".to_owned()),
        };
        import.0 = import.0.permission(server.permission.get_ref());
        if let Some(allow) = &server.allow {
            import.0 = import.0.allow(allow.iter().cloned());
        }
        import.0 = import.0.deny(server.deny.iter().cloned());
        if let Some(prefix) = &server.prefix {
            import.0 = import.0.prefix(prefix);
        }
        if let Some(timeout) = server.call_timeout {
            import.0 = import.0.call_timeout(timeout);
        }
        Ok(import)
    }
}
