//! What the tools are used for, from the audit trail: per tool and per role, how many
//! calls, how they ended (by error code), how long they took (p50, p95), how often a person
//! was asked and what they decided (or let expire), when each was last used, and which
//! tools nobody used.

use std::collections::{BTreeMap, HashMap, VecDeque};

use serde::Serialize;

use super::AuditRecord;

/// The figures of a period, as a viewer may see them (only the tools it may see).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct UsageReport {
    /// The period's start, milliseconds since the Unix epoch (inclusive).
    pub since_ms: u64,
    /// Its end (exclusive).
    pub until_ms: u64,
    /// Calls in the period, of tools the viewer may see.
    pub calls: u64,
    /// Per tool, the most called first.
    pub by_tool: Vec<UsageFigures>,
    /// Per role of the callers, the most calling first.
    pub by_role: Vec<UsageFigures>,
    /// Tools the viewer may see that nobody called in the period.
    pub unused: Vec<String>,
}

/// The figures of one tool or one role.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct UsageFigures {
    /// The tool's or the role's name.
    pub name: String,
    /// Calls that ended (a call waiting for approval counts once it is decided).
    pub calls: u64,
    /// Of them, those that succeeded.
    pub ok: u64,
    /// The others, by error code.
    pub errors: BTreeMap<String, u64>,
    /// The median time a call took, in milliseconds.
    pub p50_ms: Option<f64>,
    /// The 95th percentile.
    pub p95_ms: Option<f64>,
    /// What people were asked, and what came of it.
    pub approvals: Approvals,
    /// When it was last called.
    pub last_used_ms: Option<u64>,
    #[serde(skip)]
    durations: Vec<f64>,
}

/// Approvals asked, and what came of them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Approvals {
    /// A person was asked (in process, or a ticket was issued).
    pub asked: u64,
    /// Approved (once, always, or with edited arguments).
    pub granted: u64,
    /// Refused.
    pub refused: u64,
    /// Tickets never decided within their lifetime.
    pub expired: u64,
    /// Tickets still waiting at the period's end.
    pub waiting: u64,
}

/// Decisions that are a person's yes.
const GRANTED: [&str; 3] = ["approved", "approved_always", "approved_edited"];

/// Adds up records, one at a time (a period of a million records is never held at once).
pub(crate) struct Tally<'a> {
    since_ms: u64,
    until_ms: u64,
    ticket_lifetime_ms: u64,
    visible: &'a (dyn Fn(&str) -> bool + Sync),
    tools: HashMap<String, UsageFigures>,
    roles: HashMap<String, UsageFigures>,
    /// Tickets issued and not yet decided, by caller, tool and call id: when each was.
    waiting: HashMap<(String, String, String), VecDeque<(u64, String)>>,
    /// What `visible` answered, by tool name.
    seen: HashMap<String, bool>,
}

impl<'a> Tally<'a> {
    pub(crate) fn new(
        (since_ms, until_ms): (u64, u64),
        ticket_lifetime_ms: u64,
        visible: &'a (dyn Fn(&str) -> bool + Sync),
    ) -> Self {
        Tally {
            since_ms,
            until_ms,
            ticket_lifetime_ms,
            visible,
            tools: HashMap::new(),
            roles: HashMap::new(),
            waiting: HashMap::new(),
            seen: HashMap::new(),
        }
    }

    /// Counts one record, if it is of the period, of a tool the viewer may see, and a
    /// call's end (not the record written before a tool runs).
    pub(crate) fn add(&mut self, record: &AuditRecord) {
        let in_period = (self.since_ms..self.until_ms).contains(&record.time_ms);
        if !in_period || record.outcome == "started" || !self.may_see(&record.tool) {
            return;
        }
        let key = || {
            let (caller, tool) = (record.caller.clone(), record.tool.clone());
            (caller, tool, record.call_id.clone())
        };
        let decision = record.decision.as_str();
        if decision == "pending_approval" {
            self.waiting
                .entry(key())
                .or_default()
                .push_back((record.time_ms, record.role.clone()));
            self.each(record, |figures| figures.approvals.asked += 1);
            return;
        }
        if record.outcome == "approval_required" {
            // A call waiting with one of its steps (a workflow's): counted when it ends
            // (its `resumed` record), as a call waiting for its own approval is.
            return;
        }
        let decided = GRANTED.contains(&decision) || decision == "approval_denied";
        if decided {
            let had_ticket = self
                .waiting
                .get_mut(&key())
                .and_then(VecDeque::pop_front)
                .is_some();
            let granted = GRANTED.contains(&decision);
            self.each(record, |figures| {
                figures.approvals.asked += u64::from(!had_ticket);
                figures.approvals.granted += u64::from(granted);
                figures.approvals.refused += u64::from(!granted);
            });
        }
        self.each(record, |figures| {
            figures.calls += 1;
            if record.outcome == "ok" {
                figures.ok += 1;
            } else {
                *figures.errors.entry(record.outcome.clone()).or_default() += 1;
            }
            figures.durations.push(record.duration_ms);
            figures.last_used_ms = figures.last_used_ms.max(Some(record.time_ms));
        });
    }

