//! A notebook an assistant edits through tools: cells held in the application's state, code
//! cells run in a small expression language (`evalexpr`: arithmetic, comparisons, strings,
//! variables shared between cells, no input or output), and deleting a cell needs a person's
//! confirmation. Used by the `notebook` example.

use std::sync::{Arc, Mutex, PoisonError};

use evalexpr::{HashMapContext, IterateVariablesContext, Value as Expr};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use toolgate::prelude::*;
use toolgate::{Registry, RegistryBuilder, ToolTemplate};

/// What a cell holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum CellKind {
    /// An expression to run, e.g. `price = 12.5; price * 3`.
    Code,
    /// Text.
    Markdown,
}

/// One cell.
#[derive(Debug, Clone, Serialize)]
pub struct Cell {
    /// Its id (stays the same when the cell moves).
    pub id: u32,
    /// Code or Markdown.
    pub kind: CellKind,
    /// What it says.
    pub source: String,
    /// The value of its last run (code cells).
    pub output: Option<Value>,
}

/// The notebook: its cells in order, and the variables its code cells set.
#[derive(Default)]
pub struct Notebook {
    cells: Vec<Cell>,
    next_id: u32,
    variables: HashMapContext,
}

/// The notebook, shared by the tools (the application's state).
pub type SharedNotebook = Arc<Mutex<Notebook>>;

fn with<T>(
    notebook: &SharedNotebook,
    work: impl FnOnce(&mut Notebook) -> Result<T, ToolError>,
) -> Result<T, ToolError> {
    work(&mut notebook.lock().unwrap_or_else(PoisonError::into_inner))
}

impl Notebook {
    fn index(&self, id: u32) -> Result<usize, ToolError> {
        self.cells
            .iter()
            .position(|cell| cell.id == id)
            .ok_or_else(|| {
                let ids: Vec<String> = self.cells.iter().map(|cell| cell.id.to_string()).collect();
                ToolError::new(
                    "cell_not_found",
                    format!("there is no cell {id}; the cells are [{}]", ids.join(", ")),
                )
            })
    }

    /// The cells, in order.
    pub fn cells(&self) -> &[Cell] {
        &self.cells
    }
}

/// Add a cell to the notebook, at the end or at a position (0 is the top).
#[tool(manual, group = "notebook")]
pub fn create_cell(
    /// `code` or `markdown`.
    kind: CellKind,
    /// What the cell says.
    #[schemars(length(max = 10000))]
    source: String,
    /// Where to put it (default: at the end).
    position: Option<usize>,
    #[ctx] notebook: State<SharedNotebook>,
) -> Result<Value, ToolError> {
    with(&notebook, |book| {
        book.next_id += 1;
        let cell = Cell {
            id: book.next_id,
            kind,
            source,
            output: None,
        };
        let at = position.unwrap_or(book.cells.len()).min(book.cells.len());
        book.cells.insert(at, cell);
        Ok(json!({"id": book.next_id, "position": at}))
    })
}

/// Replace a cell's text (its output is cleared).
#[tool(manual, group = "notebook", idempotent)]
pub fn modify_cell(
    /// The cell's id.
    id: u32,
    /// Its new text.
    #[schemars(length(max = 10000))]
    source: String,
    #[ctx] notebook: State<SharedNotebook>,
) -> Result<Value, ToolError> {
    with(&notebook, |book| {
        let at = book.index(id)?;
        book.cells[at].source = source;
        book.cells[at].output = None;
        Ok(json!({"id": id, "modified": true}))
    })
}

/// Delete a cell and its output. A person confirms it first.
#[tool(manual, group = "notebook", destructive)]
pub fn delete_cell(
    /// The cell's id.
    id: u32,
    #[ctx] notebook: State<SharedNotebook>,
) -> Result<Value, ToolError> {
    with(&notebook, |book| {
        let at = book.index(id)?;
        book.cells.remove(at);
        Ok(json!({"id": id, "deleted": true}))
    })
}

/// Move a cell to another position (0 is the top).
#[tool(manual, group = "notebook", idempotent)]
pub fn move_cell(
    /// The cell's id.
    id: u32,
    /// Its new position.
    position: usize,
    #[ctx] notebook: State<SharedNotebook>,
) -> Result<Value, ToolError> {
    with(&notebook, |book| {
        let at = book.index(id)?;
        let cell = book.cells.remove(at);
        let to = position.min(book.cells.len());
        book.cells.insert(to, cell);
        Ok(json!({"id": id, "position": to}))
    })
}

/// Run a code cell: its expressions are evaluated in order (`;` separates them, `x = 2`
/// sets a variable the other cells see) and the last value is its output.
#[tool(manual, group = "notebook")]
pub fn execute_cell(
    /// The cell's id.
    id: u32,
    #[ctx] notebook: State<SharedNotebook>,
) -> Result<Value, ToolError> {
    with(&notebook, |book| {
        let at = book.index(id)?;
        if book.cells[at].kind != CellKind::Code {
            return Err(ToolError::new(
                "not_code",
                format!("cell {id} is Markdown; only code cells run"),
            ));
        }
        let source = book.cells[at].source.clone();
        let value = evalexpr::eval_with_context_mut(&source, &mut book.variables)
            .map_err(|error| ToolError::new("evaluation_failed", format!("cell {id}: {error}")))?;
        let output = to_json(&value);
        book.cells[at].output = Some(output.clone());
        Ok(json!({"id": id, "output": output}))
    })
}

fn to_json(value: &Expr) -> Value {
    match value {
        Expr::String(text) => json!(text),
        Expr::Float(number) => json!(number),
        Expr::Int(number) => json!(number),
        Expr::Boolean(flag) => json!(flag),
        Expr::Tuple(items) => Value::Array(items.iter().map(to_json).collect()),
        Expr::Empty => Value::Null,
    }
}

/// The whole notebook: every cell in order with its output, and the variables set.
#[tool(manual, group = "notebook", read_only)]
pub fn get_notebook_context(#[ctx] notebook: State<SharedNotebook>) -> Result<Value, ToolError> {
    with(&notebook, |book| {
        let mut variables = serde_json::Map::new();
        for (name, value) in book.variables.iter_variables() {
            variables.insert(name, to_json(&value));
        }
        Ok(json!({"cells": book.cells, "variables": variables}))
    })
}

/// Every notebook tool.
pub fn tools() -> [ToolTemplate; 6] {
    [
        create_cell_tool(),
        modify_cell_tool(),
        delete_cell_tool(),
        move_cell_tool(),
        execute_cell_tool(),
        get_notebook_context_tool(),
    ]
}

/// A registry with the notebook tools for `role`, over `notebook`; `builder` brings the
/// rest (roles, approver).
pub fn registry(
    builder: RegistryBuilder,
    role: &str,
    notebook: SharedNotebook,
) -> Result<Registry, toolgate::BuildError> {
    let mut builder = builder.linked_tools(false).state(notebook);
    for template in tools() {
        builder = builder.tool(template.permission(role));
    }
    builder.build()
}
