//! Board formats: rows of tile values, 16 hex digits of exponents, and the original game's saved state
//! (`localStorage.gameState`, column-major). Parsing returns [`Tiles`]; errors name the cell and the reason.
//!
//! This module sees already-decoded numbers (the JSON decoding lives in the callers), so it has no serde.

use std::fmt;
use std::str::FromStr;

use super::board::Board;
use super::rules::{MAX_EXPONENT, MAX_SUM, MAX_TILE};
use super::tiles::Tiles;

/// A board that could not be parsed: where (a JSON-pointer style path inside the board, `""` for the whole
/// board, e.g. `/2/3` for row 2, column 3) and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BoardError {
    /// Path of the offending element inside the board value, in JSON pointer syntax.
    pub path: String,
    pub kind: BoardErrorKind,
}

/// Why a board is invalid.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BoardErrorKind {
    /// A number that is not 0 or a power of two from 2 to 131072.
    NotATile(i64),
    /// A number that is not an integer, carried as text.
    NotAnInteger(String),
    /// The board does not have 4 rows (or the saved state 4 columns).
    WrongLineCount(usize),
    /// A row (or saved-state column) does not have 4 cells.
    WrongLineLength(usize),
    /// A hex board that is not 16 digits long (length in characters).
    HexLength(usize),
    /// A character that is not a hex digit, and its position (0 = the top-left cell).
    HexDigit { index: usize, ch: char },
    /// The saved state's grid does not have 4 columns.
    WrongColumnCount(usize),
    /// A saved-state column does not have 4 cells.
    WrongColumnLength(usize),
    /// A saved-state tile whose value is not a power of two from 2 to 131072 (empty cells are `null`).
    NotASavedTile(i64),
    /// Tiles summing to more than any 4x4 game can hold (2^18 - 4 = 262140).
    Unreachable(u64),
    /// The saved state's `grid.size` is not 4.
    GridSize(i64),
    /// A saved-state cell whose `position` disagrees with where it is stored.
    PositionMismatch { x: i64, y: i64 },
}

impl fmt::Display for BoardErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BoardErrorKind::NotATile(v) => {
                write!(f, "{v} is not a tile value (0 or a power of two from 2 to {MAX_TILE})")
            }
            BoardErrorKind::NotAnInteger(v) => {
                write!(f, "{v} is not a tile value (0 or a power of two from 2 to {MAX_TILE})")
            }
            BoardErrorKind::WrongLineCount(n) => write!(f, "a board has 4 rows, found {n}"),
            BoardErrorKind::WrongLineLength(n) => write!(f, "a row has 4 cells, found {n}"),
            BoardErrorKind::HexLength(n) => write!(f, "a hex board has 16 digits, found {n}"),
            BoardErrorKind::HexDigit { index, ch } => write!(
                f,
                "character {index} ({ch:?}, row {}, column {}) is not a hex digit (exponents 0-f; boards with tiles \
                 above 32768 use the rows format)",
                index / 4,
                index % 4
            ),
            BoardErrorKind::WrongColumnCount(n) => write!(f, "a saved grid has 4 columns, found {n}"),
            BoardErrorKind::WrongColumnLength(n) => write!(f, "a saved grid column has 4 cells, found {n}"),
            BoardErrorKind::NotASavedTile(v) => write!(
                f,
                "{v} is not a tile value (a power of two from 2 to {MAX_TILE}; empty cells are null)"
            ),
            BoardErrorKind::Unreachable(sum) => {
                write!(f, "the tiles sum to {sum}, more than a 4x4 game can hold ({MAX_SUM})")
            }
            BoardErrorKind::GridSize(n) => write!(f, "grid size must be 4, found {n}"),
            BoardErrorKind::PositionMismatch { x, y } => {
                write!(f, "cell says position x={x}, y={y}, which is not where it is stored")
            }
        }
    }
}

impl fmt::Display for BoardError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.path.is_empty() {
            write!(f, "{}", self.kind)
        } else {
            write!(f, "{}: {}", self.path, self.kind)
        }
    }
}

impl std::error::Error for BoardError {}

fn err(path: impl Into<String>, kind: BoardErrorKind) -> BoardError {
    BoardError {
        path: path.into(),
        kind,
    }
}

fn reachable(tiles: Tiles) -> Result<Tiles, BoardError> {
    let sum = tiles.tile_sum();
    if sum > MAX_SUM {
        return Err(err("", BoardErrorKind::Unreachable(sum)));
    }
    Ok(tiles)
}

/// The exponent of a tile value: 0 for empty, k for 2^k (1 <= k <= 17).
pub fn exponent_of(value: i64) -> Option<u8> {
    if value == 0 {
        return Some(0);
    }
    if value >= 2 && value <= MAX_TILE as i64 && (value as u64).is_power_of_two() {
        let e = value.trailing_zeros() as u8;
        debug_assert!(e <= MAX_EXPONENT);
        return Some(e);
    }
    None
}

/// One cell of the original game's saved state (`null` cells are `None` in the caller's grid).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SavedCell {
    /// `position.{x, y}` when present.
    pub position: Option<(i64, i64)>,
    pub value: i64,
}

