//! Checking arguments against the exact input schema a model was shown.

mod alternatives;

use serde_json::{Value, json};

use jsonschema::error::ValidationErrorKind;

use crate::error::ToolError;
use crate::util::bounded::{MAX_LINE, MAX_QUOTED, clip};

/// Most violations listed in one error; the rest are counted.
const MAX_LISTED_VIOLATIONS: usize = 20;
/// Most allowed values of an `enum` listed in a message.
const MAX_LISTED_OPTIONS: usize = 50;

/// A compiled input schema, with the schema itself to describe violations from.
pub(crate) struct ArgumentValidator {
    validator: jsonschema::Validator,
    schema: Value,
}

impl ArgumentValidator {
    /// Compiles a schema as JSON Schema 2020-12, formats checked, no remote references.
    pub(crate) fn compile(schema: &Value) -> Result<Self, String> {
        jsonschema::draft202012::options()
            .should_validate_formats(true)
            .build(schema)
            .map(|validator| ArgumentValidator {
                validator,
                schema: schema.clone(),
            })
            .map_err(|error| error.to_string())
    }

    /// Every violation at once, each with its JSON path, phrased for the model. A violation
    /// inside a `secrets` argument names the rule broken, never the value.
    pub(crate) fn check(&self, arguments: &Value, secrets: &[String]) -> Result<(), ToolError> {
        if self.validator.is_valid(arguments) {
            return Ok(());
        }
        let mut violations = Vec::new();
        let mut lines = Vec::new();
        let mut total = 0usize;
        for error in self.validator.iter_errors(arguments) {
            total += 1;
            if violations.len() == MAX_LISTED_VIOLATIONS {
                continue;
            }
            let full_path = error.instance_path().as_str();
            let secret = is_secret_path(full_path, secrets);
            let path = clip(full_path, MAX_QUOTED).into_owned();
            let message = clip(&self.message_for(&error, secret), MAX_LINE).into_owned();
            let place = if path.is_empty() {
                "at the top level".to_owned()
            } else {
                format!("at `{path}`")
            };
            lines.push(format!("- {place}: {message}"));
            violations
                .push(json!({"path": path, "keyword": error.kind().keyword(), "message": message}));
        }
        if total > violations.len() {
            lines.push(format!("- and {} more", total - violations.len()));
        }
        Err(ToolError::invalid_arguments(format!(
            "the arguments do not match the tool's input schema; fix these and call again:\n{}",
            lines.join("\n")
        ))
        .with_details(json!({"violations": violations, "count": total})))
    }

    /// jsonschema's message, with the value masked when large or secret, and every allowed value
    /// listed for `enum` (jsonschema abbreviates long lists; a model needs them all).
    fn message_for(&self, error: &jsonschema::ValidationError<'_>, secret: bool) -> String {
        let shown = if !secret && quotable(error.instance()) {
            error.instance().to_string()
        } else {
            "the value".to_owned()
        };
        match error.kind() {
            ValidationErrorKind::Enum { options } => match options.as_array() {
                Some(values) if values.len() <= MAX_LISTED_OPTIONS => {
                    let listed: Vec<String> = values.iter().map(Value::to_string).collect();
                    format!(
                        "{shown} is not one of the allowed values: {}",
                        listed.join(", ")
                    )
                }
                _ => error.masked_with(shown).to_string(),
            },
            ValidationErrorKind::AnyOf { .. } | ValidationErrorKind::OneOfNotValid { .. } => {
                let forms = alternatives::allowed_forms(&self.schema, error.schema_path().as_str());
                if forms.is_empty() {
                    error.masked_with(shown).to_string()
                } else {
                    format!(
                        "{shown} is not one of the allowed forms: {}",
                        forms.join(", ")
                    )
                }
            }
            _ if shown == "the value" => error.masked_with(shown).to_string(),
            _ => error.to_string(),
        }
    }
}

/// Whether a JSON pointer lies inside one of the secret top-level arguments.
fn is_secret_path(path: &str, secrets: &[String]) -> bool {
    let Some(first) = path.strip_prefix('/') else {
        return false;
    };
    let first = first.split('/').next().unwrap_or_default();
    // JSON pointer escapes: `~1` is `/`, `~0` is `~`.
    let first = first.replace("~1", "/").replace("~0", "~");
    secrets.contains(&first)
}

fn quotable(value: &Value) -> bool {
    match value {
        Value::String(text) => text.len() <= MAX_QUOTED,
        // Containers may be large; their messages name the value instead of quoting it.
        Value::Array(_) | Value::Object(_) => false,
        _ => true,
    }
}
