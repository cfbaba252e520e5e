"""A client generated from openapi.yaml, typed and talking to the real server.

    python tests/client/generated_client.py --url http://127.0.0.1:PORT [--spec openapi.yaml]

Needs the packages of tests/client/requirements.txt (.ci/run installs them into a venv of its own and runs this
against the release server it starts for schemathesis). It

- checks the spec: valid OpenAPI 3.1, and every `$ref` names a whole component (a reference into another schema's
  `properties` is what makes generators type a request body as `Any`);
- generates a client with openapi-python-client into a temporary directory and imports it;
- checks the request models: `/best-move`, `/evaluate`, `/simulate` and `/analyze` take `BestMoveRequest`,
  `EvaluateRequest`, `SimulateRequest` and `AnalyzeRequest`, each has exactly the spec's fields, none typed `Any`, and
  the enums carry the spec's values;
- calls the server through the generated client (`/healthz`, `/best-move` twice, `/evaluate`, `/simulate`,
  `/analyze`, and a refused request answered with a 422 that parses as `Problem`): each request model serializes to the JSON written
  out here, which the server accepts; each answer parses into the response models with no field the spec does not
  name, says what the request asked for, and serializes back to the JSON the server sent.

Prints one line per check and closes with "N passed, M failed"; the exit status is 0 only when every check passed.
"""

import argparse
import importlib
import json
import math
import os
import re
import shutil
import subprocess
import sys
import tempfile
import traceback
import types
import typing
from http import HTTPStatus
from pathlib import Path

import attrs
import httpx
import yaml
from openapi_spec_validator import validate as validate_openapi

PACKAGE = "advisor2048_client"
ROOT = Path(__file__).resolve().parents[2]

# The one thing the generator leaves out: the YAML body of GET /openapi.yaml (it reads JSON bodies only).
EXPECTED_GENERATOR_WARNINGS = {"GET /openapi.yaml"}

# Response models that are maps by design: their additional properties are their content, not leftovers.
MAP_MODELS = {"Weights", "SummaryMaxTileHistogram", "SummaryDepthHistogram", "GameRecordDepths"}

ROWS = [[0, 0, 2, 2], [0, 4, 8, 16], [2, 4, 8, 32], [128, 64, 32, 1024]]
HEX = "0000000000000112"  # tiles 2, 2 and 4: depth auto is 2 x max(3, 2 - 2) + 1 = 7 plies
DIRECTIONS = {"up", "down", "left", "right"}


class Failed(Exception):
    pass


def expect(condition, message):
    if not condition:
        raise Failed(message)


def expect_equal(actual, expected, what):
    if actual != expected:
        raise Failed(f"{what}: expected {expected!r}, found {actual!r}")


class Run:
    def __init__(self):
        self.passed = 0
        self.failed = 0

    def check(self, name, body, *args):
        """Runs one check; returns its result, or None when it failed."""
        try:
            result = body(*args)
        except Exception as e:  # noqa: BLE001 - every kind of failure counts, and the run goes on
            self.failed += 1
            detail = str(e) if isinstance(e, Failed) else traceback.format_exc(limit=-2).rstrip()
            print(f"FAIL {name}: {detail}")
            return None
        self.passed += 1
        print(f"ok   {name}")
        return result if result is not None else True

    def finish(self):
        print(f"{self.passed} passed, {self.failed} failed")
        return 0 if self.failed == 0 and self.passed > 0 else 1


# --- the spec ------------------------------------------------------------------------------------------------------


def spec_is_valid_openapi(spec):
    validate_openapi(spec)


def every_ref_names_a_whole_component(spec):
    refs = []

    def walk(node, where):
        if isinstance(node, dict):
            for key, value in node.items():
                if key == "$ref":
                    refs.append((where, value))
                else:
                    walk(value, f"{where}/{key}")
        elif isinstance(node, list):
            for i, value in enumerate(node):
                walk(value, f"{where}/{i}")

    walk(spec, "#")
    bad = [(w, r) for w, r in refs if not re.fullmatch(r"#/components/(schemas|responses)/[A-Za-z0-9]+", r)]
    expect(refs, "the spec has no $ref at all")
    expect(not bad, "references that do not name a whole component: " + ", ".join(f"{r} (at {w})" for w, r in bad))


