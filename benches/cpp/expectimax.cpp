// A straightforward C++ implementation of the same search as advisor2048's `tuned` profile, for a speed comparison
// on the same positions: 64-bit board, row tables for moves (left/right) and column tables (up/down) as C++ 2048
// engines usually build them, the tuned row heuristic table, expectimax in plies with the 0.0001 probability cut-off,
// `auto` depth, and a std::unordered_map transposition table per root move keyed by the board at chance nodes.
// Build and run: benches/cpp/run.sh (prints nodes, seconds and nodes/s; values per position to compare).
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <string>
#include <unordered_map>
#include <vector>

typedef uint64_t board_t;
typedef uint16_t row_t;

static row_t row_left[65536], row_right[65536];
static board_t col_up[65536], col_down[65536];
static double heur[65536];

static board_t unpack_col(row_t row) {
  board_t t = row;
  return (t | (t << 12ULL) | (t << 24ULL) | (t << 36ULL)) & 0x000F000F000F000FULL;
}
static row_t reverse_row(row_t row) { return (row >> 12) | ((row >> 4) & 0x00F0) | ((row << 4) & 0x0F00) | (row << 12); }

static board_t transpose(board_t x) {
  board_t a1 = x & 0xF0F00F0FF0F00F0FULL, a2 = x & 0x0000F0F00000F0F0ULL, a3 = x & 0x0F0F00000F0F0000ULL;
  board_t a = a1 | (a2 << 12) | (a3 >> 12);
  board_t b1 = a & 0xFF00FF0000FF00FFULL, b2 = a & 0x00FF00FF00000000ULL, b3 = a & 0x00000000FF00FF00ULL;
  return b1 | (b2 >> 24) | (b3 << 24);
}

// Row i of the board is bits 48-16i..; leftmost cell in the high nibble (advisor2048's layout).
static void init_tables() {
  for (unsigned row = 0; row < 65536; ++row) {
    unsigned line[4] = {(row >> 12) & 15, (row >> 8) & 15, (row >> 4) & 15, row & 15};
    // heuristic (tuned weights)
    double sum = 0, empty = 0, merges = 0, left = 0, right = 0;
    int prev = 0, counter = 0;
    for (int i = 0; i < 4; ++i) {
      int r = line[i];
      if (r == 0) { empty++; continue; }
      sum += pow(r, 3.5);
      if (prev == r) counter++;
      else if (counter > 0) { merges += 1 + counter; counter = 0; }
      prev = r;
    }
    if (counter > 0) merges += 1 + counter;
    for (int i = 1; i < 4; ++i) {
      if (line[i - 1] > line[i]) left += pow(line[i - 1], 4) - pow(line[i], 4);
      else right += pow(line[i], 4) - pow(line[i - 1], 4);
    }
    heur[row] = 200000.0 + 270.0 * empty + 700.0 * merges - 47.0 * std::min(left, right) - 11.0 * sum;
    // move toward index 0 (left)
    unsigned out[4] = {0, 0, 0, 0};
    int n = 0; bool open = false;
    for (int i = 0; i < 4; ++i) {
      if (!line[i]) continue;
      if (open && out[n - 1] == line[i] && line[i] != 15) { out[n - 1]++; open = false; }
      else { out[n++] = line[i]; open = true; }
    }
    row_t result = (out[0] << 12) | (out[1] << 8) | (out[2] << 4) | out[3];
    row_t rev_row = reverse_row(row), rev_result = reverse_row(result);
    row_left[row] = result;
    row_right[rev_row] = rev_result;
    col_up[row] = unpack_col(row) ^ unpack_col(result);
    col_down[rev_row] = unpack_col(rev_row) ^ unpack_col(rev_result);
  }
}

