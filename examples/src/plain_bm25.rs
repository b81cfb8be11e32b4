//! Textbook BM25, the floor that toolgate's search is measured against: one bag of words
//! per tool (name three times, description, parameters), words lower-cased and split at
//! anything not a letter or digit, no stemming, no field weights. For measuring only: its
//! statistics count every tool, whatever the caller may see.

use std::collections::HashMap;

use toolgate::ToolDefinition;
use toolgate::search::{Field, Scored, Scorer};

const K1: f32 = 1.2;
const B: f32 = 0.75;

struct Doc {
    name: String,
    level: usize,
    length: usize,
    terms: Vec<String>,
}

/// Plain BM25 as a [`Scorer`].
#[derive(Default)]
pub struct PlainBm25 {
    postings: HashMap<String, Vec<(usize, u32)>>,
    docs: HashMap<usize, Doc>,
    by_name: HashMap<String, usize>,
    next: usize,
    total_length: usize,
}

fn words(text: &str) -> impl Iterator<Item = String> + '_ {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|word| !word.is_empty())
        .map(str::to_lowercase)
}

impl Scorer for PlainBm25 {
    fn insert(&mut self, tool: &ToolDefinition, level: usize) {
        self.remove(&tool.name);
        let name: Vec<String> = words(&tool.name).collect();
        let mut all: Vec<String> = name.iter().chain(&name).chain(&name).cloned().collect();
        all.extend(words(&tool.description));
        all.extend(words(&Field::ParameterNames.text(tool)));
        all.extend(words(&Field::ParameterText.text(tool)));
        let mut counts: HashMap<String, u32> = HashMap::new();
        for word in &all {
            *counts.entry(word.clone()).or_default() += 1;
        }
        let doc = self.next;
        self.next += 1;
        for (term, count) in &counts {
            self.postings
                .entry(term.clone())
                .or_default()
                .push((doc, *count));
        }
        self.total_length += all.len();
        self.by_name.insert(tool.name.clone(), doc);
        let terms = counts.into_keys().collect();
        let name = tool.name.clone();
        self.docs.insert(
            doc,
            Doc {
                name,
                level,
                length: all.len(),
                terms,
            },
        );
    }

    fn remove(&mut self, name: &str) {
        let Some(doc) = self.by_name.remove(name) else {
            return;
        };
        let Some(removed) = self.docs.remove(&doc) else {
            return;
        };
        for term in &removed.terms {
            if let Some(postings) = self.postings.get_mut(term) {
                postings.retain(|(posting, _)| *posting != doc);
            }
        }
        self.total_length -= removed.length;
    }

    fn search(&self, query: &str, level: usize, limit: usize) -> Vec<Scored> {
        let count = self.docs.len() as f32;
        let average = self.total_length as f32 / count.max(1.0);
        let mut query_terms: Vec<String> = words(query).collect();
        query_terms.sort();
        query_terms.dedup();
        let mut scores: HashMap<usize, f32> = HashMap::new();
        for term in &query_terms {
            let Some(postings) = self.postings.get(term) else {
                continue;
            };
            let frequency = postings.len() as f32;
            let idf = (1.0 + (count - frequency + 0.5) / (frequency + 0.5)).ln();
            for &(doc, tf) in postings {
                let length = self.docs[&doc].length as f32;
                let tf = tf as f32;
                *scores.entry(doc).or_default() +=
                    idf * tf * (K1 + 1.0) / (tf + K1 * (1.0 - B + B * length / average));
            }
        }
        let mut scored: Vec<Scored> = scores
            .into_iter()
            .filter(|(doc, _)| self.docs[doc].level <= level)
            .map(|(doc, score)| Scored {
                name: self.docs[&doc].name.clone(),
                score: f64::from(score),
                relevance: 0.0,
            })
            .collect();
        toolgate::search::best_first(&mut scored, limit);
        scored
    }
}
