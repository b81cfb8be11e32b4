//! Where rules come from (text given in code, files, a folder of `*.cedar` files), and
//! reading them into one policy set whose every rule knows its file: its id is its
//! `@id("...")`, or `file#n` for the n-th rule of the file.

use std::collections::HashMap;
use std::path::PathBuf;
use std::str::FromStr;

use cedar_policy::{PolicyId, PolicySet};

use super::problem::CedarProblem;

/// One source of rules.
#[derive(Debug, Clone)]
pub(crate) enum Source {
    Text { name: String, text: String },
    File(PathBuf),
    Folder(PathBuf),
}

/// A file of rules as read.
pub(crate) struct Read {
    pub(crate) name: String,
    pub(crate) text: String,
}

/// Every rule read, and which file each came from.
pub(crate) struct Parsed {
    pub(crate) policies: PolicySet,
    /// Rule id → index into `files`.
    pub(crate) origins: HashMap<PolicyId, usize>,
    pub(crate) files: Vec<Read>,
}

/// Reads every source (a folder's `*.cedar` files in name order).
pub(crate) fn read(sources: &[Source]) -> Result<Vec<Read>, Vec<CedarProblem>> {
    let mut read = Vec::new();
    let mut problems = Vec::new();
    for source in sources {
        match source {
            Source::Text { name, text } => read.push(Read {
                name: name.clone(),
                text: text.clone(),
            }),
            Source::File(path) => read_one(path, &mut read, &mut problems),
            Source::Folder(folder) => match cedar_files(folder) {
                Ok(files) => {
                    for path in files {
                        read_one(&path, &mut read, &mut problems);
                    }
                }
                Err(error) => problems.push(CedarProblem::of(
                    &folder.display().to_string(),
                    format!("the rules' folder cannot be read: {error}"),
                )),
            },
        }
    }
    if problems.is_empty() {
        Ok(read)
    } else {
        Err(problems)
    }
}

/// Reads one rules file into `read`, or says in `problems` why it cannot be read.
fn read_one(path: &std::path::Path, read: &mut Vec<Read>, problems: &mut Vec<CedarProblem>) {
    let name = path.display().to_string();
    match std::fs::read_to_string(path) {
        Ok(text) => read.push(Read { name, text }),
        Err(error) => problems.push(CedarProblem::of(&name, format!("cannot be read: {error}"))),
    }
}

fn cedar_files(folder: &std::path::Path) -> std::io::Result<Vec<PathBuf>> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(folder)?
        .filter_map(Result::ok)
        .map(|entry| entry.path())
        .filter(|path| path.extension().is_some_and(|ext| ext == "cedar") && path.is_file())
        .collect();
    files.sort();
    Ok(files)
}

/// The rules of every file, as one set; every syntax error and duplicate id, with its
/// file and line.
pub(crate) fn parse(files: Vec<Read>) -> Result<Parsed, Vec<CedarProblem>> {
    let mut policies = PolicySet::new();
    let mut origins = HashMap::new();
    let mut problems = Vec::new();
    for (index, file) in files.iter().enumerate() {
        let parsed = match PolicySet::from_str(&file.text) {
            Ok(parsed) => parsed,
            Err(errors) => {
                for error in errors.iter() {
                    problems.push(CedarProblem::reported(
                        &file.name,
                        &file.text,
                        error,
                        error.to_string(),
                    ));
                }
                continue;
            }
        };
        let mut ordered: Vec<_> = parsed.policies().collect();
        // `policy0`, `policy1`, ... in the order written.
        ordered.sort_by_key(|policy| {
            policy.id().to_string()[6..]
                .parse::<usize>()
                .unwrap_or(usize::MAX)
        });
        for (n, policy) in ordered.into_iter().enumerate() {
            let id = match policy.annotation("id") {
                Some(id) => id.to_owned(),
                None => format!("{}#{}", short(&file.name), n + 1),
            };
            let renamed = policy.new_id(PolicyId::new(&id));
            if policies.add(renamed).is_err() {
                problems.push(CedarProblem::of(
                    &file.name,
                    format!("two rules have the id `{id}`; give each its own `@id`"),
                ));
                continue;
            }
            origins.insert(PolicyId::new(&id), index);
        }
    }
    if problems.is_empty() {
        Ok(Parsed {
            policies,
            origins,
            files,
        })
    } else {
        Err(problems)
    }
}

/// A file's name without its folders, for rule ids.
fn short(name: &str) -> &str {
    name.rsplit(['/', '\\']).next().unwrap_or(name)
}
