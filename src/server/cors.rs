//! Which web pages may call the service from a browser: [`CorsOrigins`], parsed once from `--cors-origins`, and the
//! CORS layer built from it.
//!
//! By default only the pages the userscript runs on (its `@match` lines) and loopback origins (a page served from this
//! machine, such as the game copied to `http://localhost:8000/`) get `Access-Control-Allow-Origin`, and only they get
//! `Access-Control-Allow-Private-Network` (Chromium asks for it before a public page may call a loopback address):
//! any other site a user visits cannot spend their CPU. `*` opens the service to every origin on purpose. Requests
//! without an `Origin` (curl, the userscript manager's `GM_xmlhttpRequest`) and same-origin pages (the playground at
//! `GET /`) are not affected by CORS at all.

use std::fmt;
use std::str::FromStr;
use std::sync::Arc;
use std::time::Duration;

use axum::http::{header, HeaderValue, Method};
use tower_http::cors::{AllowOrigin, AllowPrivateNetwork, CorsLayer};

/// The default of `--cors-origins`: the game pages of the userscript's `@match` lines, then loopback on any port.
pub const DEFAULT_CORS_ORIGINS: &str = "https://gabrielecirulli.github.io,https://play2048.co,\
                                        http://localhost:*,http://127.0.0.1:*,http://[::1]:*";

/// The origins allowed to call the service from a browser.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CorsOrigins {
    /// Every origin (`*`), without credentials.
    Any,
    /// These origins only; an empty list allows no cross-origin caller.
    List(Vec<OriginPattern>),
}

impl Default for CorsOrigins {
    fn default() -> Self {
        let items: Vec<&str> = DEFAULT_CORS_ORIGINS.split(',').collect();
        CorsOrigins::parse(&items).unwrap_or_else(|e| unreachable!("the default origins parse: {e}"))
    }
}

impl CorsOrigins {
    /// Parses the entries of `--cors-origins`: `*` alone, or origins such as `https://example.org`,
    /// `http://localhost:8080` or `http://localhost:*` (any port, or none). Blank entries are skipped.
    ///
    /// # Examples
    /// ```
    /// use advisor2048::server::cors::CorsOrigins;
    /// let origins = CorsOrigins::parse(&["https://play2048.co", "http://localhost:*"]).unwrap();
    /// assert!(origins.allows("http://localhost:5173"));
    /// assert!(!origins.allows("https://evil.example"));
    /// assert_eq!(CorsOrigins::parse(&["*"]).unwrap(), CorsOrigins::Any);
    /// assert!(CorsOrigins::parse(&["https://play2048.co/"]).is_err());
    /// ```
    pub fn parse<S: AsRef<str>>(items: &[S]) -> Result<CorsOrigins, OriginError> {
        let items: Vec<&str> = items
            .iter()
            .map(|s| s.as_ref().trim())
            .filter(|s| !s.is_empty())
            .collect();
        if items.contains(&"*") {
            if items.len() > 1 {
                return Err(OriginError::new("*", "'*' allows every origin: give it alone"));
            }
            return Ok(CorsOrigins::Any);
        }
        items
            .iter()
            .map(|s| s.parse())
            .collect::<Result<_, _>>()
            .map(CorsOrigins::List)
    }

    /// Whether a request with this `Origin` header may read the answer.
    pub fn allows(&self, origin: &str) -> bool {
        match self {
            CorsOrigins::Any => true,
            CorsOrigins::List(patterns) => patterns.iter().any(|p| p.matches(origin)),
        }
    }

    /// The CORS layer: `GET` and `POST` with a `content-type` header, preflights cached 10 minutes, and the
    /// private-network permission for exactly the allowed origins.
    pub fn layer(&self) -> CorsLayer {
        let layer = CorsLayer::new()
            .allow_methods([Method::GET, Method::POST])
            .allow_headers([header::CONTENT_TYPE])
            .max_age(Duration::from_secs(600));
        match self {
            CorsOrigins::Any => layer.allow_origin(AllowOrigin::any()).allow_private_network(true),
            CorsOrigins::List(_) => {
                let origins = Arc::new(self.clone());
                let private = origins.clone();
                layer
                    .allow_origin(AllowOrigin::predicate(move |origin: &HeaderValue, _| {
                        origin.to_str().is_ok_and(|o| origins.allows(o))
                    }))
                    .allow_private_network(AllowPrivateNetwork::predicate(move |origin: &HeaderValue, _| {
                        origin.to_str().is_ok_and(|o| private.allows(o))
                    }))
            }
        }
    }
}

impl fmt::Display for CorsOrigins {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CorsOrigins::Any => f.write_str("*"),
            CorsOrigins::List(patterns) => {
                let shown: Vec<String> = patterns.iter().map(ToString::to_string).collect();
                f.write_str(&shown.join(","))
            }
        }
    }
}

/// One allowed origin: scheme and host, and a port or any port.
#[derive(Clone, PartialEq, Eq)]
pub struct OriginPattern {
    /// `scheme://host`, lowercase (browsers send origins lowercase).
    scheme_host: String,
    port: PortPattern,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum PortPattern {
    /// No port in the origin (the scheme's default).
    Default,
    Exactly(u16),
    /// `:*`: any port, or none.
    Any,
}

impl OriginPattern {
    /// Whether `origin` (an `Origin` header value) is this origin.
    pub fn matches(&self, origin: &str) -> bool {
        let Ok((scheme_host, port)) = split_origin(origin) else {
            return false;
        };
        if !scheme_host.eq_ignore_ascii_case(&self.scheme_host) {
            return false;
        }
        match (self.port, port) {
            (PortPattern::Any, _) => true,
            (PortPattern::Default, None) => true,
            (PortPattern::Exactly(want), Some(got)) => got == Some(want),
            _ => false,
        }
    }
}

impl FromStr for OriginPattern {
    type Err = OriginError;

