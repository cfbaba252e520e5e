//! Property tests: the fast engine against the reference model on random boards with realistic tile mixes, and the
//! board formats' round trips. Each property runs 10,000 cases.

use crate::common;

use advisor2048::engine::reference::{self, Grid};
use advisor2048::engine::{Board, Direction, Moved, TileOverflow, Tiles};
use proptest::prelude::*;
use proptest::strategy::ValueTree;
use proptest::test_runner::TestRunner;
use serde_json::{json, Value};

const CASES: u32 = 10_000;

// ---------------------------------------------------------------------------------------------------------------
// Boards
// ---------------------------------------------------------------------------------------------------------------

/// One cell of a mid-game board: mostly empty cells and small tiles, some middle tiles, a few high ones up to
/// `2^max`.
fn realistic_cell(max: u8) -> impl Strategy<Value = u8> {
    prop_oneof![
        4 => Just(0u8),
        5 => 1u8..=4,
        2 => 5u8..=10,
        1 => 11u8..=max,
    ]
}

/// Exponents of a board (row-major), up to `2^max`: a realistic mid-game mix; full boards of any tiles (a fifth of
/// them have no equal neighbours, so game over is common); and late-game boards of empties and high tiles only, where
/// high tiles meet (and two 32768 overflow the bitboard).
fn exponents(max: u8) -> impl Strategy<Value = [u8; 16]> {
    prop_oneof![
        3 => prop::array::uniform16(realistic_cell(max)),
        1 => prop::array::uniform16(1u8..=max),
        1 => prop::array::uniform16(prop_oneof![Just(0u8), (max - 4)..=max]),
    ]
}

/// Bitboards: tiles up to 2^15 = 32768.
fn boards() -> impl Strategy<Value = Board> {
    exponents(15).prop_map(|e| Board::from_exponents(e).expect("exponents up to 15"))
}

/// Exact boards: tiles up to 2^17 = 131072, emptied cell by cell (from the top-left) until their sum is one a 4x4
/// game can hold (at most 2^18 - 4), the only boards `Tiles` accepts.
fn wide_tiles() -> impl Strategy<Value = Tiles> {
    exponents(17).prop_map(common::reachable)
}

fn grid(rows: [[u32; 4]; 4]) -> Grid {
    rows.iter().map(|row| row.to_vec()).collect()
}

/// The reference model's move in the shape of [`Board::play`]: `Err` when a tile above 32768 results, `Ok(None)`
/// when nothing moves.
fn reference_fast(before: &Grid, dir: Direction) -> Result<Option<(Grid, u64)>, TileOverflow> {
    let (after, reward) = reference::move_grid(before, dir);
    if after.iter().flatten().any(|&v| v > 32768) {
        Err(TileOverflow)
    } else if after == *before {
        Ok(None)
    } else {
        Ok(Some((after, reward)))
    }
}

fn fast(b: Board, dir: Direction) -> Result<Option<(Grid, u64)>, TileOverflow> {
    b.play(dir)
        .map(|moved| moved.map(|Moved { board, reward }| (grid(board.to_rows()), u64::from(reward))))
}

/// The original game's saved state for `rows`, written independently of the engine: `cells[x][y]`, x = column.
fn saved_state(rows: [[u32; 4]; 4]) -> Value {
    let cells: Vec<Vec<Value>> = (0..4)
        .map(|x| {
            (0..4)
                .map(|y| match rows[y][x] {
                    0 => Value::Null,
                    v => json!({ "position": { "x": x, "y": y }, "value": v }),
                })
                .collect()
        })
        .collect();
    json!({ "grid": { "size": 4, "cells": cells }, "score": 0, "over": false, "won": false, "keepPlaying": false })
}

// ---------------------------------------------------------------------------------------------------------------
// Properties
// ---------------------------------------------------------------------------------------------------------------

