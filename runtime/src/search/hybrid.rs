//! Lexical and semantic search together: BM25F finds what shares the query's words, an
//! embedding model what shares its meaning ("will it rain" → a weather tool). Each tool's
//! score is its BM25F score relative to the best one, plus `weight` × the cosine similarity
//! of its embedding to the query's.

use std::collections::HashMap;
use std::fmt;

use super::bm25f::{Bm25Index, Bm25Settings};
use super::fields::Field;
use super::vector_cache::VectorCache;
use super::{Scored, Scorer};
use crate::definition::ToolDefinition;

/// Turns texts into vectors whose cosine similarity says how alike they mean (e.g.
/// [`MiniLm`](super::MiniLm) with the `embeddings` feature, or a remote embeddings API).
pub trait Embedder: Send + Sync + 'static {
    /// One vector per text, all of the same length.
    fn embed(&self, texts: &[String]) -> Result<Vec<Vec<f32>>, EmbedError>;
}

/// An embedder failed; the search goes on with words alone.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EmbedError(pub String);

impl fmt::Display for EmbedError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "embedding failed: {}", self.0)
    }
}

impl std::error::Error for EmbedError {}

/// How many lexical results are blended (the rest count as 0 on the lexical side).
const LEXICAL_DEPTH: usize = 100;

/// A [`Scorer`] blending [`Bm25Index`] with an [`Embedder`]. On BFCL it reaches Recall@5
/// 0.912 and Recall@1 0.721 with all-MiniLM-L6-v2, against 0.894 and 0.680 for BM25F alone
/// (see `search_eval`), at the cost of embedding every tool once and every query.
pub struct Hybrid<E> {
    lexical: Bm25Index,
    embedder: E,
    weight: f32,
    /// By tool name: its level and normalized embedding (none if embedding it failed).
    vectors: HashMap<String, (usize, Option<Vec<f32>>)>,
    /// Where tools' vectors are kept across restarts, if anywhere.
    cache: Option<VectorCache>,
    meaning: Meaning,
}

/// How a cosine similarity reads as relevance (see [`Hybrid::relevance_of_meaning`]).
#[derive(Debug, Clone, Copy)]
struct Meaning {
    nothing: f32,
    all: f32,
}

impl Meaning {
    fn relevance(self, cosine: f32) -> f64 {
        if self.all <= self.nothing {
            return 0.0;
        }
        f64::from(((cosine - self.nothing) / (self.all - self.nothing)).clamp(0.0, 1.0))
    }
}

impl<E: Embedder> Hybrid<E> {
    /// BM25F with default settings plus `embedder`, blended with weight 1.
    pub fn new(embedder: E) -> Self {
        Hybrid {
            lexical: Bm25Index::new(Bm25Settings::default()),
            embedder,
            weight: 1.0,
            vectors: HashMap::new(),
            cache: None,
            meaning: Meaning {
                nothing: 0.45,
                all: 0.75,
            },
        }
    }

    /// How a tool's cosine similarity to the request reads as its relevance (what
    /// [`Registry::suggest`](crate::Registry::suggest) thresholds), when its words say less:
    /// `nothing` and below is 0, `all` and above is 1, linear between. The defaults (0.45
    /// and 0.75) were chosen for all-MiniLM-L6-v2 with `search_eval` (on tuned-on data only);
    /// another model needs its own. `all` at or below `nothing` leaves relevance to the words alone.
    pub fn relevance_of_meaning(mut self, nothing: f32, all: f32) -> Self {
        self.meaning = Meaning { nothing, all };
        self
    }

    /// How much the semantic side counts against the lexical one (default 1).
    pub fn weight(mut self, weight: f32) -> Self {
        self.weight = weight;
        self
    }

    /// Keeps the tools' vectors in `folder` under the model's name `model` (say which model
    /// and version: vectors of another model must not be read as this one's), so that a
    /// restart embeds only tools whose text changed. Queries are never kept.
    ///
    /// ```no_run
    /// # fn example(model: impl toolgate::search::Embedder) -> std::io::Result<()> {
    /// use toolgate::search::Hybrid;
    /// let scorer = Hybrid::new(model).keep_vectors_in(".toolgate/vectors", "all-MiniLM-L6-v2")?;
    /// # Ok(()) }
    /// ```
    pub fn keep_vectors_in(
        mut self,
        folder: impl AsRef<std::path::Path>,
        model: &str,
    ) -> std::io::Result<Self> {
        self.cache = Some(VectorCache::open(folder.as_ref(), model)?);
        Ok(self)
    }

