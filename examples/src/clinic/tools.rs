//! The clinic's tools. Roles are enforced twice: the registry shows a tool only to its
//! permission and above, and the customer tools check that the pet is the caller's own.

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use toolgate::prelude::*;

use super::db::{Appointment, Clinic, PetRecord};

/// The group of every clinic tool (the registry keeps just these).
pub const GROUP: &str = "clinic";

/// A day of the week.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Weekday {
    Monday,
    Tuesday,
    Wednesday,
    Thursday,
    Friday,
    Saturday,
    Sunday,
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

/// Opening hours of one day, `None` when closed.
pub fn hours_for(day: Weekday) -> Option<&'static str> {
    match day {
        Weekday::Saturday => Some("09:00-13:00"),
        Weekday::Sunday => None,
        _ => Some("08:00-18:00"),
    }
}

fn database(error: rusqlite::Error) -> ToolError {
    tracing::error!(%error, "clinic database error");
    ToolError::execution("the clinic's records could not be reached; try again later")
}

/// Staff and admins may see every pet; customers only their own.
fn may_see(caller: &Caller, owner: &str) -> bool {
    matches!(caller.role(), "staff" | "admin") || caller.id() == owner
}

/// A pet the caller may use, or `not_found` (the same answer whether the pet is someone
/// else's or does not exist).
fn own_pet(clinic: &Clinic, caller: &Caller, pet: i64) -> Result<(), ToolError> {
    match clinic.owner_of(pet).map_err(database)? {
        Some(owner) if may_see(caller, &owner) => Ok(()),
        _ => Err(ToolError::new(
            "not_found",
            format!("you have no pet with id {pet}"),
        )),
    }
}

/// Get the clinic's opening hours for one day, or for the whole week.
// `async` although it awaits nothing: it never blocks, so it runs in the calling task;
// sync tools (the database ones below) run on the blocking pool.
#[tool(permission = "public", group = "clinic", read_only, idempotent)]
async fn get_clinic_hours(
    /// Day of the week, e.g. "monday". Omit for the whole week.
    day: Option<Weekday>,
) -> Value {
    let days: Vec<Weekday> = day.map_or_else(|| WEEK.to_vec(), |day| vec![day]);
    // The array is built as JSON directly: `json!` of a `Vec<Value>` would copy every day.
    Value::Array(
        days.into_iter()
            .map(|day| json!({"day": day, "hours": hours_for(day)}))
            .collect(),
    )
}

/// List the clinic's services with their prices in euros.
#[tool(permission = "public", group = "clinic", read_only, idempotent)]
fn list_services(#[ctx] clinic: State<Clinic>) -> Result<Value, ToolError> {
    let services = clinic.services().map_err(database)?;
    Ok(json!(
        services
            .into_iter()
            .map(|(name, price)| json!({"service": name, "price_eur": price}))
            .collect::<Vec<_>>()
    ))
}

/// Get a pet's details and medical records. Customers can only see their own pets.
#[tool(permission = "customer", group = "clinic", read_only, ui = "pet_card")]
fn get_pet_records(
    /// The pet's id.
    pet_id: i64,
    #[ctx] caller: Caller,
    #[ctx] clinic: State<Clinic>,
) -> Result<PetRecord, ToolError> {
    own_pet(&clinic, &caller, pet_id)?;
    clinic
        .pet_record(pet_id)
        .map_err(database)?
        .ok_or_else(|| ToolError::new("not_found", format!("you have no pet with id {pet_id}")))
}

/// Book an appointment for one of your pets.
#[tool(permission = "customer", group = "clinic", risk = "medium")]
fn book_appointment(
    /// The pet's id.
    pet_id: i64,
    /// Day of the visit.
    day: Weekday,
    /// Why the pet should be seen.
    #[schemars(length(min = 3, max = 200))]
    reason: String,
    #[ctx] caller: Caller,
    #[ctx] clinic: State<Clinic>,
) -> Result<Value, ToolError> {
    own_pet(&clinic, &caller, pet_id)?;
    if hours_for(day).is_none() {
        return Err(ToolError::new(
            "closed",
            format!("the clinic is closed on {day:?}; pick another day"),
        ));
    }
    let day = serde_json::to_value(day)
        .unwrap_or_default()
        .as_str()
        .unwrap_or_default()
        .to_owned();
    let id = clinic
        .book(pet_id, &day, &reason, caller.id())
        .map_err(database)?;
    Ok(json!({"appointment_id": id, "pet_id": pet_id, "day": day}))
}

/// List appointments, for one day or all.
#[tool(permission = "staff", group = "clinic", read_only)]
fn list_appointments(
    /// Day, e.g. "monday". Omit for all.
    day: Option<Weekday>,
    #[ctx] clinic: State<Clinic>,
) -> Result<Vec<Appointment>, ToolError> {
    let day = day
        .and_then(|day| serde_json::to_value(day).ok())
        .and_then(|value| value.as_str().map(str::to_owned));
    clinic.appointments(day.as_deref()).map_err(database)
}

/// Add a note to a pet's medical record. Changes the record: needs an admin's approval.
#[tool(
    permission = "staff",
    group = "clinic",
    risk = "high",
    title = "Update a medical record"
)]
fn update_medical_record(
    /// The pet's id.
    pet_id: i64,
    /// The note to add.
    #[schemars(length(min = 1, max = 2000))]
    note: String,
    #[ctx] caller: Caller,
    #[ctx] clinic: State<Clinic>,
) -> Result<Value, ToolError> {
    own_pet(&clinic, &caller, pet_id)?;
    clinic
        .add_note(pet_id, &note, caller.id())
        .map_err(database)?;
    Ok(json!({"pet_id": pet_id, "added": note}))
}

/// Refund a payment to a pet's owner, in whole euros. Over 100 euros, an admin approves
/// first (a rule of `clinic.cedar`).
#[tool(permission = "staff", group = "clinic", risk = "medium", tags = ["billing"])]
fn refund_payment(
    /// The pet the payment was for.
    pet_id: i64,
    /// How much, in whole euros.
    #[schemars(range(min = 1, max = 10000))]
    amount_eur: i64,
    /// Why.
    #[schemars(length(min = 1, max = 500))]
    reason: String,
    #[ctx] caller: Caller,
    #[ctx] clinic: State<Clinic>,
) -> Result<Value, ToolError> {
    match clinic
        .add_refund(pet_id, amount_eur, &reason, caller.id())
        .map_err(database)?
    {
        true => Ok(json!({"pet_id": pet_id, "refunded_eur": amount_eur})),
        false => Err(ToolError::new(
            "not_found",
            format!("there is no pet with id {pet_id}"),
        )),
    }
}

/// Delete a pet and everything the clinic keeps about it. Cannot be undone.
#[tool(permission = "admin", group = "clinic", destructive, risk = "critical")]
fn delete_pet(
    /// The pet.
    pet_id: i64,
    #[ctx] clinic: State<Clinic>,
) -> Result<Value, ToolError> {
    match clinic.delete_pet(pet_id).map_err(database)? {
        true => Ok(json!({"deleted": pet_id})),
        false => Err(ToolError::new(
            "not_found",
            format!("there is no pet with id {pet_id}"),
        )),
    }
}

/// Server statistics: rows per table.
#[tool(permission = "admin", group = "clinic", read_only)]
fn system_stats(#[ctx] clinic: State<Clinic>) -> Result<Value, ToolError> {
    let counts = clinic.counts().map_err(database)?;
    Ok(Value::Object(
        counts
            .into_iter()
            .map(|(table, rows)| (table, json!(rows)))
            .collect(),
    ))
}