impl Tiles {
    /// Parses rows of tile values, top row first (0 = empty).
    ///
    /// # Examples
    /// ```
    /// use advisor2048::engine::Tiles;
    /// let t = Tiles::from_rows(&[[0, 2, 4, 8], [0, 0, 0, 0], [0, 0, 0, 0], [0, 0, 0, 65536]]).unwrap();
    /// assert_eq!(t.max_tile(), 65536);
    /// let e = Tiles::from_rows(&[[0, 2, 4, 8], [0, 0, 0, 0], [0, 0, 0, 3], [0, 0, 0, 0]]).unwrap_err();
    /// assert_eq!(e.to_string(), "/2/3: 3 is not a tile value (0 or a power of two from 2 to 131072)");
    /// ```
    pub fn from_rows<R: AsRef<[i64]>>(rows: &[R]) -> Result<Tiles, BoardError> {
        if rows.len() != 4 {
            return Err(err("", BoardErrorKind::WrongLineCount(rows.len())));
        }
        let mut cells = [0u8; 16];
        for (r, row) in rows.iter().enumerate() {
            let row = row.as_ref();
            if row.len() != 4 {
                return Err(err(format!("/{r}"), BoardErrorKind::WrongLineLength(row.len())));
            }
            for (c, &v) in row.iter().enumerate() {
                cells[r * 4 + c] =
                    exponent_of(v).ok_or_else(|| err(format!("/{r}/{c}"), BoardErrorKind::NotATile(v)))?;
            }
        }
        reachable(Tiles(cells))
    }

    /// Parses 16 hex digits of exponents, row-major, top-left first (upper or lower case).
    pub fn from_hex(hex: &str) -> Result<Tiles, BoardError> {
        let count = hex.chars().count();
        if count != 16 {
            return Err(err("", BoardErrorKind::HexLength(count)));
        }
        let mut cells = [0u8; 16];
        for (i, ch) in hex.chars().enumerate() {
            cells[i] = ch
                .to_digit(16)
                .ok_or_else(|| err("", BoardErrorKind::HexDigit { index: i, ch }))? as u8;
        }
        reachable(Tiles(cells))
    }

    /// The hex format, or `None` when a tile is above 32768 (no hex digit for its exponent).
    pub fn to_hex(&self) -> Option<String> {
        self.to_board().map(|b| b.to_string())
    }

    /// Parses the original game's saved grid: `cells[x][y]` is **column-major** (x = column, y = row), each cell
    /// `None` (null) or a tile with an optional `position` that must agree with where it is stored. `size` is
    /// `grid.size`. Paths in errors are relative to the saved state object (`/grid/cells/x/y/value`).
    pub fn from_saved_cells(size: i64, cells: &[Vec<Option<SavedCell>>]) -> Result<Tiles, BoardError> {
        if size != 4 {
            return Err(err("/grid/size", BoardErrorKind::GridSize(size)));
        }
        if cells.len() != 4 {
            return Err(err("/grid/cells", BoardErrorKind::WrongColumnCount(cells.len())));
        }
        let mut out = [0u8; 16];
        for (x, column) in cells.iter().enumerate() {
            if column.len() != 4 {
                return Err(err(
                    format!("/grid/cells/{x}"),
                    BoardErrorKind::WrongColumnLength(column.len()),
                ));
            }
            for (y, cell) in column.iter().enumerate() {
                let Some(cell) = cell else { continue };
                if let Some((px, py)) = cell.position {
                    if px != x as i64 || py != y as i64 {
                        return Err(err(
                            format!("/grid/cells/{x}/{y}/position"),
                            BoardErrorKind::PositionMismatch { x: px, y: py },
                        ));
                    }
                }
                let e = match exponent_of(cell.value) {
                    Some(e) if e > 0 => e,
                    _ => {
                        return Err(err(
                            format!("/grid/cells/{x}/{y}/value"),
                            BoardErrorKind::NotASavedTile(cell.value),
                        ))
                    }
                };
                out[y * 4 + x] = e;
            }
        }
        reachable(Tiles(out))
    }

    /// The saved grid in the original game's layout: `cells[x][y]` (column-major), `None` for empty cells.
    pub fn to_saved_cells(&self) -> Vec<Vec<Option<SavedCell>>> {
        let rows = self.to_rows();
        (0..4)
            .map(|x| {
                (0..4)
                    .map(|y| {
                        let v = rows[y][x];
                        (v != 0).then_some(SavedCell {
                            position: Some((x as i64, y as i64)),
                            value: v as i64,
                        })
                    })
                    .collect()
            })
            .collect()
    }
}

impl FromStr for Tiles {
    type Err = BoardError;
    /// The hex format.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Tiles::from_hex(s)
    }
}

impl FromStr for Board {
    type Err = BoardError;
    /// The hex format.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let tiles = Tiles::from_hex(s)?;
        // Hex digits are at most 15, so the conversion cannot fail.
        Ok(tiles.to_board().unwrap_or_default())
    }
}

impl fmt::Display for Tiles {
    /// Rows of values, `[[0,2,4,8],...]`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let rows = self.to_rows();
        f.write_str("[")?;
        for (r, row) in rows.iter().enumerate() {
            if r > 0 {
                f.write_str(",")?;
            }
            write!(f, "[{},{},{},{}]", row[0], row[1], row[2], row[3])?;
        }
        f.write_str("]")
    }
}
