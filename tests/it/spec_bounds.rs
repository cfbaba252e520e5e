//! `openapi.yaml` states the bounds, defaults and names the code defines: every bound a client reads in the spec is
//! checked here against what the request readers accept and refuse (with the `serve` defaults), every default and
//! name against the code's (the serve defaults, the named enums, the evaluators' weight tables).

use crate::common;

use advisor2048::eval::{ClassicWeights, EvaluatorKind, TunedWeights};
use advisor2048::request::analyze::{ANALYZE, RECORD_FIELDS, REVIEW_ODDS_FIELDS};
use advisor2048::request::field::{self, Absent, Accepts, Field};
use advisor2048::request::odds::ODDS_FIELDS;
use advisor2048::request::{
    BestMoveRequest, SimulateRequest, DEFAULT_EVALUATE_EVALUATOR, EVALUATE, ONE_SEARCH, SEARCH, SIMULATE,
};
use advisor2048::search::{Profile, SearchSettings, Terminal};
use advisor2048::server::{defaults, AppState, ServerConfig};
use serde_json::{json, Value};

fn schema(name: &str) -> &'static Value {
    let s = &common::openapi()["components"]["schemas"][name];
    assert!(s.is_object(), "openapi.yaml has no schema {name}");
    s
}

fn number(v: &Value, what: &str) -> f64 {
    v.as_f64().unwrap_or_else(|| panic!("{what} is not a number: {v}"))
}

fn description(v: &Value) -> &str {
    v["description"].as_str().unwrap_or("")
}

fn names(v: &Value) -> Vec<&str> {
    v.as_array()
        .expect("an enum list")
        .iter()
        .map(|n| n.as_str().expect("a name"))
        .collect()
}

/// A server with the `serve` defaults (no network: profile `classic` below).
fn server() -> AppState {
    AppState::new(ServerConfig::default())
}

/// Whether `POST /best-move` accepts a board with `field` set to `value` (other problems would hide the answer,
/// so the rest of the request is valid).
fn best_move_accepts(field: &str, value: Value) -> bool {
    let mut body = json!({"board": "0000000000000112", "profile": "classic"});
    body[field] = value;
    BestMoveRequest::from_json(&body, &server().search_bounds()).is_ok()
}

/// Whether `POST /simulate` accepts `field` set to `value`.
fn simulate_accepts(field: &str, value: Value) -> bool {
    let mut body = json!({"profile": "classic"});
    body[field] = value;
    SimulateRequest::from_json(&body, &server().simulate_bounds()).is_ok()
}

/// An integer schema's bounds as the spec states them (`maximum` may be absent).
fn integer_bounds(schema: &Value, name: &str) -> (u64, Option<u64>) {
    let min = schema["minimum"]
        .as_u64()
        .unwrap_or_else(|| panic!("{name} has no integer minimum"));
    (min, schema["maximum"].as_u64())
}

