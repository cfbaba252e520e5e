//! The HTTP API and the command line accept and refuse the same requests with the same problems: every variant
//! below goes to `POST /best-move`, `/evaluate` or `/simulate` on a server without a network and, as flags, to the
//! matching command with `--weights none`. Valid ones must be answered by both with the same advice; invalid ones
//! must be refused by both, each problem at the same place (a JSON pointer over HTTP, the flag on the command line)
//! with the same message.
//!
//! The flag for each field is written out here, independently of the program's own table.

use crate::common;

use std::process::Command;

use advisor2048::server::ServerConfig;
use common::{post, TestServer};
use serde_json::{json, Value};

/// The example board as 16 hex digits of exponents.
const EXAMPLE_HEX: &str = "001102341235765a";

#[derive(Clone, Copy, PartialEq)]
enum Route {
    BestMove,
    Evaluate,
    Simulate,
}

impl Route {
    fn path(self) -> &'static str {
        match self {
            Route::BestMove => "/best-move",
            Route::Evaluate => "/evaluate",
            Route::Simulate => "/simulate",
        }
    }

    fn command(self) -> &'static str {
        match self {
            Route::BestMove => "best-move",
            Route::Evaluate => "evaluate",
            Route::Simulate => "simulate",
        }
    }

    /// The command line's flag for a request field.
    fn flag(self, field: &str) -> String {
        match (self, field) {
            (_, "time_budget_ms") => "--budget-ms".into(),
            (_, "weights") => "--weight".into(),
            (Route::BestMove, "seed") => "--search-seed".into(),
            (Route::BestMove, "threads") => "--search-threads".into(),
            (Route::Simulate, "board") => "--board".into(),
            (_, "board") => "BOARD".into(),
            (_, f) => format!("--{}", f.replace('_', "-")),
        }
    }

    /// Where the command line reports a problem the HTTP API reports at `pointer`.
    fn location(self, pointer: &str) -> String {
        let path = pointer.trim_start_matches('/');
        let (field, rest) = path.split_once('/').unwrap_or((path, ""));
        let flag = self.flag(field);
        match (field, rest) {
            (_, "") => flag,
            ("weights", name) => format!("{flag} {name}"),
            (_, rest) => format!("{flag} /{rest}"),
        }
    }

    /// The command line for a request body.
    fn args(self, body: &Value) -> Vec<String> {
        let mut args = vec![self.command().to_owned(), "--weights".into(), "none".into()];
        let text = |v: &Value| match v {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        };
        for (field, value) in body.as_object().expect("a request body is an object") {
            match field.as_str() {
                "board" if self != Route::Simulate => args.push(text(value)),
                "weights" => {
                    for (name, w) in value.as_object().expect("weights object") {
                        args.push("--weight".into());
                        args.push(format!("{name}={}", text(w)));
                    }
                }
                "trace" | "odds" => {
                    if value == &Value::Bool(true) {
                        args.push(self.flag(field));
                    }
                }
                _ => {
                    args.push(self.flag(field));
                    args.push(text(value));
                }
            }
        }
        args.push("--json".into());
        args
    }
}

/// What the command line did: its JSON answer, or the problems it listed.
enum CliOutcome {
    Answer(Value),
    Refused(Vec<(String, String)>),
}

fn run_cli(args: &[String]) -> CliOutcome {
    let out = Command::new(env!("CARGO_BIN_EXE_advisor2048"))
        .args(args)
        .output()
        .expect("run advisor2048");
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    if out.status.success() {
        return CliOutcome::Answer(
            serde_json::from_slice(&out.stdout)
                .unwrap_or_else(|e| panic!("advisor2048 {args:?} printed no JSON ({e}): {stderr}")),
        );
    }
    assert!(
        stderr.contains("invalid request:"),
        "advisor2048 {args:?} failed without listing problems: {stderr}"
    );
    let problems = stderr
        .lines()
        .filter_map(|l| l.strip_prefix("  "))
        .map(|l| {
            let (at, message) = l.split_once(": ").unwrap_or_else(|| panic!("problem line {l:?}"));
            (at.to_owned(), message.to_owned())
        })
        .collect();
    CliOutcome::Refused(problems)
}