# --- the generated client ------------------------------------------------------------------------------------------


def generate(spec_path, out_dir):
    """Runs openapi-python-client; the package lands in out_dir/PACKAGE."""
    bin_dir = os.path.dirname(sys.executable)
    env = dict(os.environ, PATH=bin_dir + os.pathsep + os.environ.get("PATH", ""))  # its ruff post-hooks
    generator = shutil.which("openapi-python-client", path=env["PATH"])
    expect(generator, "openapi-python-client is not installed (pip install -r tests/client/requirements.txt)")
    done = subprocess.run(
        [generator, "generate", "--path", str(spec_path), "--output-path", str(out_dir / PACKAGE), "--meta", "none"],
        capture_output=True,
        text=True,
        env=env,
        check=False,  # the exit status is checked below, with the generator's output
    )
    output = done.stdout + done.stderr
    expect(done.returncode == 0, f"openapi-python-client exited with {done.returncode}:\n{output}")
    warnings = set(re.findall(r"WARNING parsing (\S+ \S+) within", output))
    expect(
        warnings <= EXPECTED_GENERATOR_WARNINGS,
        f"the generator could not type {sorted(warnings - EXPECTED_GENERATOR_WARNINGS)}:\n{output}",
    )


def import_client(out_dir):
    sys.path.insert(0, str(out_dir))
    client = importlib.import_module(PACKAGE)
    models = importlib.import_module(f"{PACKAGE}.models")
    api = {
        name: importlib.import_module(f"{PACKAGE}.api.default.{name}")
        for name in ("healthz", "best_move", "evaluate", "simulate", "analyze")
    }
    namespace = {**vars(models), **vars(importlib.import_module(f"{PACKAGE}.types"))}
    return types.SimpleNamespace(package=client, models=models, api=api, namespace=namespace)


def hints(c, target):
    return typing.get_type_hints(target, localns=c.namespace)


def members(hint):
    """The alternatives of a union (X | Y or Union[X, Y]); a single type is its own only member."""
    if typing.get_origin(hint) in (typing.Union, types.UnionType):
        return set(typing.get_args(hint))
    return {hint}


def mentions_any(hint):
    return hint is typing.Any or any(mentions_any(arg) for arg in typing.get_args(hint))


def request_bodies_are_models(c):
    for operation, model in (
        ("best_move", "BestMoveRequest"),
        ("evaluate", "EvaluateRequest"),
        ("simulate", "SimulateRequest"),
        ("analyze", "AnalyzeRequest"),
    ):
        expect(hasattr(c.models, model), f"the generated client has no model {model}")
        for function in ("sync_detailed", "sync", "asyncio_detailed"):
            body = hints(c, getattr(c.api[operation], function))["body"]
            expect(body is getattr(c.models, model), f"{operation}.{function} takes body: {body}, not {model}")


def request_fields_are_typed(c, spec):
    m = c.models
    unset = c.namespace["Unset"]
    for model in ("BestMoveRequest", "EvaluateRequest", "SimulateRequest"):
        fields = hints(c, getattr(m, model))
        expect_equal(set(fields), set(spec["components"]["schemas"][model]["properties"]), f"{model}'s fields")
        untyped = [name for name, hint in fields.items() if mentions_any(hint)]
        expect(not untyped, f"{model} types {untyped} as Any")
        board = members(fields["board"]) - {unset}
        expect_equal(board, {list[list[m.TileValue]], m.SavedState, str}, f"{model}.board")
        expect_equal(members(fields["evaluator"]), {m.Evaluator, unset}, f"{model}.evaluator")
        expect_equal(fields["weights"], m.Weights | unset, f"{model}.weights")
    analyze = hints(c, m.AnalyzeRequest)
    expect_equal(
        set(analyze), set(spec["components"]["schemas"]["AnalyzeRequest"]["properties"]), "AnalyzeRequest's fields"
    )
    untyped = [name for name, hint in analyze.items() if mentions_any(hint)]
    expect(not untyped, f"AnalyzeRequest types {untyped} as Any")
    expect_equal(members(analyze["moves"]) - {unset}, {list[m.RecordMove]}, "AnalyzeRequest.moves")
    expect_equal(members(analyze["game"]) - {unset}, {m.GameRecord}, "AnalyzeRequest.game")
    expect_equal(members(analyze["start"]) - {unset}, {list[list[m.TileValue]], m.SavedState, str}, "AnalyzeRequest.start")
    for model in ("BestMoveRequest", "SimulateRequest", "AnalyzeRequest"):
        fields = hints(c, getattr(m, model))
        expect_equal(members(fields["profile"]), {m.Profile, unset}, f"{model}.profile")
        expect_equal(members(fields["depth"]), {int, typing.Literal["auto"], unset}, f"{model}.depth")
        expect_equal(members(fields["terminal"]), {m.Terminal, unset}, f"{model}.terminal")
        for name in ("sample_cells", "top_k", "seed", "threads"):
            expect_equal(members(fields[name]), {int, unset}, f"{model}.{name}")
        for name in ("time_budget_ms", "prob_cutoff", "reward_weight"):
            expect_equal(members(fields[name]), {float, unset}, f"{model}.{name}")


