//! The veterinary clinic backend over HTTP.
//!
//! `cargo run -p toolgate-examples --bin clinic -- --help` for the options (each also from
//! the environment: `PORT`, `CLINIC_DB`, `CLINIC_STATE`, `CLINIC_APPROVAL_KEY`, ...);
//! `CLINIC_MODEL_URL`, `CLINIC_MODEL` and `CLINIC_MODEL_KEY` choose the OpenAI-compatible
//! model of `POST /chat`.

use std::net::SocketAddr;
use std::path::PathBuf;

use clap::Parser;
use toolgate::store::Stores;
use toolgate_examples::clinic::{SEEDED_USERS, SharedState, model_from_env, open_app_sharing};

/// The veterinary clinic backend: role-filtered tools over HTTP, approvals, an assistant.
#[derive(Parser)]
struct Options {
    /// The port on 127.0.0.1 (0: any free port).
    #[arg(long, env = "PORT", default_value_t = 3000)]
    port: u16,
    /// The clinic's own data (pets, appointments, users), a SQLite file.
    #[arg(long, env = "CLINIC_DB", default_value = "clinic.db")]
    clinic_db: PathBuf,
    /// Where toolgate keeps approvals, grants, rate limits, audit and chat runs: `memory`,
    /// `sqlite:PATH` (survives restarts) or `postgres://user@host/db` (shared by instances).
    #[arg(long, env = "CLINIC_STATE", default_value = "memory")]
    database: String,
    /// The key approval tickets are signed with; the same on every instance (required with
    /// a database).
    #[arg(long, env = "CLINIC_APPROVAL_KEY", hide_env_values = true)]
    approval_key: Option<String>,
    /// Tool calls each caller may make per minute, across all instances (0: no limit).
    #[arg(long, env = "CLINIC_CALLS_PER_MINUTE", default_value_t = 0)]
    calls_per_minute: u32,
    /// The clinic's clock, in minutes from UTC (e.g. 60 for UTC+1), for the opening hours
    /// of `clinic.cedar`'s rules.
    #[arg(
        long,
        env = "CLINIC_UTC_OFFSET_MINUTES",
        default_value_t = 0,
        allow_hyphen_values = true
    )]
    utc_offset_minutes: i32,
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
    // `RUST_LOG` chooses; dependencies that would log raw requests are held back.
    let asked = std::env::var("RUST_LOG").unwrap_or_else(|_| "info".into());
    let filter = toolgate::logging::keeping_secrets(&asked);
    tracing_subscriber::fmt()
        .with_env_filter(tracing_subscriber::EnvFilter::new(filter))
        .init();
    let options = Options::parse();
    let database = options.clinic_db;
    let existed = database.exists();
    let shared = SharedState {
        stores: match options.database.as_str() {
            "memory" => None,
            address => Some(Stores::open(address).await?),
        },
        approval_key: options.approval_key.map(String::into_bytes),
        calls_per_minute: (options.calls_per_minute > 0).then_some(options.calls_per_minute),
        utc_offset_minutes: options.utc_offset_minutes,
        telemetry: telemetry_from_env()?,
    };
    let app = open_app_sharing(&database, model_from_env(), shared)?;
    let address = SocketAddr::from(([127, 0, 0, 1], options.port));
    let listener = tokio::net::TcpListener::bind(address).await?;
    let base = format!("http://{}", listener.local_addr()?);
    let database = std::path::absolute(&database)?;
    let state = if existed {
        "opened"
    } else {
        "created and seeded"
    };
    println!("clinic backend on {base}");
    println!("approval console on {base}/console (sign in with a token below)");
    println!(
        "database {} ({state}; set CLINIC_DB to use another file)",
        database.display()
    );
    println!("toolgate's state: {}", describe_state(&options.database));
    println!("every call is logged (target toolgate::audit); set RUST_LOG to change what is shown");
    println!("\nusers (bearer tokens):");
    for (id, role, token) in SEEDED_USERS {
        println!("  {id:<8} {role:<9} {token}");
    }
    println!(
        r#"
try:
  curl {base}/tools                                        # public: hours and services
  curl -H 'Authorization: Bearer alice-token' '{base}/tools?format=openai'
  curl -H 'Authorization: Bearer alice-token' -H 'Content-Type: application/json' \
       -d '{{"name": "get_pet_records", "arguments": {{"pet_id": 1}}}}' {base}/tools/call
  curl -H 'Authorization: Bearer staff-token' -H 'Content-Type: application/json' \
       -d '{{"name": "update_medical_record", "arguments": {{"pet_id": 1, "note": "Healthy."}}}}' {base}/tools/call
  curl -H 'Authorization: Bearer staff-token' -H 'Content-Type: application/json' \
       -d '{{"name": "refund_payment", "arguments": {{"pet_id": 3, "amount_eur": 150, "reason": "Cancelled."}}}}' {base}/tools/call
                                            # over 100 euros: an admin approves (examples/src/clinic/clinic.cedar)
  curl -H 'Authorization: Bearer temp-token' {base}/tools   # a contractor sees no billing tools
  curl -H 'Authorization: Bearer admin-token' {base}/approvals
  curl -H 'Authorization: Bearer admin-token' -H 'Content-Type: application/json' \
       -d '{{"ticket": "<ticket_id from the answer above>"}}' {base}/approvals/approve
  curl -N -H 'Authorization: Bearer admin-token' {base}/events      # live events (SSE)
  curl -H 'Authorization: Bearer alice-token' -H 'Content-Type: application/json' \
       -d '{{"message": "When are you open on Monday?"}}' {base}/chat   # needs a model server
"#
    );
    axum::serve(listener, app).await?;
    Ok(())
}

/// Telemetry over OTLP when `OTEL_EXPORTER_OTLP_ENDPOINT` says where (and the other
/// standard variables how); none otherwise.
fn telemetry_from_env()
-> Result<Option<toolgate::telemetry::Telemetry>, Box<dyn std::error::Error + Send + Sync>> {
    if std::env::var_os("OTEL_EXPORTER_OTLP_ENDPOINT").is_none() {
        return Ok(None);
    }
    let mut settings = toolgate::telemetry::OtlpSettings::default();
    settings.service_name = Some("clinic".to_owned());
    let telemetry = toolgate::telemetry::Telemetry::otlp(&settings)?;
    println!("telemetry: spans and metrics go to $OTEL_EXPORTER_OTLP_ENDPOINT");
    Ok(Some(telemetry))
}

/// Where the state is, without a password.
fn describe_state(address: &str) -> String {
    match address.split_once('@') {
        Some((scheme_and_user, rest)) if address.starts_with("postgres") => {
            let user = scheme_and_user
                .split(':')
                .take(2)
                .collect::<Vec<_>>()
                .join(":");
            format!("{user}@{rest}")
        }
        _ => address.to_owned(),
    }
}
