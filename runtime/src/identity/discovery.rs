//! Where an issuer keeps its keys and endpoints: its metadata, at
//! `/.well-known/openid-configuration` (OpenID Connect Discovery) or, failing that, at
//! `/.well-known/oauth-authorization-server` (RFC 8414). The metadata must name the issuer
//! exactly as configured, so one provider cannot speak for another.

use serde::Deserialize;

use super::fetch::Fetcher;

/// What toolgate uses of an issuer's metadata.
#[derive(Debug, Clone, Deserialize)]
#[cfg_attr(not(feature = "console"), allow(dead_code))]
pub(crate) struct Metadata {
    pub(crate) issuer: String,
    pub(crate) jwks_uri: Option<String>,
    pub(crate) introspection_endpoint: Option<String>,
    pub(crate) authorization_endpoint: Option<String>,
    pub(crate) token_endpoint: Option<String>,
    pub(crate) end_session_endpoint: Option<String>,
}

/// Fetches the metadata of `issuer`.
pub(crate) async fn discover(fetcher: &Fetcher, issuer: &str) -> Result<Metadata, String> {
    let mut tried = Vec::new();
    for url in metadata_urls(issuer) {
        match fetcher.get::<Metadata>(&url).await {
            Ok(metadata) if metadata.issuer == issuer => return Ok(metadata),
            Ok(metadata) => {
                return Err(format!(
                    "its metadata at {url} names another issuer, `{}`",
                    crate::util::bounded::clip(&metadata.issuer, 200)
                ));
            }
            Err(why) => tried.push(format!("{url}: {why}")),
        }
    }
    Err(format!("no metadata found ({})", tried.join("; ")))
}

/// Where the metadata of `issuer` may be: OpenID Connect's place (appended to the issuer),
/// then RFC 8414's (inserted before the issuer's path).
fn metadata_urls(issuer: &str) -> [String; 2] {
    let trimmed = issuer.trim_end_matches('/');
    let openid = format!("{trimmed}/.well-known/openid-configuration");
    let oauth = match split_origin(trimmed) {
        Some((origin, path)) => format!("{origin}/.well-known/oauth-authorization-server{path}"),
        None => format!("{trimmed}/.well-known/oauth-authorization-server"),
    };
    [openid, oauth]
}

/// `https://host:port` and the path after it (`/realms/x`, or empty).
pub(crate) fn split_origin(url: &str) -> Option<(&str, &str)> {
    let after_scheme = url.find("://")? + 3;
    match url[after_scheme..].find('/') {
        Some(slash) => Some(url.split_at(after_scheme + slash)),
        None => Some((url, "")),
    }
}

#[cfg(test)]
mod tests {
    use super::metadata_urls;

    #[test]
    fn metadata_is_looked_for_where_both_specs_put_it() {
        assert_eq!(
            metadata_urls("https://id.example.com"),
            [
                "https://id.example.com/.well-known/openid-configuration",
                "https://id.example.com/.well-known/oauth-authorization-server",
            ]
        );
        assert_eq!(
            metadata_urls("https://id.example.com/realms/clinic/"),
            [
                "https://id.example.com/realms/clinic/.well-known/openid-configuration",
                "https://id.example.com/.well-known/oauth-authorization-server/realms/clinic",
            ]
        );
    }
}