proptest! {
    #![proptest_config(ProptestConfig::with_cases(CASES))]

    /// Board, reward and legality of every direction, and overflow exactly when a 65536 would appear.
    #[test]
    fn fast_moves_match_reference_in_every_direction(b in boards()) {
        let before = grid(b.to_rows());
        for dir in Direction::ALL {
            prop_assert_eq!(fast(b, dir), reference_fast(&before, dir), "{:?} {}", b, dir);
            prop_assert_eq!(b.is_legal(dir), reference::is_legal(&before, dir), "{:?} {}", b, dir);
        }
    }

    #[test]
    fn fast_game_over_matches_reference(b in boards()) {
        let over = reference::is_game_over(&grid(b.to_rows()));
        prop_assert_eq!(b.is_game_over(), over, "{:?}", b);
        prop_assert_eq!(Tiles::from(b).is_game_over(), over, "{:?}", b);
    }

    #[test]
    fn fast_empty_count_matches_reference(b in boards()) {
        let empty = reference::empty_count(&grid(b.to_rows()));
        prop_assert_eq!(b.empty_count() as usize, empty, "{:?}", b);
        prop_assert_eq!(Tiles::from(b).empty_count() as usize, empty, "{:?}", b);
    }

    /// The exact board type on boards with tiles up to 131072: board, reward, legality, game over, empty count.
    #[test]
    fn tiles_match_reference_on_wide_boards(t in wide_tiles()) {
        let before = grid(t.to_rows());
        for dir in Direction::ALL {
            let (after, reward) = reference::move_grid(&before, dir);
            let expected = (after != before).then_some((after, reward));
            let played = t.play(dir).map(|(moved, reward)| (grid(moved.to_rows()), reward));
            prop_assert_eq!(played, expected, "{} {}", t, dir);
            prop_assert_eq!(t.is_legal(dir), reference::is_legal(&before, dir), "{} {}", t, dir);
        }
        prop_assert_eq!(t.is_game_over(), reference::is_game_over(&before), "{}", t);
        prop_assert_eq!(t.empty_count() as usize, reference::empty_count(&before), "{}", t);
    }

    /// Where both types can hold the board, they agree move for move.
    #[test]
    fn tiles_and_board_agree_where_both_apply(b in boards()) {
        for dir in Direction::ALL {
            let exact = Tiles::from(b).play(dir);
            match b.play(dir) {
                Ok(moved) => prop_assert_eq!(
                    moved.map(|m| (Tiles::from(m.board), u64::from(m.reward))), exact, "{:?} {}", b, dir
                ),
                Err(TileOverflow) => prop_assert!(exact.is_some_and(|(t, _)| t.to_board().is_none()), "{:?} {}", b, dir),
            }
        }
    }

    #[test]
    fn hex_round_trips(b in boards()) {
        let hex = b.to_string();
        prop_assert_eq!(hex.len(), 16);
        if b.tile_sum() > advisor2048::engine::MAX_SUM {
            // No 4x4 game holds these tiles: every parser refuses them, naming the sum.
            let e = hex.parse::<Board>().expect_err("unreachable board");
            prop_assert_eq!(e.kind, advisor2048::engine::BoardErrorKind::Unreachable(b.tile_sum()));
            let rows = b.to_rows().map(|row| row.map(i64::from));
            prop_assert!(Tiles::from_rows(&rows).is_err());
            return Ok(());
        }
        prop_assert_eq!(hex.parse::<Board>(), Ok(b));
        prop_assert_eq!(hex.to_uppercase().parse::<Board>(), Ok(b));
        prop_assert_eq!(Tiles::from_hex(&hex), Ok(Tiles::from(b)));
        prop_assert_eq!(Tiles::from(b).to_hex(), Some(hex.clone()));
        // Hex digits are exponents, row-major, top-left first.
        for (i, digit) in hex.chars().enumerate() {
            let value = match digit.to_digit(16).expect("a hex digit") { 0 => 0, e => 1u32 << e };
            prop_assert_eq!(b.to_rows()[i / 4][i % 4], value, "{}", hex);
        }
    }

    /// A board has a hex form exactly when every tile fits a hex digit (at most 32768), and it round-trips.
    #[test]
    fn wide_hex_exists_exactly_when_tiles_fit_a_digit(t in wide_tiles()) {
        let fits = t.exponents().iter().all(|&e| e <= 15);
        match t.to_hex() {
            Some(hex) => {
                prop_assert!(fits, "{}", t);
                prop_assert_eq!(Tiles::from_hex(&hex), Ok(t));
            }
            None => prop_assert!(!fits, "{}", t),
        }
    }

    #[test]
    fn rows_round_trip(t in wide_tiles()) {
        let rows = t.to_rows();
        prop_assert_eq!(Tiles::from_rows(&rows.map(|row| row.map(i64::from))), Ok(t));
        // The Display form is the rows format, as JSON.
        let parsed: Vec<Vec<i64>> = serde_json::from_str(&t.to_string()).expect("rows as JSON");
        prop_assert_eq!(Tiles::from_rows(&parsed), Ok(t));
        for (i, &e) in t.exponents().iter().enumerate() {
            prop_assert_eq!(rows[i / 4][i % 4], if e == 0 { 0 } else { 1u32 << e });
        }
    }

    #[test]
    fn board_rows_round_trip(b in boards().prop_filter("a sum a game can reach", |b| b.tile_sum() <= advisor2048::engine::MAX_SUM)) {
        let rows = b.to_rows().map(|row| row.map(i64::from));
        prop_assert_eq!(Tiles::from_rows(&rows).map(|t| t.to_board()), Ok(Some(b)));
    }

    /// The original game's saved state is column-major: it parses to the rows it was written from, and the engine
    /// writes it back the same way.
    #[test]
    fn saved_state_cells_parse_to_the_right_rows(t in wide_tiles()) {
        let text = saved_state(t.to_rows()).to_string();
        let state: Value = serde_json::from_str(&text).expect("JSON");
        let (_, cells) = common::decode_saved_cells(&state);
        prop_assert_eq!(Tiles::from_saved_cells(4, &cells), Ok(t), "{}", text);
        prop_assert_eq!(t.to_saved_cells(), cells, "{}", text);
    }
}

