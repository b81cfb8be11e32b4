//! Example programs of toolgate; the clinic backend is a library too, for its tests and
//! benchmark.

pub mod clinic;
pub mod terminal;
