//! The built-in scorer: BM25F over a tool's fields, kept current one tool at a time.
//!
//! Statistics (how many tools, how often a term occurs, field lengths) are kept per
//! permission level and summed up to the caller's level at query time, so a caller's scores
//! depend only on tools it may see: a hidden tool changes no visible score.

use std::collections::HashMap;

use super::fields::Field;
use super::query::Query;
use super::{Scored, Scorer};
use crate::definition::ToolDefinition;

const FIELDS: usize = Field::ALL.len();

/// How [`Bm25Index`] weighs what it finds. The defaults were chosen with `search_eval` (see
/// the README); change them only with a measurement.
#[derive(Debug, Clone, PartialEq)]
pub struct Bm25Settings {
    /// Term-frequency saturation.
    pub k1: f32,
    /// Per field (in [`Field::ALL`] order): weight, and length normalization `b` (0 = none).
    pub fields: [(f32, f32); FIELDS],
    /// Exponent of the share of query terms a tool matches (0 = ignore the share).
    pub coverage: f32,
    /// Added per pair of adjacent query terms found adjacent in a tool's name, title or
    /// description.
    pub phrase_bonus: f32,
    /// Weight of the words added for values a query mentions (a date adds "date").
    pub shape_weight: f32,
}

impl Default for Bm25Settings {
    fn default() -> Self {
        Bm25Settings {
            k1: 1.0,
            fields: [
                (3.0, 0.0), // name
                (3.0, 0.0), // title
                (1.0, 0.5), // description
                (0.5, 0.0), // parameter names
                (0.5, 0.0), // parameter text
                (1.0, 0.0), // group
                (1.5, 0.0), // tags
            ],
            coverage: 0.3,
            phrase_bonus: 1.0,
            shape_weight: 0.5,
        }
    }
}

struct Posting {
    doc: u32,
    counts: [u16; FIELDS],
}

struct Doc {
    name: String,
    level: usize,
    lengths: [u32; FIELDS],
    /// Distinct term ids, to undo the postings on removal.
    terms: Vec<u32>,
    /// Adjacent term pairs of the name, title and description, sorted.
    pairs: Vec<u64>,
}

/// Per permission level: how many tools, and their summed field lengths.
#[derive(Default, Clone)]
struct LevelStats {
    docs: u32,
    lengths: [u64; FIELDS],
}

/// BM25F over the fields of [`Field`], with stemming, coverage and phrase bonuses: the
/// registry's default [`Scorer`].
#[derive(Default)]
pub struct Bm25Index {
    settings: Bm25Settings,
    term_ids: HashMap<String, u32>,
    postings: Vec<Vec<Posting>>,
    /// Per term, per level: how many tools hold it.
    frequencies: Vec<Vec<u32>>,
    docs: Vec<Option<Doc>>,
    free: Vec<u32>,
    by_name: HashMap<String, u32>,
    levels: Vec<LevelStats>,
}

impl Bm25Index {
    /// An empty index with `settings`.
    pub fn new(settings: Bm25Settings) -> Self {
        Bm25Index {
            settings,
            ..Bm25Index::default()
        }
    }

    fn term_id(&mut self, term: &str) -> u32 {
        if let Some(&id) = self.term_ids.get(term) {
            return id;
        }
        let id = self.postings.len() as u32;
        self.term_ids.insert(term.to_owned(), id);
        self.postings.push(Vec::new());
        self.frequencies.push(Vec::new());
        id
    }

    fn level_stats(&mut self, level: usize) -> &mut LevelStats {
        if self.levels.len() <= level {
            self.levels.resize(level + 1, LevelStats::default());
        }
        &mut self.levels[level]
    }
}

impl Scorer for Bm25Index {
    fn insert(&mut self, tool: &ToolDefinition, level: usize) {
        self.remove(&tool.name);
        let mut counts: HashMap<u32, [u16; FIELDS]> = HashMap::new();
        let mut lengths = [0u32; FIELDS];
        let mut pairs = Vec::new();
        for (index, field) in Field::ALL.into_iter().enumerate() {
            let terms = super::text::terms(&field.text(tool));
            lengths[index] = terms.len() as u32;
            let ids: Vec<u32> = terms.iter().map(|term| self.term_id(term)).collect();
            for &id in &ids {
                let count = &mut counts.entry(id).or_default()[index];
                *count = count.saturating_add(1);
            }
            if matches!(field, Field::Name | Field::Title | Field::Description) {
                pairs.extend(ids.windows(2).map(|pair| pair_key(pair[0], pair[1])));
            }
        }
        pairs.sort_unstable();
        pairs.dedup();
        let doc = match self.free.pop() {
            Some(doc) => doc,
            None => {
                self.docs.push(None);
                (self.docs.len() - 1) as u32
            }
        };
        let stats = self.level_stats(level);
        stats.docs += 1;
        for (sum, length) in stats.lengths.iter_mut().zip(lengths) {
            *sum += u64::from(length);
        }
        let mut terms: Vec<u32> = counts.keys().copied().collect();
        terms.sort_unstable();
        for &term in &terms {
            let counts = counts[&term];
            self.postings[term as usize].push(Posting { doc, counts });
            let frequency = &mut self.frequencies[term as usize];
            if frequency.len() <= level {
                frequency.resize(level + 1, 0);
            }
            frequency[level] += 1;
        }
        self.by_name.insert(tool.name.clone(), doc);
        self.docs[doc as usize] = Some(Doc {
            name: tool.name.clone(),
            level,
            lengths,
            terms,
            pairs,
        });
    }

