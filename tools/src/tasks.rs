//! A to-do list kept in an SQLite file the application names; it survives restarts.

use std::path::Path;
use std::sync::{Mutex, PoisonError};

use rusqlite::{Connection, OptionalExtension, params};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use toolgate::ToolTemplate;
use toolgate::prelude::*;

/// The database file used when the application names none.
pub const DEFAULT_FILE: &str = "tasks.db";

/// The task database.
pub struct TaskStore {
    connection: Mutex<Connection>,
}

impl TaskStore {
    /// Opens (or creates) the database file.
    pub fn open(path: impl AsRef<Path>) -> rusqlite::Result<Self> {
        let connection = Connection::open(path)?;
        connection.execute_batch(
            "CREATE TABLE IF NOT EXISTS tasks (
                id INTEGER PRIMARY KEY,
                title TEXT NOT NULL,
                tags TEXT NOT NULL DEFAULT '[]',
                done INTEGER NOT NULL DEFAULT 0,
                created_by TEXT NOT NULL
            )",
        )?;
        Ok(TaskStore {
            connection: Mutex::new(connection),
        })
    }

    /// Opens `tasks.db` in the working directory.
    pub fn open_default() -> rusqlite::Result<Self> {
        Self::open(DEFAULT_FILE)
    }

    fn with<T>(
        &self,
        work: impl FnOnce(&Connection) -> rusqlite::Result<T>,
    ) -> Result<T, ToolError> {
        let connection = self
            .connection
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        work(&connection).map_err(|error| {
            tracing::error!(%error, "task database error");
            ToolError::execution("the task list could not be reached; try again later")
        })
    }
}

/// Every task tool.
pub fn tools() -> [ToolTemplate; 3] {
    [create_task_tool(), list_tasks_tool(), complete_task_tool()]
}

/// A task.
#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct Task {
    /// Its id.
    pub id: i64,
    /// What has to be done.
    pub title: String,
    /// Its labels.
    pub tags: Vec<String>,
    /// Open or done.
    pub status: Status,
}

/// Whether a task is done.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    /// Still to do.
    Open,
    /// Done.
    Done,
}

fn task_of(row: &rusqlite::Row<'_>) -> rusqlite::Result<Task> {
    let tags: String = row.get(2)?;
    let done: bool = row.get(3)?;
    Ok(Task {
        id: row.get(0)?,
        title: row.get(1)?,
        tags: serde_json::from_str(&tags).unwrap_or_default(),
        status: if done { Status::Done } else { Status::Open },
    })
}

/// Add a task to the list.
#[tool(manual, group = "tasks")]
pub fn create_task(
    /// What has to be done.
    #[schemars(length(min = 1, max = 500))]
    title: String,
    /// Labels to filter by later.
    #[serde(default)]
    #[schemars(length(max = 20))]
    tags: Vec<String>,
    #[ctx] caller: Caller,
    #[ctx] store: State<TaskStore>,
) -> Result<Task, ToolError> {
    let encoded = json!(tags).to_string();
    let id = store.with(|db| {
        db.execute(
            "INSERT INTO tasks (title, tags, created_by) VALUES (?1, ?2, ?3)",
            params![title, encoded, caller.id()],
        )?;
        Ok(db.last_insert_rowid())
    })?;
    Ok(Task {
        id,
        title,
        tags,
        status: Status::Open,
    })
}

/// List tasks, optionally only open or done ones, or those with a tag.
#[tool(manual, group = "tasks", read_only, idempotent)]
pub fn list_tasks(
    /// Only tasks in this state.
    status: Option<Status>,
    /// Only tasks with this tag.
    tag: Option<String>,
    #[ctx] store: State<TaskStore>,
) -> Result<Vec<Task>, ToolError> {
    let tasks = store.with(|db| {
        let mut statement = db.prepare("SELECT id, title, tags, done FROM tasks ORDER BY id")?;
        let rows = statement.query_map([], task_of)?;
        rows.collect::<rusqlite::Result<Vec<Task>>>()
    })?;
    Ok(tasks
        .into_iter()
        .filter(|task| status.is_none_or(|status| task.status == status))
        .filter(|task| tag.as_ref().is_none_or(|tag| task.tags.contains(tag)))
        .collect())
}

/// Mark a task as done.
#[tool(manual, group = "tasks", idempotent)]
pub fn complete_task(
    /// The task's id.
    id: i64,
    #[ctx] store: State<TaskStore>,
) -> Result<Value, ToolError> {
    let found = store.with(|db| {
        let exists = db
            .query_row("SELECT 1 FROM tasks WHERE id = ?1", [id], |_| Ok(()))
            .optional()?;
        if exists.is_some() {
            db.execute("UPDATE tasks SET done = 1 WHERE id = ?1", [id])?;
        }
        Ok(exists.is_some())
    })?;
    if !found {
        return Err(ToolError::new(
            "not_found",
            format!("there is no task {id}; list the tasks to see their ids"),
        ));
    }
    Ok(json!({"id": id, "status": "done"}))
}