    fn from_str(s: &str) -> Result<OriginPattern, OriginError> {
        let (scheme_host, port) = split_origin(s).map_err(|reason| OriginError::new(s, reason))?;
        let port = match port {
            None => PortPattern::Default,
            Some(Some(p)) => PortPattern::Exactly(p),
            Some(None) => PortPattern::Any,
        };
        Ok(OriginPattern {
            scheme_host: scheme_host.to_ascii_lowercase(),
            port,
        })
    }
}

impl fmt::Display for OriginPattern {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.port {
            PortPattern::Default => write!(f, "{}", self.scheme_host),
            PortPattern::Exactly(p) => write!(f, "{}:{p}", self.scheme_host),
            PortPattern::Any => write!(f, "{}:*", self.scheme_host),
        }
    }
}

/// Shown as written on the command line (the start-up log prints the configuration).
impl fmt::Debug for OriginPattern {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:?}", self.to_string())
    }
}

/// Splits `scheme://host[:port]` into `scheme://host` and the port: `None` when absent, `Some(None)` for `*`.
fn split_origin(s: &str) -> Result<(&str, Option<Option<u16>>), &'static str> {
    let (scheme, rest) = s
        .split_once("://")
        .ok_or("an origin is scheme://host[:port], e.g. https://example.org")?;
    if scheme.is_empty()
        || !scheme
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'))
    {
        return Err("the scheme must be letters, digits, '+', '-' or '.'");
    }
    if rest.contains(['/', '?', '#']) {
        return Err("an origin has no path (no '/' after the host)");
    }
    // An IPv6 host is bracketed and holds colons: the port separator is the colon after the bracket.
    let host_end = if rest.starts_with('[') {
        rest.find(']')
            .map(|i| i + 1)
            .ok_or("an IPv6 host needs its closing ']'")?
    } else {
        rest.find(':').unwrap_or(rest.len())
    };
    let (host, port) = rest.split_at(host_end);
    if host.is_empty() || host.contains(['@', '*', ' ']) {
        return Err("the host must be a name or an address");
    }
    let port = match port.strip_prefix(':') {
        None if port.is_empty() => None,
        None => return Err("unexpected text after the host"),
        Some("*") => Some(None),
        Some(digits) => match digits.parse::<u16>() {
            Ok(p) if digits.bytes().all(|b| b.is_ascii_digit()) => Some(Some(p)),
            _ => return Err("the port must be a number up to 65535, or '*'"),
        },
    };
    Ok((&s[..scheme.len() + 3 + host.len()], port))
}

/// An entry of `--cors-origins` that is not an origin.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("--cors-origins: {entry:?}: {reason}")]
pub struct OriginError {
    pub entry: String,
    pub reason: &'static str,
}

impl OriginError {
    fn new(entry: &str, reason: &'static str) -> OriginError {
        OriginError {
            entry: entry.to_owned(),
            reason,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_allows_the_game_pages_and_loopback_only() {
        let origins = CorsOrigins::default();
        for allowed in [
            "https://gabrielecirulli.github.io",
            "https://play2048.co",
            "http://localhost",
            "http://localhost:8000",
            "http://127.0.0.1:35171",
            "http://[::1]:3000",
            "HTTP://LOCALHOST:80",
        ] {
            assert!(origins.allows(allowed), "{allowed}");
        }
        for refused in [
            "https://evil.example",
            "http://play2048.co",
            "https://play2048.co:8443",
            "https://play2048.co.evil.example",
            "http://localhost.evil.example",
            "http://127.0.0.1.nip.io:80",
            "https://localhost",
            "null",
            "",
            "http://localhost:99999",
        ] {
            assert!(!origins.allows(refused), "{refused}");
        }
        assert_eq!(origins.to_string(), DEFAULT_CORS_ORIGINS.replace(' ', ""));
    }

    #[test]
    fn entries_are_origins_or_a_lone_star() {
        assert_eq!(CorsOrigins::parse(&[" * "]), Ok(CorsOrigins::Any));
        assert_eq!(CorsOrigins::parse::<&str>(&[]), Ok(CorsOrigins::List(vec![])));
        let exact = CorsOrigins::parse(&["https://Example.org:8443", ""]).unwrap();
        assert!(exact.allows("https://example.org:8443"));
        assert!(!exact.allows("https://example.org"));
        assert!(!exact.allows("https://example.org:8444"));
        for bad in [
            "example.org",
            "https://example.org/",
            "https://example.org/path",
            "https://example.org:port",
            "https://example.org:-1",
            "https://",
            "https://[::1",
            "https://*.example.org",
            "ht tp://example.org",
        ] {
            let e = CorsOrigins::parse(&[bad]).unwrap_err();
            assert_eq!(e.entry, bad);
        }
        assert!(CorsOrigins::parse(&["*", "https://example.org"]).is_err());
    }
}
