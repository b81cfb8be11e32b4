//! The single-call ratio, timed in interleaved rounds: in each round the floor, rmcp's
//! router and toolgate's default registry each make the same number of calls, one row after
//! the other (in an order that turns from round to round), and the round's ratio is
//! toolgate's cost over the floor against the router's. A machine that speeds up or slows
//! down over a run moves every row of a round alike, which rows timed one after another
//! for seconds each (`call_overhead`) cannot promise; the median and spread of the rounds'
//! ratios are printed per tool.
//!
//! `cargo bench -p toolgate --bench call_rounds` (about 20 s)

mod common;

use common::{ADD, Rmcp, SEARCH, call_to, floor_add, floor_search, registries};
use std::hint::black_box;
use std::time::Instant;
use toolgate::prelude::*;

const ROUNDS: usize = 15;
/// Calls per row per round: long enough to time, short enough for many rounds.
const CALLS: u32 = 50_000;

/// The rows of a round.
#[derive(Clone, Copy)]
enum Row {
    Floor,
    Rmcp,
    Toolgate,
}

fn main() {
    // `cargo bench` passes `--bench` (and a filter if given); this program takes no options.
    let runtime = tokio::runtime::Runtime::new().expect("a runtime");
    let rmcp = runtime.block_on(Rmcp::connect());
    let (registry, _) = registries();
    let caller = Caller::new("bench", "public");
    let sides = Sides {
        rmcp: &rmcp,
        registry: &registry,
        caller: &caller,
    };
    println!("{ROUNDS} interleaved rounds of {CALLS} calls a row; ns a call, median of rounds");
    for (tool, arguments) in [("add", ADD), ("search", SEARCH)] {
        let mut ratios = Vec::with_capacity(ROUNDS);
        let mut times: [Vec<f64>; 3] = Default::default();
        for round in 0..ROUNDS {
            let mut order = [Row::Floor, Row::Rmcp, Row::Toolgate];
            order.rotate_left(round % 3);
            let mut ns = [0.0; 3];
            for row in order {
                let taken = runtime.block_on(sides.time(row, tool, arguments));
                ns[row as usize] = taken;
                times[row as usize].push(taken);
            }
            let [floor, rmcp, toolgate] = ns;
            ratios.push((toolgate - floor) / (rmcp - floor));
        }
        let [floor, rmcp, toolgate] = times.map(|mut row| median(&mut row));
        ratios.sort_by(f64::total_cmp);
        println!(
            "{tool:<7} floor {floor:7.1}  rmcp {rmcp:7.1}  toolgate {toolgate:7.1}  \
             toolgate's cost over the floor / rmcp's: median {:.3} (rounds {:.3}–{:.3})",
            median(&mut ratios),
            ratios[0],
            ratios[ratios.len() - 1],
        );
    }
}

/// What the rows call, built once.
struct Sides<'a> {
    rmcp: &'a Rmcp,
    registry: &'a Registry,
    caller: &'a Caller,
}

impl Sides<'_> {
    /// Nanoseconds a call of `row`, over [`CALLS`] calls. The row is chosen once, outside
    /// the loop, so that every row's loop costs the same.
    async fn time(&self, row: Row, tool: &'static str, arguments: &'static str) -> f64 {
        let started = Instant::now();
        match (row, tool) {
            (Row::Floor, "add") => {
                for _ in 0..CALLS {
                    black_box(floor_add(black_box(arguments)).await);
                }
            }
            (Row::Floor, "search") => {
                for _ in 0..CALLS {
                    black_box(floor_search(black_box(arguments)).await);
                }
            }
            (Row::Floor, other) => panic!("no hand-written floor for `{other}`"),
            (Row::Rmcp, _) => {
                for _ in 0..CALLS {
                    black_box(self.rmcp.call(tool, black_box(arguments)).await);
                }
            }
            (Row::Toolgate, _) => {
                for _ in 0..CALLS {
                    let call = call_to(tool, black_box(arguments));
                    let outcome = self.registry.call(self.caller, call).await;
                    black_box(outcome.result.unwrap());
                }
            }
        }
        started.elapsed().as_nanos() as f64 / f64::from(CALLS)
    }
}

/// The median of `values` (sorted in place).
fn median(values: &mut [f64]) -> f64 {
    values.sort_by(f64::total_cmp);
    let middle = values.len() / 2;
    if values.len().is_multiple_of(2) {
        (values[middle - 1] + values[middle]) / 2.0
    } else {
        values[middle]
    }
}