/// The advice of a best-move answer: the direction and each direction's legality and value.
fn advice(answer: &Value) -> Value {
    let moves: Vec<Value> = answer["moves"]
        .as_array()
        .expect("moves")
        .iter()
        .map(|m| {
            json!([
                m["direction"],
                m["legal"],
                m["value"].as_f64().map(|v| (v * 1e6).round() / 1e6)
            ])
        })
        .collect();
    json!({"direction": answer["direction"], "moves": moves, "profile": answer["search"]["profile"],
           "evaluator": answer["search"]["evaluator"], "depth": answer["search"]["depth"]})
}

/// What must agree between the two answers of a valid request.
fn comparable(route: Route, answer: &Value) -> Value {
    match route {
        Route::BestMove => advice(answer),
        Route::Evaluate => {
            let mut a = answer.clone();
            a.as_object_mut().expect("object").remove("elapsed_ms");
            a
        }
        Route::Simulate => {
            let games: Vec<Value> = answer["games"]
                .as_array()
                .expect("games")
                .iter()
                .map(|g| {
                    json!([
                        g["seed"],
                        g["score"],
                        g["moves"],
                        g["max_tile"],
                        g["final_board"],
                        g["finished"]
                    ])
                })
                .collect();
            json!(games)
        }
    }
}

