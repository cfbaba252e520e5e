#!/usr/bin/env python3
"""Does more search in the last stretch before 32768 save games? Positions continued with two settings.

From traced runs of the default play (`simulate --trace --json` chunks), takes per game the first board that holds
16384, no 32768, and tiles summing to at least THRESHOLD (the last few hundred moves before the merge into 32768,
where most of the games that make 16384 and not 32768 are lost), then continues each position twice with
`simulate --board` (seed 1000 + its number, at most 500 moves: enough to make 32768 or lose) with the default
settings and with the extra flags of --deep. The two settings share each continuation's seed, so they are compared
pair by pair. Prints how many continuations made 32768 with each and the CPU time per move.

    python3 docs/last_stretch.py BINARY CHUNK.json... [--threshold 32000] [--deep "--depth 11 --node-budget 200000"]
        [--json OUT]
"""
import argparse
import json
import sys

from odds_bar import hex_board, run  # beside this file


def positions(files, threshold):
    picked = []
    for path in files:
        with open(path) as f:
            report = json.load(f)
        for g in report["games"]:
            for i, step in enumerate(g.get("trace") or []):
                cells = [v for row in step["board"] for v in row]
                if max(cells) >= 32768:
                    break
                if max(cells) == 16384 and sum(cells) >= threshold:
                    picked.append({"game": g["index"], "move": i, "board": hex_board(step["board"]),
                                   "made_32768": g["max_tile"] >= 32768})
                    break
    return picked


def continue_twice(binary, board, seed, flags):
    report = run(binary, "simulate", "--board", board, "--games", "2", "--seed", str(seed), "--threads", "2",
                 "--max-moves", "500", "--json", *flags)
    s = report["summary"]
    return [g["max_tile"] for g in report["games"]], s["cpu_ms_per_move"] * s["total_moves"], s["total_moves"]


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("binary")
    p.add_argument("chunks", nargs="+")
    p.add_argument("--threshold", type=int, default=32000)
    p.add_argument("--deep", default="--depth 11 --node-budget 200000")
    p.add_argument("--json")
    a = p.parse_args()
    settings = {"default": [], "deep": a.deep.split()}
    rows = []
    time = {k: [0.0, 0] for k in settings}
    for n, pos in enumerate(positions(a.chunks, a.threshold)):
        row = dict(pos)
        for name, flags in settings.items():
            tiles, ms, moves = continue_twice(a.binary, pos["board"], 1000 + n, flags)
            row[name] = tiles
            time[name][0] += ms
            time[name][1] += moves
        rows.append(row)
        print("game %d move %d %s: default %s, deep %s" % (pos["game"], pos["move"], pos["board"], row["default"],
                                                            row["deep"]), flush=True)
    summary = {}
    for name in settings:
        made = sum(t >= 32768 for r in rows for t in r[name])
        summary[name] = {"continuations": 2 * len(rows), "made_32768": made,
                         "cpu_ms_per_move": time[name][0] / max(1, time[name][1])}
        print("%s: %d of %d continuations made 32768 (%.1f%%), %.2f ms of CPU per move" % (
            name, made, 2 * len(rows), 100 * made / max(1, 2 * len(rows)), summary[name]["cpu_ms_per_move"]))
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"threshold": a.threshold, "deep": a.deep, "positions": rows, "summary": summary}, f, indent=0)


if __name__ == "__main__":
    sys.exit(main())