def enums_carry_the_spec_values(c, spec):
    schemas = spec["components"]["schemas"]
    for name in ("Profile", "Evaluator", "Terminal", "Direction", "TileValue", "Grade"):
        generated = getattr(c.models, name)
        expect_equal(sorted(e.value for e in generated), sorted(schemas[name]["enum"]), f"{name}'s values")


# --- the round trips -----------------------------------------------------------------------------------------------


def no_leftovers(value, where="answer"):
    """Fails when a parsed answer holds a field its model does not name (the server sends what the spec omits)."""
    if attrs.has(type(value)):
        extra = getattr(value, "additional_properties", {})
        expect(
            not extra or type(value).__name__ in MAP_MODELS,
            f"{where} ({type(value).__name__}) has fields the spec does not name: {sorted(extra)}",
        )
        for field in attrs.fields(type(value)):
            if field.name != "additional_properties":
                no_leftovers(getattr(value, field.name), f"{where}.{field.name}")
    elif isinstance(value, list):
        for i, item in enumerate(value):
            no_leftovers(item, f"{where}[{i}]")


def call(operation, client, body, expected_json, status=HTTPStatus.OK):
    """Checks that body serializes to expected_json, sends it, and checks the answer's status, that it parsed without
    leftovers and that it serializes back to what the server sent. Returns the parsed answer and the response.

    A request model is not read back with from_dict: openapi-python-client 0.29 parses the union of depth (an integer
    or the const "auto") by testing the const alone, so `from_dict` refuses an integer depth. Clients only write
    requests, and the server reads them, which is what this checks."""
    expect_equal(body.to_dict(), expected_json, f"{type(body).__name__}.to_dict()")
    response = operation.sync_detailed(client=client, body=body)
    expect_equal(response.status_code, status, f"status (answer {response.content[:300]!r})")
    parsed = response.parsed
    expect(parsed is not None and attrs.has(type(parsed)), f"the answer did not parse: {response.content[:300]!r}")
    no_leftovers(parsed, type(parsed).__name__)
    expect_equal(
        parsed.to_dict(), json.loads(response.content), f"{type(parsed).__name__}.to_dict() against the answer"
    )
    return parsed, response


def rows(c, board):
    return [[c.models.TileValue(v) for v in row] for row in board]


def healthz(c, client):
    response = c.api["healthz"].sync_detailed(client=client)
    expect_equal(response.status_code, HTTPStatus.OK, "status")
    health = response.parsed
    expect(isinstance(health, c.models.Health), f"parsed as {type(health).__name__}")
    no_leftovers(health, "Health")
    expect_equal(health.status, c.models.HealthStatus.OK, "status")
    expect(health.version, "an empty version")
    expect(isinstance(health.default_profile, c.models.HealthDefaultProfile), "default_profile is not the enum")


