//! The plain reference model: n x n boards of tile values (`Vec<Vec<u32>>`, rows top first, 0 = empty), written to
//! be obviously correct rather than fast. Tests use it as the oracle for the bitboard engine; the seed document's
//! worked examples (2x2 boards) run on it. Any n from 2 to 6 (and beyond) works.

use super::rules::Direction;

/// A board of tile values, rows top first, 0 = empty.
pub type Grid = Vec<Vec<u32>>;

/// Moves one line of values. `toward_start`: tiles move toward index 0 (left for a row, up for a column).
/// Returns the new line and the reward (sum of the values of merged tiles).
pub fn move_line(line: &[u32], toward_start: bool) -> (Vec<u32>, u64) {
    let mut tiles: Vec<u32> = line.iter().copied().filter(|&v| v != 0).collect();
    if !toward_start {
        tiles.reverse();
    }
    let mut out = Vec::with_capacity(line.len());
    let mut reward = 0u64;
    let mut i = 0;
    while i < tiles.len() {
        if i + 1 < tiles.len() && tiles[i] == tiles[i + 1] {
            out.push(tiles[i] * 2);
            reward += u64::from(tiles[i]) * 2;
            i += 2;
        } else {
            out.push(tiles[i]);
            i += 1;
        }
    }
    out.resize(line.len(), 0);
    if !toward_start {
        out.reverse();
    }
    (out, reward)
}

/// The grid after moving in `dir` (no spawn) and the reward. Illegal moves return the grid unchanged.
pub fn move_grid(grid: &Grid, dir: Direction) -> (Grid, u64) {
    let n = grid.len();
    let mut out = grid.clone();
    let mut reward = 0;
    for k in 0..n {
        match dir {
            Direction::Left | Direction::Right => {
                let (line, r) = move_line(&grid[k], dir == Direction::Left);
                out[k] = line;
                reward += r;
            }
            Direction::Up | Direction::Down => {
                let column: Vec<u32> = (0..n).map(|row| grid[row][k]).collect();
                let (line, r) = move_line(&column, dir == Direction::Up);
                for (row, v) in line.into_iter().enumerate() {
                    out[row][k] = v;
                }
                reward += r;
            }
        }
    }
    (out, reward)
}

/// Whether moving in `dir` changes the grid.
pub fn is_legal(grid: &Grid, dir: Direction) -> bool {
    move_grid(grid, dir).0 != *grid
}

/// True when no direction changes the grid.
pub fn is_game_over(grid: &Grid) -> bool {
    Direction::ALL.iter().all(|&d| !is_legal(grid, d))
}

/// Number of empty cells.
pub fn empty_count(grid: &Grid) -> usize {
    grid.iter().flatten().filter(|&&v| v == 0).count()
}

/// Positions (row, col) of the empty cells, row-major.
pub fn empty_cells(grid: &Grid) -> Vec<(usize, usize)> {
    let mut cells = Vec::new();
    for (r, row) in grid.iter().enumerate() {
        for (c, &v) in row.iter().enumerate() {
            if v == 0 {
                cells.push((r, c));
            }
        }
    }
    cells
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seed_merge_vectors_left() {
        let cases: [([u32; 4], [u32; 4], u64); 6] = [
            ([2, 2, 2, 2], [4, 4, 0, 0], 8),
            ([4, 4, 8, 8], [8, 16, 0, 0], 24),
            ([2, 2, 4, 0], [4, 4, 0, 0], 4),
            ([2, 0, 2, 4], [4, 4, 0, 0], 4),
            ([8, 0, 0, 8], [16, 0, 0, 0], 16),
            ([2, 2, 2, 0], [4, 2, 0, 0], 4),
        ];
        for (input, expected, reward) in cases {
            assert_eq!(move_line(&input, true), (expected.to_vec(), reward), "{input:?}");
        }
    }
}
