//! Example programs of toolgate; the clinic backend is a library too, for its tests and
//! benchmark.

pub mod bfcl;
pub mod clinic;
pub mod livemcpbench;
pub mod notebook;
pub mod plain_bm25;
pub mod pypi;
pub mod terminal;