def best_move_rows(c, client):
    m = c.models
    body = m.BestMoveRequest(board=rows(c, ROWS), profile=m.Profile.CLASSIC, depth=3)
    answer, _ = call(c.api["best_move"], client, body, {"board": ROWS, "profile": "classic", "depth": 3})
    expect(isinstance(answer, m.BestMoveResponse), f"parsed as {type(answer).__name__}")
    expect(isinstance(answer.direction, m.Direction), f"direction {answer.direction!r} is not a Direction")
    expect(answer.direction.value in DIRECTIONS, f"direction {answer.direction.value}")
    expect_equal(len(answer.moves), 4, "number of moves")
    expect_equal({move.direction.value for move in answer.moves}, DIRECTIONS, "the moves' directions")
    chosen = next(move for move in answer.moves if move.direction == answer.direction)
    expect(chosen.legal and chosen.value is not None, "the chosen direction is not a legal move with a value")
    best = max(move.value for move in answer.moves if move.legal)
    expect(math.isclose(chosen.value, best), f"the chosen value {chosen.value} is not the best, {best}")
    expect_equal(answer.game_over, False, "game_over")
    expect_equal([[v.value for v in row] for row in answer.board], ROWS, "the echoed board")
    expect_equal(
        (answer.search.profile, answer.search.evaluator),
        (m.Profile.CLASSIC, m.Evaluator.CLASSIC),
        "profile and evaluator",
    )
    expect_equal(answer.search.target_depth, 3, "target_depth")


def best_move_hex_auto(c, client):
    m = c.models
    body = m.BestMoveRequest(board=HEX, profile=m.Profile.TUNED, depth="auto", time_budget_ms=200.5)
    expected = {"board": HEX, "profile": "tuned", "depth": "auto", "time_budget_ms": 200.5}
    answer, _ = call(c.api["best_move"], client, body, expected)
    expect(answer.direction is not None and answer.direction.value in DIRECTIONS, f"direction {answer.direction!r}")
    expect_equal(answer.search.profile, m.Profile.TUNED, "profile")
    expect_equal(answer.search.target_depth, 7, "target_depth of depth auto")


def evaluate(c, client):
    m = c.models
    weights = m.Weights()
    weights["empty"] = 300.0
    body = m.EvaluateRequest(board=rows(c, ROWS), evaluator=m.Evaluator.TUNED, weights=weights)
    expected = {"board": ROWS, "evaluator": "tuned", "weights": {"empty": 300.0}}
    answer, _ = call(c.api["evaluate"], client, body, expected)
    expect(isinstance(answer, m.EvaluateResponse), f"parsed as {type(answer).__name__}")
    expect_equal(answer.evaluator, m.Evaluator.TUNED, "evaluator")
    by_name = {component.name: component for component in answer.components}
    expect("empty" in by_name, f"no component empty among {sorted(by_name)}")
    expect_equal(by_name["empty"].weight, 300.0, "the weight of empty")
    total = sum(component.contribution for component in answer.components)
    expect(math.isclose(answer.total, total, rel_tol=1e-9), f"total {answer.total} is not the sum {total}")
    expect(1 <= len(answer.after_moves) <= 4, f"{len(answer.after_moves)} after_moves")
    expect({a.direction.value for a in answer.after_moves} <= DIRECTIONS, "after_moves directions")


def simulate(c, client):
    m = c.models
    body = m.SimulateRequest(games=1, seed=7, max_moves=5, depth=1, profile=m.Profile.CLASSIC)
    expected = {"games": 1, "seed": 7, "max_moves": 5, "depth": 1, "profile": "classic"}
    answer, _ = call(c.api["simulate"], client, body, expected)
    expect(isinstance(answer, m.SimulateResponse), f"parsed as {type(answer).__name__}")
    expect_equal(len(answer.games), 1, "number of games")
    game = answer.games[0]
    expect(1 <= game.moves <= 5, f"{game.moves} moves with max_moves 5")
    expect_equal(answer.summary.games, 1, "summary.games")
    expect_equal(answer.summary.total_moves, game.moves, "summary.total_moves")
    expect(isinstance(game.seed, int) and game.seed >= 0, f"seed {game.seed!r}")


