//! Who may call the service from a browser: by default the userscript's game pages and loopback origins get the
//! CORS and private-network permissions, other sites get neither, and `*` opens the service to every origin.

use crate::common;

use advisor2048::server::cors::CorsOrigins;
use advisor2048::server::ServerConfig;
use common::TestServer;
use reqwest::header::HeaderMap;

/// A preflight for a JSON `POST /best-move` from `origin`, asking for private-network access as Chromium does.
async fn preflight(server: &TestServer, origin: &str) -> HeaderMap {
    let r = reqwest::Client::new()
        .request(reqwest::Method::OPTIONS, server.url("/best-move"))
        .header("origin", origin)
        .header("access-control-request-method", "POST")
        .header("access-control-request-headers", "content-type")
        .header("access-control-request-private-network", "true")
        .send()
        .await
        .expect("preflight");
    assert!(r.status().is_success());
    r.headers().clone()
}

/// The answer's headers to a simple `GET /healthz` from `origin`.
async fn get_from(server: &TestServer, origin: &str) -> HeaderMap {
    let r = reqwest::Client::new()
        .get(server.url("/healthz"))
        .header("origin", origin)
        .send()
        .await
        .expect("request");
    assert_eq!(
        r.status(),
        200,
        "CORS never refuses a request: the browser withholds the answer"
    );
    r.headers().clone()
}

fn allow_origin(h: &HeaderMap) -> Option<&str> {
    h.get("access-control-allow-origin").and_then(|v| v.to_str().ok())
}

fn private_network(h: &HeaderMap) -> Option<&str> {
    h.get("access-control-allow-private-network")
        .and_then(|v| v.to_str().ok())
}

#[tokio::test]
async fn by_default_only_the_game_pages_and_loopback_may_call() {
    let server = TestServer::start(ServerConfig::default()).await;
    for origin in [
        "https://gabrielecirulli.github.io",
        "https://play2048.co",
        "http://localhost:8000",
        "http://127.0.0.1:41234",
        "http://[::1]:3000",
        "http://localhost",
    ] {
        let h = preflight(&server, origin).await;
        assert_eq!(allow_origin(&h), Some(origin), "{origin}");
        assert_eq!(private_network(&h), Some("true"), "{origin}");
        assert!(h["access-control-allow-methods"].to_str().unwrap().contains("POST"));
        assert_eq!(allow_origin(&get_from(&server, origin).await), Some(origin));
    }
    for origin in [
        "https://evil.example",
        "http://play2048.co",
        "https://play2048.co.evil.example",
        "http://localhost.evil.example:8000",
        "null",
    ] {
        let h = preflight(&server, origin).await;
        assert_eq!(allow_origin(&h), None, "{origin}");
        assert_eq!(
            private_network(&h),
            None,
            "{origin} must not get private-network access"
        );
        assert_eq!(allow_origin(&get_from(&server, origin).await), None, "{origin}");
    }
}

#[tokio::test]
async fn star_opens_the_service_to_every_origin() {
    let config = ServerConfig {
        cors_origins: CorsOrigins::parse(&["*"]).unwrap(),
        ..Default::default()
    };
    let server = TestServer::start(config).await;
    let h = preflight(&server, "https://evil.example").await;
    assert_eq!(allow_origin(&h), Some("*"));
    assert_eq!(private_network(&h), Some("true"));
    assert_eq!(
        allow_origin(&get_from(&server, "https://anything.example").await),
        Some("*")
    );
}

#[tokio::test]
async fn a_configured_list_replaces_the_default() {
    let config = ServerConfig {
        cors_origins: CorsOrigins::parse(&["https://my-2048.example", "http://localhost:5173"]).unwrap(),
        ..Default::default()
    };
    let server = TestServer::start(config).await;
    for origin in ["https://my-2048.example", "http://localhost:5173"] {
        let h = preflight(&server, origin).await;
        assert_eq!(allow_origin(&h), Some(origin));
        assert_eq!(private_network(&h), Some("true"));
    }
    for origin in ["https://play2048.co", "http://localhost:8000"] {
        let h = preflight(&server, origin).await;
        assert_eq!(allow_origin(&h), None, "{origin}");
        assert_eq!(private_network(&h), None, "{origin}");
    }
}
