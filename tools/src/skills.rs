//! Skills the assistant writes for itself: a folder per skill in the sandbox with a
//! `SKILL.md` (a YAML front matter — name, title, description, what it requires, whether it is
//! used without being asked — and the instructions as the body). A skill is never
//! overwritten.

use std::io::Write;
use std::path::Path;

use cap_std::fs::OpenOptions;
use serde_json::{Value, json};
use toolgate::prelude::*;

use crate::files::{Sandbox, io_error};

/// Where skills are written, and how large one may be.
#[derive(Debug, Clone)]
pub struct SkillsConfig {
    /// The folder of the sandbox skills go in (default `skills`).
    pub folder: String,
    /// Largest `SKILL.md`, in bytes (default 64 KiB).
    pub max_bytes: usize,
}

impl Default for SkillsConfig {
    fn default() -> Self {
        SkillsConfig {
            folder: "skills".to_owned(),
            max_bytes: 64 * 1024,
        }
    }
}

/// Save a reusable skill: instructions for a task you will meet again, written to
/// `skills/<name>/SKILL.md` in the workspace. An existing skill is never overwritten.
// The model's six arguments and two context values: a tool's parameters are its schema.
#[allow(clippy::too_many_arguments)]
#[tool(manual, group = "skills", risk = "medium")]
pub fn create_skill(
    /// The skill's name in kebab-case, e.g. "release-notes" (it names its folder).
    #[schemars(
        length(min = 1, max = 64),
        regex(pattern = r"^[a-z0-9]+(-[a-z0-9]+)*$")
    )]
    name: String,
    /// A short human-friendly title.
    #[schemars(length(min = 1, max = 120))]
    title: String,
    /// When to use the skill, in one or two sentences (this is what decides whether it is used).
    #[schemars(length(min = 1, max = 1000))]
    description: String,
    /// The instructions, in Markdown.
    #[schemars(length(min = 1))]
    content: String,
    /// Tools or programs the skill needs, e.g. ["read_file", "git"].
    #[serde(default)]
    requires: Vec<String>,
    /// Use it whenever its description fits, without being asked (default: false).
    #[serde(default)]
    auto_invoke: bool,
    #[ctx] config: State<SkillsConfig>,
    #[ctx] sandbox: State<Sandbox>,
) -> Result<Value, ToolError> {
    let text = skill_text(
        &name,
        &title,
        &description,
        &content,
        &requires,
        auto_invoke,
    );
    if text.len() > config.max_bytes {
        return Err(ToolError::new(
            "too_large",
            format!(
                "the skill is {} bytes, over the limit of {}",
                text.len(),
                config.max_bytes
            ),
        ));
    }
    let path = format!("{}/{name}/SKILL.md", config.folder.trim_end_matches('/'));
    let (root, relative) = sandbox.resolve_for_change(&path)?;
    let shown = sandbox.display(root, &relative);
    let folder = relative.parent().unwrap_or(Path::new(""));
    root.dir
        .create_dir_all(folder)
        .map_err(|error| io_error(&shown, error))?;
    let mut options = OpenOptions::new();
    options.write(true).create_new(true);
    let mut file = root.dir.open_with(&relative, &options).map_err(|error| {
        if error.kind() == std::io::ErrorKind::AlreadyExists {
            ToolError::new(
                "already_exists",
                format!("a skill named `{name}` exists at `{shown}`; choose another name (skills are never overwritten)"),
            )
        } else {
            io_error(&shown, error)
        }
    })?;
    file.write_all(text.as_bytes())
        .map_err(|error| io_error(&shown, error))?;
    Ok(json!({
        "path": shown,
        "bytes_written": text.len(),
        "how_to_use": format!(
            "Read `{shown}` with read_file when a task matches its description{}, and follow its instructions.",
            if auto_invoke { " (it is marked to be used without being asked)" } else { "" }
        ),
    }))
}

/// The `SKILL.md` text: front matter (each value a JSON string, which YAML reads as is) and body.
fn skill_text(
    name: &str,
    title: &str,
    description: &str,
    content: &str,
    requires: &[String],
    auto_invoke: bool,
) -> String {
    let quoted = |text: &str| Value::String(text.to_owned()).to_string();
    let requires: Vec<String> = requires.iter().map(|item| quoted(item)).collect();
    format!(
        "---\nname: {}\ntitle: {}\ndescription: {}\nrequires: [{}]\nauto_invoke: {auto_invoke}\n---\n\n{}\n",
        quoted(name),
        quoted(title),
        quoted(description),
        requires.join(", "),
        content.trim_end()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_front_matter_cannot_be_broken_out_of() {
        let text = skill_text(
            "notes",
            "Notes\n---\nevil: true",
            "Use: always",
            "Body",
            &["a\"b".into()],
            true,
        );
        let front = text.split("\n---\n").next().unwrap();
        assert_eq!(front.lines().count(), 6, "{text}");
        assert!(
            front.contains(r#"title: "Notes\n---\nevil: true""#),
            "{text}"
        );
        assert!(front.contains(r#"requires: ["a\"b"]"#), "{text}");
    }
}
