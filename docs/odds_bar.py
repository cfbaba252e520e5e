#!/usr/bin/env python3
"""The reach odds' acceptance bar: positions from seeded games, each continued many times at the default play.

Plays GAMES traced games of the default play (seed SEED, a run the docs use nowhere else), takes from each the
positions where it first held 8192 and 16384 and the one 3,000 moves after its first 16384, asks `evaluate --odds` for
the predicted chances of 16384 and 32768, and continues each position CONT times with `simulate --board` (the default
play, fresh spawns, each continuation ended when it makes 32768: `--until-tile 32768`). With `--uniform N` the positions
are instead N per game drawn uniformly among its moves whose board lacks 32768 (with `--holding 16384`, and holds
16384: the late game), and the summary adds how far apart the positions' true chances are (the most any predictor
could gain on the Brier score over them). Prints, per position and tile, the predicted chance against the observed
rate with its standard error, then the mean absolute error against what CONT continuations allow: the mean of
|observed - predicted| that sampling alone gives when every prediction is right, and the 95th percentile of that
mean over 100,000 draws of the same continuations (a right model exceeds the mean half of the time, the percentile
one time in twenty). The bar passes for a tile when its error is within the percentile.

    python3 docs/odds_bar.py BINARY --games 4 --seed 8118 --continuations 40 --threads 2 [--json OUT]
    python3 docs/odds_bar.py BINARY --games 10 --seed 5151 --uniform 4 --continuations 20 --threads 2 [--json OUT]
    python3 docs/odds_bar.py BINARY --games 40 --seed 7117 --uniform 1 --holding 16384 --continuations 20 --threads 2

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


def uniform_positions(binary, games, seed, threads, per_game, holding=None):
    """`per_game` positions of each traced game, drawn uniformly (seeded) among its moves whose board lacks 32768
    (and, with `holding`, holds that tile): a sample of the positions an odds check counts for that tile, at every
    stage of the game or, with `holding`, at the stage that tile begins."""
    report = run(binary, "simulate", "--games", str(games), "--seed", str(seed), "--threads", str(threads),
                 "--trace", "--json")
    rng = random.Random(seed)
    picked = []
    for g in report["games"]:
        trace = g["trace"]
        tops = [max(v for row in step["board"] for v in row) for step in trace]
        lacking = [i for i, top in enumerate(tops) if top < 32768 and (holding is None or top >= holding)]
        for i in sorted(rng.sample(lacking, min(per_game, len(lacking)))):
            picked.append({"game": g["index"], "move": i, "label": "uniform, largest %d" % tops[i],
                           "board": hex_board(trace[i]["board"])})
    return picked


def spread(rows, t, draws=2000):
    """How far apart the true chances of tile `t` at these positions are, from their observed rates: the variance
    of the observed rates less what sampling alone adds (each rate's k/n variance, estimated without bias by
    o (1 - o) / (n - 1)). It is the most any predictor, even one that knew each position's true chance, could lower
    the Brier score below predicting these positions' common rate (Brier of the common rate - Brier of the true
    chances = the variance of the true chances). With a 95% upper bound: the largest variance V under which, true
    chances drawn from a beta distribution of the observed mean and variance V and continuations played as many
    times, an estimate as low as this one comes at least one time in twenty. Beside it, what the model's
    predictions gain over the common rate on the same continuations (the Brier score of a prediction p against n
    outcomes with rate o is (p - o)^2 + o (1 - o), so the difference is the squared errors' difference)."""
    cases = [(r["tiles"][t]["predicted"], r["tiles"][t]["observed"], r["continuations"]) for r in rows
             if r["tiles"][t]["predicted"] < 1.0 and r["continuations"] > 1]
    if len(cases) < 2:
        return None

    def estimate(sample):
        obs = [o for o, _ in sample]
        mean = sum(obs) / len(obs)
        between = sum((o - mean) ** 2 for o in obs) / (len(obs) - 1)
        within = sum(o * (1 - o) / (n - 1) for o, n in sample) / len(sample)
        return between - within, mean

    var, mean = estimate([(o, n) for _, o, n in cases])
    rng = random.Random(20482)

    def low_share(v):
        """The share of simulated estimates at most `var` when the true chances' variance is `v`."""
        k = mean * (1 - mean) / v - 1 if v > 0 else None
        low = 0
        for _ in range(draws):
            sample = []
            for _, _, n in cases:
                q = rng.betavariate(mean * k, (1 - mean) * k) if k else mean
                sample.append((sum(rng.random() < q for _ in range(n)) / n, n))
            low += estimate(sample)[0] <= var
        return low / draws

    # The bound on a grid of variances (steps of 0.0005 up to the largest a chance in [0, 1] allows).
    bound, v = 0.0, 0.0005
    while v < mean * (1 - mean) and low_share(v) >= 0.05:
        bound, v = v, v + 0.0005
    gain = sum((mean - o) ** 2 - (p - o) ** 2 for p, o, _ in cases) / len(cases)
    return {"positions": len(cases), "mean_observed": mean, "true_chance_variance": max(var, 0.0),
            "true_chance_variance_raw": var, "true_chance_variance_p95": bound,
            "brier_of_common_rate": mean * (1 - mean), "model_brier_gain": gain}


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
    p.add_argument("--observed", nargs="+", metavar="OLD.json",
                   help="reuse the positions and observed rates of this earlier output (several: pooled, each "
                        "position still counted with its own continuations)")
    p.add_argument("--uniform", type=int, metavar="N",
                   help="instead of the milestones, N positions of each game drawn uniformly among its moves whose "
                        "board lacks 32768 (the positions an odds check counts for that tile)")
    p.add_argument("--holding", type=int, metavar="TILE",
                   help="with --uniform: only among the moves whose board holds TILE (e.g. 16384: the late game, "
                        "where the boards' chances of 32768 differ most)")
    a = p.parse_args()
    if a.holding and not a.uniform:
        p.error("--holding goes with --uniform")
    old = None
    if a.observed:
        olds = []
        for path in a.observed:
            with open(path) as f:
                olds.append(json.load(f))
        # One file: its run's figures as they were; several: each figure a list, one per file, in order.
        pick = (lambda key: olds[0].get(key)) if len(olds) == 1 else (lambda key: [o.get(key) for o in olds])
        a.seed, a.games, a.continuations, a.uniform = pick("seed"), pick("games"), pick("continuations"), pick("uniform")
        a.holding = pick("holding")
        old = {"positions": [dict(pos, run=o["seed"]) if len(olds) > 1 else pos
                             for o in olds for pos in o["positions"]]}
    rows = []
    if old:
        picked = old["positions"]
    elif a.uniform:
        picked = uniform_positions(a.binary, a.games, a.seed, a.threads, a.uniform, a.holding)
    else:
        picked = positions(a.binary, a.games, a.seed, a.threads)
    for pos in picked:
        odds = run(a.binary, "evaluate", pos["board"], "--odds", "--json")["odds"]["chances"]
        predicted = {c["tile"]: c["chance"] for c in odds}
        if old:
            observed = {int(t): v["observed"] for t, v in pos["tiles"].items()}
            finished = pos["continuations"]
            pos = {k: pos[k] for k in ("run", "game", "move", "label", "board") if k in pos}
        else:
            # Each continuation ends when it makes 32768: the last tile counted here, so nothing after it is needed.
            cont = run(a.binary, "simulate", "--board", pos["board"], "--games", str(a.continuations),
                       "--until-tile", "32768", "--seed", str(a.seed * 1000 + len(rows)), "--threads", str(a.threads),
                       "--json")["summary"]
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
        summary[t]["spread"] = spread(rows, t)
        s = summary[t]
        if not s["positions"]:
            print("%d: no position lacks it" % t)
            continue
        print("%d: %d positions, mean |observed - predicted| %.3f, sampling alone %.3f (95th percentile %.3f): %s; "
              "mean predicted %.3f, observed %.3f"
              % (t, s["positions"], s["mean_abs_error"], s["sampling_alone"], s["sampling_alone_p95"],
                 "passes" if s["passes"] else "misses", s["mean_predicted"], s["mean_observed"]))
        if s["spread"]:
            v = s["spread"]
            print("%d: the true chances' variance across the positions %.5f (95%% upper bound %.5f; raw %.5f): the "
                  "most any predictor could lower the Brier score below the common rate's %.4f; the model lowers it "
                  "by %.5f on these continuations"
                  % (t, v["true_chance_variance"], v["true_chance_variance_p95"], v["true_chance_variance_raw"],
                     v["brier_of_common_rate"], v["model_brier_gain"]))
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"seed": a.seed, "games": a.games, "continuations": a.continuations, "uniform": a.uniform,
                       "holding": a.holding, "positions": rows, "summary": summary}, f, indent=1)


if __name__ == "__main__":
    sys.exit(main())