    fn remove(&mut self, name: &str) {
        let Some(doc) = self.by_name.remove(name) else {
            return;
        };
        let Some(removed) = self.docs[doc as usize].take() else {
            return;
        };
        for &term in &removed.terms {
            self.postings[term as usize].retain(|posting| posting.doc != doc);
            self.frequencies[term as usize][removed.level] -= 1;
        }
        let stats = &mut self.levels[removed.level];
        stats.docs -= 1;
        for (sum, length) in stats.lengths.iter_mut().zip(removed.lengths) {
            *sum -= u64::from(length);
        }
        self.free.push(doc);
    }

    fn search(&self, query: &str, level: usize, limit: usize) -> Vec<Scored> {
        let query = Query::parse(query, self.settings.shape_weight);
        let stats = self.stats_up_to(level);
        if stats.docs == 0 || query.is_empty() || limit == 0 {
            return Vec::new();
        }
        let mut accumulated: HashMap<u32, (f32, u32)> = HashMap::new();
        let mut information = 0.0;
        for (term, weight, counts_for_coverage) in query.weighted_terms() {
            let idf_unknown = idf(stats.docs, 0);
            let Some(&id) = self.term_ids.get(term) else {
                continue;
            };
            let frequency = sum_to(&self.frequencies[id as usize], level);
            let idf = if frequency == 0 {
                idf_unknown
            } else {
                idf(stats.docs, frequency)
            };
            information += weight * idf;
            for posting in &self.postings[id as usize] {
                let Some(doc) = self.visible_doc(posting.doc, level) else {
                    continue;
                };
                let tf = self.weighted_frequency(posting, doc, &stats);
                let entry = accumulated.entry(posting.doc).or_default();
                entry.0 += weight * idf * tf / (self.settings.k1 + tf);
                entry.1 += u32::from(counts_for_coverage);
            }
        }
        let pairs = query.pairs(|term| self.term_ids.get(term).copied());
        let mut scored: Vec<Scored> = accumulated
            .into_iter()
            .filter_map(|(doc, (sum, matched))| {
                let doc = self.docs[doc as usize].as_ref()?;
                Some(self.finish(doc, sum, matched, &query, &pairs, information))
            })
            .collect();
        super::rank(&mut scored, limit);
        scored
    }
}

impl Bm25Index {
    fn visible_doc(&self, doc: u32, level: usize) -> Option<&Doc> {
        self.docs[doc as usize]
            .as_ref()
            .filter(|doc| doc.level <= level)
    }

    fn stats_up_to(&self, level: usize) -> LevelStats {
        let mut total = LevelStats::default();
        for stats in self.levels.iter().take(level + 1) {
            total.docs += stats.docs;
            for (sum, length) in total.lengths.iter_mut().zip(stats.lengths) {
                *sum += length;
            }
        }
        total
    }

    /// BM25F's pooled term frequency: each field's count, weighted and length-normalized.
    fn weighted_frequency(&self, posting: &Posting, doc: &Doc, stats: &LevelStats) -> f32 {
        let mut tf = 0.0;
        for index in 0..FIELDS {
            let count = posting.counts[index];
            if count == 0 {
                continue;
            }
            let (weight, b) = self.settings.fields[index];
            let average = (stats.lengths[index] as f32 / stats.docs as f32).max(1.0);
            let norm = 1.0 - b + b * doc.lengths[index] as f32 / average;
            tf += weight * f32::from(count) / norm;
        }
        tf
    }

    fn finish(
        &self,
        doc: &Doc,
        sum: f32,
        matched: u32,
        query: &Query,
        pairs: &[u64],
        information: f32,
    ) -> Scored {
        let share = matched as f32 / query.distinct_terms().max(1) as f32;
        let covered = sum * share.min(1.0).powf(self.settings.coverage);
        let phrases = pairs
            .iter()
            .filter(|pair| doc.pairs.binary_search(pair).is_ok())
            .count();
        let score = covered + self.settings.phrase_bonus * phrases as f32;
        Scored {
            name: doc.name.clone(),
            score: f64::from(score),
            relevance: f64::from((sum / information.max(f32::EPSILON)).clamp(0.0, 1.0)),
        }
    }
}

fn idf(docs: u32, frequency: u32) -> f32 {
    let (docs, frequency) = (docs as f32, frequency as f32);
    (1.0 + (docs - frequency + 0.5) / (frequency + 0.5)).ln()
}

fn sum_to(per_level: &[u32], level: usize) -> u32 {
    per_level.iter().take(level + 1).sum()
}

pub(crate) fn pair_key(first: u32, second: u32) -> u64 {
    (u64::from(first) << 32) | u64::from(second)
}
