//! Tool files from an OpenAPI 3.0 or 3.1 document (JSON or YAML): one HTTP tool file per
//! operation, with its path, query and body parameters as the tool's parameters, and the
//! API's address and authentication as one [source](super::HttpSource) the tools share.
//!
//! ```
//! use toolgate_tools::file_tools::openapi;
//!
//! let spec = r#"{"openapi": "3.1.0", "info": {"title": "Shop", "version": "1"},
//!   "servers": [{"url": "https://shop.example/api"}],
//!   "paths": {"/stock/{sku}": {"get": {"operationId": "getStock", "summary": "Stock of an item.",
//!     "parameters": [{"name": "sku", "in": "path", "required": true, "schema": {"type": "string"}}]}}}}"#;
//! let imported = openapi::import(spec, "shop", "public").unwrap();
//! assert_eq!(imported.source.url, "https://shop.example/api");
//! assert_eq!(imported.tools[0].name, "getStock");
//! assert!(imported.tools[0].text.contains("\"path\":\"/stock/{sku}\""));
//! ```

mod operation;
mod schema;

use serde_json::Value;

use super::HttpSource;

/// What an import makes.
#[derive(Debug, Clone)]
pub struct Imported {
    /// The source the tools name: the first server's URL, the authentication's headers.
    pub source: HttpSource,
    /// One tool file per operation, in the document's order.
    pub tools: Vec<ImportedTool>,
    /// What was left out, and why (an operation whose body is not an object, a cookie
    /// parameter, an authentication that is not a header).
    pub skipped: Vec<String>,
}

/// One tool file.
#[derive(Debug, Clone)]
pub struct ImportedTool {
    /// The tool's name (its operation's `operationId`, made a valid tool name).
    pub name: String,
    /// The file's text (Markdown with a front matter).
    pub text: String,
}

/// The methods an HTTP tool sends.
const METHODS: [&str; 5] = ["get", "post", "put", "patch", "delete"];

/// Reads `document` (JSON or YAML) and makes a tool file per operation, each naming the
/// source `source` and needing `permission`.
pub fn import(document: &str, source: &str, permission: &str) -> Result<Imported, String> {
    let doc: Value = match serde_json::from_str(document) {
        Ok(doc) => doc,
        Err(_) => serde_saphyr::from_str(document)
            .map_err(|error| format!("neither JSON nor YAML: {error}"))?,
    };
    let version = doc["openapi"].as_str().unwrap_or_default();
    if !(version.starts_with("3.0") || version.starts_with("3.1")) {
        return Err(format!(
            "not an OpenAPI 3.0 or 3.1 document (its `openapi` is {:?}); Swagger 2.0 documents can be converted with swagger2openapi",
            doc["openapi"]
                .as_str()
                .or(doc["swagger"].as_str())
                .unwrap_or("missing")
        ));
    }
    let mut skipped = Vec::new();
    let source_spec = operation::source(&doc, source, &mut skipped)?;
    let mut tools = Vec::new();
    let paths = doc["paths"].as_object().cloned().unwrap_or_default();
    for (path, item) in &paths {
        for method in METHODS {
            let Some(op) = item.get(method) else { continue };
            let found = operation::Found {
                doc: &doc,
                path,
                item,
                method,
                op,
            };
            match found.tool(source, permission) {
                Ok(tool) => tools.push(tool),
                Err(why) => skipped.push(format!("{} {path}: {why}", method.to_uppercase())),
            }
        }
    }
    if tools.is_empty() && skipped.is_empty() {
        return Err("the document has no operations under `paths`".to_owned());
    }
    Ok(Imported {
        source: source_spec,
        tools,
        skipped,
    })
}