    /// The tools' vectors: those kept already, and the rest embedded (and kept).
    fn vectors_of(&mut self, texts: Vec<String>) -> Vec<Option<Vec<f32>>> {
        let Some(cache) = &self.cache else {
            let count = texts.len();
            return match self.embed(texts) {
                Some(vectors) => vectors.into_iter().map(Some).collect(),
                None => vec![None; count],
            };
        };
        let mut found: Vec<Option<Vec<f32>>> =
            texts.iter().map(|t| cache.get(t).cloned()).collect();
        let missing: Vec<usize> = (0..texts.len()).filter(|&i| found[i].is_none()).collect();
        if missing.is_empty() {
            return found;
        }
        let asked: Vec<String> = missing.iter().map(|&i| texts[i].clone()).collect();
        if let Some(vectors) = self.embed(asked.clone()) {
            if let Some(cache) = &mut self.cache {
                cache.put(&asked, &vectors);
            }
            for (index, vector) in missing.into_iter().zip(vectors) {
                found[index] = Some(vector);
            }
        }
        found
    }

    /// The text embedded for a tool: its name in words, description and parameter names.
    fn document(tool: &ToolDefinition) -> String {
        let name = Field::Name.text(tool).replace(['_', '-', '.'], " ");
        let parameters = Field::ParameterNames.text(tool);
        format!("{name}: {} {parameters}", tool.description)
    }

    fn embed(&self, texts: Vec<String>) -> Option<Vec<Vec<f32>>> {
        match self.embedder.embed(&texts) {
            Ok(vectors) if vectors.len() == texts.len() => {
                Some(vectors.into_iter().map(normalized).collect())
            }
            Ok(vectors) => {
                tracing::warn!(
                    asked = texts.len(),
                    got = vectors.len(),
                    "the embedder returned the wrong number of vectors; searching by words alone"
                );
                None
            }
            Err(error) => {
                tracing::warn!(%error, "searching by words alone");
                None
            }
        }
    }
}

fn normalized(mut vector: Vec<f32>) -> Vec<f32> {
    let norm = vector.iter().map(|x| x * x).sum::<f32>().sqrt();
    if norm > 0.0 {
        vector.iter_mut().for_each(|x| *x /= norm);
    }
    vector
}

