"""Compares two networks on the same seeded games, from saved `advisor2048 simulate --json` reports.

    python3 docs/compare.py docs/results/learned-depth5.json docs/results/learned-depth5-seed6.json \
        -- docs/results/sixth-network-learned-depth5.json docs/results/sixth-network-learned-depth5-seed6.json

The reports before `--` are network A's, those after it network B's, in the same order: the same runs (seed, games)
played by each. Game i of a run starts from the same board with the same spawns for both networks until their moves
differ, so the difference of the two scores of each game (A minus B) is a paired sample. Prints, for each side, the
games pooled over its reports (reach rates with 95% Wilson intervals, mean and median score), then the mean paired
difference with its standard error. With no `--`, prints the pooled figures of the reports given (for example the
runs of several seeds of one network, which `advisor2048 report` does not merge: they are not chunks of one run).

Needs only the standard library.
"""
import json
import math
import signal
import statistics
import sys

TILES = [2048, 4096, 8192, 16384, 32768]


def games(paths: list) -> list:
    out = []
    for path in paths:
        with open(path) as f:
            out.extend(json.load(f)["games"])
    return out


def wilson(k: int, n: int, z: float = 1.96) -> tuple:
    p = k / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return 100 * (centre - half), 100 * (centre + half)


def pooled(name: str, gs: list) -> None:
    n = len(gs)
    rates = []
    for tile in TILES:
        k = sum(1 for g in gs if g["max_tile"] >= tile)
        lo, hi = wilson(k, n)
        rates.append(f"{tile} {100 * k / n:.1f}% ({lo:.1f}-{hi:.1f}, {k} games)")
    scores = [g["score"] for g in gs]
    moves = sum(g["moves"] for g in gs)
    ms = sum(g["elapsed_ms"] for g in gs) / moves
    print(f"{name}: {n} games; " + "; ".join(rates))
    print(f"{name}: mean score {statistics.mean(scores):,.0f}, median {statistics.median(scores):,.0f}, "
          f"{ms:.4f} ms per move")


def main(args: list) -> None:
    if not args:
        sys.exit(__doc__)
    if "--" not in args:
        pooled("pooled", games(args))
        return
    cut = args.index("--")
    a, b = games(args[:cut]), games(args[cut + 1:])
    if len(a) != len(b) or any(x["seed"] != y["seed"] for x, y in zip(a, b)):
        sys.exit("the two sides are not the same games (same runs, same order)")
    pooled("A", a)
    pooled("B", b)
    diffs = [x["score"] - y["score"] for x, y in zip(a, b)]
    se = statistics.stdev(diffs) / math.sqrt(len(diffs))
    print(f"A - B: {statistics.mean(diffs):+,.0f} points per game (standard error {se:,.0f}) over {len(diffs)} games")


if __name__ == "__main__":
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)  # end quietly when the reader stops, as the binary does
    main(sys.argv[1:])
