"""Draws the reliability diagrams of `advisor2048 odds-check --json` (one panel per tile) as a PNG.

    advisor2048 odds-check --games 200 --seed 2002 --sample-every 200 --json > docs/results/odds-check.json
    python3 docs/plot_odds.py docs/results/odds-check.json docs/odds-reliability.png

Needs matplotlib (pip install matplotlib). Each panel: the mean predicted chance of each bin (tenths) against the
share of its positions whose game made the tile, with a 95% Wilson interval counting the bin's positions as if they
were independent (positions of one game share its outcome, so the true interval is wider); the diagonal is perfect
calibration. Tiles no position lacked, or no game made, are left out.
"""
import json
import math
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def wilson(k: float, n: int, z: float = 1.96) -> tuple:
    if n == 0:
        return (0.0, 1.0)
    p = k / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return (centre - half, centre + half)


def main(src: str, out: str) -> None:
    with open(src) as f:
        table = json.load(f)
    tiles = [t for t in table["tiles"] if t["positions"] > 0 and 0 < t["base_rate"] < 1]
    fig, axes = plt.subplots(1, len(tiles), figsize=(4.2 * len(tiles), 4.4), squeeze=False)
    for ax, t in zip(axes[0], tiles):
        bins = t["bins"]
        x = [b["predicted"] for b in bins]
        y = [b["observed"] for b in bins]
        low = [b["observed"] - wilson(b["observed"] * b["count"], b["count"])[0] for b in bins]
        high = [wilson(b["observed"] * b["count"], b["count"])[1] - b["observed"] for b in bins]
        ax.plot([0, 1], [0, 1], color="grey", linestyle="--", linewidth=1, label="perfect")
        ax.errorbar(x, y, yerr=[low, high], fmt="o", color="black", capsize=3, label="bins (tenths)")
        for b in bins:
            ax.annotate(str(b["count"]), (b["predicted"], b["observed"]), textcoords="offset points",
                        xytext=(5, -12), fontsize=7, color="dimgrey")
        ax.axhline(t["base_rate"], color="tab:blue", linewidth=1, alpha=0.6, label="base rate")
        ax.set_xlim(0, 1)
        ax.set_ylim(0, 1)
        ax.set_aspect("equal")
        ax.set_xlabel("predicted chance")
        ax.set_ylabel("observed rate")
        ax.set_title(
            f"{t['tile']}: {t['positions']} positions, {t['games']} games\n"
            f"calibration error {100 * t['calibration_error']:.1f} pts; "
            f"Brier {t['brier']:.4f} vs {t['base_brier']:.4f}",
            fontsize=9,
        )
        ax.grid(alpha=0.3)
    axes[0][0].legend(loc="upper left", fontsize=8)
    fig.suptitle(f"reach odds on held-out games ({table['positions']} positions of {table['games']} games)")
    fig.tight_layout()
    fig.savefig(out, dpi=110)


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    main(sys.argv[1], sys.argv[2])
