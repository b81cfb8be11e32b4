//! Durations in files: a number of seconds, or a text such as `"500ms"`, `"10s"`, `"2m"`.
//!
//! ```
//! #[derive(serde::Deserialize)]
//! struct Settings {
//!     #[serde(deserialize_with = "toolgate_tools::duration::deserialize")]
//!     timeout: std::time::Duration,
//! }
//! let settings: Settings = serde_json::from_str(r#"{"timeout": "10s"}"#).unwrap();
//! assert_eq!(settings.timeout, std::time::Duration::from_secs(10));
//! ```

use std::time::Duration;

use serde::{Deserialize, Deserializer, de::Error};

#[derive(Deserialize)]
#[serde(untagged)]
enum Written {
    Seconds(f64),
    Text(String),
}

/// Reads a duration from a number of seconds or a text with units (`humantime`'s forms).
pub fn deserialize<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Duration, D::Error> {
    match Written::deserialize(deserializer)? {
        Written::Seconds(seconds) if seconds.is_finite() && seconds > 0.0 => {
            Ok(Duration::from_secs_f64(seconds))
        }
        Written::Seconds(seconds) => Err(D::Error::custom(format!(
            "a duration must be more than 0 seconds, not {seconds}"
        ))),
        Written::Text(text) => match humantime::parse_duration(text.trim()) {
            Ok(duration) if !duration.is_zero() => Ok(duration),
            Ok(_) => Err(D::Error::custom("a duration must be more than 0 seconds")),
            Err(error) => Err(D::Error::custom(format!(
                "`{text}` is not a duration ({error}); write e.g. 30, \"500ms\", \"10s\" or \"2m\""
            ))),
        },
    }
}

/// [`deserialize`] for an optional key (used with `#[serde(default)]`).
pub fn deserialize_optional<'de, D: Deserializer<'de>>(
    deserializer: D,
) -> Result<Option<Duration>, D::Error> {
    deserialize(deserializer).map(Some)
}
