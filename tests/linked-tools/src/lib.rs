//! Tools defined in a library crate. An application that never refers to this crate must
//! still link it (`use toolgate_linked_tools as _;`) for its tools to register.

use toolgate::prelude::*;

/// Convert degrees Celsius to Fahrenheit.
#[tool(permission = "public", group = "units", read_only)]
pub fn celsius_to_fahrenheit(celsius: f64) -> f64 {
    celsius * 9.0 / 5.0 + 32.0
}