fn variants() -> Vec<(&'static str, Route, Value)> {
    let rows = common::example();
    let saved = json!({"grid": {"size": 4, "cells": [
        [null, null, null, {"position": {"x": 0, "y": 3}, "value": 2}],
        [null, null, null, null],
        [null, {"position": {"x": 2, "y": 1}, "value": 4}, null, null],
        [null, null, null, {"position": {"x": 3, "y": 3}, "value": 2}]]}});
    let mut bad_saved = saved.clone();
    bad_saved["grid"]["cells"][2][1]["value"] = json!(6);
    let too_big = json!([[131072, 131072, 0, 0], [0, 0, 0, 0], [0, 0, 0, 0], [0, 0, 0, 0]]);
    use Route::*;
    vec![
        // Valid: the three board formats, integral floats, huge and tiny budgets, every field.
        ("rows", BestMove, json!({"board": rows, "profile": "tuned", "depth": 3})),
        (
            "hex",
            BestMove,
            json!({"board": EXAMPLE_HEX, "profile": "tuned", "depth": 3}),
        ),
        (
            "saved state",
            BestMove,
            json!({"board": saved, "profile": "classic", "depth": 2}),
        ),
        (
            "integral floats",
            BestMove,
            json!({"board": rows, "profile": "tuned", "depth": 3.0, "top_k": 2.0, "sample_cells": 3.0}),
        ),
        (
            "huge budget",
            BestMove,
            json!({"board": rows, "profile": "tuned", "depth": 2, "time_budget_ms": 1e30}),
        ),
        (
            "1 ms written as 1.0",
            BestMove,
            json!({"board": rows, "profile": "classic", "depth": 1, "time_budget_ms": 1.0}),
        ),
        (
            "classic weights",
            BestMove,
            json!({"board": rows, "profile": "classic", "depth": 2, "weights": {"empty": 3, "smoothness": -0.5}}),
        ),
        (
            "evaluator over profile",
            BestMove,
            json!({"board": rows, "profile": "tuned", "evaluator": "classic", "depth": 2}),
        ),
        (
            "cut-off, reward, terminal",
            BestMove,
            json!({"board": rows, "profile": "tuned", "depth": 3, "prob_cutoff": 0.01, "reward_weight": 2.5, "terminal": "heuristic"}),
        ),
        (
            "seeded sample",
            BestMove,
            json!({"board": rows, "profile": "tuned", "depth": 3, "sample_cells": 2, "seed": 7}),
        ),
        (
            "threads clamped",
            BestMove,
            json!({"board": rows, "profile": "tuned", "depth": 2, "threads": 1e30}),
        ),
        (
            "auto depth",
            BestMove,
            json!({"board": "0000000000000011", "profile": "tuned", "depth": "auto"}),
        ),
        (
            "no profile: tuned without a network",
            BestMove,
            json!({"board": rows, "depth": 2}),
        ),
        // Invalid boards.
        (
            "not a tile",
            BestMove,
            json!({"board": [[0, 0, 2, 3], [0, 4, 8, 16], [2, 4, 8, 32], [128, 64, 32, 1024]]}),
        ),
        (
            "short row",
            BestMove,
            json!({"board": [[0, 0, 2], [0, 4, 8, 16], [2, 4, 8, 32], [128, 64, 32, 1024]]}),
        ),
        (
            "five rows",
            BestMove,
            json!({"board": [[0, 0, 0, 0], [0, 0, 0, 0], [0, 0, 0, 0], [0, 0, 0, 0], [0, 0, 0, 0]]}),
        ),
        ("no game can hold it", BestMove, json!({"board": too_big})),
        ("hex too short", BestMove, json!({"board": "001102341235765"})),
        ("hex not hex", BestMove, json!({"board": "00110234123576zz"})),
        ("saved state, bad tile", BestMove, json!({"board": bad_saved})),
        // Invalid settings.
        ("depth 0", BestMove, json!({"board": rows, "depth": 0})),
        ("depth over the limit", BestMove, json!({"board": rows, "depth": 30})),
        ("depth not whole", BestMove, json!({"board": rows, "depth": 2.5})),
        ("budget 0", BestMove, json!({"board": rows, "time_budget_ms": 0})),
        (
            "budget negative",
            BestMove,
            json!({"board": rows, "time_budget_ms": -5}),
        ),
        ("cut-off 1", BestMove, json!({"board": rows, "prob_cutoff": 1})),
        (
            "cut-off negative",
            BestMove,
            json!({"board": rows, "prob_cutoff": -0.1}),
        ),
        ("top_k 5", BestMove, json!({"board": rows, "top_k": 5})),
        ("sample_cells 0", BestMove, json!({"board": rows, "sample_cells": 0})),
        (
            "unknown weight",
            BestMove,
            json!({"board": rows, "profile": "tuned", "weights": {"dept": 1}}),
        ),
        (
            "another evaluator's weight",
            BestMove,
            json!({"board": rows, "profile": "classic", "weights": {"lost_penalty": 1}}),
        ),
        (
            "weight too large",
            BestMove,
            json!({"board": rows, "profile": "classic", "weights": {"empty": 1e10}}),
        ),
        (
            "reward weight too large",
            BestMove,
            json!({"board": rows, "reward_weight": 1e12}),
        ),
        ("unknown profile", BestMove, json!({"board": rows, "profile": "fast"})),
        (
            "unknown evaluator",
            BestMove,
            json!({"board": rows, "evaluator": "neural"}),
        ),
        ("unknown terminal", BestMove, json!({"board": rows, "terminal": "one"})),
        (
            "ntuple without a network",
            BestMove,
            json!({"board": rows, "evaluator": "ntuple"}),
        ),
        (
            "learned without a network",
            BestMove,
            json!({"board": rows, "profile": "learned"}),
        ),
        ("negative seed", BestMove, json!({"board": rows, "seed": -1})),
        ("threads 0", BestMove, json!({"board": rows, "threads": 0})),
        // Reach odds need the learned network: refused at /odds (--odds) by both, with the same reason.
        ("odds without a network", BestMove, json!({"board": rows, "odds": true})),
        ("odds off", BestMove, json!({"board": rows, "odds": false})),
        (
            "many problems at once",
            BestMove,
            json!({"board": [[0, 0, 2, 3], [0, 4, 8, 16], [2, 4, 8, 32], [128, 64, 32, 1024]], "depth": 0, "top_k": 9, "weights": {"dept": 1}}),
        ),
        // /evaluate.
        ("evaluate rows", Evaluate, json!({"board": rows})),
        (
            "evaluate tuned with weights",
            Evaluate,
            json!({"board": EXAMPLE_HEX, "evaluator": "tuned", "weights": {"empty": 2.0}}),
        ),
        (
            "evaluate unknown evaluator",
            Evaluate,
            json!({"board": rows, "evaluator": "neural"}),
        ),
        (
            "evaluate ntuple without a network",
            Evaluate,
            json!({"board": rows, "evaluator": "ntuple"}),
        ),
        (
            "evaluate odds without a network",
            Evaluate,
            json!({"board": rows, "odds": true}),
        ),
        (
            "evaluate odds off",
            Evaluate,
            json!({"board": EXAMPLE_HEX, "odds": false}),
        ),
        (
            "evaluate bad board and weight",
            Evaluate,
            json!({"board": "zz", "weights": {"dept": 1}}),
        ),
        // /simulate.
        (
            "simulate",
            Simulate,
            json!({"games": 2, "seed": 5, "max_moves": 30, "profile": "tuned", "depth": 1}),
        ),
        (
            "simulate from a board",
            Simulate,
            json!({"games": 1, "seed": 1, "board": EXAMPLE_HEX, "max_moves": 10, "profile": "classic", "depth": 1}),
        ),
        ("simulate games 0", Simulate, json!({"games": 0, "seed": 1})),
        (
            "simulate max_moves 0 and bad board",
            Simulate,
            json!({"games": 1, "seed": 1, "max_moves": 0, "board": [[3]]}),
        ),
        (
            "simulate negative seed",
            Simulate,
            json!({"games": 1, "seed": -3, "depth": 1}),
        ),
        (
            "simulate a later chunk of a run",
            Simulate,
            json!({"games": 2, "first_game": 3, "seed": 5, "max_moves": 30, "profile": "tuned", "depth": 1}),
        ),
        (
            "simulate first_game negative",
            Simulate,
            json!({"games": 1, "first_game": -1, "depth": 1}),
        ),
        (
            "simulate the last first_game",
            Simulate,
            json!({"games": 1, "first_game": i64::MAX, "seed": 2, "max_moves": 5, "profile": "tuned", "depth": 1}),
        ),
        (
            "simulate first_game one past its maximum",
            Simulate,
            json!({"games": 1, "first_game": i64::MAX as u64 + 1, "depth": 1}),
        ),
        (
            "simulate first_game at 2^64 - 1",
            Simulate,
            json!({"games": 2, "first_game": u64::MAX, "depth": 1}),
        ),
    ]
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_command_line_accepts_and_refuses_what_the_http_api_does_with_the_same_problems() {
    let server = TestServer::start(ServerConfig::default()).await;
    let variants = variants();
    assert!(variants.len() >= 30);
    let (mut valid, mut invalid) = (0, 0);
    for (name, route, body) in variants {
        let (status, answer) = post(&server, route.path(), body.clone()).await;
        let args = route.args(&body);
        match (status, run_cli(&args)) {
            (200, CliOutcome::Answer(cli)) => {
                assert_eq!(
                    comparable(route, &cli),
                    comparable(route, &answer),
                    "{name}: different answers (advisor2048 {args:?})"
                );
                valid += 1;
            }
            (422, CliOutcome::Refused(cli)) => {
                let http: Vec<(String, String)> = answer["errors"]
                    .as_array()
                    .expect("errors")
                    .iter()
                    .map(|e| {
                        let pointer = e["pointer"].as_str().expect("pointer");
                        (
                            route.location(pointer),
                            e["message"].as_str().expect("message").to_owned(),
                        )
                    })
                    .collect();
                assert!(!http.is_empty(), "{name}: a 422 without problems");
                assert_eq!(cli, http, "{name}: different problems (advisor2048 {args:?})");
                invalid += 1;
            }
            (status, CliOutcome::Answer(_)) => {
                panic!("{name}: HTTP answered {status} {answer}, the command line accepted (advisor2048 {args:?})")
            }
            (status, CliOutcome::Refused(cli)) => {
                panic!(
                    "{name}: HTTP answered {status} {answer}, the command line refused: {cli:?} (advisor2048 {args:?})"
                )
            }
        }
    }
    assert!(valid >= 10 && invalid >= 20, "{valid} valid, {invalid} invalid");
}

/// `advisor2048 analyze FILE` with the search flags: the same review as `POST /analyze` with the file's body and the
/// flags' fields, and the same problems, the file's at `FILE <pointer>` and the flags' at the flag.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn analyze_on_the_command_line_reviews_and_refuses_what_the_http_api_does() {
    let server = TestServer::start(ServerConfig::default()).await;
    let dir = std::env::temp_dir().join(format!("advisor2048-parity-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("a temporary directory");
    let good = json!({"moves": [
        {"board": "0000000000000112", "direction": "left"},
        {"board": "0001000000002200", "direction": "up"},
    ]});
    let jumps = json!({"moves": [
        {"board": "0000000000000112", "direction": "left"},
        {"board": "0001000000012200", "direction": "up"},
    ]});
    let cases = [
        ("a record", good.clone(), vec!["--profile", "classic", "--depth", "3"]),
        (
            "a record, tuned",
            good.clone(),
            vec!["--profile", "tuned", "--depth", "2"],
        ),
        ("a board that jumps", jumps, vec!["--depth", "2"]),
        ("a bad depth", good, vec!["--depth", "0", "--budget-ms", "-1"]),
    ];
    for (name, file_body, flags) in cases {
        let path = dir.join("game.json");
        std::fs::write(&path, file_body.to_string()).expect("write the game");
        let mut body = file_body.clone();
        let mut args = vec![
            "analyze".to_owned(),
            path.display().to_string(),
            "--weights".into(),
            "none".into(),
        ];
        for pair in flags.chunks(2) {
            let field = match pair[0] {
                "--budget-ms" => "time_budget_ms".to_owned(),
                flag => flag.trim_start_matches("--").replace('-', "_"),
            };
            body[field] = common_flag_value(pair[1]);
            args.push(pair[0].to_owned());
            args.push(pair[1].to_owned());
        }
        args.push("--json".into());
        let (status, answer) = post(&server, "/analyze", body).await;
        match (status, run_cli(&args)) {
            (200, CliOutcome::Answer(cli)) => {
                let moves = |a: &Value| a["moves"].clone();
                assert_eq!(moves(&cli), moves(&answer), "{name}");
                let summary = |a: &Value| {
                    let mut s = a["summary"].clone();
                    s.as_object_mut().expect("a summary").remove("elapsed_ms");
                    s
                };
                assert_eq!(summary(&cli), summary(&answer), "{name}");
            }
            (422, CliOutcome::Refused(cli)) => {
                let http: Vec<(String, String)> = answer["errors"]
                    .as_array()
                    .expect("errors")
                    .iter()
                    .map(|e| {
                        let pointer = e["pointer"].as_str().expect("pointer");
                        let at = match pointer {
                            "/time_budget_ms" => "--budget-ms".to_owned(),
                            p if p.starts_with("/moves") => format!("FILE {p}"),
                            p => format!("--{}", p.trim_start_matches('/').replace('_', "-")),
                        };
                        (at, e["message"].as_str().expect("message").to_owned())
                    })
                    .collect();
                assert!(!http.is_empty(), "{name}: a 422 without problems");
                assert_eq!(cli, http, "{name}: different problems (advisor2048 {args:?})");
            }
            (status, _) => panic!("{name}: HTTP answered {status} {answer}, the command line did otherwise"),
        }
    }
    std::fs::remove_dir_all(&dir).ok();
}

/// A flag's text as the JSON value an HTTP client would send (a number when it is one).
fn common_flag_value(text: &str) -> Value {
    serde_json::from_str::<Value>(text).unwrap_or_else(|_| Value::String(text.to_owned()))
}