    /// Whether the viewer may see `tool`: asked of the registry once per tool name, not
    /// once per record.
    fn may_see(&mut self, tool: &str) -> bool {
        if let Some(seen) = self.seen.get(tool) {
            return *seen;
        }
        let seen = (self.visible)(tool);
        self.seen.insert(tool.to_owned(), seen);
        seen
    }

    /// Applies `change` to the record's tool's figures and its role's.
    fn each(&mut self, record: &AuditRecord, change: impl Fn(&mut UsageFigures)) {
        change(named(&mut self.tools, &record.tool));
        change(named(&mut self.roles, &record.role));
    }

    /// The report; `all_tools` are the tools the viewer may see (to name the unused ones).
    pub(crate) fn report(mut self, all_tools: &[String]) -> UsageReport {
        for ((_, tool, _), tickets) in std::mem::take(&mut self.waiting) {
            for (time_ms, role) in tickets {
                let expired = time_ms.saturating_add(self.ticket_lifetime_ms) < self.until_ms;
                for figures in [named(&mut self.tools, &tool), named(&mut self.roles, &role)] {
                    match expired {
                        true => figures.approvals.expired += 1,
                        false => figures.approvals.waiting += 1,
                    }
                }
            }
        }
        let unused = all_tools
            .iter()
            .filter(|tool| {
                self.tools
                    .get(*tool)
                    .is_none_or(|figures| figures.calls == 0)
            })
            .cloned()
            .collect();
        let by_tool = finished(self.tools);
        UsageReport {
            since_ms: self.since_ms,
            until_ms: self.until_ms,
            calls: by_tool.iter().map(|figures| figures.calls).sum(),
            by_tool,
            by_role: finished(self.roles),
            unused,
        }
    }
}

fn named<'m>(map: &'m mut HashMap<String, UsageFigures>, name: &str) -> &'m mut UsageFigures {
    map.entry(name.to_owned()).or_insert_with(|| UsageFigures {
        name: name.to_owned(),
        ..UsageFigures::default()
    })
}

/// Percentiles worked out, the most used first (then by name).
fn finished(map: HashMap<String, UsageFigures>) -> Vec<UsageFigures> {
    let mut all: Vec<UsageFigures> = map
        .into_values()
        .map(|mut figures| {
            let mut durations = std::mem::take(&mut figures.durations);
            durations.sort_by(f64::total_cmp);
            figures.p50_ms = nearest_rank(&durations, 0.50);
            figures.p95_ms = nearest_rank(&durations, 0.95);
            figures
        })
        .collect();
    all.sort_by(|a, b| b.calls.cmp(&a.calls).then_with(|| a.name.cmp(&b.name)));
    all
}

