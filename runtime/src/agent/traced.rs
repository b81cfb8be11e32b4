//! The agent's spans (feature `otel`): `invoke_agent` over a run, the parent of a `chat`
//! span per model request and of the run's tool calls' spans; token usage and model
//! request durations as metrics.

use std::time::Duration;

use opentelemetry::trace::SpanKind;
use opentelemetry::{Context, KeyValue};

use super::AgentError;
use super::model::{Model, ModelError, ModelReply};
use super::run::{Run, RunStatus};
use crate::telemetry::conventions as name;
use crate::telemetry::{OperationSpan, Telemetry};

/// The agent's name on its spans (`gen_ai.agent.name`).
const AGENT: &str = "toolgate";

/// The span of a run, started in the current context.
pub(crate) fn run_span(telemetry: &Telemetry, model: &dyn Model, run: &Run) -> OperationSpan {
    let mut attributes = vec![
        KeyValue::new(name::OPERATION_NAME, "invoke_agent"),
        KeyValue::new(name::AGENT_NAME, AGENT),
        KeyValue::new(name::CONVERSATION_ID, run.id.as_str().to_owned()),
        KeyValue::new(name::PROVIDER_NAME, model.provider_name().to_owned()),
        KeyValue::new(name::RUN_ID, run.id.as_str().to_owned()),
        KeyValue::new(name::ROLE, run.caller.role().to_owned()),
    ];
    if let Some(model) = model.model_name() {
        attributes.push(KeyValue::new(name::REQUEST_MODEL, model.to_owned()));
    }
    let span_name = (format!("invoke_agent {AGENT}"), SpanKind::Internal);
    OperationSpan::start(telemetry, span_name, &Context::current(), attributes)
}

/// The run's end on its span: its status, the tokens it used, and an error where the model
/// failed or the run could not be kept.
pub(crate) fn run_ended(span: OperationSpan, driven: &Result<Run, AgentError>) {
    match driven {
        Ok(run) => {
            span.set([
                KeyValue::new("toolgate.run.status", run.status.name()),
                KeyValue::new(name::INPUT_TOKENS, run.usage.input_tokens as i64),
                KeyValue::new(name::OUTPUT_TOKENS, run.usage.output_tokens as i64),
            ]);
            if let RunStatus::ModelFailed { error } = &run.status {
                span.fail(model_error_type(error), &error.message);
            }
        }
        Err(error) => span.fail("agent_error", &error.to_string()),
    }
    span.end();
}

/// The span of one model request, started in the current context (the run's).
pub(crate) fn chat_span(telemetry: &Telemetry, model: &dyn Model) -> OperationSpan {
    let mut attributes = vec![
        KeyValue::new(name::OPERATION_NAME, "chat"),
        KeyValue::new(name::PROVIDER_NAME, model.provider_name().to_owned()),
    ];
    let model_name = model.model_name().unwrap_or("unknown");
    if let Some(model) = model.model_name() {
        attributes.push(KeyValue::new(name::REQUEST_MODEL, model.to_owned()));
    }
    let span_name = (format!("chat {model_name}"), SpanKind::Client);
    OperationSpan::start(telemetry, span_name, &Context::current(), attributes)
}

/// The model's answer on its span and in the metrics.
pub(crate) fn chat_ended(
    telemetry: &Telemetry,
    span: OperationSpan,
    model: &dyn Model,
    (reply, took): (&Result<ModelReply, ModelError>, Duration),
) {
    let instruments = &telemetry.shared().instruments;
    let mut measured = vec![
        KeyValue::new(name::OPERATION_NAME, "chat"),
        KeyValue::new(name::PROVIDER_NAME, model.provider_name().to_owned()),
    ];
    if let Some(model) = model.model_name() {
        measured.push(KeyValue::new(name::REQUEST_MODEL, model.to_owned()));
    }
    match reply {
        Ok(reply) => {
            let finish = match (reply.cut_off, reply.calls.is_empty()) {
                (true, _) => "length",
                (false, true) => "stop",
                (false, false) => "tool_calls",
            };
            let usage = reply.usage;
            span.set([
                KeyValue::new(name::INPUT_TOKENS, usage.input_tokens as i64),
                KeyValue::new(name::OUTPUT_TOKENS, usage.output_tokens as i64),
                KeyValue::new(
                    name::FINISH_REASONS,
                    opentelemetry::Value::Array(
                        vec![opentelemetry::StringValue::from(finish)].into(),
                    ),
                ),
            ]);
            for (kind, tokens) in [
                ("input", usage.input_tokens),
                ("output", usage.output_tokens),
            ] {
                let mut attributes = measured.clone();
                attributes.push(KeyValue::new(name::TOKEN_TYPE, kind));
                instruments.token_usage.record(tokens, &attributes);
            }
        }
        Err(error) => {
            let kind = model_error_type(error);
            span.fail(kind, &error.message);
            measured.push(KeyValue::new(name::ERROR_TYPE, kind));
        }
    }
    instruments
        .operation_duration
        .record(took.as_secs_f64(), &measured);
    span.end();
}

/// A model error's kind, as `error.type`.
fn model_error_type(error: &ModelError) -> &'static str {
    use super::model::ModelErrorKind as Kind;
    match error.kind {
        Kind::Status => "http_status",
        Kind::RateLimited => "rate_limited",
        Kind::Timeout => "timeout",
        Kind::Connect => "connect",
        Kind::Malformed => "malformed",
        Kind::Provider => "provider",
    }
}
