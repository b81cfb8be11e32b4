//! Slash commands for a chat front end (a terminal, a chat box): what the person asks of
//! the front end itself, answered here and never sent to the model. One table, so every
//! front end that uses it (the `toolgate chat` command, the examples' chat) takes the same
//! commands:
//!
//! | command | what it answers |
//! |---|---|
//! | `/help` | the commands |
//! | `/tools` or `/tools list` | the tools the caller may use |
//! | `/tools permissions` | the caller's role, and each tool's permission and risk |
//! | `/tools suggest` | tools that fit the conversation so far |
//! | `/tools search WORDS` | tools that match the words |
//! | `/tool NAME --param value ...` | calls a tool (values typed by its schema) |
//! | `/mcp status` | the imported MCP servers (when the front end says) |
//! | `/quit`, `/exit` | ends the chat |
//!
//! Any other line that starts with `/` is an unknown command, said so; a message that must
//! start with `/` is written with two (`//etc/hosts?` sends `/etc/hosts?`).
//!
//! ```
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() {
//! use toolgate::agent::commands::{ChatCommands, Handled};
//! use toolgate::{Caller, Registry};
//!
//! let registry = Registry::builder().roles(["public"]).build().unwrap();
//! let caller = Caller::new("u1", "public");
//! let commands = ChatCommands::new();
//! let Handled::Reply(text) = commands.handle(&registry, &caller, "", "/nope").await else {
//!     panic!("answered here")
//! };
//! assert!(text.contains("/help"));
//! match commands.handle(&registry, &caller, "", "hello").await {
//!     Handled::Message(message) => assert_eq!(message, "hello"),
//!     _ => panic!("a message goes to the model"),
//! }
//! # }
//! ```

mod answers;
mod arguments;

use crate::caller::Caller;
use crate::registry::Registry;

/// What became of a line the person typed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Handled {
    /// Not a command: the message for the model (a leading `//` made `/`).
    Message(String),
    /// A command, answered: show this text.
    Reply(String),
    /// The person ends the chat.
    Quit,
}

/// Says the front end's imported MCP servers, a line each (for `/mcp status`).
type McpStatus = Box<dyn Fn() -> Vec<String> + Send + Sync>;

/// The table of slash commands; [`handle`](Self::handle) answers a line.
#[derive(Default)]
pub struct ChatCommands {
    mcp_status: Option<McpStatus>,
}

impl std::fmt::Debug for ChatCommands {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ChatCommands").finish_non_exhaustive()
    }
}

/// The commands, as `/help` shows them.
pub const HELP: &str = "\
/help                          these commands
/tools [list]                  the tools you may use
/tools permissions             your role, and each tool's permission and risk
/tools suggest                 tools that fit the conversation so far
/tools search WORDS            tools that match the words
/tool NAME --param value ...   call a tool yourself
/mcp status                    the imported MCP servers
/quit                          end the chat
(a message that starts with / is written with //)";

impl ChatCommands {
    /// The table, without MCP servers to tell of.
    pub fn new() -> Self {
        ChatCommands::default()
    }

    /// What `/mcp status` says: one line per imported server.
    pub fn mcp_status(mut self, status: impl Fn() -> Vec<String> + Send + Sync + 'static) -> Self {
        self.mcp_status = Some(Box::new(status));
        self
    }

    /// Answers `line` for `caller`; `conversation` is what the person said so far (for
    /// `/tools suggest`). A `/tool` call goes through the registry like any other call.
    pub async fn handle(
        &self,
        registry: &Registry,
        caller: &Caller,
        conversation: &str,
        line: &str,
    ) -> Handled {
        let line = line.trim();
        if let Some(message) = line.strip_prefix("//") {
            return Handled::Message(format!("/{message}"));
        }
        let Some(command) = line.strip_prefix('/') else {
            return Handled::Message(line.to_owned());
        };
        let (name, rest) = command
            .split_once(char::is_whitespace)
            .unwrap_or((command, ""));
        let rest = rest.trim();
        let reply = match (name, rest) {
            ("quit" | "exit", "") => return Handled::Quit,
            ("help", _) => HELP.to_owned(),
            ("tools", "" | "list") => answers::list(registry, caller),
            ("tools", "permissions") => answers::permissions(registry, caller),
            ("tools", "suggest") => answers::hits(registry.suggest(caller, conversation, 5)),
            ("tools", rest) if rest.starts_with("search") => {
                let words = rest["search".len()..].trim();
                match words.is_empty() {
                    true => "usage: /tools search WORDS".to_owned(),
                    false => answers::hits(registry.search(caller, words, 5)),
                }
            }
            ("tool", rest) => answers::call(registry, caller, rest).await,
            ("mcp", "status") => match &self.mcp_status {
                Some(status) => status().join("\n"),
                None => "no MCP servers are imported here".to_owned(),
            },
            _ => format!("unknown command `/{command}`: /help lists the commands"),
        };
        Handled::Reply(reply)
    }
}
