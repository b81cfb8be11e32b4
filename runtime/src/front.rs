//! Where a call came in: what rules read as `context.front`.

/// The front end a call came in through. The adapters say which they are; a call made in
/// process is the library's (and an agent's run is the agent's).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[non_exhaustive]
pub enum FrontEnd {
    /// Called in process, through the registry's API.
    #[default]
    Library,
    /// The HTTP router.
    Http,
    /// An MCP client.
    Mcp,
    /// The agent loop.
    Agent,
    /// The `toolgate` command.
    Cli,
}

impl FrontEnd {
    /// Its name: `library`, `http`, `mcp`, `agent`, `cli`.
    pub fn as_str(self) -> &'static str {
        match self {
            FrontEnd::Library => "library",
            FrontEnd::Http => "http",
            FrontEnd::Mcp => "mcp",
            FrontEnd::Agent => "agent",
            FrontEnd::Cli => "cli",
        }
    }
}

impl std::fmt::Display for FrontEnd {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter.write_str(self.as_str())
    }
}
