//! `toolgate tools new`: a starter tool file that works as written.

use std::path::{Path, PathBuf};

use crate::authoring::Kind;
use crate::failure::Failure;

/// Writes the starter files; refuses to overwrite.
pub fn write(
    folder: &Path,
    name: &str,
    kind: Kind,
    permission: &str,
) -> Result<Vec<PathBuf>, Failure> {
    std::fs::create_dir_all(folder).map_err(|error| {
        Failure::failed(format!("`{}` cannot be created: {error}", folder.display()))
    })?;
    let tool_file = folder.join(format!("{name}.md"));
    let mut files = vec![(tool_file, tool_text(name, kind, permission))];
    if matches!(kind, Kind::Command) {
        files.push((
            folder.join("scripts").join(format!("{name}.sh")),
            SCRIPT.to_owned(),
        ));
    }
    if let Some((taken, _)) = files.iter().find(|(path, _)| path.exists()) {
        return Err(Failure::usage(format!(
            "`{}` exists; pick another name or remove it",
            taken.display()
        )));
    }
    for (path, text) in &files {
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).map_err(|error| {
                Failure::failed(format!("`{}` cannot be created: {error}", parent.display()))
            })?;
        }
        std::fs::write(path, text).map_err(|error| {
            Failure::failed(format!("`{}` cannot be written: {error}", path.display()))
        })?;
        make_executable(path, text)?;
    }
    Ok(files.into_iter().map(|(path, _)| path).collect())
}

fn tool_text(name: &str, kind: Kind, permission: &str) -> String {
    let runs = match kind {
        Kind::Command => format!(
            "command:\n  # A path relative to this file, or a program on /usr/bin.\n  program: ./scripts/{name}.sh\n  # How stdout is read: auto (JSON if it parses), json or text.\n  output: json\n"
        ),
        Kind::Http => "http:\n  method: GET\n  # {text} is replaced by the argument, percent-encoded; other arguments go in the query.\n  url: https://httpbin.org/anything/{text}\n  # Secrets come from the environment: Authorization: \"Bearer ${MY_TOKEN}\"\n  headers: {}\n".to_owned(),
    };
    format!(
        "---\nname: {name}\ntitle: {title}\ndescription: \"Repeat a text back (a starter: say here what the tool does).\"\npermission: {permission}\ngroup: custom\nrisk: low\nread_only: true\ntimeout: 10s\nparameters:\n  text: {{type: string, description: The text to repeat.}}\n{runs}---\nThe body is the long description the model reads: when to use the tool, what it returns.\n",
        title = name.replace(['_', '-'], " "),
    )
}

/// Reads the call's arguments (one line of JSON) on stdin; prints the result as JSON.
const SCRIPT: &str = r#"#!/bin/sh
# Reads the call's arguments as JSON on stdin and prints the result on stdout.
# A non-zero exit is a failed call; what is printed on stderr tells why.
read -r arguments
printf '{"you_sent": %s}\n' "$arguments"
"#;

fn make_executable(path: &Path, text: &str) -> Result<(), Failure> {
    #[cfg(unix)]
    if text.starts_with("#!") {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).map_err(
            |error| {
                Failure::failed(format!(
                    "`{}` cannot be made executable: {error}",
                    path.display()
                ))
            },
        )?;
    }
    let _ = (path, text);
    Ok(())
}
