//! One `tools/call` over MCP: the caller's tool run by the registry, with what the client
//! brings (progress token, log level, answers to the tool's questions, the person's
//! approval) and what it can be asked.

use rmcp::RoleServer;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, ErrorData,
};
use rmcp::service::RequestContext;
use serde_json::{Map, Value, json};

use crate::approval::{ApprovalAnswer, AskCaller, CONFIRMATION_KEY, Confirmation, answer_of};
use crate::call::{ToolCall, ToolOutcome};
use crate::caller::Caller;
use crate::definition::ToolDefinition;
use crate::formats::{mcp, result_text};
use crate::input::{ClientInput, InputKind, InputRequired};
use crate::registry::CallOptions;

use super::input::{self, Approval, ClientApprover, MAX_ROUNDS, ThisCall};
use super::progress::{self, Listening};
use super::server::McpServer;

/// Who calls what, and what the client said it can do.
struct Call<'a> {
    caller: &'a Caller,
    definition: &'a ToolDefinition,
    arguments: &'a Value,
    context: &'a RequestContext<RoleServer>,
    /// Protocol 2026-07-28 or later: questions go back in the result.
    stateless: bool,
    can: Vec<InputKind>,
}

impl McpServer {
    /// Runs a `tools/call` for `caller`, whose tool `definition` is.
    pub(super) async fn call(
        &self,
        caller: &Caller,
        definition: &ToolDefinition,
        request: CallToolRequestParams,
        context: &RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let arguments = request.arguments.map(Value::Object).unwrap_or(Value::Null);
        let call = Call {
            caller,
            definition,
            arguments: &arguments,
            context,
            stateless: input::stateless(context),
            can: input::capabilities(context),
        };
        let this = ThisCall {
            signer: &self.registry().governance().signer,
            caller,
            tool: &definition.name,
            arguments: &arguments,
        };
        let (mut answers, ticket) = match &request.request_state {
            Some(state) => {
                let responses: Map<String, Value> = request
                    .input_responses
                    .unwrap_or_default()
                    .into_iter()
                    .collect();
                input::answers(&this, state, responses, call.can.clone())?
            }
            None => (
                ClientInput {
                    can: call.can.clone(),
                    ..ClientInput::default()
                },
                None,
            ),
        };
        let ask_caller = self.ask_caller(&call, &mut answers, ticket);
        for _ in 0..MAX_ROUNDS {
            // The answers are given up: a next round brings its own.
            let given = std::mem::take(&mut answers);
            let outcome = self.run_once(&call, given, ask_caller.clone()).await;
            let Some(asked) = outcome.error().and_then(InputRequired::from_error) else {
                return complete(&outcome, definition);
            };
            if call.stateless {
                return Ok(input::input_required_result(&this, asked, &call.can)?.into());
            }
            // A client of the `initialize` handshake is asked by the server itself, only
            // what it said it can answer.
            input::check_capabilities(&asked, &call.can)?;
            // Boxed: asking the client is rare, and its future large.
            let responses = Box::pin(input::ask_now(&context.peer, &asked))
                .await
                .map_err(|message| ErrorData::internal_error(message, None))?;
            answers = ClientInput {
                responses,
                state: asked.state,
                can: call.can.clone(),
            };
        }
        Err(ErrorData::internal_error(
            format!("the tool asked the client more than {MAX_ROUNDS} rounds of questions"),
            None,
        ))
    }

    /// How a call that needs approval asks the person at this client: by a form in the
    /// result (2026-07-28), by an elicitation request (`initialize` clients that take
    /// them), or not at all (the call waits with a ticket for an approver).
    fn ask_caller(
        &self,
        call: &Call<'_>,
        answers: &mut ClientInput,
        ticket: Option<Approval>,
    ) -> Option<AskCaller> {
        if !call.can.contains(&InputKind::Elicitation) {
            return None;
        }
        if !call.stateless {
            let approver = ClientApprover::new(call.context.peer.clone());
            let name = format!("{} (through the MCP client)", call.caller.id());
            return Some(AskCaller::Now {
                name,
                approver: std::sync::Arc::new(approver),
            });
        }
        let confirmation = match ticket {
            None => None,
            // The person's answer to the approval form (none yet: the form again).
            Some(Approval::Asked(ticket)) => {
                let answer = answers
                    .responses
                    .remove(CONFIRMATION_KEY)
                    .map(|response| answer_of(&response));
                Some(Confirmation { ticket, answer })
            }
            // Approved in a round before; the tool asked questions since.
            Some(Approval::Carried(ticket)) => Some(Confirmation {
                ticket,
                answer: Some(ApprovalAnswer::Approve),
            }),
        };
        Some(AskCaller::Later(confirmation))
    }

    /// One round: the registry runs the call with what the client brings.
    async fn run_once(
        &self,
        call: &Call<'_>,
        answers: ClientInput,
        ask_caller: Option<AskCaller>,
    ) -> ToolOutcome {
        let context = call.context;
        let listening = Listening {
            progress: context.meta.get_progress_token(),
            log: self
                .log_level(context)
                .map(|level| (level, call.definition.name.clone())),
        };
        let forwarded = progress::forward(context.peer.clone(), listening);
        let options = CallOptions {
            cancel: Some(context.ct.clone()),
            progress: forwarded.progress,
            log: forwarded.log,
            input: Some(answers),
            ask_caller,
            front: crate::FrontEnd::Mcp,
            ..CallOptions::default()
        };
        let id = context.id.to_string();
        let tool_call = ToolCall::new(id, call.definition.name.clone(), call.arguments.clone());
        // Small: a call with options keeps its path boxed (`Registry::call_with`).
        let running = self.registry().call_with(call.caller, tool_call, options);
        match forwarded.forwarding {
            Some(forwarding) => forwarding.beside(running).await,
            None => running.await,
        }
    }
}

/// The `CallToolResult` of an outcome (errors as `isError` results the model can read): what
/// [`mcp::call_tool_result`] says, made directly (content blocks through their JSON form).
fn complete(
    outcome: &ToolOutcome,
    definition: &ToolDefinition,
) -> Result<CallToolResponse, ErrorData> {
    if outcome.is_content {
        let mut result = mcp::call_tool_result(outcome, Some(definition));
        result["resultType"] = json!("complete");
        let result: CallToolResult = serde_json::from_value(result)
            .map_err(|error| ErrorData::internal_error(format!("tool result: {error}"), None))?;
        return Ok(result.into());
    }
    let text = vec![ContentBlock::text(result_text(&outcome.result))];
    let result = match &outcome.result {
        Ok(value) => {
            let mut result = CallToolResult::success(text);
            result.structured_content = mcp::structured_content(definition, value);
            result
        }
        Err(_) => CallToolResult::error(text),
    };
    Ok(result.into())
}
