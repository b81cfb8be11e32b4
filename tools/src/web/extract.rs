//! Turning a fetched page into what a model can use: readable text, or its links.

use scraper::{Html, Selector};
use serde_json::{Value, json};
use url::Url;

/// Width text is wrapped at.
const TEXT_WIDTH: usize = 100;
/// Most links listed.
const MAX_LINKS: usize = 500;

/// The page's readable text.
pub(crate) fn html_text(html: &[u8]) -> String {
    html2text::from_read(html, TEXT_WIDTH)
        .unwrap_or_else(|_| String::from_utf8_lossy(html).into_owned())
}

/// The page's links, made absolute against the page's address, with their text.
pub(crate) fn html_links(html: &[u8], base: &Url) -> Vec<Value> {
    let document = Html::parse_document(&String::from_utf8_lossy(html));
    let anchors = Selector::parse("a[href]").expect("a valid selector");
    document
        .select(&anchors)
        .filter_map(|anchor| {
            let href = anchor.value().attr("href")?;
            let url = base.join(href).ok()?;
            let text = anchor.text().collect::<Vec<_>>().join(" ");
            Some(json!({"url": url.as_str(), "text": text.split_whitespace().collect::<Vec<_>>().join(" ")}))
        })
        .take(MAX_LINKS)
        .collect()
}
