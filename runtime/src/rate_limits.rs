//! Rate limits per caller and per tool, on `governor`'s keyed GCRA limiters.

use std::collections::HashMap;
use std::num::NonZeroU32;
use std::time::Duration;

use governor::clock::{Clock, DefaultClock};
use governor::{DefaultKeyedRateLimiter, Quota, RateLimiter};
use serde_json::json;

use crate::error::{ErrorCode, ToolError};

/// How many calls may be made in a period, with a burst.
///
/// ```
/// use std::time::Duration;
/// use toolgate::rate_limits::RateLimit;
///
/// let ten_a_minute = RateLimit::new(10, Duration::from_secs(60));
/// # let _ = ten_a_minute;
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RateLimit {
    quota: Quota,
}

impl RateLimit {
    /// `calls` calls per `period`, all of which may come at once. A zero count or period is
    /// raised to the smallest valid value (one call; one nanosecond).
    pub fn new(calls: u32, period: Duration) -> Self {
        let calls = NonZeroU32::new(calls).unwrap_or(NonZeroU32::MIN);
        let period = period.max(Duration::from_nanos(1));
        let quota = Quota::with_period(period / calls.get())
            .unwrap_or_else(|| Quota::per_second(NonZeroU32::MAX))
            .allow_burst(calls);
        RateLimit { quota }
    }
}

/// The limiters of a registry.
#[derive(Default)]
pub(crate) struct RateLimits {
    per_caller: Option<DefaultKeyedRateLimiter<String>>,
    per_tool: HashMap<String, DefaultKeyedRateLimiter<()>>,
}

impl RateLimits {
    pub(crate) fn set_per_caller(&mut self, limit: RateLimit) {
        self.per_caller = Some(RateLimiter::keyed(limit.quota));
    }

    pub(crate) fn set_per_tool(&mut self, tool: String, limit: RateLimit) {
        self.per_tool.insert(tool, RateLimiter::keyed(limit.quota));
    }

    /// Takes one call from the caller's and the tool's budget, or says how long to wait.
    pub(crate) fn check(&self, caller: &str, tool: &str) -> Result<(), ToolError> {
        if let Some(limiter) = &self.per_caller
            && let Err(not_until) = limiter.check_key(&caller.to_owned())
        {
            return Err(limited(
                "you are making calls too fast",
                not_until.wait_time_from(DefaultClock::default().now()),
            ));
        }
        if let Some(limiter) = self.per_tool.get(tool)
            && let Err(not_until) = limiter.check_key(&())
        {
            return Err(limited(
                &format!("`{tool}` is being called too often"),
                not_until.wait_time_from(DefaultClock::default().now()),
            ));
        }
        Ok(())
    }
}

fn limited(what: &str, wait: Duration) -> ToolError {
    let millis = wait.as_millis().max(1) as u64;
    ToolError::new(
        ErrorCode::RateLimited,
        format!("{what}; try again in {:.1} s", millis as f64 / 1000.0),
    )
    .with_details(json!({"retry_after_ms": millis}))
}
