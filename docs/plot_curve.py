"""Draws the strength-against-time curve: the 32768 rate (with its 95% Wilson interval) and the mean score of each
`simulate` run against its mean time per move, as a PNG.

    python3 docs/plot_curve.py docs/strength-time.png LABEL=REPORT.json ...

Each REPORT is an `advisor2048 simulate --json` or `advisor2048 report --json` output; its time per move is the
summary's `cpu_ms_per_move` (the CPU time of the game threads: runs counted on the CPU clock hold it to their budget),
or `ms_per_move` for a report without it, or the figure given after the file (`LABEL=REPORT.json@0.12`: a run
played before `cpu_ms` was kept, beside other work, timed by `advisor2048 bench` instead). `LABEL=A.json+B.json`
pools runs of the same settings (other seeds): their games, moves and times together. Labels starting with "budget"
(time budgets) and "nodes" (node budgets) are drawn as series of their own, the others (fixed depths) as a third.
A label `SERIES:label` (e.g. `network 6ede5128:depth-5=...`) is drawn in a series of its own named SERIES, to set
another network's runs beside the shipped one's. Needs matplotlib (pip install matplotlib).
"""
import json
import math
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def wilson(k: int, n: int, z: float = 1.96) -> tuple:
    """The 95% Wilson score interval of k successes in n trials."""
    p = k / n
    d = 1 + z * z / n
    c = p + z * z / (2 * n)
    h = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    return (c - h) / d, (c + h) / d


def point(label: str, spec: str) -> dict:
    paths, _, given_ms = spec.partition("@")
    reached = games = moves = 0
    ms_sum = score_sum = 0.0
    for path in paths.split("+"):
        with open(path) as f:
            s = json.load(f)["summary"]
        rate = next(r for r in s["reach"] if r["tile"] == 32768)
        reached += rate["reached"]
        games += rate["games"]
        moves += s["total_moves"]
        ms_sum += (s.get("cpu_ms_per_move") or s["ms_per_move"]) * s["total_moves"]
        score_sum += s["mean_score"] * s["finished"]
    low, high = wilson(reached, games)
    ms = float(given_ms) if given_ms else ms_sum / moves
    return dict(label=label, ms=ms, rate=reached / games, low=low, high=high, games=games, mean=score_sum / games)


def kind(label: str) -> str:
    """The series a label belongs to: the part before a colon, else its first word ("budget", "nodes"), else "depth"."""
    if ":" in label:
        return label.split(":", 1)[0]
    return next((k for k in ("budget", "nodes") if label.startswith(k)), "depth")


def main(out: str, specs: list) -> None:
    points = [point(*spec.split("=", 1)) for spec in specs]
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(11, 4.2))
    names = {"budget": "time budget", "nodes": "node budget (the default)", "depth": "fixed depth"}
    others = sorted({kind(p["label"]) for p in points} - set(names))
    markers = dict(budget="o", nodes="D", depth="s") | {name: "^v<>px"[i % 6] for i, name in enumerate(others)}
    for series, marker in markers.items():
        pts = sorted((p for p in points if kind(p["label"]) == series), key=lambda p: p["ms"])
        if not pts:
            continue
        xs = [p["ms"] for p in pts]
        name = names.get(series, series)
        style = dict(marker=marker, label=name, linestyle="--" if series in others else "-")
        ax1.errorbar(xs, [100 * p["rate"] for p in pts],
                     yerr=[[100 * (p["rate"] - p["low"]) for p in pts], [100 * (p["high"] - p["rate"]) for p in pts]],
                     capsize=3, **style)
        ax2.plot(xs, [p["mean"] for p in pts], **style)
        for p in pts:
            if series in others:
                continue  # its labels would overlap the shipped network's: the legend names the series
            ax1.annotate(f"{p['label']} ({p['games']})", (p["ms"], 100 * p["rate"]), textcoords="offset points",
                         xytext=(4, -12), fontsize=7)
    for ax in (ax1, ax2):
        ax.set_xscale("log")
        ax.set_xlabel("mean CPU time per move (ms, log scale)")
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=8)
    ax1.set_ylabel("games reaching 32768 (%), 95% interval")
    ax2.set_ylabel("mean score")
    fig.suptitle("advisor2048, profile learned, the shipped network 90d6b7a5db066a49 unless the legend names another\n"
                 "(self-play, complete games; label: run (games))", fontsize=10)
    fig.tight_layout()
    fig.savefig(out, dpi=90)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2:])
