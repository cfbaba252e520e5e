//! The board of a game under way, [`GameBoard`]: on the fast [`Board`] for as long as no move can outgrow it, on
//! [`Tiles`] after. Both types play a move and draw a spawn the same way, so a game is the same on either; the fast
//! one spares a greedy game the conversions between the two at every move.

use crate::engine::rng::Rng;
use crate::engine::{Board, Direction, Tiles};

/// The tile sum from which a board stays on [`Tiles`]: below it, no two 32768 tiles can merge, so every move fits
/// the fast [`Board`] (the condition under which a greedy move is searched on it). The sum never falls: a merge
/// keeps it and a spawn adds to it.
const FAST_BELOW: u32 = 65536;

/// A game's board between two moves.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum GameBoard {
    /// Tile sum below 65536.
    Fast(FastBoard),
    /// Tile sum of 65536 or more (the tiles may still fit a [`Board`]).
    Exact(Tiles),
}

/// A board whose tile sum is below 65536, with that sum and its largest exponent kept from move to move.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct FastBoard {
    pub board: Board,
    sum: u32,
    pub max_exponent: u8,
}

impl GameBoard {
    /// `tiles` on the board type its tile sum calls for.
    pub fn new(tiles: Tiles) -> GameBoard {
        match tiles.to_board() {
            Some(board) if board.tile_sum() < u64::from(FAST_BELOW) => GameBoard::Fast(FastBoard {
                board,
                sum: board.tile_sum() as u32,
                max_exponent: board.max_exponent(),
            }),
            _ => GameBoard::Exact(tiles),
        }
    }

    pub fn tiles(&self) -> Tiles {
        match self {
            GameBoard::Fast(fast) => Tiles::from(fast.board),
            GameBoard::Exact(tiles) => *tiles,
        }
    }

    /// Largest tile value (0 when empty).
    pub fn max_tile(&self) -> u32 {
        match self {
            GameBoard::Fast(fast) if fast.max_exponent == 0 => 0,
            GameBoard::Fast(fast) => 1 << fast.max_exponent,
            GameBoard::Exact(tiles) => tiles.max_tile(),
        }
    }

    /// True when no move changes the board (on the fast board whenever the tiles fit it).
    pub fn is_game_over(&self) -> bool {
        match self {
            GameBoard::Fast(fast) => fast.board.is_game_over(),
            GameBoard::Exact(tiles) => match tiles.to_board() {
                Some(b) => b.is_game_over(),
                None => tiles.is_game_over(),
            },
        }
    }

    /// Plays the legal move `direction` and spawns a tile drawn from `rng`: on the fast [`Board`] when the board and
    /// the move fit it (every tile at most 32768 after the move), else on [`Tiles`]. Returns the board after the
    /// spawn and the move's reward.
    pub fn play_and_spawn(&self, direction: Direction, rng: &mut Rng) -> (GameBoard, u64) {
        let tiles = match self {
            GameBoard::Fast(fast) => {
                let moved = fast
                    .board
                    .play(direction)
                    .ok()
                    .flatten()
                    .expect("a legal move within the fast board");
                return (fast.then_spawn(moved.board, rng), u64::from(moved.reward));
            }
            GameBoard::Exact(tiles) => tiles,
        };
        if let Some(Ok(Some(moved))) = tiles.to_board().map(|b| b.play(direction)) {
            let after = moved.board.spawn(rng).expect("a legal move leaves an empty cell");
            return (GameBoard::new(Tiles::from(after)), u64::from(moved.reward));
        }
        let (after, reward) = tiles.play(direction).expect("the search chooses legal moves");
        (
            GameBoard::new(after.spawn(rng).expect("a legal move leaves an empty cell")),
            reward,
        )
    }
}

impl FastBoard {
    /// The board after a legal move from this one left `moved`, and a tile spawned on it from `rng`.
    #[inline]
    pub fn then_spawn(&self, moved: Board, rng: &mut Rng) -> GameBoard {
        let (board, tile) = moved.spawn_tile(rng).expect("a legal move leaves an empty cell");
        let sum = self.sum + tile;
        if sum >= FAST_BELOW {
            return GameBoard::Exact(Tiles::from(board));
        }
        // A move makes at most one larger tile, rarely: the maximum is looked for only when it grew.
        let max_exponent = if board.any_exponent_above(self.max_exponent) {
            board.max_exponent()
        } else {
            self.max_exponent
        };
        GameBoard::Fast(FastBoard {
            board,
            sum,
            max_exponent,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Plays random legal moves from `start` on a [`GameBoard`] and on plain [`Tiles`] with the same spawns, checking
    /// after every move that both hold the same tiles and that the kept sum and maximum are the board's own.
    fn play_both(start: Tiles, seed: u64, moves: usize) -> GameBoard {
        let mut game = GameBoard::new(start);
        let mut tiles = start;
        let (mut r1, mut r2, mut pick) = (Rng::new(seed), Rng::new(seed), Rng::new(seed ^ 1));
        for _ in 0..moves {
            let legal: Vec<Direction> = Direction::ALL.into_iter().filter(|&d| tiles.is_legal(d)).collect();
            assert_eq!(game.is_game_over(), legal.is_empty());
            let Some(&d) = legal.get(pick.below(legal.len().max(1) as u64) as usize) else {
                break;
            };
            let (after, reward) = game.play_and_spawn(d, &mut r1);
            let (moved, expected) = tiles.play(d).unwrap();
            tiles = moved.spawn(&mut r2).unwrap();
            assert_eq!((after.tiles(), reward), (tiles, expected));
            assert_eq!(after.max_tile(), tiles.max_tile());
            assert_eq!(after, GameBoard::new(tiles), "the kept sum and maximum are the board's");
            game = after;
        }
        game
    }

    #[test]
    fn a_game_board_plays_as_tiles_do_and_leaves_the_fast_board_at_a_sum_of_65536() {
        // Tiles from 32768 down to 16 in a snake, then 8, 2, 2 and an empty cell: a sum of 65532, so that the second
        // spawn at the latest takes it to 65536 or beyond.
        let start = Tiles::from_exponents([15, 14, 13, 12, 8, 9, 10, 11, 7, 6, 5, 4, 3, 1, 1, 0]).unwrap();
        assert!(matches!(GameBoard::new(start), GameBoard::Fast(_)));
        let crossed = (0..20)
            .filter(|&seed| matches!(play_both(start, seed, 300), GameBoard::Exact(_)))
            .count();
        assert!(crossed > 0, "no game from the start reached a sum of 65536");
        for seed in 0..20 {
            play_both(Tiles::default().spawn(&mut Rng::new(seed)).unwrap(), seed, 300);
        }
    }
}
