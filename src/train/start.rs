//! Start policies: where each training game begins ([`StartSource`]), and the pools of positions they draw from.
//! (Halving restarts, which replay the end of a game just played, are part of the episode: see
//! [`super::episode`].)

use serde::{Deserialize, Serialize};

use super::config::{StartPolicy, StartSource};
use crate::engine::rng::Rng;
use crate::engine::Board;

/// Positions kept per thread in the mid-game pool.
pub const MID_GAME_POOL: usize = 1024;

/// Where a game began.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Origin {
    /// A new board: a game from the start, counted in the rolling statistics.
    Fresh,
    /// A position from the middle of an earlier game.
    MidGame,
    /// A position from stage key `k`'s pool.
    Pool(usize),
    /// A halving restart of the game just played.
    Halving,
}

/// A bounded pool of afterstates: the oldest is replaced once full.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Pool {
    pub boards: Vec<u64>,
    next: usize,
}

impl Pool {
    fn push(&mut self, board: Board, cap: usize) {
        if self.boards.len() < cap {
            self.boards.push(board.0);
        } else if cap > 0 {
            self.boards[self.next % cap] = board.0;
        }
        self.next = (self.next + 1) % cap.max(1);
    }

    fn draw(&self, rng: &mut Rng) -> Option<Board> {
        if self.boards.is_empty() {
            return None;
        }
        Some(Board(self.boards[rng.below(self.boards.len() as u64) as usize]))
    }
}

/// A thread's start-policy state (saved in checkpoints).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct StartState {
    pub mid_game: Pool,
    /// One pool per stage key, in the policy's order.
    pub stages: Vec<Pool>,
    /// The carousel's next turn: 0 is a new board, k the k-th key's pool.
    turn: usize,
}

impl StartState {
    /// Fits the state to `policy`: one pool per stage key (a resumed run with other keys starts their pools empty).
    pub fn fit(&mut self, policy: &StartPolicy) {
        let keys = match &policy.source {
            StartSource::StagePools { keys, .. } => keys.len(),
            _ => 0,
        };
        if self.stages.len() != keys {
            self.stages = vec![Pool::default(); keys];
            self.turn = 0;
        }
    }

    /// Positions per pool: the mid-game pool, then each key's.
    pub fn sizes(&self) -> Vec<usize> {
        std::iter::once(self.mid_game.boards.len())
            .chain(self.stages.iter().map(|p| p.boards.len()))
            .collect()
    }

    /// Where the next game begins: the board to play from (a spawn already placed) and its origin.
    pub fn next(&mut self, policy: &StartPolicy, rng: &mut Rng) -> (Board, Origin) {
        let pooled = match &policy.source {
            StartSource::Fresh => None,
            StartSource::MidGame { probability } => {
                if !self.mid_game.boards.is_empty() && unit(rng) < *probability {
                    self.mid_game.draw(rng).map(|b| (b, Origin::MidGame))
                } else {
                    None
                }
            }
            StartSource::StagePools { keys, .. } => {
                let turn = self.turn;
                self.turn = (self.turn + 1) % (keys.len() + 1);
                match turn.checked_sub(1) {
                    Some(k) => self
                        .stages
                        .get(k)
                        .and_then(|p| p.draw(rng))
                        .map(|b| (b, Origin::Pool(k))),
                    None => None,
                }
            }
        };
        if let Some((after, origin)) = pooled {
            if let Some(board) = after.spawn(rng) {
                return (board, origin);
            }
        }
        (Board::new_game(rng), Origin::Fresh)
    }

    /// Learns positions from a game just played from `start` (its afterstates and rewards, in order).
    pub fn observe(&mut self, policy: &StartPolicy, start: Board, path: &[(Board, u32)]) {
        match &policy.source {
            StartSource::Fresh => {}
            StartSource::MidGame { .. } => {
                if path.len() >= 2 {
                    self.mid_game.push(path[path.len() / 2].0, MID_GAME_POOL);
                }
            }
            StartSource::StagePools { keys, pool_size } => {
                for (k, key) in keys.iter().enumerate() {
                    if key.holds(start.0) {
                        continue;
                    }
                    if let Some(&(entered, _)) = path.iter().find(|(b, _)| key.holds(b.0)) {
                        if let Some(pool) = self.stages.get_mut(k) {
                            pool.push(entered, *pool_size);
                        }
                    }
                }
            }
        }
    }
}

/// A uniform draw in [0, 1).
pub(super) fn unit(rng: &mut Rng) -> f64 {
    (rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::train::config::StageKey;

    fn pools(keys: &[&str], size: usize) -> StartPolicy {
        StartPolicy {
            source: StartSource::StagePools {
                keys: keys.iter().map(|k| k.parse().unwrap()).collect(),
                pool_size: size,
            },
            halving: None,
        }
    }

    #[test]
    fn a_stage_pool_keeps_the_first_board_of_its_stage_and_stays_bounded() {
        let policy = pools(&["16384", "16384+8192"], 2);
        let mut s = StartState::default();
        s.fit(&policy);
        let path = [
            (Board(0xd000_0000_0000_0000), 0),
            (Board(0xe000_0000_0000_0001), 16384),
            (Board(0xe000_0000_0000_0002), 4),
            (Board(0xed00_0000_0000_0002), 0),
        ];
        s.observe(&policy, Board(0xc000_0000_0000_0000), &path);
        assert_eq!(s.stages[0].boards, vec![0xe000_0000_0000_0001]);
        assert_eq!(s.stages[1].boards, vec![0xed00_0000_0000_0002]);
        // A game that starts inside a stage adds nothing to that stage's pool.
        s.observe(&policy, Board(0xe000_0000_0000_0000), &path);
        assert_eq!(s.stages[0].boards.len(), 1);
        for i in 0..5u64 {
            s.observe(&policy, Board(0x1), &[(Board(0xe000_0000_0000_0010 + i), 0)]);
        }
        assert_eq!(s.stages[0].boards.len(), 2, "bounded by the pool size");
        let key: StageKey = "16384".parse().unwrap();
        assert!(s.stages[0].boards.iter().all(|&b| key.holds(b)));
    }

    #[test]
    fn the_carousel_visits_each_pool_in_turn_and_empty_pools_give_way() {
        let policy = pools(&["16384", "32768"], 8);
        let mut s = StartState::default();
        s.fit(&policy);
        s.stages[0].push(Board(0xe000_0000_0000_0001), 8);
        let mut rng = Rng::new(3);
        let origins: Vec<Origin> = (0..6).map(|_| s.next(&policy, &mut rng).1).collect();
        use Origin::*;
        assert_eq!(origins, vec![Fresh, Pool(0), Fresh, Fresh, Pool(0), Fresh]);
        // A board from a pool is the pooled afterstate plus one spawn.
        s.turn = 1;
        let (b, _) = s.next(&policy, &mut rng);
        assert_eq!(b.empty_count(), 13);
        assert_eq!(b.0 & 0xf000_0000_0000_000f, 0xe000_0000_0000_0001);
    }

    #[test]
    fn stage_keys_parse_and_check_their_tiles() {
        let k: StageKey = "16384+8192".parse().unwrap();
        assert_eq!(k.tiles, vec![14, 13]);
        assert_eq!(k.name(), "16384+8192");
        assert!(k.holds(0xed00_0000_0000_0000));
        assert!(!k.holds(0xe000_0000_0000_0000));
        for bad in ["", "3", "16384+16384", "65536", "x"] {
            assert!(bad.parse::<StageKey>().is_err(), "{bad}");
        }
    }
}