/// The spec's integer bounds are where the request readers draw the line: the minimum and the maximum are accepted,
/// one below and one above refused (above 2^64 - 1 is 2^64, sent as a float).
#[test]
fn the_request_bounds_in_the_spec_are_where_the_requests_are_refused() {
    type Accepts = fn(&str, Value) -> bool;
    // The time budget is a number: its minimum is accepted, half of it refused.
    let min_budget = schema("TimeBudgetMs")["minimum"]
        .as_f64()
        .expect("TimeBudgetMs has a minimum");
    assert!(best_move_accepts("time_budget_ms", json!(min_budget)));
    assert!(!best_move_accepts("time_budget_ms", json!(min_budget / 2.0)));
    let cases: [(&str, &Value, &str, Accepts); 8] = [
        ("Depth", &schema("Depth")["oneOf"][0], "depth", best_move_accepts),
        ("SampleCells", schema("SampleCells"), "sample_cells", best_move_accepts),
        ("TopK", schema("TopK"), "top_k", best_move_accepts),
        ("Seed", schema("Seed"), "seed", best_move_accepts),
        ("Threads", schema("Threads"), "threads", best_move_accepts),
        ("Games", schema("Games"), "games", simulate_accepts),
        ("FirstGame", schema("FirstGame"), "first_game", simulate_accepts),
        ("MaxMoves", schema("MaxMoves"), "max_moves", simulate_accepts),
    ];
    for (name, spec, field, accepts) in cases {
        let (min, max) = integer_bounds(spec, name);
        assert!(
            accepts(field, json!(min)),
            "{name}: {field} {min} (the minimum) is refused"
        );
        let below = min.checked_sub(1).map_or(json!(-1), |b| json!(b));
        assert!(
            !accepts(field, below.clone()),
            "{name}: {field} {below} (below the minimum) is accepted"
        );
        if let Some(max) = max {
            assert!(
                accepts(field, json!(max)),
                "{name}: {field} {max} (the maximum) is refused"
            );
            let above = max.checked_add(1).map_or(json!(max as f64), |a| json!(a));
            assert!(
                !accepts(field, above.clone()),
                "{name}: {field} {above} (above the maximum) is accepted"
            );
        }
    }
    // Numbers: the cut-off below 1 (exclusive), the weights within the stated magnitude.
    let cutoff = schema("ProbCutoff");
    let (lowest, beyond) = (
        number(&cutoff["minimum"], "ProbCutoff.minimum"),
        number(&cutoff["exclusiveMaximum"], "ProbCutoff.exclusiveMaximum"),
    );
    assert!(best_move_accepts("prob_cutoff", json!(lowest)));
    assert!(!best_move_accepts("prob_cutoff", json!(lowest - 1e-9)));
    assert!(best_move_accepts("prob_cutoff", json!(beyond - 1e-9)));
    assert!(!best_move_accepts("prob_cutoff", json!(beyond)));
    for (name, accepts) in [
        (
            "RewardWeight",
            (|w: f64| best_move_accepts("reward_weight", json!(w))) as fn(f64) -> bool,
        ),
        ("Weight", |w| best_move_accepts("weights", json!({"empty": w}))),
    ] {
        let (min, max) = (
            number(&schema(name)["minimum"], name),
            number(&schema(name)["maximum"], name),
        );
        assert!(accepts(min) && accepts(max), "{name}: {min} or {max} is refused");
        assert!(
            !accepts(min * 1.001) && !accepts(max * 1.001),
            "{name}: beyond {min} .. {max} is accepted"
        );
    }
}

#[test]
fn the_defaults_in_the_spec_are_the_code_s() {
    let has = |schema_text: &str, expected: String| {
        assert!(
            schema_text.contains(&expected),
            "{expected:?} is not in the description {schema_text:?}"
        );
    };
    has(
        description(schema("TimeBudgetMs")),
        format!("default {}", defaults::MAX_BUDGET_MS),
    );
    has(
        description(schema("ProbCutoff")),
        format!("default {}", SearchSettings::default().prob_cutoff),
    );
    has(
        description(schema("Threads")),
        format!("default {}", SearchSettings::default().run.threads),
    );
    has(
        description(schema("Games")),
        format!("default {})", defaults::MAX_SIM_GAMES),
    );
    let evaluate = &schema("EvaluateRequest")["properties"];
    has(
        description(&evaluate["evaluator"]),
        format!("default {DEFAULT_EVALUATE_EVALUATOR}"),
    );
}

/// A property of a request schema with its `$ref` followed: the schema, and the property's own description
/// followed by the schema's.
fn resolved(property: &'static Value) -> (&'static Value, String) {
    let target = property["$ref"]
        .as_str()
        .and_then(|r| r.strip_prefix("#/components/schemas/"))
        .map(schema);
    let words = format!("{} {}", description(property), target.map_or("", |t| description(t)));
    // A property written out in place (`trace`) is its own schema.
    (target.unwrap_or(property), words)
}

