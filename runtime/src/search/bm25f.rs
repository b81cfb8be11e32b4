//! The built-in scorer: BM25F over a tool's fields, kept current one tool at a time.
//!
//! Statistics (how many tools, how often a term occurs, field lengths) are kept per
//! permission level and summed up to the caller's level at query time, so a caller's scores
//! depend only on tools it may see: a hidden tool changes no visible score.

use std::collections::HashMap;

use super::fields::Field;
use super::query::Query;
use super::text;
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
    /// How much a word of the query that no tool has (and that is not a value: a name, a
    /// number, quoted text) counts against relevance, as a share of the rarest word's
    /// worth. 0 ignores such words. It changes no ranking, only what `suggest` offers.
    pub unknown_words: f32,
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
            unknown_words: 1.5,
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

impl LevelStats {
    fn average_lengths(&self) -> [f32; FIELDS] {
        self.lengths
            .map(|sum| (sum as f32 / self.docs.max(1) as f32).max(1.0))
    }
}

/// BM25F over the fields of [`Field`], with stemming, coverage and phrase bonuses: the
/// registry's default [`Scorer`].
#[derive(Default)]
pub struct Bm25Index {
    settings: Bm25Settings,
    term_ids: HashMap<String, u32>,
    /// Each term id's term; ids of terms no tool holds any more are reused, so the
    /// vocabulary stays that of the tools present, however many come and go.
    terms: Vec<String>,
    free_terms: Vec<u32>,
    /// How each word was analyzed (tool texts repeat their words, and stemming costs).
    word_terms: HashMap<String, Option<u32>>,
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
        let id = match self.free_terms.pop() {
            Some(id) => {
                self.terms[id as usize] = term.to_owned();
                id
            }
            None => {
                self.terms.push(term.to_owned());
                self.postings.push(Vec::new());
                self.frequencies.push(Vec::new());
                (self.terms.len() - 1) as u32
            }
        };
        self.term_ids.insert(term.to_owned(), id);
        id
    }

    /// Forgets a term no tool holds any more.
    fn drop_term(&mut self, id: u32) {
        self.term_ids.remove(&self.terms[id as usize]);
        self.frequencies[id as usize].clear();
        self.free_terms.push(id);
        // Cached analyses may point at the id.
        self.word_terms.clear();
    }

    /// The term ids of `text`, adding new terms.
    fn term_ids_of(&mut self, text: &str) -> Vec<u32> {
        let mut ids = Vec::new();
        for word in text::words(text) {
            if text::is_cjk_word(&word) {
                let mut terms = Vec::new();
                text::cjk_bigrams(&word, &mut terms);
                ids.extend(terms.iter().map(|term| self.term_id(term)));
                continue;
            }
            let id = match self.word_terms.get(&word) {
                Some(known) => *known,
                None => {
                    let id = text::term(&word).map(|term| self.term_id(&term));
                    self.word_terms.insert(word, id);
                    id
                }
            };
            ids.extend(id);
        }
        ids
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
            let ids = self.term_ids_of(&field.text(tool));
            lengths[index] = ids.len() as u32;
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
            if self.postings[term as usize].is_empty() {
                self.drop_term(term);
            }
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
        let sums = self.accumulate(&query, level, &stats);
        let pairs = query.pairs(|term| self.term_ids.get(term).copied());
        let mut candidates: Vec<(f32, u32)> = sums
            .touched
            .iter()
            .map(|&doc| (self.final_score(&sums, doc, &query, &pairs), doc))
            .collect();
        self.keep_best(&mut candidates, limit);
        candidates
            .into_iter()
            .filter_map(|(score, doc)| {
                let name = self.docs[doc as usize].as_ref()?.name.clone();
                let relevance = sums.relevance(doc);
                let score = f64::from(score);
                Some(Scored {
                    name,
                    score,
                    relevance,
                })
            })
            .collect()
    }
}

