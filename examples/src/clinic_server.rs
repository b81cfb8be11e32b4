//! The veterinary clinic backend over HTTP.
//!
//! `cargo run -p toolgate-examples --bin clinic` (set `PORT` and `CLINIC_DB` to change the
//! port, default 3000, and the database file, default `clinic.db`; `CLINIC_MODEL_URL`,
//! `CLINIC_MODEL` and `CLINIC_MODEL_KEY` choose the OpenAI-compatible model of `POST /chat`).

use std::net::SocketAddr;
use std::path::PathBuf;

use toolgate_examples::clinic::{SEEDED_USERS, open_app};

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| "info,toolgate::audit=info".into());
    tracing_subscriber::fmt().with_env_filter(filter).init();
    let database = PathBuf::from(std::env::var("CLINIC_DB").unwrap_or_else(|_| "clinic.db".into()));
    let port: u16 = std::env::var("PORT")
        .ok()
        .and_then(|port| port.parse().ok())
        .unwrap_or(3000);
    let existed = database.exists();
    let app = open_app(&database)?;
    let address = SocketAddr::from(([127, 0, 0, 1], port));
    let listener = tokio::net::TcpListener::bind(address).await?;
    let base = format!("http://{}", listener.local_addr()?);
    let database = std::path::absolute(&database)?;
    let state = if existed {
        "opened"
    } else {
        "created and seeded"
    };
    println!("clinic backend on {base}");
    println!(
        "database {} ({state}; set CLINIC_DB to use another file)",
        database.display()
    );
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
  curl -H 'Authorization: Bearer admin-token' {base}/approvals
  curl -H 'Authorization: Bearer admin-token' -H 'Content-Type: application/json' \
       -d '{{"ticket": "<ticket from the answer above>"}}' {base}/approvals/approve
  curl -N -H 'Authorization: Bearer admin-token' {base}/events      # live events (SSE)
  curl -H 'Authorization: Bearer alice-token' -H 'Content-Type: application/json' \
       -d '{{"message": "When are you open on Monday?"}}' {base}/chat   # needs a model server
"#
    );
    axum::serve(listener, app).await?;
    Ok(())
}