fn cosine(a: &[f32], b: &[f32]) -> f32 {
    if a.len() != b.len() {
        return 0.0;
    }
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

impl<E: Embedder> Scorer for Hybrid<E> {
    fn insert(&mut self, tool: &ToolDefinition, level: usize) {
        self.insert_many(&[(tool, level)]);
    }

    fn insert_many(&mut self, tools: &[(&ToolDefinition, usize)]) {
        self.lexical.insert_many(tools);
        let texts = tools.iter().map(|(tool, _)| Self::document(tool)).collect();
        let vectors = self.vectors_of(texts);
        for ((tool, level), vector) in tools.iter().zip(vectors) {
            self.vectors.insert(tool.name.clone(), (*level, vector));
        }
    }

    fn remove(&mut self, name: &str) {
        self.lexical.remove(name);
        self.vectors.remove(name);
    }

    fn search(&self, query: &str, level: usize, limit: usize) -> Vec<Scored> {
        let lexical = self.lexical.search(query, level, LEXICAL_DEPTH.max(limit));
        let query_vector = self.embed(vec![query.to_owned()]).and_then(|mut v| v.pop());
        let Some(query_vector) = query_vector else {
            return lexical.into_iter().take(limit).collect();
        };
        let best = lexical
            .first()
            .map_or(1.0, |hit| hit.score.max(f64::EPSILON));
        let by_name: HashMap<&str, &Scored> =
            lexical.iter().map(|hit| (hit.name.as_str(), hit)).collect();
        let mut blended: Vec<Scored> = self
            .vectors
            .iter()
            .filter(|(_, (tool_level, _))| *tool_level <= level)
            .filter_map(|(name, (_, vector))| {
                let semantic = vector.as_deref().map_or(0.0, |v| cosine(v, &query_vector));
                let lexical = by_name.get(name.as_str());
                if lexical.is_none() && semantic <= 0.0 {
                    return None;
                }
                let words = lexical.map_or(0.0, |hit| hit.score / best);
                Some(Scored {
                    name: name.clone(),
                    score: words + f64::from(self.weight * semantic),
                    relevance: lexical
                        .map_or(0.0, |hit| hit.relevance)
                        .max(self.meaning.relevance(semantic)),
                })
            })
            .collect();
        super::best_first(&mut blended, limit);
        blended
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};

    use serde_json::json;

    use super::*;

    /// Counts the texts it embeds; a text's vector is its length and its first byte.
    #[derive(Clone, Default)]
    struct Counting(Arc<AtomicUsize>);

    impl Embedder for Counting {
        fn embed(&self, texts: &[String]) -> Result<Vec<Vec<f32>>, EmbedError> {
            self.0.fetch_add(texts.len(), Ordering::SeqCst);
            let vector = |t: &String| vec![t.len() as f32, f32::from(t.as_bytes()[0])];
            Ok(texts.iter().map(vector).collect())
        }
    }

    fn tool(name: &str, description: &str) -> ToolDefinition {
        ToolDefinition::new(name, description, "public", json!({"type": "object"}))
    }

    #[test]
    fn kept_vectors_are_not_embedded_again_after_a_restart() {
        let folder = tempfile::tempdir().unwrap();
        let counted = Counting::default();
        let tools = [
            tool("get_weather", "Forecast."),
            tool("send_email", "Mail."),
        ];
        let start = |embedder: Counting| {
            let mut hybrid = Hybrid::new(embedder)
                .keep_vectors_in(folder.path(), "counting-1")
                .unwrap();
            hybrid.insert_many(&[(&tools[0], 0), (&tools[1], 0)]);
            hybrid
        };
        let first = start(counted.clone());
        assert_eq!(counted.0.load(Ordering::SeqCst), 2);
        let again = start(counted.clone());
        assert_eq!(
            counted.0.load(Ordering::SeqCst),
            2,
            "both read from the file"
        );
        assert_eq!(first.vectors, again.vectors);
        // A changed tool is embedded again; a search still embeds its query.
        let mut again = again;
        again.insert(&tool("get_weather", "Forecast for a city."), 0);
        assert_eq!(counted.0.load(Ordering::SeqCst), 3);
        again.search("weather", 0, 2);
        assert_eq!(counted.0.load(Ordering::SeqCst), 4);
    }

    /// Texts about the weather point one way, everything else another.
    struct Topics;

    impl Embedder for Topics {
        fn embed(&self, texts: &[String]) -> Result<Vec<Vec<f32>>, EmbedError> {
            let vector = |text: &String| match text.contains("weather") || text.contains("rain") {
                true => vec![1.0, 0.0],
                false => vec![0.0, 1.0],
            };
            Ok(texts.iter().map(vector).collect())
        }
    }

    #[test]
    fn a_request_that_means_what_a_tool_does_is_relevant_without_sharing_its_words() {
        let weather = tool("get_weather", "Forecast for a city.");
        let mut hybrid = Hybrid::new(Topics);
        hybrid.insert(&weather, 0);
        let found = hybrid.search("will it rain tomorrow", 0, 1);
        assert_eq!(found[0].name, "get_weather");
        assert!(found[0].relevance > 0.99, "{found:?}");
        assert!(
            hybrid
                .search("tell me a joke", 0, 1)
                .iter()
                .all(|hit| hit.relevance == 0.0)
        );
        // With meaning read as no relevance, the words alone decide (and share none).
        let mut words_only = Hybrid::new(Topics).relevance_of_meaning(1.0, 0.0);
        words_only.insert(&weather, 0);
        assert_eq!(
            words_only.search("will it rain tomorrow", 0, 1)[0].relevance,
            0.0
        );
    }
}
