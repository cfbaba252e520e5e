//! `openapi.yaml` states the bounds, defaults and names the code defines: every number and name a client reads in
//! the spec is checked here against the one constant the code validates with (`advisor2048::request`, the serve
//! defaults, the named enums, the evaluators' weight tables).

mod common;

use advisor2048::eval::{ClassicWeights, EvaluatorKind, TunedWeights};
use advisor2048::request::{
    DEFAULT_EVALUATE_EVALUATOR, DEFAULT_GAMES, DEFAULT_SIM_SEED, DEPTH, MAX_FIRST_GAME, MAX_WEIGHT, MIN_BUDGET_MS,
    MIN_GAMES, MIN_MAX_MOVES, MIN_THREADS, PROB_CUTOFF, SAMPLE_CELLS, TOP_K,
};
use advisor2048::search::{Profile, SearchSettings, Terminal, MAX_DEPTH};
use advisor2048::server::defaults;
use serde_json::Value;

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

#[test]
fn the_request_bounds_in_the_spec_are_the_code_s() {
    let depth = &schema("Depth")["oneOf"][0];
    assert_eq!(depth["minimum"].as_u64(), Some(*DEPTH.start()));
    assert_eq!(depth["maximum"].as_u64(), Some(*DEPTH.end()));
    assert_eq!(*DEPTH.end(), u64::from(MAX_DEPTH));
    assert_eq!(schema("TimeBudgetMs")["minimum"].as_u64(), Some(MIN_BUDGET_MS));
    let cutoff = schema("ProbCutoff");
    assert_eq!(number(&cutoff["minimum"], "ProbCutoff.minimum"), PROB_CUTOFF.start);
    assert_eq!(
        number(&cutoff["exclusiveMaximum"], "ProbCutoff.exclusiveMaximum"),
        PROB_CUTOFF.end
    );
    for name in ["RewardWeight", "Weight"] {
        assert_eq!(number(&schema(name)["minimum"], name), -MAX_WEIGHT, "{name}");
        assert_eq!(number(&schema(name)["maximum"], name), MAX_WEIGHT, "{name}");
    }
    for (name, range) in [("SampleCells", SAMPLE_CELLS), ("TopK", TOP_K)] {
        assert_eq!(schema(name)["minimum"].as_u64(), Some(*range.start()), "{name}");
        assert_eq!(schema(name)["maximum"].as_u64(), Some(*range.end()), "{name}");
    }
    assert_eq!(schema("Seed")["minimum"].as_u64(), Some(0));
    assert_eq!(schema("Seed")["maximum"].as_u64(), Some(u64::MAX));
    assert_eq!(schema("Threads")["minimum"].as_u64(), Some(MIN_THREADS));
    assert_eq!(schema("Games")["minimum"].as_u64(), Some(MIN_GAMES));
    assert_eq!(schema("Games")["maximum"].as_u64(), Some(defaults::MAX_SIM_GAMES));
    assert_eq!(schema("FirstGame")["minimum"].as_u64(), Some(0));
    assert_eq!(schema("FirstGame")["maximum"].as_u64(), Some(MAX_FIRST_GAME));
    assert_eq!(schema("MaxMoves")["minimum"].as_u64(), Some(MIN_MAX_MOVES));
    assert_eq!(schema("MaxMoves")["maximum"].as_u64(), Some(defaults::MAX_SIM_MOVES));
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
        format!("default {}", SearchSettings::default().threads),
    );
    has(description(schema("Games")), format!("default {DEFAULT_GAMES}"));
    has(
        description(schema("Games")),
        format!("default {})", defaults::MAX_SIM_GAMES),
    );
    let sim = &schema("SimulateRequest")["properties"];
    has(description(&sim["seed"]), format!("default {DEFAULT_SIM_SEED}"));
    has(description(schema("FirstGame")), "default 0;".into());
    let evaluate = &schema("EvaluateRequest")["properties"];
    has(
        description(&evaluate["evaluator"]),
        format!("default {DEFAULT_EVALUATE_EVALUATOR}"),
    );
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
    use advisor2048::request::analyze::{Grade, GRADE_LIMITS, MAX_RECORD_PROBLEMS, MIN_ANALYZE_MOVES, WORST_MOVES};
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
