//! Quickstart: a handful of tools across roles, what two callers see, and a mixed batch.
//!
//! Run with `cargo run -p toolgate-examples --bin quickstart`.

use std::time::Duration;

use serde::{Deserialize, Serialize};
use serde_json::json;
use toolgate::prelude::*;

/// A day of the week.
#[derive(Debug, Clone, Copy, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
enum Weekday {
    Monday,
    Tuesday,
    Wednesday,
    Thursday,
    Friday,
    Saturday,
    Sunday,
}

/// Opening hours of one day.
#[derive(Debug, Serialize, schemars::JsonSchema)]
struct Hours {
    day: Weekday,
    /// Opening time, or `None` when closed.
    opens: Option<String>,
    closes: Option<String>,
}

/// The clinic's data, shared with tools as application state.
struct Clinic {
    name: String,
}

const WEEK: [Weekday; 7] = [
    Weekday::Monday,
    Weekday::Tuesday,
    Weekday::Wednesday,
    Weekday::Thursday,
    Weekday::Friday,
    Weekday::Saturday,
    Weekday::Sunday,
];

fn hours_of(day: Weekday) -> Hours {
    let open = !matches!(day, Weekday::Sunday);
    Hours {
        day,
        opens: open.then(|| "08:00".to_owned()),
        closes: open.then(|| {
            if matches!(day, Weekday::Saturday) {
                "12:00"
            } else {
                "18:00"
            }
            .to_owned()
        }),
    }
}

/// Get the clinic's opening hours for one day, or for the whole week.
#[tool(permission = "public", group = "clinic", read_only, idempotent)]
async fn get_clinic_hours(
    /// Day of the week, e.g. "monday". Omit for all days.
    day: Option<Weekday>,
) -> Result<Vec<Hours>, ToolError> {
    Ok(match day {
        Some(day) => vec![hours_of(day)],
        None => WEEK.into_iter().map(hours_of).collect(),
    })
}

/// Book an appointment for a pet.
#[tool(permission = "customer", group = "clinic", risk = "medium")]
async fn book_appointment(
    /// The pet's name.
    #[schemars(length(min = 1, max = 40))]
    pet: String,
    /// Day of the visit.
    day: Weekday,
    #[ctx] caller: Caller,
    #[ctx] clinic: State<Clinic>,
) -> String {
    format!(
        "{} booked {pet} in at {} on {day:?}",
        caller.id(),
        clinic.name
    )
}

/// Count the clinic's appointments of the week (a sync tool).
#[tool(permission = "staff", group = "admin", read_only)]
fn count_appointments() -> u32 {
    12
}

/// Rebuild the search index. It has a bug.
#[tool(permission = "staff", group = "admin")]
fn rebuild_index() -> Result<(), String> {
    panic!("index file is corrupt")
}

/// Export every record; slow on purpose, to show a timeout.
#[tool(permission = "staff", group = "admin", read_only, timeout = "200ms")]
async fn export_records() -> String {
    tokio::time::sleep(Duration::from_secs(30)).await;
    "done".to_owned()
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let filter = toolgate::logging::keeping_secrets("warn");
    tracing_subscriber::fmt().with_env_filter(filter).init();
    let registry = Registry::builder()
        .roles(["public", "customer", "staff", "admin"])
        .state(Clinic {
            name: "Happy Paws".to_owned(),
        })
        .build()?;

    for role in ["public", "staff"] {
        let caller = Caller::new(format!("a-{role}"), role);
        let names: Vec<_> = registry
            .visible_to(&caller)
            .iter()
            .map(|t| t.name.clone())
            .collect();
        println!(
            "a {role} caller sees {} tools: {}",
            names.len(),
            names.join(", ")
        );
    }
    let schema = registry
        .definition(&Caller::new("x", "public"), "get_clinic_hours")
        .map(|t| t.input_schema.clone());
    println!(
        "\nget_clinic_hours input schema:\n{}\n",
        serde_json::to_string_pretty(&schema)?
    );

    let staff = Caller::new("dr-lee", "staff");
    let calls = vec![
        ToolCall::new("call_1", "get_clinic_hours", r#"{"day": "saturday"}"#),
        ToolCall::new(
            "call_2",
            "book_appointment",
            json!({"pet": "Rex", "day": "funday", "extra": 1}),
        ),
        ToolCall::new(
            "call_3",
            "book_appointment",
            json!({"pet": "Rex", "day": "friday"}),
        ),
        ToolCall::new("call_4", "delete_everything", json!({})),
        ToolCall::new("call_5", "rebuild_index", json!({})),
        ToolCall::new("call_6", "export_records", json!({})),
        ToolCall::new("call_7", "count_appointments", "{\"day\": "),
    ];
    println!("a staff caller runs a batch of {} calls:", calls.len());
    for outcome in registry.run_batch(&staff, calls).await {
        let shown = match &outcome.result {
            Ok(value) => format!("ok: {value}"),
            Err(error) => format!(
                "error {}: {}",
                error.code,
                error.message.replace('\n', "\n      ")
            ),
        };
        println!(
            "  {} {} ({:.1?}) -> {shown}",
            outcome.call_id, outcome.tool, outcome.duration
        );
    }
    Ok(())
}
