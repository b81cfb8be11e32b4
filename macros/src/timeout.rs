//! `timeout = "5s"`: a whole number and a unit, read at compile time.

/// Longest accepted timeout: one day.
const MAX_MILLIS: u64 = 24 * 60 * 60 * 1000;

/// Milliseconds of a timeout such as `"250ms"`, `"5s"`, `"2m"`, `"1h"`, or why it is wrong.
pub(crate) fn parse_timeout(text: &str) -> Result<u64, String> {
    let help = "write a whole number and a unit (`ms`, `s`, `m` or `h`), e.g. \"5s\" or \"250ms\"";
    let digits_end = text
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(text.len());
    let (number, unit) = text.split_at(digits_end);
    if number.is_empty() {
        return Err(format!("invalid timeout \"{text}\": {help}"));
    }
    let per_unit = match unit {
        "ms" => 1,
        "s" => 1000,
        "m" => 60 * 1000,
        "h" => 60 * 60 * 1000,
        _ => {
            return Err(format!(
                "invalid timeout \"{text}\": unknown unit \"{unit}\"; {help}"
            ));
        }
    };
    let millis = number
        .parse::<u64>()
        .ok()
        .and_then(|n| n.checked_mul(per_unit))
        .filter(|millis| *millis <= MAX_MILLIS)
        .ok_or_else(|| {
            format!("timeout \"{text}\" is longer than the limit of one day (\"24h\")")
        })?;
    if millis == 0 {
        return Err(format!(
            "timeout \"{text}\" is zero: a tool needs time to run; {help}"
        ));
    }
    Ok(millis)
}

#[cfg(test)]
mod tests {
    use super::parse_timeout;

    #[test]
    fn units() {
        assert_eq!(parse_timeout("250ms"), Ok(250));
        assert_eq!(parse_timeout("5s"), Ok(5_000));
        assert_eq!(parse_timeout("2m"), Ok(120_000));
        assert_eq!(parse_timeout("1h"), Ok(3_600_000));
        assert_eq!(parse_timeout("24h"), Ok(86_400_000));
    }

    #[test]
    fn mistakes() {
        for wrong in [
            "",
            "s",
            "5",
            "5 s",
            "5sec",
            "-5s",
            "1.5s",
            "25h",
            "99999999999999999999s",
            "0s",
        ] {
            assert!(parse_timeout(wrong).is_err(), "{wrong:?} should be refused");
        }
    }
}
