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
//! | module | tools | state |
//! |---|---|---|
//! | [`files`] | `read_file`, `write_file`, `list_directory`, `search_files`, `create_directory`, `delete_directory`, `move_path` | [`files::Sandbox`] |
//! | [`web`] | `fetch_webpage` | [`web::WebConfig`] |
//! | [`system`] | `get_device_info` | none |
//! | [`programs`] | `run_command` | [`programs::CommandConfig`] |
//! | [`tasks`] | `create_task`, `list_tasks`, `complete_task` | [`tasks::TaskStore`] |
//! | [`web`] | `web_search` | [`web::WebSearchConfig`] |
//! | [`apps`] | `open_app`, `close_app` | [`apps::AppsConfig`] |
//! | [`services`] | `check_service_health`, `restart_service` | [`services::ServicesConfig`] |
//! | [`skills`] | `create_skill` | [`skills::SkillsConfig`] and [`files::Sandbox`] |

#[cfg(feature = "config")]
mod duration;
#[cfg(feature = "config")]
mod problem;
#[cfg(feature = "config")]
pub use problem::Problem;
pub mod apps;
#[cfg(feature = "config")]
pub mod config;
#[cfg(feature = "config")]
pub mod file_tools;
pub mod files;
pub mod programs;
mod quote;
pub mod services;
pub mod skills;
pub mod system;
pub mod tasks;
pub mod web;
