#!/usr/bin/env bash
# Speed comparison on the same 60 positions (benches/positions.txt), tuned profile, depth auto, one thread:
# advisor2048's search against benches/cpp/expectimax.cpp, a straightforward C++ implementation of the same search
# (row and column tables, the tuned heuristic table, std::unordered_map transposition table). Runs the two
# alternately three times so both see the same machine load, and prints nodes/s, positions/s and their ratios.
set -euo pipefail
cd "$(dirname "$0")/../.."
cargo build --release --quiet
g++ -O3 -march=native -o target/cpp-expectimax benches/cpp/expectimax.cpp
for i in 1 2 3; do
  cpp=$(target/cpp-expectimax benches/positions.txt)
  rust=$(target/release/advisor2048 bench --json)
  python3 - "$cpp" "$rust" <<'PY'
import json, re, sys
cpp, rust = sys.argv[1], json.loads(sys.argv[2])
m = re.search(r"(\d+) nodes, ([\d.]+) s, (\d+) nodes/s, ([\d.]+) positions/s", cpp)
c_nodes_s, c_pos_s = float(m.group(3)), float(m.group(4))
print(f"C++ {c_nodes_s/1e6:.1f} M nodes/s, {c_pos_s:.2f} positions/s | advisor2048 {rust['nodes_per_s']/1e6:.1f} M nodes/s, "
      f"{rust['positions_per_s']:.2f} positions/s | ratio nodes/s {rust['nodes_per_s']/c_nodes_s:.2f}, "
      f"positions/s {rust['positions_per_s']/c_pos_s:.2f}")
PY
done
