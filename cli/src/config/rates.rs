//! Rates written as `"60/min"`.

use std::time::Duration;

use toolgate::rate_limits::RateLimit;

/// `"N/unit"` with unit `s`, `min`, `h` or `day` (also `second`, `minute`, `hour`).
pub(crate) fn parse_rate(text: &str) -> Result<RateLimit, String> {
    let wrong = || {
        format!(
            "`{text}` is not a rate; write calls per period, e.g. \"60/min\", \"5/s\", \"1000/day\""
        )
    };
    let (calls, unit) = text.split_once('/').ok_or_else(wrong)?;
    let calls: u32 = calls.trim().parse().map_err(|_| wrong())?;
    let seconds = match unit.trim() {
        "s" | "sec" | "second" => 1,
        "min" | "minute" => 60,
        "h" | "hour" => 3600,
        "day" | "d" => 86_400,
        _ => return Err(wrong()),
    };
    if calls == 0 {
        return Err(format!("`{text}`: a rate allows at least one call"));
    }
    Ok(RateLimit::new(calls, Duration::from_secs(seconds)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rates_read_and_mistakes_are_explained() {
        let rate = parse_rate("60/min").unwrap();
        assert_eq!(rate.burst(), 60);
        assert_eq!(rate.interval(), Duration::from_secs(1));
        assert!(
            parse_rate("60 per minute")
                .unwrap_err()
                .contains("\"60/min\"")
        );
        assert!(parse_rate("0/s").unwrap_err().contains("at least one"));
    }
}