static board_t move_board(board_t b, int dir) {
  board_t r = 0;
  if (dir == 0 || dir == 1) {  // up, down: columns via the transpose
    board_t t = transpose(b);
    const board_t *tab = dir == 0 ? col_up : col_down;
    r = b;
    r ^= tab[(t >> 48) & 0xFFFF] << 12; r ^= tab[(t >> 32) & 0xFFFF] << 8;
    r ^= tab[(t >> 16) & 0xFFFF] << 4;  r ^= tab[t & 0xFFFF];
  } else {
    const row_t *tab = dir == 2 ? row_left : row_right;
    r |= (board_t)tab[(b >> 48) & 0xFFFF] << 48; r |= (board_t)tab[(b >> 32) & 0xFFFF] << 32;
    r |= (board_t)tab[(b >> 16) & 0xFFFF] << 16; r |= (board_t)tab[b & 0xFFFF];
  }
  return r;
}

static double score_board(board_t b) {
  board_t t = transpose(b);
  return heur[(b >> 48) & 0xFFFF] + heur[(b >> 32) & 0xFFFF] + heur[(b >> 16) & 0xFFFF] + heur[b & 0xFFFF] +
         heur[(t >> 48) & 0xFFFF] + heur[(t >> 32) & 0xFFFF] + heur[(t >> 16) & 0xFFFF] + heur[t & 0xFFFF];
}

struct Entry { uint8_t plies; float value; };
struct State { std::unordered_map<board_t, Entry> tt; uint64_t nodes = 0; };

static double chance(State &s, board_t b, int plies, double prob);

static double move_node(State &s, board_t b, int plies, double prob) {
  if (plies == 0) return score_board(b);
  double best = -1e300; bool any = false;
  for (int d = 0; d < 4; ++d) {
    board_t nb = move_board(b, d);
    s.nodes++;
    if (nb != b) { any = true; best = std::max(best, chance(s, nb, plies - 1, prob)); }
  }
  return any ? best : 0.0;
}

static double chance(State &s, board_t b, int plies, double prob) {
  if (plies == 0 || prob < 0.0001) return score_board(b);
  auto it = s.tt.find(b);
  if (it != s.tt.end() && it->second.plies >= plies) return it->second.value;
  int empty = 0;
  for (board_t t = b; ; ) { for (int i = 0; i < 16; ++i) { if (((t >> (4 * i)) & 15) == 0) empty++; } break; }
  if (empty == 0) return score_board(b);
  double p2 = prob * 0.9 / empty, p4 = prob * 0.1 / empty, sum = 0;
  board_t tmp = b, tile = 1;
  while (tile) {
    if ((tmp & 15) == 0) {
      sum += 0.9 * move_node(s, b | tile, plies - 1, p2);
      sum += 0.1 * move_node(s, b | (tile << 1), plies - 1, p4);
    }
    tmp >>= 4; tile <<= 4;
  }
  double v = sum / empty;
  s.tt[b] = Entry{(uint8_t)plies, (float)v};
  return v;
}

static int auto_depth(board_t b) {
  unsigned seen = 0;
  for (int i = 0; i < 16; ++i) { int e = (b >> (4 * i)) & 15; if (e) seen |= 1u << e; }
  int distinct = __builtin_popcount(seen);
  return 2 * std::max(3, distinct - 2) + 1;
}

int main(int argc, char **argv) {
  init_tables();
  std::ifstream in(argc > 1 ? argv[1] : "benches/positions.txt");
  std::vector<board_t> boards;
  for (std::string line; std::getline(in, line);)
    if (!line.empty() && line[0] != '#') boards.push_back(std::stoull(line, nullptr, 16));
  uint64_t nodes = 0;
  auto start = std::chrono::steady_clock::now();
  for (board_t b : boards) {
    int depth = auto_depth(b);
    State s;
    s.nodes += 4;
    double best = -1; int best_dir = -1;
    for (int d = 0; d < 4; ++d) {
      board_t nb = move_board(b, d);
      if (nb == b) continue;
      s.tt.clear();  // one table per root direction, as advisor2048 does
      double v = chance(s, nb, depth - 1, 1.0);
      if (v > best) { best = v; best_dir = d; }
    }
    nodes += s.nodes;
    if (getenv("SHOW_VALUES")) printf("%016llx %d %.2f\n", (unsigned long long)b, best_dir, best);
  }
  double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  printf("C++: %zu positions, %llu nodes, %.3f s, %.0f nodes/s, %.2f positions/s\n", boards.size(),
         (unsigned long long)nodes, secs, nodes / secs, boards.size() / secs);
}
