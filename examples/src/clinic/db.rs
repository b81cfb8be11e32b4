//! The clinic's SQLite database: created and seeded on first use.

use std::path::Path;
use std::sync::{Mutex, PoisonError};

use rusqlite::{Connection, OptionalExtension, params};
use serde::Serialize;

/// Seeded users: (id, role, bearer token). `temp` is a contractor.
pub const SEEDED_USERS: [(&str, &str, &str); 5] = [
    ("alice", "customer", "alice-token"),
    ("bob", "customer", "bob-token"),
    ("dr-lee", "staff", "staff-token"),
    ("temp", "staff", "temp-token"),
    ("root", "admin", "admin-token"),
];

const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS users (id TEXT PRIMARY KEY, role TEXT NOT NULL, token TEXT NOT NULL UNIQUE);
CREATE TABLE IF NOT EXISTS services (name TEXT PRIMARY KEY, price_eur INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS pets (id INTEGER PRIMARY KEY, owner TEXT NOT NULL REFERENCES users(id), name TEXT NOT NULL, species TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS records (id INTEGER PRIMARY KEY, pet INTEGER NOT NULL REFERENCES pets(id), note TEXT NOT NULL, author TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS appointments (id INTEGER PRIMARY KEY, pet INTEGER NOT NULL REFERENCES pets(id), day TEXT NOT NULL, reason TEXT NOT NULL, booked_by TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS refunds (id INTEGER PRIMARY KEY, pet INTEGER NOT NULL REFERENCES pets(id), amount_eur INTEGER NOT NULL, reason TEXT NOT NULL, made_by TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS contractors (user TEXT PRIMARY KEY REFERENCES users(id));
";

/// The clinic's data. One connection behind a lock: tools are sync and run on the blocking
/// pool, and SQLite serializes writes anyway.
pub struct Clinic {
    connection: Mutex<Connection>,
}

/// A pet with its medical records.
#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct PetRecord {
    pub id: i64,
    pub name: String,
    pub species: String,
    pub owner: String,
    pub notes: Vec<String>,
}

/// A user of the clinic's directory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct User {
    pub id: String,
    pub role: String,
    /// Contractors never see billing tools (a rule of `clinic.cedar`).
    pub contractor: bool,
}

/// An appointment.
#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct Appointment {
    pub id: i64,
    pub pet: String,
    pub day: String,
    pub reason: String,
}

impl Clinic {
    /// Opens the database file, creating and seeding it if it is new.
    pub fn open(path: &Path) -> rusqlite::Result<Self> {
        let connection = Connection::open(path)?;
        connection.pragma_update(None, "journal_mode", "WAL")?;
        connection.execute_batch(SCHEMA)?;
        let users: i64 =
            connection.query_row("SELECT COUNT(*) FROM users", [], |row| row.get(0))?;
        if users == 0 {
            seed(&connection)?;
        }
        Ok(Clinic {
            connection: Mutex::new(connection),
        })
    }

    fn with<T>(
        &self,
        work: impl FnOnce(&Connection) -> rusqlite::Result<T>,
    ) -> rusqlite::Result<T> {
        let connection = self
            .connection
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        work(&connection)
    }

    /// The user a bearer token belongs to.
    pub fn user_for_token(&self, token: &str) -> Option<User> {
        self.with(|db| {
            db.query_row(
                "SELECT id, role, user IS NOT NULL FROM users LEFT JOIN contractors ON user = id \
                 WHERE token = ?1",
                [token],
                |row| {
                    Ok(User {
                        id: row.get(0)?,
                        role: row.get(1)?,
                        contractor: row.get(2)?,
                    })
                },
            )
            .optional()
        })
        .ok()
        .flatten()
    }

    /// Records a refund for a pet's owner; whether the pet exists.
    pub fn add_refund(
        &self,
        pet: i64,
        amount_eur: i64,
        reason: &str,
        by: &str,
    ) -> rusqlite::Result<bool> {
        self.with(|db| {
            if db
                .query_row("SELECT 1 FROM pets WHERE id = ?1", [pet], |_| Ok(()))
                .optional()?
                .is_none()
            {
                return Ok(false);
            }
            db.execute(
                "INSERT INTO refunds (pet, amount_eur, reason, made_by) VALUES (?1, ?2, ?3, ?4)",
                params![pet, amount_eur, reason, by],
            )?;
            Ok(true)
        })
    }

    /// Deletes a pet with its records, appointments and refunds; whether it existed.
    pub fn delete_pet(&self, pet: i64) -> rusqlite::Result<bool> {
        self.with(|db| {
            for table in ["records", "appointments", "refunds"] {
                db.execute(&format!("DELETE FROM {table} WHERE pet = ?1"), [pet])?;
            }
            Ok(db.execute("DELETE FROM pets WHERE id = ?1", [pet])? > 0)
        })
    }

    pub fn services(&self) -> rusqlite::Result<Vec<(String, i64)>> {
        self.with(|db| {
            let mut statement = db.prepare("SELECT name, price_eur FROM services ORDER BY name")?;
            let rows = statement.query_map([], |row| Ok((row.get(0)?, row.get(1)?)))?;
            rows.collect()
        })
    }

    /// The pet's owner, if the pet exists.
    pub fn owner_of(&self, pet: i64) -> rusqlite::Result<Option<String>> {
        self.with(|db| {
            db.query_row("SELECT owner FROM pets WHERE id = ?1", [pet], |row| {
                row.get(0)
            })
            .optional()
        })
    }

    pub fn pet_record(&self, pet: i64) -> rusqlite::Result<Option<PetRecord>> {
        self.with(|db| {
            let Some((name, species, owner)) = db
                .query_row(
                    "SELECT name, species, owner FROM pets WHERE id = ?1",
                    [pet],
                    |row| {
                        Ok((
                            row.get::<_, String>(0)?,
                            row.get::<_, String>(1)?,
                            row.get::<_, String>(2)?,
                        ))
                    },
                )
                .optional()?
            else {
                return Ok(None);
            };
            let mut statement =
                db.prepare("SELECT note FROM records WHERE pet = ?1 ORDER BY id")?;
            let notes = statement
                .query_map([pet], |row| row.get(0))?
                .collect::<rusqlite::Result<Vec<String>>>()?;
            Ok(Some(PetRecord {
                id: pet,
                name,
                species,
                owner,
                notes,
            }))
        })
    }

    pub fn book(
        &self,
        pet: i64,
        day: &str,
        reason: &str,
        booked_by: &str,
    ) -> rusqlite::Result<i64> {
        self.with(|db| {
            db.execute(
                "INSERT INTO appointments (pet, day, reason, booked_by) VALUES (?1, ?2, ?3, ?4)",
                params![pet, day, reason, booked_by],
            )?;
            Ok(db.last_insert_rowid())
        })
    }

    pub fn appointments(&self, day: Option<&str>) -> rusqlite::Result<Vec<Appointment>> {
        self.with(|db| {
            let mut statement = db.prepare(
                "SELECT a.id, p.name, a.day, a.reason FROM appointments a JOIN pets p ON p.id = a.pet
                 WHERE ?1 IS NULL OR a.day = ?1 ORDER BY a.id",
            )?;
            let rows = statement.query_map([day], |row| {
                Ok(Appointment { id: row.get(0)?, pet: row.get(1)?, day: row.get(2)?, reason: row.get(3)? })
            })?;
            rows.collect()
        })
    }

    pub fn add_note(&self, pet: i64, note: &str, author: &str) -> rusqlite::Result<usize> {
        self.with(|db| {
            db.execute(
                "INSERT INTO records (pet, note, author) VALUES (?1, ?2, ?3)",
                params![pet, note, author],
            )
        })
    }

    /// Row counts of every table.
    pub fn counts(&self) -> rusqlite::Result<Vec<(String, i64)>> {
        self.with(|db| {
            [
                "users",
                "pets",
                "records",
                "appointments",
                "services",
                "refunds",
            ]
            .iter()
            .map(|table| {
                let count: i64 =
                    db.query_row(&format!("SELECT COUNT(*) FROM {table}"), [], |row| {
                        row.get(0)
                    })?;
                Ok(((*table).to_owned(), count))
            })
            .collect()
        })
    }
}

fn seed(db: &Connection) -> rusqlite::Result<()> {
    for (id, role, token) in SEEDED_USERS {
        db.execute(
            "INSERT INTO users (id, role, token) VALUES (?1, ?2, ?3)",
            params![id, role, token],
        )?;
    }
    for (name, price) in [
        ("checkup", 45),
        ("vaccination", 60),
        ("dental cleaning", 120),
        ("grooming", 35),
    ] {
        db.execute(
            "INSERT INTO services (name, price_eur) VALUES (?1, ?2)",
            params![name, price],
        )?;
    }
    for (id, owner, name, species) in [
        (1, "alice", "Rex", "dog"),
        (2, "alice", "Mia", "cat"),
        (3, "bob", "Bello", "dog"),
    ] {
        db.execute(
            "INSERT INTO pets (id, owner, name, species) VALUES (?1, ?2, ?3, ?4)",
            params![id, owner, name, species],
        )?;
    }
    db.execute("INSERT INTO records (pet, note, author) VALUES (1, 'Vaccinated against rabies.', 'dr-lee')", [])?;
    db.execute("INSERT INTO contractors (user) VALUES ('temp')", [])?;
    Ok(())
}