/// The nearest-rank percentile of sorted values.
fn nearest_rank(sorted: &[f64], share: f64) -> Option<f64> {
    if sorted.is_empty() {
        return None;
    }
    let rank = (share * sorted.len() as f64).ceil() as usize;
    Some(sorted[rank.clamp(1, sorted.len()) - 1])
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `(time, caller, tool, call id, decision, outcome, ms)`: ann is staff, bob public.
    type Row = (
        u64,
        &'static str,
        &'static str,
        &'static str,
        &'static str,
        &'static str,
        f64,
    );

    fn record((time_ms, caller, tool, id, decision, outcome, ms): Row) -> AuditRecord {
        let role = if caller == "ann" { "staff" } else { "public" };
        AuditRecord {
            time_ms,
            caller: caller.into(),
            issuer: None,
            role: role.into(),
            tool: tool.into(),
            call_id: id.into(),
            arguments: serde_json::json!({}),
            decision: decision.into(),
            approver: None,
            outcome: outcome.into(),
            duration_ms: ms,
        }
    }

    /// Out of the period, a record before a run, a tool the viewer may not see; ten reads by
    /// ann (1..10 ms) and a failed one by bob; `wipe`: a ticket granted, a ticket refused,
    /// one asked in process and granted, one ticket expired, one still waiting.
    const ROWS: [Row; 21] = [
        (5, "ann", "read", "0", "allow", "ok", 1.0),
        (10, "ann", "read", "1", "allow", "started", 0.0),
        (10, "ann", "secret", "s", "allow", "ok", 1.0),
        (11, "ann", "read", "1", "allow", "ok", 1.0),
        (12, "ann", "read", "2", "allow", "ok", 2.0),
        (13, "ann", "read", "3", "allow", "ok", 3.0),
        (14, "ann", "read", "4", "allow", "ok", 4.0),
        (15, "ann", "read", "5", "allow", "ok", 5.0),
        (16, "ann", "read", "6", "allow", "ok", 6.0),
        (17, "ann", "read", "7", "allow", "ok", 7.0),
        (18, "ann", "read", "8", "allow", "ok", 8.0),
        (19, "ann", "read", "9", "allow", "ok", 9.0),
        (20, "ann", "read", "10", "allow", "ok", 10.0),
        (
            21,
            "bob",
            "read",
            "b1",
            "not_reached",
            "invalid_arguments",
            0.5,
        ),
        (
            30,
            "bob",
            "wipe",
            "w1",
            "pending_approval",
            "approval_required",
            1.0,
        ),
        (40, "bob", "wipe", "w1", "approved", "ok", 20.0),
        (
            31,
            "bob",
            "wipe",
            "w2",
            "pending_approval",
            "approval_required",
            1.0,
        ),
        (
            41,
            "bob",
            "wipe",
            "w2",
            "approval_denied",
            "approval_denied",
            0.1,
        ),
        (50, "ann", "wipe", "w3", "approved_always", "ok", 30.0),
        (
            32,
            "bob",
            "wipe",
            "w4",
            "pending_approval",
            "approval_required",
            1.0,
        ),
        (
            95,
            "bob",
            "wipe",
            "w5",
            "pending_approval",
            "approval_required",
            1.0,
        ),
    ];

    #[test]
    fn figures_match_what_is_counted_by_hand() {
        let records = ROWS.map(record);
        let visible = |tool: &str| tool != "secret";
        let mut tally = Tally::new((10, 100), 50, &visible);
        for record in &records {
            tally.add(record);
        }
        let tools = ["read".to_owned(), "wipe".to_owned(), "idle".to_owned()];
        let report = tally.report(&tools);
        assert_eq!(report.calls, 11 + 3);
        assert_eq!(report.unused, ["idle"]);
        let read = &report.by_tool[0];
        assert_eq!((read.name.as_str(), read.calls, read.ok), ("read", 11, 10));
        assert_eq!(
            read.errors,
            BTreeMap::from([("invalid_arguments".to_owned(), 1)])
        );
        // Nearest rank of 11 values 0.5, 1..10: the 6th is 5, the 11th is 10.
        assert_eq!((read.p50_ms, read.p95_ms), (Some(5.0), Some(10.0)));
        assert_eq!(read.last_used_ms, Some(21));
        let wipe = &report.by_tool[1];
        assert_eq!((wipe.calls, wipe.ok), (3, 2));
        let expected = Approvals {
            asked: 5,
            granted: 2,
            refused: 1,
            expired: 1,
            waiting: 1,
        };
        assert_eq!(wipe.approvals, expected);
        let staff = report
            .by_role
            .iter()
            .find(|figures| figures.name == "staff")
            .unwrap();
        assert_eq!(
            (staff.calls, staff.approvals.asked, staff.approvals.granted),
            (11, 1, 1)
        );
        let public = report
            .by_role
            .iter()
            .find(|figures| figures.name == "public")
            .unwrap();
        assert_eq!(
            public.approvals,
            Approvals {
                asked: 4,
                granted: 1,
                refused: 1,
                expired: 1,
                waiting: 1
            }
        );
    }

    #[test]
    fn a_workflow_waiting_with_a_step_counts_once_when_it_ends() {
        let rows: [Row; 3] = [
            (20, "bob", "news", "n1", "allow", "approval_required", 2.0),
            (30, "bob", "news", "n1", "resumed", "ok", 5.0),
            (40, "bob", "news", "n2", "allow", "approval_required", 2.0),
        ];
        let records = rows.map(record);
        let visible = |_: &str| true;
        let mut tally = Tally::new((10, 100), 50, &visible);
        for record in &records {
            tally.add(record);
        }
        let report = tally.report(&["news".to_owned()]);
        let news = &report.by_tool[0];
        assert_eq!((news.calls, news.ok), (1, 1));
        assert_eq!(news.p50_ms, Some(5.0));
        assert!(news.errors.is_empty());
    }
}