/// What the spec says `field` accepts and means when absent, against its declaration: the problem, if any.
fn spec_disagrees(field: &Field, property: &'static Value) -> Option<String> {
    let (spec, words) = resolved(property);
    let int = |key: &str| spec[key].as_u64();
    let num = |key: &str| spec[key].as_f64();
    let agrees = match field.accepts {
        // No finite maximum declared: the spec states the server's limit (checked above against what a server
        // with the `serve` defaults refuses), 2^64 - 1, or none.
        Accepts::Whole { min, max: u64::MAX } => spec["type"] == "integer" && int("minimum") == Some(min),
        Accepts::Whole { min, max } => {
            spec["type"] == "integer" && int("minimum") == Some(min) && int("maximum") == Some(max)
        }
        Accepts::Clamped { min } => {
            spec["type"] == "integer" && int("minimum") == Some(min) && spec.get("maximum").is_none()
        }
        Accepts::ClampedNumber { min } => {
            spec["type"] == "number" && num("minimum") == Some(min) && spec.get("maximum").is_none()
        }
        Accepts::Below { min, below } => {
            spec["type"] == "number" && num("minimum") == Some(min) && num("exclusiveMaximum") == Some(below)
        }
        Accepts::Magnitude { max } => {
            spec["type"] == "number" && num("minimum") == Some(-max) && num("maximum") == Some(max)
        }
        Accepts::Name { names: expected } => spec["type"] == "string" && names(&spec["enum"]) == expected,
        Accepts::PliesOrAuto { max } => {
            let plies = &spec["oneOf"][0];
            plies["minimum"].as_u64() == Some(1)
                && plies["maximum"].as_u64() == Some(max)
                && spec["oneOf"][1]["const"] == "auto"
        }
        Accepts::Bool => spec["type"] == "boolean",
        Accepts::NamedNumbers { max } => {
            let (weight, _) = resolved(&spec["additionalProperties"]);
            spec["type"] == "object"
                && weight["minimum"].as_f64() == Some(-max)
                && weight["maximum"].as_f64() == Some(max)
        }
    };
    let default = match field.absent {
        Absent::Whole(n) => Some(format!("default {n}")),
        Absent::Name(name) => Some(format!("default {name}")),
        // `trace` and the like say nothing of false, the absence of a switch.
        Absent::Bool(true) => Some("default true".to_owned()),
        Absent::Bool(false) | Absent::Said(_) => None,
    };
    if !agrees {
        return Some(format!("the spec's {spec} is not what {:?} accepts", field.accepts));
    }
    default
        .filter(|d| !words.contains(d.as_str()))
        .map(|d| format!("the description {words:?} does not say {d:?}"))
}

