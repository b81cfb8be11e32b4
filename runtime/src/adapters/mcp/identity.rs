//! Who an MCP server says it is (`serverInfo` of `initialize`): the application, not the SDK.

use rmcp::model::Implementation;

/// The name, version and title an [`McpServer`](super::McpServer) gives in `serverInfo`.
/// Clients show it to people and log it, so it names the application; the default is
/// `toolgate` and toolgate's version.
///
/// ```
/// use toolgate::mcp::ServerIdentity;
///
/// let identity = ServerIdentity::new("clinic", "2.1.0").title("Veterinary clinic");
/// assert_eq!(identity.name, "clinic");
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerIdentity {
    /// A short machine name, e.g. `clinic`.
    pub name: String,
    /// The application's version.
    pub version: String,
    /// A name for people, e.g. `Veterinary clinic`.
    pub title: Option<String>,
}

impl ServerIdentity {
    /// An identity with a name and version, no title.
    pub fn new(name: impl Into<String>, version: impl Into<String>) -> Self {
        ServerIdentity {
            name: name.into(),
            version: version.into(),
            title: None,
        }
    }

    /// With a title for people.
    pub fn title(mut self, title: impl Into<String>) -> Self {
        self.title = Some(title.into());
        self
    }

    pub(super) fn implementation(&self) -> Implementation {
        let implementation = Implementation::new(&self.name, &self.version);
        match &self.title {
            Some(title) => implementation.with_title(title),
            None => implementation,
        }
    }
}

impl Default for ServerIdentity {
    fn default() -> Self {
        ServerIdentity::new("toolgate", env!("CARGO_PKG_VERSION"))
    }
}
