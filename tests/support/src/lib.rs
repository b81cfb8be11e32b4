//! Real servers for toolgate's tests, started by the tests themselves.

mod postgres;

pub use postgres::TempPostgres;