/// Per tool, what the query's terms added up to.
struct Sums {
    /// BM25F sum, by document.
    bm25: Vec<f32>,
    /// The part of it the user's own words (not the words added for values) made.
    own: Vec<f32>,
    /// How many of the user's own terms matched, by document.
    matched: Vec<u16>,
    /// Whether a document matched anything.
    seen: Vec<bool>,
    /// The documents that did, in first-match order.
    touched: Vec<u32>,
    /// What the user's own words are worth: each known word's idf, and each unknown word
    /// that is no value at the rarest word's (times [`Bm25Settings::unknown_words`]).
    information: f32,
}

impl Sums {
    /// The share of the user's words' information a tool matched.
    fn relevance(&self, doc: u32) -> f64 {
        let share = self.own[doc as usize] / self.information.max(f32::EPSILON);
        f64::from(share.clamp(0.0, 1.0))
    }
}

impl Bm25Index {
    /// BM25F: for each query term, its weight × idf × saturated pooled frequency, summed
    /// over the tools at or below `level` that hold it.
    fn accumulate(&self, query: &Query, level: usize, stats: &LevelStats) -> Sums {
        let mut sums = Sums {
            bm25: vec![0.0; self.docs.len()],
            own: vec![0.0; self.docs.len()],
            matched: vec![0; self.docs.len()],
            seen: vec![false; self.docs.len()],
            touched: Vec::new(),
            information: 0.0,
        };
        let averages = stats.average_lengths();
        // A word of the user's that no visible tool has, and that is no value (a name, a
        // number), says the request is about something the tools are not: it counts
        // against every tool's relevance, as the rarest word would ("how do I potty train a
        // toddler" is no request for train tickets). A word only hidden tools have is such a
        // word too.
        let unknown = self.settings.unknown_words * idf(stats.docs, 0);
        for (term, weight, own) in query.weighted_terms() {
            let known = self.term_ids.get(term).map(|&id| {
                let frequency = sum_to(&self.frequencies[id as usize], level);
                (id, frequency)
            });
            let Some((id, frequency)) = known.filter(|(_, frequency)| *frequency > 0) else {
                if own && !query.is_value(term) {
                    sums.information += weight * unknown;
                }
                continue;
            };
            let idf = idf(stats.docs, frequency);
            if own {
                sums.information += weight * idf;
            }
            for posting in &self.postings[id as usize] {
                let Some(doc) = self.visible_doc(posting.doc, level) else {
                    continue;
                };
                let tf = self.weighted_frequency(posting, doc, &averages);
                let index = posting.doc as usize;
                if !std::mem::replace(&mut sums.seen[index], true) {
                    sums.touched.push(posting.doc);
                }
                let gained = weight * idf * tf / (self.settings.k1 + tf);
                sums.bm25[index] += gained;
                if own {
                    sums.own[index] += gained;
                    sums.matched[index] += 1;
                }
            }
        }
        sums
    }

    /// The BM25F sum scaled by the share of query terms matched, plus the phrase bonus.
    fn final_score(&self, sums: &Sums, doc: u32, query: &Query, pairs: &[u64]) -> f32 {
        let index = doc as usize;
        let matched = sums.matched[index];
        let share = f32::from(matched) / query.distinct_terms().max(1) as f32;
        let covered = sums.bm25[index] * share.min(1.0).powf(self.settings.coverage);
        // A pair can only be found in a tool that matched two terms.
        let phrases = match (&self.docs[index], matched >= 2) {
            (Some(doc), true) => pairs
                .iter()
                .filter(|pair| doc.pairs.binary_search(pair).is_ok())
                .count(),
            _ => 0,
        };
        covered + self.settings.phrase_bonus * phrases as f32
    }