/// Every field a request kind declares is a property of its schema, and every property but the board and the game
/// record is a declared field; each declared range, list of names and default is the spec's. A bound or a default
/// changed in its declaration and not in the spec fails here.
#[test]
fn every_declared_field_is_in_the_spec_as_declared() {
    // Each request schema, the fields it declares, and its properties that are not declared fields.
    type Kind<'a> = (&'a str, &'a [&'a [&'a Field]], &'a [&'a str]);
    let kinds: [Kind; 4] = [
        ("BestMoveRequest", &[SEARCH, ONE_SEARCH, ODDS_FIELDS], &["board"]),
        ("SimulateRequest", &[SIMULATE, SEARCH], &["board"]),
        ("EvaluateRequest", &[EVALUATE, ODDS_FIELDS], &["board"]),
        (
            "AnalyzeRequest",
            &[ANALYZE, SEARCH, ONE_SEARCH, REVIEW_ODDS_FIELDS],
            RECORD_FIELDS,
        ),
    ];
    let mut problems = Vec::new();
    for (request, sets, not_declared) in kinds {
        let properties = schema(request)["properties"].as_object().expect("properties");
        let mut in_spec: Vec<&str> = properties
            .keys()
            .map(String::as_str)
            .filter(|p| !not_declared.contains(p))
            .collect();
        let mut declared = field::names(sets);
        in_spec.sort_unstable();
        declared.sort_unstable();
        assert_eq!(
            in_spec, declared,
            "{request}: the spec's fields against the declared ones"
        );
        for field in sets.iter().flat_map(|set| set.iter()) {
            if let Some(problem) = spec_disagrees(field, &properties[field.name]) {
                problems.push(format!("{request}.{}: {problem}", field.name));
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// The check above can fail: a declaration whose range, names or default the spec does not state is caught.
#[test]
fn a_declaration_the_spec_does_not_state_is_caught() {
    use advisor2048::request::simulate::GAMES;
    use advisor2048::request::{DEPTH, TOP_K};
    let best_move = &schema("BestMoveRequest")["properties"];
    assert_eq!(spec_disagrees(&TOP_K, &best_move["top_k"]), None);
    let wider = Field {
        accepts: Accepts::Whole { min: 1, max: 5 },
        ..TOP_K
    };
    assert!(spec_disagrees(&wider, &best_move["top_k"]).is_some());
    let deeper = Field {
        accepts: Accepts::PliesOrAuto { max: 30 },
        ..DEPTH
    };
    assert!(spec_disagrees(&deeper, &best_move["depth"]).is_some());
    let simulate = &schema("SimulateRequest")["properties"];
    assert_eq!(spec_disagrees(&GAMES, &simulate["games"]), None);
    let more_by_default = Field {
        absent: Absent::Whole(2),
        ..GAMES
    };
    assert!(spec_disagrees(&more_by_default, &simulate["games"]).is_some());
}

#[test]
fn the_names_in_the_spec_are_the_code_s() {
    assert_eq!(names(&schema("Profile")["enum"]), Profile::NAMES);
    assert_eq!(names(&schema("Evaluator")["enum"]), EvaluatorKind::NAMES);
    assert_eq!(names(&schema("Terminal")["enum"]), Terminal::NAMES);
    // The weight tables: every name in breakdown order, and each default as the description states it.
    for (name, table) in [
        ("ClassicWeights", ClassicWeights::default().named()),
        ("TunedWeights", TunedWeights::default().named()),
    ] {
        let s = schema(name);
        let listed: Vec<&str> = s["properties"]
            .as_object()
            .expect("properties")
            .keys()
            .map(String::as_str)
            .collect();
        let mut expected: Vec<&str> = table.iter().map(|(n, _)| *n).collect();
        // serde_json's map is ordered by key: compare the sets here, the order below.
        let mut sorted = listed.clone();
        sorted.sort_unstable();
        expected.sort_unstable();
        assert_eq!(sorted, expected, "{name}");
        let defaults = table
            .iter()
            .map(|(n, v)| format!("{n} {v}"))
            .collect::<Vec<_>>()
            .join(", ");
        assert!(
            description(s).contains(&format!("(defaults: {defaults})")),
            "{name}: the description does not state the defaults in order: {defaults}"
        );
    }
}

/// `1234567` as `1,234,567`, the way the spec writes large defaults.
fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, ch) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(ch);
    }
    out
}

#[test]
fn the_analyze_bounds_grades_and_defaults_in_the_spec_are_the_code_s() {
    use advisor2048::request::analyze::{
        Grade, GRADE_LIMITS, LARGEST_ODDS_LOSSES, MAX_RECORD_PROBLEMS, MIN_ANALYZE_MOVES, NEXT_MILESTONES, WORST_MOVES,
    };
    for name in ["RecordMoves", "AnalyzeDirections"] {
        assert_eq!(schema(name)["minItems"].as_u64(), Some(MIN_ANALYZE_MOVES), "{name}");
        assert_eq!(
            schema(name)["maxItems"].as_u64(),
            Some(defaults::MAX_ANALYZE_MOVES),
            "{name}"
        );
        let limit = format!("default {}", thousands(defaults::MAX_ANALYZE_MOVES));
        assert!(
            description(schema(name)).contains(&limit),
            "{name} does not say {limit}"
        );
    }
    assert_eq!(
        schema("AnalyzeSpawns")["maxItems"].as_u64(),
        Some(defaults::MAX_ANALYZE_MOVES)
    );
    assert_eq!(
        schema("AnalyzeSummary")["properties"]["worst"]["maxItems"].as_u64(),
        Some(WORST_MOVES as u64)
    );
    assert_eq!(
        schema("ReviewOdds")["properties"]["largest_losses"]["maxItems"].as_u64(),
        Some(LARGEST_ODDS_LOSSES as u64)
    );
    assert_eq!(
        schema("MoveReview")["properties"]["odds"]["maxItems"].as_u64(),
        Some(NEXT_MILESTONES as u64)
    );
    assert_eq!(names(&schema("Grade")["enum"]), Grade::NAMES);
    let analyze = common::openapi()["paths"]["/analyze"]["post"]["description"]
        .as_str()
        .expect("/analyze has a description");
    for (grade, limit) in GRADE_LIMITS {
        let stated = format!("{grade} up to {limit}");
        assert!(
            description(schema("Grade")).contains(&stated),
            "Grade does not say {stated}"
        );
        assert!(analyze.contains(&stated), "/analyze does not say {stated}");
    }
    assert!(analyze.contains(&format!("At most {MAX_RECORD_PROBLEMS} problems")));
    for stated in [
        format!(
            "`--max-analyze-moves` moves (default {}",
            thousands(defaults::MAX_ANALYZE_MOVES)
        ),
        format!(
            "`--analyze-move-budget-ms` (default {}",
            defaults::ANALYZE_MOVE_BUDGET_MS
        ),
        format!("`--max-analyze-seconds` (default {})", defaults::MAX_ANALYZE_SECONDS),
        format!(
            "`--analyze-body-limit` bytes (default {} MiB)",
            defaults::ANALYZE_BODY_LIMIT >> 20
        ),
    ] {
        assert!(analyze.contains(&stated), "/analyze does not say {stated:?}");
    }
    assert_eq!(defaults::ANALYZE_BODY_LIMIT % (1 << 20), 0);
}