// ---------------------------------------------------------------------------------------------------------------
// The generators cover what the properties are about
// ---------------------------------------------------------------------------------------------------------------

/// Properties that never see a game-over board, an overflow or an illegal move would pass vacuously: count how often
/// the board generator produces them (with proptest's deterministic seed, so the counts are fixed).
#[test]
fn board_generator_covers_game_over_overflow_and_illegal_moves() {
    let mut runner = TestRunner::deterministic();
    let strategy = boards();
    let (mut over, mut overflow, mut illegal, mut legal, mut full, mut high) = (0, 0, 0, 0, 0, 0);
    for _ in 0..CASES {
        let b = strategy.new_tree(&mut runner).expect("a board").current();
        over += usize::from(b.is_game_over());
        full += usize::from(b.empty_count() == 0);
        high += usize::from(b.max_exponent() >= 13);
        for dir in Direction::ALL {
            match b.play(dir) {
                Err(TileOverflow) => overflow += 1,
                Ok(None) => illegal += 1,
                Ok(Some(_)) => legal += 1,
            }
        }
    }
    let counts =
        format!("over {over}, overflow {overflow}, illegal {illegal}, legal {legal}, full {full}, high {high}");
    println!("{counts}");
    assert!(over >= 200, "{counts}");
    assert!(overflow >= 200, "{counts}");
    assert!(illegal >= 2000, "{counts}");
    assert!(legal >= 10_000, "{counts}");
    assert!(high >= 2000, "{counts}");
}

#[test]
fn wide_generator_covers_65536_and_131072() {
    let mut runner = TestRunner::deterministic();
    let strategy = wide_tiles();
    let (mut with_65536, mut with_131072, mut merging_wide) = (0, 0, 0);
    for _ in 0..CASES {
        let t = strategy.new_tree(&mut runner).expect("a board").current();
        with_65536 += usize::from(t.exponents().contains(&16));
        with_131072 += usize::from(t.exponents().contains(&17));
        let creates_wide = Direction::ALL.iter().any(|&d| {
            t.play(d).is_some_and(|(after, _)| {
                after.exponents().iter().filter(|&&e| e >= 16).count()
                    > t.exponents().iter().filter(|&&e| e >= 16).count()
            })
        });
        merging_wide += usize::from(creates_wide);
    }
    let counts = format!("65536 {with_65536}, 131072 {with_131072}, merging into 65536+ {merging_wide}");
    println!("{counts}");
    assert!(
        with_65536 >= 1000 && with_131072 >= 1000 && merging_wide >= 200,
        "{counts}"
    );
}
