//! Importing the tools of the config's MCP servers.

use toolgate::Registry;
use toolgate::mcp::{ImportedServer, McpImport};

use super::Config;
use super::build::ImportStatus;
use super::keys::McpKey;

impl Config {
    /// Connects every MCP server at once (each within its connect deadline) and registers
    /// their tools in the config's order; a server that cannot be reached is reported, and
    /// the rest is served.
    pub(super) async fn import_mcp(&self, registry: &Registry) -> Vec<ImportStatus> {
        let connecting = self.file.mcp.iter().map(|server| async move {
            let (import, address) = match self.import_of(server) {
                Ok(found) => found,
                Err(why) => return (server, String::new(), Err(why)),
            };
            tracing::info!(server = %server.name, %address, "connecting to an MCP server");
            (
                server,
                address,
                import.connect().await.map_err(|error| error.to_string()),
            )
        });
        let connected = futures::future::join_all(connecting).await;
        connected
            .into_iter()
            .map(|(server, address, connected)| {
                let outcome = connected.and_then(|connected| register_all(registry, connected));
                if let Err(error) = &outcome {
                    tracing::warn!(server = %server.name, %error, "an MCP server's tools were not imported");
                }
                ImportStatus {
                    name: server.name.clone(),
                    address,
                    outcome,
                }
            })
            .collect()
    }

    fn import_of(&self, server: &McpKey) -> Result<(McpImport, String), String> {
        let mut import = match (&server.command, &server.url) {
            (Some(command), None) => {
                let mut import =
                    McpImport::command(&server.name, command, server.args.iter().cloned());
                for (key, value) in &server.env {
                    let value = toolgate_tools::file_tools::interpolate_env(value)
                        .map_err(|error| error.message)?;
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
        if let Some(timeout) = server.connect_timeout {
            import.0 = import.0.connect_timeout(timeout);
        }
        Ok(import)
    }
}

/// Registers a connected server's tools: how many, or why some were refused.
fn register_all(registry: &Registry, connected: ImportedServer) -> Result<usize, String> {
    let tools = connected.tools();
    let count = tools.len();
    let refused: Vec<String> = tools
        .into_iter()
        .filter_map(|tool| registry.register(tool).err().map(|error| error.to_string()))
        .collect();
    if refused.is_empty() {
        Ok(count)
    } else {
        Err(refused.join("; "))
    }
}
