//! One training game: played greedily on the network, then learned from backwards, then (with halving restarts)
//! played again from the middle of what was just played, until little is left.
//!
//! - **Play**: from each board the player takes the legal move with the largest `reward + V(after)` (ties: the first
//!   in up, down, left, right); a spawn follows. Moves that would create a 65536 tile (which the 4-bit board cannot
//!   hold) count as illegal here. The lookups of all four children are computed and their loads started before any
//!   is summed, so the memory latencies overlap.
//! - **Learn**: TD(lambda) applied backwards at the end of the game (Szubert and Jaśkowski 2014; the delayed update
//!   of Jaśkowski 2016). With s_0 .. s_{T-1} the afterstates and r_t the reward of the move that made s_t, the target
//!   of the last afterstate is 0 (the game ends after its spawn) and, going backwards,
//!   `G_t = r_{t+1} + (1 - lambda) V(s_{t+1}) + lambda G_{t+1}`, each V read just before that afterstate's own
//!   update. Every lookup of s_t moves its weight by `alpha / m x beta x (G_t - V(s_t))` (m = lookups per board).

use super::config::StartPolicy;
use super::start::{Origin, StartState};
use super::weights::Tables;
use crate::engine::rng::Rng;
use crate::engine::{Board, OVERFLOW_FLAG};
use crate::eval::ntuple::index::Lookups;
use crate::eval::ntuple::{max_exponent, MAX_LOOKUPS};

/// One played stretch of a training game: a game from its start, or one of its restarts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Segment {
    pub origin: Origin,
    /// The board it was played from.
    pub start: Board,
    /// Points earned in this stretch.
    pub score: u64,
    /// The largest exponent at its end.
    pub max_exponent: u8,
    pub moves: u64,
}

/// Plays and learns one training game from `board` (where `start` put it) with all its restarts; `segment` hears
/// of each stretch as it ends, with the afterstates and rewards it played.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
pub fn train_game<L: Lookups>(
    lookups: &L,
    tables: &Tables,
    lambda: f32,
    policy: &StartPolicy,
    start: &mut StartState,
    (mut board, mut origin): (Board, Origin),
    rng: &mut Rng,
    path: &mut Vec<(Board, u32)>,
    mut segment: impl FnMut(Segment, &[(Board, u32)]),
) {
    loop {
        let first = board;
        let (score, last) = play(lookups, tables, board, rng, path);
        learn(lookups, tables, lambda, path);
        segment(
            Segment {
                origin,
                start: first,
                score,
                max_exponent: max_exponent(last.0),
                moves: path.len() as u64,
            },
            path,
        );
        start.observe(policy, first, path);
        let Some(h) = policy.halving else { return };
        if path.len() <= h.min_moves {
            return;
        }
        let at = ((path.len() as f64 * h.fraction) as usize).min(path.len() - 1);
        match path[at].0.spawn(rng) {
            Some(next) => {
                board = next;
                origin = Origin::Halving;
            }
            None => return,
        }
    }
}

/// Plays greedily from `start` until no move is left; fills `path` with the afterstates and rewards and returns the
/// points earned and the last board.
#[inline(always)]
fn play<L: Lookups>(
    lookups: &L,
    tables: &Tables,
    start: Board,
    rng: &mut Rng,
    path: &mut Vec<(Board, u32)>,
) -> (u64, Board) {
    path.clear();
    let mut board = start;
    let mut score = 0u64;
    let mut idx = [[0u32; MAX_LOOKUPS]; 4];
    let mut counts = [0usize; 4];
    loop {
        let children = board.slide_all();
        for (k, &(after, reward)) in children.iter().enumerate() {
            counts[k] = 0;
            if after != board && reward & OVERFLOW_FLAG == 0 {
                counts[k] = lookups.indices(after, after.transpose(), &mut idx[k]);
                tables.prefetch_weights(&idx[k][..counts[k]]);
            }
        }
        let mut best: Option<(Board, u32)> = None;
        let mut best_value = f32::NEG_INFINITY;
        for (k, &(after, reward)) in children.iter().enumerate() {
            if counts[k] == 0 {
                continue;
            }
            let v = reward as f32 + tables.value_of(&idx[k][..counts[k]]);
            if v > best_value {
                best_value = v;
                best = Some((after, reward));
            }
        }
        let Some((after, reward)) = best else { break };
        path.push((after, reward));
        score += u64::from(reward);
        let Some(next) = after.spawn(rng) else { break };
        board = next;
    }
    (score, board)
}

/// TD(lambda) backwards over a played path.
#[inline(always)]
fn learn<L: Lookups>(lookups: &L, tables: &Tables, lambda: f32, path: &[(Board, u32)]) {
    let mut g_next = 0.0f32;
    let mut v_next = 0.0f32;
    let mut r_next = 0.0f32;
    let mut idx = [0u32; MAX_LOOKUPS];
    for (k, &(s, reward)) in path.iter().enumerate().rev() {
        let n = lookups.indices(s, s.transpose(), &mut idx);
        tables.prefetch_for_update(&idx[..n]);
        let v = tables.value_of(&idx[..n]);
        let target = if k + 1 == path.len() {
            0.0
        } else {
            r_next + (1.0 - lambda) * v_next + lambda * g_next
        };
        tables.update_at(&idx[..n], target - v);
        g_next = target;
        v_next = v;
        r_next = reward as f32;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::eval::ntuple::index::Indexer;
    use crate::eval::ntuple::Shape;
    use crate::train::config::{Halving, StartSource};
    use crate::with_lookups;

    /// Halving replays the part of a game after its middle, with a new spawn, until at most 10 moves are left.
    #[test]
    fn halving_replays_the_second_half_of_each_game_until_little_is_left() {
        let shape = Shape::new(vec![vec![0, 1, 2, 3], vec![4, 5, 6, 7], vec![0, 1, 4, 5]], vec![0]).unwrap();
        let tables = Tables::new(shape.clone(), 0.0, true, 1.0);
        let policy = StartPolicy {
            source: StartSource::Fresh,
            halving: Some(Halving::default()),
        };
        let mut rng = Rng::new(4);
        let mut start = StartState::default();
        let mut path = Vec::new();
        for _ in 0..20 {
            let mut seen: Vec<(Segment, Vec<(Board, u32)>)> = Vec::new();
            let first = start.next(&policy, &mut rng);
            with_lookups!(&Indexer::new(&shape), l => train_game(
                l, &tables, 0.5, &policy, &mut start, first, &mut rng, &mut path,
                |s, p| seen.push((s, p.to_vec())),
            ));
            assert_eq!(seen[0].0.origin, Origin::Fresh);
            for pair in seen.windows(2) {
                let ((before, played), (after, _)) = (&pair[0], &pair[1]);
                assert!(before.moves > 10, "{before:?}");
                assert_eq!(after.origin, Origin::Halving);
                // The restart is the afterstate at the middle with one new tile (a 2 or a 4) in an empty cell.
                let middle = played[played.len() / 2].0;
                let new = after.start.0 ^ middle.0;
                assert!(new.count_ones() > 0 && new & middle.0 == 0);
                assert_eq!(after.start.empty_count() + 1, middle.empty_count());
                assert!((1..=2).contains(&(new >> (new.trailing_zeros() / 4 * 4))));
            }
            let last = seen.last().unwrap().0;
            assert!(last.moves <= 10, "{last:?}");
            assert!(seen.len() >= 2);
        }
    }
}
