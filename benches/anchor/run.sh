#!/usr/bin/env bash
# The anchor comparison of docs/speed.md: advisor2048's self-play against ziap/2048-tdl's agent with the same network,
# each program's own moves per second, one thread each, both at once (one per processor, `taskset`), swapped every
# round so that each sees both processors (this machine's two processors run at different speeds for tens of seconds
# at a time); the ratio is taken round by round.
#
#   benches/anchor/run.sh ANCHOR_DIR [ROUNDS] [DEPTH]
#
# ANCHOR_DIR: a checkout of ziap/2048-tdl built with `make ENABLE_GUI=false` (its default structure nw4x6; on a
# machine without internet, `touch src/webview.h` first: its makefile downloads that GUI header even then), holding
# nw4x6/weights.bin, e.g. written by `python3 benches/anchor/convert.py nets/4x6-9610fc26ea7e3d8b.a2n
# ANCHOR_DIR/nw4x6/weights.bin` (the shipped network's first stage: the anchor has no stages). DEPTH is ours in plies:
# 5 (its `-d 2`, three move layers; 10 games a round) or 1 (greedy, its `-d 0`; 2000 games a round). ROUNDS defaults
# to 6. ADVISOR2048 names our binary (default target/release/advisor2048); ADVISOR_ARGS adds flags to ours (e.g.
# `--weights nets/4x6-9610fc26ea7e3d8b.a2n` to play the anchor's one-stage network). Ours asks for transparent huge
# pages for its weights; the anchor gets them only where /sys/kernel/mm/transparent_hugepage/enabled says `always`,
# so for a like-for-like comparison set that (as root) for the run and back after (docs/speed.md has both).
set -euo pipefail
anchor=$(cd "$1" && pwd)
rounds=${2:-6}
depth=${3:-5}
ours=$(realpath "${ADVISOR2048:-target/release/advisor2048}")
case "$depth" in
  5) its_depth=2; games=10 ;;
  1) its_depth=0; games=2000 ;;
  *) echo "DEPTH must be 5 or 1" >&2; exit 2 ;;
esac
[ -x "$anchor/2048" ] || { echo "$anchor/2048 not found: build it with make ENABLE_GUI=false" >&2; exit 2; }
[ -s "$anchor/nw4x6/weights.bin" ] || { echo "$anchor/nw4x6/weights.bin missing: see benches/anchor/convert.py" >&2; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for r in $(seq 1 "$rounds"); do
  if [ $((r % 2)) = 1 ]; then a=0; b=1; else a=1; b=0; fi
  # shellcheck disable=SC2086
  taskset -c $a "$ours" simulate --depth "$depth" --games "$games" --seed "$r" --threads 1 ${ADVISOR_ARGS:-} --json \
    > "$tmp/ours.json" 2>/dev/null &
  # The anchor reads its weights from a path relative to its working directory.
  (cd "$anchor" && taskset -c $b ./2048 agent -d "$its_depth" -e "$games" -t 1 > "$tmp/its.txt" 2>&1) &
  wait
  python3 - "$tmp/ours.json" "$tmp/its.txt" "$r" "$a" "$b" <<'PY'
import json, re, sys
ours = json.load(open(sys.argv[1]))["summary"]["moves_per_second"]
rates = re.findall(r"m/s:\s+(\d+)", open(sys.argv[2]).read())
if not rates:
    sys.exit("the anchor printed no m/s line: is nw4x6/weights.bin there?")
its = float(rates[-1])
print(f"round {sys.argv[3]}: ours (processor {sys.argv[4]}) {ours:,.0f} moves/s, its (processor {sys.argv[5]}) "
      f"{its:,.0f} moves/s, ours/its {ours / its:.3f}")
PY
done