def analyze(c, client):
    """A /simulate game with trace reviewed through the generated models: every move best at the same settings."""
    m = c.models
    played = m.SimulateRequest(games=1, seed=3, max_moves=12, depth=2, profile=m.Profile.CLASSIC, trace=True)
    games, _ = call(
        c.api["simulate"],
        client,
        played,
        {"games": 1, "seed": 3, "max_moves": 12, "depth": 2, "profile": "classic", "trace": True},
    )
    game = games.games[0]
    body = m.AnalyzeRequest(game=game, depth=2, profile=m.Profile.CLASSIC)
    review, _ = call(
        c.api["analyze"], client, body, {"game": game.to_dict(), "depth": 2, "profile": "classic"}
    )
    expect(isinstance(review, m.AnalyzeResponse), f"parsed as {type(review).__name__}")
    expect_equal(len(review.moves), game.moves, "graded moves")
    expect(all(move.grade == m.Grade.BEST for move in review.moves), "a move of the search's own game was not best")
    expect_equal(review.summary.accuracy, 1.0, "accuracy")
    expect_equal(review.summary.complete, True, "complete")
    # The userscript's record: boards and directions; a board that does not follow is refused at its pointer.
    first = game.trace[0]
    record = [m.RecordMove(board=first.board, direction=first.direction)] * 2
    problem, _ = call(
        c.api["analyze"],
        client,
        m.AnalyzeRequest(moves=record),
        {"moves": [{"board": [[v.value for v in row] for row in first.board], "direction": first.direction.value}] * 2},
        HTTPStatus.UNPROCESSABLE_ENTITY,
    )
    expect(isinstance(problem, m.Problem), f"parsed as {type(problem).__name__}")
    expect_equal([e.pointer for e in problem.errors], ["/moves/1/board"], "the problems' pointers")


def refused(c, client):
    m = c.models
    body = m.BestMoveRequest(board=rows(c, ROWS), depth=30)
    problem, response = call(
        c.api["best_move"], client, body, {"board": ROWS, "depth": 30}, HTTPStatus.UNPROCESSABLE_ENTITY
    )
    expect_equal(response.headers.get("content-type"), "application/problem+json", "content type")
    expect(isinstance(problem, m.Problem), f"parsed as {type(problem).__name__}")
    expect_equal(problem.status, 422, "Problem.status")
    expect_equal([e.pointer for e in problem.errors], ["/depth"], "the problems' pointers")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--url", required=True, help="the running server, e.g. http://127.0.0.1:2048")
    parser.add_argument("--spec", default=str(ROOT / "openapi.yaml"))
    args = parser.parse_args()

    run = Run()
    spec = run.check("the spec parses as YAML", lambda: yaml.safe_load(Path(args.spec).read_text()))
    if spec is None:
        return run.finish()
    run.check("the spec is valid OpenAPI", spec_is_valid_openapi, spec)
    run.check("every $ref names a whole component", every_ref_names_a_whole_component, spec)

    with tempfile.TemporaryDirectory(prefix="advisor2048-client-") as out:
        out = Path(out)
        if run.check("openapi-python-client generates a client", generate, args.spec, out) is None:
            return run.finish()
        c = run.check("the generated client imports", import_client, out)
        if c is None:
            return run.finish()
        run.check("request bodies are models", request_bodies_are_models, c)
        run.check("request fields are typed", request_fields_are_typed, c, spec)
        run.check("enums carry the spec's values", enums_carry_the_spec_values, c, spec)

        client = c.package.Client(base_url=args.url, raise_on_unexpected_status=True, timeout=httpx.Timeout(30.0))
        with client:
            run.check("GET /healthz", healthz, c, client)
            run.check("POST /best-move (rows, classic, depth 3)", best_move_rows, c, client)
            run.check("POST /best-move (hex, tuned, depth auto)", best_move_hex_auto, c, client)
            run.check("POST /evaluate (tuned, weights)", evaluate, c, client)
            run.check("POST /simulate (1 game, 5 moves)", simulate, c, client)
            run.check("POST /analyze (a /simulate game with trace, and a record that jumps)", analyze, c, client)
            run.check("POST /best-move refused (depth 30) -> 422 Problem", refused, c, client)
    return run.finish()


if __name__ == "__main__":
    sys.exit(main())