    /// Keeps the `limit` best, best first, ties by name.
    fn keep_best(&self, candidates: &mut Vec<(f32, u32)>, limit: usize) {
        let name = |doc: u32| {
            self.docs[doc as usize]
                .as_ref()
                .map(|doc| doc.name.as_str())
        };
        let order = |a: &(f32, u32), b: &(f32, u32)| {
            b.0.total_cmp(&a.0).then_with(|| name(a.1).cmp(&name(b.1)))
        };
        if candidates.len() > limit {
            candidates.select_nth_unstable_by(limit, order);
            candidates.truncate(limit);
        }
        candidates.sort_by(order);
    }

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
    fn weighted_frequency(&self, posting: &Posting, doc: &Doc, averages: &[f32; FIELDS]) -> f32 {
        let fields = posting.counts.iter().zip(&self.settings.fields);
        let per_field = fields.zip(doc.lengths.iter().zip(averages));
        per_field
            .filter(|((count, _), _)| **count > 0)
            .map(|((count, (weight, b)), (length, average))| {
                let norm = 1.0 - b + b * *length as f32 / average;
                weight * f32::from(*count) / norm
            })
            .sum()
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

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn tool(name: &str, description: &str) -> ToolDefinition {
        ToolDefinition::new(name, description, "public", json!({"type": "object"}))
    }

    #[test]
    fn the_vocabulary_is_that_of_the_tools_present() {
        let mut index = Bm25Index::default();
        index.insert(&tool("keep", "Water the garden."), 0);
        for round in 0..1000 {
            let name = format!("session_{round}");
            index.insert(&tool(&name, &format!("Unique word zq{round}x.")), 0);
            index.remove(&name);
        }
        assert!(index.terms.len() < 20, "{} terms kept", index.terms.len());
        assert_eq!(
            index.term_ids.len(),
            index.terms.len() - index.free_terms.len()
        );
        let found = index.search("water the garden", 0, 5);
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].name, "keep");
        // A recycled id holds its new term only.
        index.insert(&tool("late", "Unique word zq5x again."), 0);
        assert_eq!(index.search("zq5x", 0, 5)[0].name, "late");
        assert!(index.search("zq999x", 0, 5).is_empty());
    }

    #[test]
    fn a_tool_matched_only_by_words_added_for_values_has_no_relevance() {
        let mut index = Bm25Index::default();
        index.insert(&tool("pick_date", "Pick a date."), 0);
        index.insert(&tool("tell_joke", "Tell a joke about a topic."), 0);
        // "on 2023-10-01" adds "date"; none of the user's own words is a tool's.
        let found = index.search("dinosaurs on 2023-10-01", 0, 5);
        assert_eq!(found.len(), 1);
        assert_eq!((found[0].score, found[0].relevance), (0.0, 0.0));
        let joke = index.search("tell a joke", 0, 5);
        assert!(joke[0].score > 0.0 && joke[0].relevance > 0.5, "{joke:?}");
    }

    #[test]
    fn words_no_tool_has_lower_relevance_unless_they_are_values() {
        let mut index = Bm25Index::default();
        index.insert(&tool("get_train_tickets", "Buy train tickets."), 0);
        index.insert(&tool("tell_joke", "Tell a joke."), 0);
        let relevance = |query: &str| index.search(query, 0, 1)[0].relevance;
        let tickets = relevance("train tickets");
        // "potty" and "toddler" are no tool's words: the request is about something else.
        assert!(relevance("potty train a toddler") < tickets / 2.0);
        // A name, a number or quoted text is a value of the request, not another request.
        let named = relevance("train tickets to Berkeley for 2 at \"Gate Nine\"");
        assert!((named - tickets).abs() < 1e-6, "{named} against {tickets}");
        // With the weight at 0 such words are ignored.
        let settings = Bm25Settings {
            unknown_words: 0.0,
            ..Bm25Settings::default()
        };
        let mut ignoring = Bm25Index::new(settings);
        ignoring.insert(&tool("get_train_tickets", "Buy train tickets."), 0);
        let ignored = ignoring.search("potty train tickets toddler", 0, 1)[0].relevance;
        let plain = ignoring.search("train tickets", 0, 1)[0].relevance;
        assert!((ignored - plain).abs() < 1e-6, "{ignored} against {plain}");
    }
}
