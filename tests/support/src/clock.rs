//! Clocks for tests of rules that read the time of day.

/// Minutes east of UTC that put a clock in the middle of `hour` (0–23) now: the middle, so
/// the minute a test takes does not carry the clock into the next hour.
pub fn utc_offset_for_hour(hour: i64) -> i32 {
    let seconds = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .expect("the clock is after 1970")
        .as_secs() as i64;
    let minutes_now = seconds % 86_400 / 60;
    (((hour * 60 + 30 - minutes_now) % 1440 + 1440) % 1440) as i32
}
