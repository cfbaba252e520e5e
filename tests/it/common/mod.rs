//! Shared helpers of the HTTP tests: a real server on 127.0.0.1:0, response validation against `openapi.yaml`, a
//! JSON `POST` that validates every answer, and the command line's JSON output. [`binary`] runs the release binary as
//! a child process (for what only the whole program shows: signals, exit codes, its log).

#![allow(dead_code)]

pub mod binary;
pub mod raw;

use std::net::SocketAddr;
use std::sync::OnceLock;

use advisor2048::server::{self, AppState, ServerConfig};
use serde_json::Value;

/// A running server; stopped when dropped.
pub struct TestServer {
    pub addr: SocketAddr,
    pub state: AppState,
    shutdown: Option<tokio::sync::oneshot::Sender<()>>,
    task: Option<tokio::task::JoinHandle<std::io::Result<()>>>,
}

impl TestServer {
    pub async fn start(config: ServerConfig) -> TestServer {
        TestServer::start_with_network(config, None).await
    }

    /// A server whose profile `learned` uses `network`.
    pub async fn start_with_network(
        config: ServerConfig,
        network: Option<std::sync::Arc<advisor2048::eval::Network>>,
    ) -> TestServer {
        TestServer::start_with_state(AppState::with_network(config, network)).await
    }

    /// A server with this state (its network, its odds).
    pub async fn start_with_state(state: AppState) -> TestServer {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind 127.0.0.1:0");
        let addr = listener.local_addr().expect("local addr");
        let (tx, rx) = tokio::sync::oneshot::channel::<()>();
        let serve_state = state.clone();
        let task = tokio::spawn(async move {
            server::serve(listener, serve_state, async {
                let _ = rx.await;
            })
            .await
        });
        TestServer {
            addr,
            state,
            shutdown: Some(tx),
            task: Some(task),
        }
    }

    /// Signals shutdown (as SIGTERM does) and waits until `serve` returns.
    pub async fn stop(mut self) -> std::io::Result<()> {
        if let Some(tx) = self.shutdown.take() {
            let _ = tx.send(());
        }
        match self.task.take() {
            Some(task) => task.await.expect("the server task ended"),
            None => Ok(()),
        }
    }

    pub fn url(&self, path: &str) -> String {
        format!("http://{}{}", self.addr, path)
    }
}

impl Drop for TestServer {
    fn drop(&mut self) {
        if let Some(tx) = self.shutdown.take() {
            let _ = tx.send(());
        }
    }
}

/// The OpenAPI document as JSON.
pub fn openapi() -> &'static Value {
    static DOC: OnceLock<Value> = OnceLock::new();
    DOC.get_or_init(|| {
        let yaml: serde_yaml::Value =
            serde_yaml::from_str(include_str!("../../../openapi.yaml")).expect("openapi.yaml parses");
        serde_json::to_value(yaml).expect("openapi.yaml is JSON-compatible")
    })
}

/// Validates `instance` against `#/components/schemas/<name>` of `openapi.yaml` (OpenAPI 3.1 schemas are JSON Schema
/// 2020-12): the whole document is the schema root, so internal `$ref`s resolve.
pub fn assert_matches_schema(name: &str, instance: &Value) {
    let mut root = openapi().clone();
    assert!(
        root["components"]["schemas"].get(name).is_some(),
        "openapi.yaml has no schema {name}"
    );
    root.as_object_mut()
        .expect("object")
        .insert("$ref".into(), Value::String(format!("#/components/schemas/{name}")));
    let validator = jsonschema::validator_for(&root).expect("schema compiles");
    let errors: Vec<String> = validator
        .iter_errors(instance)
        .map(|e| format!("{} at {}", e, e.instance_path))
        .collect();
    assert!(
        errors.is_empty(),
        "response does not match {name}: {errors:#?}\n{instance:#}"
    );
}

/// The schema `openapi.yaml` names for the JSON body of `method path` answering `status` (`None` when it documents
/// none, e.g. a status it does not list).
pub fn response_schema(method: &str, path: &str, status: u16) -> Option<String> {
    let reference = openapi()["paths"][path][method.to_ascii_lowercase()]["responses"][status.to_string()]["content"]
        ["application/json"]["schema"]["$ref"]
        .as_str()?;
    reference.strip_prefix("#/components/schemas/").map(str::to_owned)
}

