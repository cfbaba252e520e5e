#!/usr/bin/env python3
"""The reach odds' acceptance bar: positions from seeded games, each continued many times at the default play.

Plays GAMES traced games of the default play (seed SEED, a run the docs use nowhere else), takes from each the
positions where it first held 8192 and 16384 and the one 3,000 moves after its first 16384, asks `evaluate --odds` for
the predicted chances of 16384 and 32768, and continues each position CONT times with `simulate --board` (the default
play, fresh spawns). Prints, per position and tile, the predicted chance against the observed rate with its standard
error, then the mean absolute error against what CONT continuations allow: the mean of |observed - predicted| that
sampling alone gives when every prediction is right, and the 95th percentile of that mean over 100,000 draws of
the same continuations (a right model exceeds the mean half of the time, the percentile one time in twenty). The
bar passes for a tile when its error is within the percentile.

    python3 docs/odds_bar.py BINARY --games 4 --seed 8118 --continuations 40 --threads 2 [--json OUT]

With `--observed OLD.json` (an earlier run's output) the positions and observed rates are read from it and only the
predictions are asked again: for a new odds model of the same default play, whose continuations (seeded, searched
by node counts) would be the same games.
"""
import argparse
import json
import math
import random
import subprocess
import sys

TILES = (16384, 32768)


def run(binary, *args):
    out = subprocess.run([binary, *args], check=True, capture_output=True, text=True)
    return json.loads(out.stdout)


def hex_board(rows):
    cells = [v for row in rows for v in row]
    return "".join("%x" % (int(math.log2(v)) if v else 0) for v in cells)


def positions(binary, games, seed, threads):
    report = run(binary, "simulate", "--games", str(games), "--seed", str(seed), "--threads", str(threads),
                 "--trace", "--json")
    picked = []
    for g in report["games"]:
        trace = g["trace"]
        firsts = {}
        for i, step in enumerate(trace):
            top = max(v for row in step["board"] for v in row)
            for tile in (8192, 16384):
                if top >= tile and tile not in firsts:
                    firsts[tile] = i
        marks = [("first 8192", firsts.get(8192)), ("first 16384", firsts.get(16384))]
        if 16384 in firsts:
            marks.append(("16384 + 3000 moves", firsts[16384] + 3000))
        for label, i in marks:
            if i is not None and i < len(trace):
                picked.append({"game": g["index"], "move": i, "label": label, "board": hex_board(trace[i]["board"])})
    return picked


def sampling_percentile(cases, q, draws=100_000):
    """The q-quantile of mean |observed - p| over `cases` (p, n) when each observed rate is Binomial(n, p) / n:
    what sampling alone gives a model whose every prediction is right. Seeded, so a run repeats its figure."""
    if not cases:
        return float("nan")
    rng = random.Random(20481)
    # Each case's |k/n - p| distribution, as (value, cumulative probability), drawn by inverse transform.
    tables = []
    for p, n in cases:
        probs = [math.comb(n, k) * p ** k * (1 - p) ** (n - k) for k in range(n + 1)]
        acc, cum = 0.0, []
        for k, pk in enumerate(probs):
            acc += pk
            cum.append((acc, abs(k / n - p)))
        tables.append(cum)
    means = []
    for _ in range(draws):
        total = 0.0
        for cum in tables:
            u = rng.random()
            total += next((v for c, v in cum if u <= c), cum[-1][1])
        means.append(total / len(tables))
    means.sort()
    return means[min(len(means) - 1, int(q * len(means)))]


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("binary")
    p.add_argument("--games", type=int, default=4)
    p.add_argument("--seed", type=int, default=8118)
    p.add_argument("--continuations", type=int, default=40)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--json")
    p.add_argument("--observed", help="reuse the positions and observed rates of this earlier output")
    a = p.parse_args()
    old = None
    if a.observed:
        with open(a.observed) as f:
            old = json.load(f)
        a.seed, a.games, a.continuations = old["seed"], old["games"], old["continuations"]
    rows = []
    for pos in (old["positions"] if old else positions(a.binary, a.games, a.seed, a.threads)):
        odds = run(a.binary, "evaluate", pos["board"], "--odds", "--json")["odds"]["chances"]
        predicted = {c["tile"]: c["chance"] for c in odds}
        if old:
            observed = {int(t): v["observed"] for t, v in pos["tiles"].items()}
            finished = pos["continuations"]
            pos = {k: pos[k] for k in ("game", "move", "label", "board")}
        else:
            cont = run(a.binary, "simulate", "--board", pos["board"], "--games", str(a.continuations),
                       "--seed", str(a.seed * 1000 + len(rows)), "--threads", str(a.threads), "--json")["summary"]
            observed = {r["tile"]: r["rate"] for r in cont["reach"]}
            finished = cont["finished"]
        row = dict(pos, continuations=finished,
                   tiles={t: {"predicted": predicted[t], "observed": observed[t]} for t in TILES})
        rows.append(row)
        print("game %d move %5d (%s) %s: " % (pos["game"], pos["move"], pos["label"], pos["board"])
              + ", ".join("%d predicted %.3f observed %.3f" % (t, predicted[t], observed[t]) for t in TILES),
              flush=True)
    summary = {}
    for t in TILES:
        errs = [abs(r["tiles"][t]["observed"] - r["tiles"][t]["predicted"]) for r in rows
                if r["tiles"][t]["predicted"] < 1.0]
        # |observed - p| of a binomial rate over n games, averaged: about sqrt(2 p (1 - p) / (pi n)).
        allowed = [math.sqrt(2 * r["tiles"][t]["predicted"] * (1 - r["tiles"][t]["predicted"]) /
                             (math.pi * r["continuations"])) for r in rows if r["tiles"][t]["predicted"] < 1.0]
        mean = lambda xs: sum(xs) / len(xs) if xs else float("nan")
        cases = [(r["tiles"][t]["predicted"], r["continuations"]) for r in rows if r["tiles"][t]["predicted"] < 1.0]
        p95 = sampling_percentile(cases, 0.95)
        summary[t] = {"positions": len(errs), "mean_abs_error": mean(errs), "sampling_alone": mean(allowed),
                      "sampling_alone_p95": p95, "passes": bool(errs) and mean(errs) <= p95,
                      "mean_predicted": mean([r["tiles"][t]["predicted"] for r in rows if r["tiles"][t]["predicted"] < 1.0]),
                      "mean_observed": mean([r["tiles"][t]["observed"] for r in rows if r["tiles"][t]["predicted"] < 1.0])}
        s = summary[t]
        print("%d: %d positions, mean |observed - predicted| %.3f, sampling alone %.3f (95th percentile %.3f): %s; "
              "mean predicted %.3f, observed %.3f"
              % (t, s["positions"], s["mean_abs_error"], s["sampling_alone"], s["sampling_alone_p95"],
                 "passes" if s["passes"] else "misses", s["mean_predicted"], s["mean_observed"]))
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"seed": a.seed, "games": a.games, "continuations": a.continuations,
                       "positions": rows, "summary": summary}, f, indent=1)


if __name__ == "__main__":
    sys.exit(main())
