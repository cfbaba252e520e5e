"""Plots a learning curve written by `advisor2048 train --log FILE` (CSV) as a PNG.

    python3 docs/plot_training.py docs/results/training-4x6.csv [more.csv ...] docs/training.png

Several CSVs are the runs of one network in order (each resumes the previous one's checkpoint) and are drawn as one
curve.

Needs matplotlib (pip install matplotlib). Left axis: the rolling mean score of the last 1000 games from the start;
right axis: the share of those games that reached 2048 ... 32768; both against moves trained.
"""
import csv
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def main(srcs: list, out: str) -> None:
    rows = []
    for src in srcs:
        with open(src, newline="") as f:
            rows.extend(csv.DictReader(f))
    moves = [int(r["moves"]) / 1e9 for r in rows]
    fig, ax = plt.subplots(figsize=(9, 5))
    ax.plot(moves, [float(r["rolling_mean_score"]) for r in rows], color="black", label="rolling mean score")
    ax.set_xlabel("moves trained (billions)")
    ax.set_ylabel("mean score of the last 1000 games")
    ax.grid(alpha=0.3)
    rates = ax.twinx()
    for tile in ["2048", "4096", "8192", "16384", "32768"]:
        rates.plot(moves, [100 * float(r[f"reach_{tile}"]) for r in rows], label=f"reached {tile}", alpha=0.8)
    rates.set_ylabel("games reaching the tile (%)")
    rates.set_ylim(0, 100)
    lines = ax.get_legend_handles_labels()
    more = rates.get_legend_handles_labels()
    ax.legend(lines[0] + more[0], lines[1] + more[1], loc="center right", fontsize=8)
    ax.set_title("advisor2048 train --net 4x6: greedy self-play during training")
    fig.tight_layout()
    fig.savefig(out, dpi=110)


if __name__ == "__main__":
    main(sys.argv[1:-1], sys.argv[-1])