/// Checks a JSON answer against `openapi.yaml`: an error is `application/problem+json` matching `Problem` with its
/// own status; a success matches the schema the spec documents for that route and status (which must exist).
pub fn assert_documented(method: &str, path: &str, status: u16, content_type: &str, body: &Value) {
    if status >= 400 {
        assert_eq!(content_type, "application/problem+json", "{body}");
        assert_matches_schema("Problem", body);
        assert_eq!(body["status"], status);
    } else {
        let name = response_schema(method, path, status)
            .unwrap_or_else(|| panic!("openapi.yaml documents no JSON body for {method} {path} {status}"));
        assert_matches_schema(&name, body);
    }
}

/// `POST path` with a JSON body: the status and the JSON answer, checked against `openapi.yaml` whatever the status
/// ([`assert_documented`]).
pub async fn post(server: &TestServer, path: &str, body: Value) -> (u16, Value) {
    let r = reqwest::Client::new()
        .post(server.url(path))
        .json(&body)
        .send()
        .await
        .expect("request");
    let status = r.status().as_u16();
    let content_type = r
        .headers()
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .to_owned();
    let body: Value = r.json().await.expect("JSON body");
    assert_documented("POST", path, status, &content_type, &body);
    (status, body)
}

/// `GET url` (a `/healthz`): it answers 200 with a body matching `Health`, which is returned.
pub async fn healthz(url: &str) -> Value {
    let r = reqwest::get(url).await.expect("/healthz answers");
    assert_eq!(r.status(), 200);
    let health: Value = r.json().await.expect("JSON");
    assert_matches_schema("Health", &health);
    health
}

/// Runs the release binary with `args` and parses what it prints as JSON (it must exit 0).
pub fn cli(args: &[&str]) -> Value {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_advisor2048"))
        .args(args)
        .output()
        .expect("run advisor2048");
    assert!(
        out.status.success(),
        "advisor2048 {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("the command prints JSON")
}

pub const EXAMPLE: &str = "[[0,0,2,2],[0,4,8,16],[2,4,8,32],[128,64,32,1024]]";

pub fn example() -> Value {
    serde_json::from_str(EXAMPLE).expect("example board")
}

/// Empties cells from the top-left until the tiles sum to what a 4x4 game can hold (at most 2^18 - 4): the only
/// boards `Tiles` accepts. Lets random generators produce high tiles freely.
pub fn reachable(mut exponents: [u8; 16]) -> advisor2048::engine::Tiles {
    let sum = |e: &[u8; 16]| e.iter().map(|&x| if x == 0 { 0 } else { 1u64 << x }).sum::<u64>();
    let mut i = 0;
    while sum(&exponents) > advisor2048::engine::MAX_SUM {
        exponents[i] = 0;
        i += 1;
    }
    advisor2048::engine::Tiles::from_exponents(exponents).expect("exponents up to 17 with a reachable sum")
}

/// Decodes the `grid` of a saved game state (`localStorage.gameState`, a `serde_json::Value`) the way a caller would
/// before handing it to the engine, which sees decoded numbers only: `(size, cells)`, with `cells[x][y]` column-major.
pub fn decode_saved_cells(state: &Value) -> (i64, Vec<Vec<Option<advisor2048::engine::SavedCell>>>) {
    let grid = &state["grid"];
    let size = grid["size"].as_i64().expect("size");
    let cells = grid["cells"]
        .as_array()
        .expect("cells")
        .iter()
        .map(|column| {
            column
                .as_array()
                .expect("a column")
                .iter()
                .map(|cell| {
                    (!cell.is_null()).then(|| advisor2048::engine::SavedCell {
                        position: cell["position"]["x"].as_i64().zip(cell["position"]["y"].as_i64()),
                        value: cell["value"].as_i64().expect("value"),
                    })
                })
                .collect()
        })
        .collect();
    (size, cells)
}
