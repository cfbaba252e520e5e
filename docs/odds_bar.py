#!/usr/bin/env python3
"""The reach odds' acceptance bar: positions from seeded games, each continued many times at the default play.

Plays GAMES traced games of the default play (seed SEED, a run the docs use nowhere else), takes from each the
positions where it first held 8192 and 16384 and the one 3,000 moves after its first 16384, asks `evaluate --odds` for
the predicted chances of 16384 and 32768, and continues each position CONT times with `simulate --board` (the default
play, fresh spawns). Prints, per position and tile, the predicted chance against the observed rate with its standard
error, then the mean absolute error against what CONT continuations allow (the mean of |observed - predicted| that
sampling alone gives when every prediction is right).

    python3 docs/odds_bar.py BINARY --games 4 --seed 8118 --continuations 40 --threads 2 [--json OUT]
"""
import argparse
import json
import math
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


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("binary")
    p.add_argument("--games", type=int, default=4)
    p.add_argument("--seed", type=int, default=8118)
    p.add_argument("--continuations", type=int, default=40)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--json")
    a = p.parse_args()
    rows = []
    for pos in positions(a.binary, a.games, a.seed, a.threads):
        odds = run(a.binary, "evaluate", pos["board"], "--odds", "--json")["odds"]["chances"]
        predicted = {c["tile"]: c["chance"] for c in odds}
        cont = run(a.binary, "simulate", "--board", pos["board"], "--games", str(a.continuations),
                   "--seed", str(a.seed * 1000 + len(rows)), "--threads", str(a.threads), "--json")["summary"]
        observed = {r["tile"]: r["rate"] for r in cont["reach"]}
        row = dict(pos, continuations=cont["finished"],
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
        summary[t] = {"positions": len(errs), "mean_abs_error": mean(errs), "sampling_alone": mean(allowed),
                      "mean_predicted": mean([r["tiles"][t]["predicted"] for r in rows if r["tiles"][t]["predicted"] < 1.0]),
                      "mean_observed": mean([r["tiles"][t]["observed"] for r in rows if r["tiles"][t]["predicted"] < 1.0])}
        s = summary[t]
        print("%d: %d positions, mean |observed - predicted| %.3f, sampling alone %.3f; mean predicted %.3f, observed %.3f"
              % (t, s["positions"], s["mean_abs_error"], s["sampling_alone"], s["mean_predicted"], s["mean_observed"]))
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"seed": a.seed, "games": a.games, "continuations": a.continuations,
                       "positions": rows, "summary": summary}, f, indent=1)


if __name__ == "__main__":
    sys.exit(main())
