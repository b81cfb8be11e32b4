//! Ready tools for [toolgate](https://docs.rs/toolgate), built with `#[tool(manual)]`: none
//! registers itself and none hard-codes a role. The application configures each family
//! with a state value and gives every tool its permission:
//!
//! ```no_run
//! use toolgate::Registry;
//! use toolgate_tools::files::{self, Sandbox};
//!
//! let registry = Registry::builder()
//!     .roles(["public", "staff", "admin"])
//!     .state(Sandbox::new("/srv/workspace").expect("the folder exists"))
//!     .tool(files::read_file_tool().permission("staff"))
//!     .tool(files::delete_directory_tool().permission("admin"))
//!     .build()
//!     .expect("every tool has its state and a known role");
//! # let _ = registry;
//! ```
//!
//! Each family is a feature of its own, with its dependencies behind it; `files` is the
//! default, `all` turns on every family. Tools defined in files (`file_tools`, feature
//! `file-tools`) live here too, so that an application can load them from Rust; the
//! `toolgate` command and its `toolgate.toml` are the crate `toolgate-cli`.
//!
//! | module (feature) | tools | state |
//! |---|---|---|
//! | `files` | `read_file`, `write_file`, `list_directory`, `search_files`, `create_directory`, `delete_directory`, `move_path` | `files::Sandbox` |
//! | `web` | `fetch_webpage`, `web_search` | `web::WebConfig`, `web::WebSearchConfig` |
//! | `system` | `get_device_info` | none |
//! | `programs` (with `files`) | `run_command` | `programs::CommandConfig` |
//! | `tasks` | `create_task`, `list_tasks`, `complete_task` | `tasks::TaskStore` |
//! | `apps` (with `programs`) | `open_app`, `close_app` | `apps::AppsConfig` |
//! | `services` (with `programs`) | `check_service_health`, `restart_service` | `services::ServicesConfig` |
//! | `skills` (with `files`) | `create_skill` | `skills::SkillsConfig` and `files::Sandbox` |

#[cfg(feature = "file-tools")]
pub mod duration;
#[cfg(feature = "file-tools")]
mod problem;
#[cfg(feature = "file-tools")]
pub use problem::Problem;
#[cfg(feature = "apps")]
pub mod apps;
#[cfg(feature = "file-tools")]
pub mod file_tools;
#[cfg(feature = "files")]
pub mod files;
#[cfg(feature = "programs")]
pub mod programs;
#[cfg(feature = "files")]
mod quote;
#[cfg(feature = "services")]
pub mod services;
#[cfg(feature = "skills")]
pub mod skills;
#[cfg(feature = "system")]
pub mod system;
#[cfg(feature = "tasks")]
pub mod tasks;
#[cfg(feature = "web")]
pub mod web;
