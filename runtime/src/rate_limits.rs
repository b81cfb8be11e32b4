//! Rate limits per caller and per tool: GCRA budgets, kept in memory (on `governor`) or in a
//! database shared by several instances.

use std::collections::HashMap;
use std::fmt;
use std::num::NonZeroU32;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use governor::clock::{Clock, DefaultClock};
use governor::{DefaultDirectRateLimiter, Quota, RateLimiter};
use serde_json::json;

use crate::error::{ErrorCode, ToolError};
use crate::store_error::{StoreFuture, ready, unavailable};
use crate::util::sync::lock;

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

impl RateLimit {
    /// The time one call's budget takes to come back (the period divided by the calls).
    pub fn interval(&self) -> Duration {
        self.quota.replenish_interval()
    }

    /// How many calls may come at once.
    pub fn burst(&self) -> u32 {
        self.quota.burst_size().get()
    }
}

/// Where rate-limit budgets are kept: in this process ([`MemoryRateLimitStore`], the
/// default), or in a database shared by every instance of an application (the SQLite and
/// PostgreSQL stores of [`crate::store`]), so that a budget holds across all of them.
///
/// Budgets follow GCRA (the generic cell rate algorithm): a budget of `burst` calls, one of
/// which comes back every `interval`. `take` must be atomic: of concurrent takes of one key,
/// only as many succeed as the budget holds.
pub trait RateLimitStore: Send + Sync + 'static {
    /// Takes one call from the budget `key` under `limit`: `Ok(())`, or how long until the
    /// next call would be allowed.
    fn take<'a>(&'a self, key: &'a str, limit: RateLimit) -> StoreFuture<'a, Result<(), Duration>>;
}

impl<T: RateLimitStore + ?Sized> RateLimitStore for Arc<T> {
    fn take<'a>(&'a self, key: &'a str, limit: RateLimit) -> StoreFuture<'a, Result<(), Duration>> {
        (**self).take(key, limit)
    }
}

/// Budgets in this process's memory, on `governor`'s limiters.
#[derive(Default)]
pub struct MemoryRateLimitStore {
    limiters: Mutex<HashMap<String, (RateLimit, Arc<DefaultDirectRateLimiter>)>>,
}

impl fmt::Debug for MemoryRateLimitStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("MemoryRateLimitStore")
            .finish_non_exhaustive()
    }
}

impl RateLimitStore for MemoryRateLimitStore {
    fn take<'a>(&'a self, key: &'a str, limit: RateLimit) -> StoreFuture<'a, Result<(), Duration>> {
        let limiter = {
            let mut limiters = lock(&self.limiters);
            match limiters.get(key) {
                Some((kept, limiter)) if *kept == limit => Arc::clone(limiter),
                _ => {
                    let limiter = Arc::new(RateLimiter::direct(limit.quota));
                    limiters.insert(key.to_owned(), (limit, Arc::clone(&limiter)));
                    limiter
                }
            }
        };
        let answer = limiter
            .check()
            .map_err(|not_until| not_until.wait_time_from(DefaultClock::default().now()));
        ready(Ok(answer))
    }
}

/// The limits of a registry, and where their budgets are kept.
pub(crate) struct RateLimits {
    per_caller: Option<RateLimit>,
    per_tool: HashMap<String, RateLimit>,
    pub(crate) store: Arc<dyn RateLimitStore>,
}

impl Default for RateLimits {
    fn default() -> Self {
        RateLimits {
            per_caller: None,
            per_tool: HashMap::new(),
            store: Arc::new(MemoryRateLimitStore::default()),
        }
    }
}

impl RateLimits {
    pub(crate) fn set_per_caller(&mut self, limit: RateLimit) {
        self.per_caller = Some(limit);
    }

    /// The tool names limits were set for.
    pub(crate) fn limited_tools(&self) -> impl Iterator<Item = &str> {
        self.per_tool.keys().map(String::as_str)
    }

    pub(crate) fn set_per_tool(&mut self, tool: String, limit: RateLimit) {
        self.per_tool.insert(tool, limit);
    }

    /// Whether no limit is set.
    pub(crate) fn is_empty(&self) -> bool {
        self.per_caller.is_none() && self.per_tool.is_empty()
    }

    /// Takes one call from the caller's and the tool's budget (`tool` is the tool's own
    /// name, however the call spelled it), or says how long to wait. A
    /// store that cannot answer refuses the call: a limit that cannot be checked is not
    /// lifted.
    pub(crate) async fn check(&self, caller: &str, tool: &str) -> Result<(), ToolError> {
        if let Some(limit) = self.per_caller {
            let key = format!("caller:{caller}");
            if let Err(wait) = self.store.take(&key, limit).await.map_err(unavailable)? {
                return Err(limited("you are making calls too fast", wait));
            }
        }
        // Set by the tool's own name or by the spelling providers use: one budget either way.
        let per_tool = self.per_tool.get(tool).or_else(|| {
            let provider_name = crate::definition::provider_tool_name(tool);
            self.per_tool.get(provider_name.as_ref())
        });
        if let Some(limit) = per_tool {
            let key = format!("tool:{tool}");
            if let Err(wait) = self.store.take(&key, *limit).await.map_err(unavailable)? {
                return Err(limited(
                    &format!("`{tool}` is being called too often"),
                    wait,
                ));
            }
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
