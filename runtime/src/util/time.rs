//! Wall-clock time as the library records it.

use std::sync::OnceLock;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// A moment of the clock that times calls: the processor's time-stamp counter where it is
/// reliable, else the system's monotonic clock. A call reads it twice, and the system clock
/// costs several times as much per read (`quanta` falls back to it where the counter is not
/// to be trusted).
pub(crate) type Moment = quanta::Instant;

/// Now, on the clock that times calls. Read from a clock of this crate's own: `Moment::now`
/// first looks for a clock a test may have put in its thread's place (`quanta::with_clock`),
/// which costs every read a thread-local lookup and a borrow.
#[inline]
pub(crate) fn now() -> Moment {
    static CLOCK: OnceLock<quanta::Clock> = OnceLock::new();
    CLOCK.get_or_init(quanta::Clock::new).now()
}

/// Calibrates the clock that times calls (its first read takes a fraction of a millisecond),
/// so that no call pays for it.
pub(crate) fn calibrate() {
    now();
}

/// A duration in milliseconds, as outcomes and records give it: its nanoseconds over a
/// million, the `f64` nearest the exact value (`as_secs_f64() * 1000.0` rounds twice, and
/// gives 100 ns as `0.00009999999999999999`).
pub(crate) fn millis(duration: Duration) -> f64 {
    // Every call's record converts one: in 64 bits it is an instruction; in 128 (what
    // `as_nanos` gives) a library call, which the compiler made for every duration when
    // it was only written in the branch for durations past 64 bits (both round to the
    // same `f64`, so it kept the one that covers both). Durations that fit never make
    // the 128-bit value at all.
    let nanos = duration
        .as_secs()
        .checked_mul(1_000_000_000)
        .and_then(|nanos| nanos.checked_add(u64::from(duration.subsec_nanos())));
    match nanos {
        Some(nanos) => nanos as f64 / 1e6,
        None => beyond_64_bits(duration),
    }
}

/// [`millis`] of a duration whose nanoseconds do not fit 64 bits (585 years and more).
#[cold]
#[inline(never)]
fn beyond_64_bits(duration: Duration) -> f64 {
    duration.as_nanos() as f64 / 1e6
}

/// Milliseconds since the Unix epoch (0 if the clock is before it).
pub(crate) fn now_millis() -> u64 {
    since_epoch().as_millis() as u64
}

/// Seconds since the Unix epoch (0 if the clock is before it).
pub(crate) fn now_secs() -> u64 {
    since_epoch().as_secs()
}

fn since_epoch() -> Duration {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default()
}

/// How often [`stamp`] reads the wall clock again.
const WALL_CLOCK_REREAD_MS: u64 = 1000;

/// A moment as a record holds it: its place among all records, and the wall clock's time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Stamp {
    /// Nanoseconds of the clock that times calls (monotonic), counted from a fixed moment of
    /// this process: the same order on every thread.
    pub(crate) order: u64,
    /// The wall clock's milliseconds since the Unix epoch.
    pub(crate) millis: u64,
}

/// `instant` (a moment that has passed: a call's end) as a record holds it.
///
/// A call already reads the clock that times calls ([`now`]) for its duration; a read of the
/// wall clock for its record would cost several times as much. So the wall clock is read at
/// most once a second, and carried forward by the call clock in between: a step of the wall
/// clock (NTP, a manual change) shows in records within a second.
pub(crate) fn stamp(instant: Moment) -> Stamp {
    let clock = WallClock::get();
    // In 64-bit nanoseconds (585 years of a process) rather than `Duration`'s wider ones.
    let order =
        u64::try_from(instant.saturating_duration_since(clock.base).as_nanos()).unwrap_or(u64::MAX);
    let monotonic = order / 1_000_000;
    if monotonic.saturating_sub(clock.read_at.load(Ordering::Relaxed)) >= WALL_CLOCK_REREAD_MS {
        clock.reread();
    }
    Stamp {
        order,
        millis: monotonic.wrapping_add(clock.offset.load(Ordering::Relaxed)),
    }
}

/// The process's wall clock in terms of its monotonic clock.
struct WallClock {
    /// The monotonic clock's zero.
    base: Moment,
    /// Wall milliseconds minus monotonic milliseconds, at the last reading (wrapping).
    offset: AtomicU64,
    /// Monotonic milliseconds of the last reading.
    read_at: AtomicU64,
}

impl WallClock {
    fn get() -> &'static WallClock {
        static CLOCK: OnceLock<WallClock> = OnceLock::new();
        CLOCK.get_or_init(|| {
            let clock = WallClock {
                base: now(),
                offset: AtomicU64::new(0),
                read_at: AtomicU64::new(0),
            };
            clock.reread();
            clock
        })
    }

    /// Reads the wall clock. Threads that do so at once store alike values; either is right.
    fn reread(&self) {
        let monotonic = now().saturating_duration_since(self.base).as_millis() as u64;
        let offset = now_millis().wrapping_sub(monotonic);
        self.offset.store(offset, Ordering::Relaxed);
        self.read_at.store(monotonic, Ordering::Relaxed);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_moment_reads_as_the_wall_clock_then() {
        let before = now_millis();
        let moment = now();
        let after = now_millis();
        let read = stamp(moment).millis;
        // Monotonic and wall milliseconds are truncated separately: a millisecond either way.
        assert!(
            (before.saturating_sub(1)..=after + 1).contains(&read),
            "{before} <= {read} <= {after}"
        );
    }

    #[test]
    fn milliseconds_are_the_nanoseconds_as_the_nearest_f64_over_a_million() {
        let edges = [
            0,
            1,
            (1 << 53) - 1,
            1 << 53,
            (1 << 53) + 1,
            u64::MAX as u128 - 1,
            u64::MAX as u128,
            u64::MAX as u128 + 1,
            Duration::MAX.as_nanos(),
        ];
        for nanos in edges {
            let duration = Duration::new(
                (nanos / 1_000_000_000) as u64,
                (nanos % 1_000_000_000) as u32,
            );
            assert_eq!(millis(duration), nanos as f64 / 1e6, "{nanos} ns");
        }
    }

    #[test]
    fn later_moments_stand_later() {
        let first = now();
        let second = first + Duration::from_nanos(1);
        assert!(stamp(second).order > stamp(first).order);
    }

    #[test]
    fn a_moment_before_the_clock_was_first_read_reads_as_its_start() {
        let early = now();
        let read = stamp(early).millis;
        assert!(read <= now_millis() + 1);
        assert!(read + 60_000 > now_millis());
    }
}
