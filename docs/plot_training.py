"""Plots a learning curve written by `advisor2048 train --log FILE` (CSV) as a PNG.

    python3 docs/plot_training.py docs/results/training-4x6-after-update.csv \
        docs/results/training-4x6-after-update-continued.csv docs/training.png

Several CSVs are the runs of one network in order and are drawn as one curve. A run resumed from a checkpoint
continues its counters; a run resumed from a shipped file starts them again at 0, so a CSV whose moves start below
the previous CSV's last count is shifted to begin where that one ended, and the join is marked by a dashed line.

Needs matplotlib (pip install matplotlib). Left axis: the rolling mean score of the last 1000 games from the start;
right axis: the share of those games that reached 2048 ... 32768; both against moves trained.
"""
import csv
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def read(srcs: list) -> tuple:
    """The rows of every CSV in order, each with its moves in billions (shifted past a restart of the counters),
    and the moves at which the counters restarted."""
    rows, joins, offset, last = [], [], 0, 0
    for src in srcs:
        with open(src, newline="") as f:
            part = list(csv.DictReader(f))
        if part and int(part[0]["moves"]) < last:
            offset = last
            joins.append(offset / 1e9)
        for r in part:
            r["moves_billions"] = (offset + int(r["moves"])) / 1e9
        rows.extend(part)
        if part:
            last = offset + int(part[-1]["moves"])
    return rows, joins


def main(srcs: list, out: str) -> None:
    rows, joins = read(srcs)
    moves = [r["moves_billions"] for r in rows]
    fig, ax = plt.subplots(figsize=(9, 5))
    ax.plot(moves, [float(r["rolling_mean_score"]) for r in rows], color="black", label="rolling mean score")
    ax.set_xlabel("moves trained (billions)")
    ax.set_ylabel("mean score of the last 1000 games")
    ax.grid(alpha=0.3)
    for x in joins:
        ax.axvline(x, color="grey", linestyle="--", linewidth=1)
    rates = ax.twinx()
    for tile in ["2048", "4096", "8192", "16384", "32768"]:
        rates.plot(moves, [100 * float(r[f"reach_{tile}"]) for r in rows], label=f"reached {tile}", alpha=0.8)
    rates.set_ylabel("games reaching the tile (%)")
    rates.set_ylim(0, 100)
    lines = ax.get_legend_handles_labels()
    more = rates.get_legend_handles_labels()
    rates.legend(lines[0] + more[0], lines[1] + more[1], loc="upper center", bbox_to_anchor=(0.5, -0.12), ncol=6,
                 fontsize=8, frameon=False)
    ax.set_title("advisor2048 train --net 4x6: greedy self-play during training")
    fig.tight_layout()
    fig.savefig(out, dpi=110)


if __name__ == "__main__":
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    main(sys.argv[1:-1], sys.argv[-1])
