//! One training game: played greedily on the network, then learned from backwards, then (with halving restarts)
//! played again from the middle of what was just played, until little is left.
//!
//! - **Play**: from each board the player takes the legal move with the largest `reward + V(after)` (ties: the first
//!   in up, down, left, right); a spawn follows. With several stages, every `V(after)` of one decision is read in
//!   the stage of the board the decision is made on, also for a move that makes the next stage's start tile (the
//!   multi-stage rule of Yeh et al. 2016: the values of two stages are never compared). Moves that would create a 65536 tile (which the 4-bit board cannot
//!   hold) count as illegal here. The lookups of all four children are computed and their loads started before any
//!   is summed, so the memory latencies overlap.
//! - **Learn**: TD(lambda) applied backwards at the end of the game (Szubert and Jaśkowski 2014; the delayed update
//!   of Jaśkowski 2016). With s_0 .. s_{T-1} the afterstates and r_t the reward of the move that made s_t, the target
//!   of the last afterstate is 0 (the game ends after its spawn) and, going backwards,
//!   `G_t = r_{t+1} + (1 - lambda) V(s_{t+1}) + lambda G_{t+1}`, each V read just before or just after that
//!   afterstate's own update ([`NextValue`]). Every lookup of s_t moves its weight by
//!   `alpha / m x beta x (G_t - V(s_t))` (m = lookups per board).
//!   Each afterstate is valued and updated in the stage of its decision; where the next decision is in a later stage
//!   (s_t made that stage's start tile), the target is `r_{t+1} + V(s_{t+1})`, read in s_t's own stage (a stage
//!   learns from its own values only) or in s_{t+1}'s ([`StageTarget`]).
//! - **Frozen late stages** (the stages from some tile on keep their weights): a game ends at its first decision in
//!   a frozen stage, whose afterstate only serves the target of the one before; nothing after it could learn.
//! - **Halving restarts** replay the part of the game that can still learn: with frozen stages, the middle is taken
//!   of the stretch from the first decision in a stage that learns (a game that never reached one is not replayed).

use super::config::{NextValue, StageTarget, StartPolicy};
use super::start::{Origin, StartState};
use super::weights::Tables;
use crate::engine::rng::Rng;
use crate::engine::{Board, OVERFLOW_FLAG};
use crate::eval::ntuple::index::Lookups;
use crate::eval::ntuple::MAX_LOOKUPS;

/// The settings of the backward TD(lambda) update.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TdRule {
    pub lambda: f32,
    pub next_value: NextValue,
    pub stage_target: StageTarget,
}

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
    rule: TdRule,
    policy: &StartPolicy,
    start: &mut StartState,
    (mut board, mut origin): (Board, Origin),
    rng: &mut Rng,
    path: &mut Vec<(Board, u32)>,
    decisions: &mut Vec<u8>,
    mut segment: impl FnMut(Segment, &[(Board, u32)]),
) {
    loop {
        let first = board;
        let (score, last) = play(lookups, tables, board, rng, path, decisions);
        learn(lookups, tables, rule, path, decisions);
        segment(
            Segment {
                origin,
                start: first,
                score,
                max_exponent: last.max_exponent(),
                moves: path.len() as u64,
            },
            path,
        );
        start.observe(policy, first, path);
        let Some(h) = policy.halving else { return };
        let Some(learns_from) = decisions.iter().position(|&k| !tables.is_frozen(usize::from(k))) else {
            return;
        };
        let tail = path.len() - learns_from;
        if tail <= h.min_moves {
            return;
        }
        let at = (learns_from + (tail as f64 * h.fraction) as usize).min(path.len() - 1);
        match path[at].0.spawn(rng) {
            Some(next) => {
                board = next;
                origin = Origin::Halving;
            }
            None => return,
        }
    }
}

/// Plays greedily from `start` until no move is left (or, when the last stages are frozen, until the first decision
/// in one of them); fills `path` with the afterstates and rewards and `decisions` with the stage each was chosen in,
/// and returns the points earned and the last board.
#[inline(always)]
fn play<L: Lookups>(
    lookups: &L,
    tables: &Tables,
    start: Board,
    rng: &mut Rng,
    path: &mut Vec<(Board, u32)>,
    decisions: &mut Vec<u8>,
) -> (u64, Board) {
    path.clear();
    decisions.clear();
    let mut board = start;
    let mut score = 0u64;
    let stop_in_frozen = tables.frozen_after_learning();
    let mut idx = [[0u32; MAX_LOOKUPS]; 4];
    let mut counts = [0usize; 4];
    loop {
        let stage = lookups.stage(board);
        let children = board.slide_all();
        for (k, &(after, reward)) in children.iter().enumerate() {
            counts[k] = 0;
            if after != board && reward & OVERFLOW_FLAG == 0 {
                counts[k] = lookups.indices_in(stage, after, after.transpose(), &mut idx[k]);
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
        decisions.push(stage as u8);
        score += u64::from(reward);
        if stop_in_frozen && tables.is_frozen(stage) {
            board = after;
            break;
        }
        let Some(next) = after.spawn(rng) else { break };
        board = next;
    }
    (score, board)
}

/// TD(lambda) backwards over a played path, each afterstate in the stage of its decision. Afterstate k's lookups sit
/// in `slots[k % 2]`; those of the afterstate before it (the next to learn) are computed and their loads started
/// before k is updated, so that memory latency overlaps k's work.
#[inline(always)]
fn learn<L: Lookups>(lookups: &L, tables: &Tables, rule: TdRule, path: &[(Board, u32)], decisions: &[u8]) {
    let lambda = rule.lambda;
    let mut g_next = 0.0f32;
    let mut v_next = 0.0f32;
    let mut r_next = 0.0f32;
    let mut slots = [[0u32; MAX_LOOKUPS]; 2];
    let fetch = |k: usize, slots: &mut [[u32; MAX_LOOKUPS]; 2]| {
        let (s, stage) = (path[k].0, usize::from(decisions[k]));
        let n = lookups.indices_in(stage, s, s.transpose(), &mut slots[k % 2]);
        tables.prefetch_for_update(&slots[k % 2][..n]);
        n
    };
    let Some(last) = path.len().checked_sub(1) else { return };
    let mut n = fetch(last, &mut slots);
    for (k, (&(_, reward), &stage)) in path.iter().zip(decisions).enumerate().rev() {
        let stage = usize::from(stage);
        if tables.is_frozen(stage) {
            if !tables.frozen_after_learning() {
                // Stages only grow along a game: everything before this afterstate is frozen too.
                break;
            }
            // A frozen later stage: nothing to learn here, but the afterstate before it may learn (its target
            // reads this one's reward and value).
            if k > 0 && !tables.is_frozen(usize::from(decisions[k - 1])) {
                n = fetch(k - 1, &mut slots);
            }
            r_next = reward as f32;
            continue;
        }
        let next_n = if k > 0 { fetch(k - 1, &mut slots) } else { 0 };
        let idx = &slots[k % 2];
        let v = tables.value_of(&idx[..n]);
        let target = if k + 1 == path.len() {
            0.0
        } else if usize::from(decisions[k + 1]) != stage {
            // The next decision is in a later stage: one stage's value of the next afterstate ends the return.
            let next = path[k + 1].0;
            let valued_in = match rule.stage_target {
                StageTarget::Own => stage,
                StageTarget::Next => usize::from(decisions[k + 1]),
            };
            let mut next_idx = [0u32; MAX_LOOKUPS];
            let m = lookups.indices_in(valued_in, next, next.transpose(), &mut next_idx);
            r_next + tables.value_of(&next_idx[..m])
        } else {
            r_next + (1.0 - lambda) * v_next + lambda * g_next
        };
        tables.update_at(&idx[..n], target - v);
        g_next = target;
        v_next = match rule.next_value {
            NextValue::BeforeUpdate => v,
            NextValue::AfterUpdate => tables.value_of(&idx[..n]),
        };
        r_next = reward as f32;
        n = next_n;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::eval::ntuple::index::Indexer;
    use crate::eval::ntuple::Shape;
    use crate::train::config::{Halving, StartSource};
    use crate::with_lookups;

    const RULE: TdRule = TdRule {
        lambda: 0.5,
        next_value: NextValue::BeforeUpdate,
        stage_target: StageTarget::Own,
    };

    /// The target of s_0 reads V(s_1) before or after s_1's own update, as `next_value` says. Two afterstates whose
    /// eight lookups all index one weight each (every cell a 2; every cell a 4), plain TD with alpha 1/8, so that an
    /// update moves a board's value exactly to its target: V(s_1) goes from 8 to its target 0; the target of s_0 is
    /// r_1 + 0.5 V(s_1) + 0.5 x 0 = 16 + 0.5 x 8 before, 16 + 0.5 x 0 after.
    #[test]
    fn the_target_reads_the_next_value_before_or_after_its_update() {
        let shape = Shape::new(vec![vec![0, 1, 2, 3]], vec![0]).unwrap();
        let (s0, s1) = (Board(0x1111_1111_1111_1111), Board(0x2222_2222_2222_2222));
        let path = [(s0, 4), (s1, 16)];
        for (next_value, expected) in [(NextValue::BeforeUpdate, 20.0), (NextValue::AfterUpdate, 16.0)] {
            let tables = Tables::new(shape.clone(), 1.0, false, 0.125);
            assert_eq!((tables.value(s0), tables.value(s1)), (8.0, 8.0));
            let rule = TdRule {
                lambda: 0.5,
                next_value,
                stage_target: StageTarget::Own,
            };
            with_lookups!(&Indexer::new(&shape), l => learn(l, &tables, rule, &path, &[0, 0]));
            assert_eq!(tables.value(s1), 0.0, "{next_value:?}");
            assert_eq!(tables.value(s0), expected, "{next_value:?}");
        }
    }

    /// The backward pass (which computes and prefetches each afterstate's lookups one step ahead) learns exactly what
    /// the plain pass does: each afterstate in turn, its lookups computed cell by cell, valued, updated and valued
    /// again. Weights and accumulators are compared bit for bit after a whole game, TD(0.5) with temporal coherence,
    /// for both rules of the next value.
    #[test]
    fn learning_equals_the_plain_backward_pass() {
        let shape = Shape::new(vec![vec![0, 1, 2, 3], vec![4, 5, 6, 7], vec![0, 1, 4, 5]], vec![0]).unwrap();
        let features = crate::eval::ntuple::Features::new(shape.clone());
        let mut rng = Rng::new(7);
        let weights: Vec<f32> = (0..shape.weight_count())
            .map(|_| rng.below(2001) as f32 - 1000.0)
            .collect();
        let tables = || {
            let net = crate::eval::ntuple::Network::from_weights(shape.clone(), weights.clone()).unwrap();
            Tables::from_network(net, Some(Tables::accumulators(shape.weight_count())), 1.0)
        };
        for next_value in [NextValue::BeforeUpdate, NextValue::AfterUpdate] {
            let rule = TdRule {
                lambda: 0.5,
                next_value,
                stage_target: StageTarget::Own,
            };
            let (piped, plain) = (tables(), tables());
            let (mut path, mut decisions) = (Vec::new(), Vec::new());
            let start = Board(0x1000_0000_0000_0001);
            with_lookups!(&Indexer::new(&shape), l => play(l, &piped, start, &mut rng, &mut path, &mut decisions));
            assert!(path.len() > 50, "a game of {} moves", path.len());
            with_lookups!(&Indexer::new(&shape), l => learn(l, &piped, rule, &path, &decisions));

            let (mut g_next, mut v_next, mut r_next) = (0.0f32, 0.0f32, 0.0f32);
            for (k, &(s, reward)) in path.iter().enumerate().rev() {
                let mut idx = [0u32; MAX_LOOKUPS];
                let n = features.indices(s, s.transpose(), &mut idx);
                let v = plain.value(s);
                let target = if k + 1 == path.len() {
                    0.0
                } else {
                    r_next + 0.5 * v_next + 0.5 * g_next
                };
                plain.update_at(&idx[..n], target - v);
                g_next = target;
                v_next = match next_value {
                    NextValue::BeforeUpdate => v,
                    NextValue::AfterUpdate => plain.value(s),
                };
                r_next = reward as f32;
            }
            let differ = (0..shape.weight_count())
                .filter(|&i| {
                    piped.weight(i).to_bits() != plain.weight(i).to_bits()
                        || piped.accumulator(i) != plain.accumulator(i)
                })
                .count();
            let changed = (0..shape.weight_count())
                .filter(|&i| plain.weight(i) != weights[i])
                .count();
            assert!(changed > 100, "{next_value:?}: the game changed {changed} weights");
            assert_eq!(differ, 0, "{next_value:?}: weights that differ from the plain pass");
        }
    }

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
        let mut decisions = Vec::new();
        for _ in 0..20 {
            let mut seen: Vec<(Segment, Vec<(Board, u32)>)> = Vec::new();
            let first = start.next(&policy, &mut rng);
            with_lookups!(&Indexer::new(&shape), l => train_game(
                l, &tables, RULE, &policy, &mut start, first, &mut rng, &mut path, &mut decisions,
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

    /// Two stages, the second from the 8 tile on; stage 1's weights all `late`, stage 0's all 0.
    fn two_stage_tables(late: f32) -> Tables {
        let shape = Shape::new(vec![vec![0, 1, 2, 3], vec![4, 5, 6, 7]], vec![0, 3]).unwrap();
        let per = shape.weights_per_stage();
        let weights = (0..shape.weight_count())
            .map(|i| if i < per { 0.0 } else { late })
            .collect();
        let net = crate::eval::ntuple::Network::from_weights(shape, weights).unwrap();
        Tables::from_network(net, None, 0.1)
    }

    /// A move that makes the second stage's start tile is valued in the stage of the board it is made on: with
    /// stage 1 valuing every board at -1e6, the player still merges the two 4s (the largest reward), and the
    /// decision is recorded in stage 0.
    #[test]
    fn a_decision_values_every_move_in_the_stage_of_its_board() {
        let tables = two_stage_tables(-1e6);
        let shape = tables.shape().clone();
        // Row 0: 4 4 2 _ ; the rest empty. Left merges the 4s into an 8 (reward 8), the others reward 0 or 4.
        let start = Board(0x2210_0000_0000_0000);
        let (mut path, mut decisions) = (Vec::new(), Vec::new());
        let mut rng = Rng::new(1);
        with_lookups!(&Indexer::new(&shape), l => play(l, &tables, start, &mut rng, &mut path, &mut decisions));
        assert_eq!(
            path[0].0,
            Board(0x3100_0000_0000_0000),
            "the first move merges the 4s: {:x}",
            path[0].0 .0
        );
        assert_eq!(decisions[0], 0);
        assert_eq!(decisions[1], 1, "the next decision is on a board holding the 8");
    }

    /// A stage learns from its own values only: stage 1 starts at 1e6 per weight, stage 0 at 0; games that cross
    /// into stage 1 must not pull stage 0's values towards stage 1's.
    #[test]
    fn a_stage_never_learns_from_the_next_stage_values() {
        let tables = two_stage_tables(1e6);
        let shape = tables.shape().clone();
        let policy = StartPolicy {
            source: StartSource::Fresh,
            halving: None,
        };
        let mut rng = Rng::new(9);
        let mut start = StartState::default();
        let (mut path, mut decisions) = (Vec::new(), Vec::new());
        let mut crossed = 0;
        for _ in 0..50 {
            let first = start.next(&policy, &mut rng);
            with_lookups!(&Indexer::new(&shape), l => train_game(
                l, &tables, RULE, &policy, &mut start, first, &mut rng, &mut path, &mut decisions, |_, _| {},
            ));
            crossed += usize::from(decisions.windows(2).any(|w| w[0] == 0 && w[1] == 1));
        }
        assert!(crossed > 40, "games reaching an 8: {crossed}");
        let per = shape.weights_per_stage();
        let largest = (0..per).map(|i| tables.weight(i).abs()).fold(0.0f32, f32::max);
        assert!(largest < 1e3, "a stage-0 weight reached {largest}");
    }

    /// With the later stage frozen, each game ends at its first decision in it, that stage keeps its weights, and
    /// the crossing afterstates learn the later stage's values with [`StageTarget::Next`] (stage 1 values every board
    /// at 16 x 50 = 800) and with [`StageTarget::Own`] only what stage 0's own values and the rewards make of them.
    #[test]
    fn a_frozen_later_stage_ends_games_and_with_next_targets_teaches_the_crossing_its_values() {
        let policy = StartPolicy {
            source: StartSource::Fresh,
            halving: None,
        };
        let crossing_value = |stage_target: StageTarget| {
            let mut tables = two_stage_tables(50.0);
            tables.freeze_from(1);
            let shape = tables.shape().clone();
            let late: Vec<f32> = (shape.weights_per_stage()..shape.weight_count())
                .map(|i| tables.weight(i))
                .collect();
            let rule = TdRule { stage_target, ..RULE };
            let mut rng = Rng::new(11);
            let mut start = StartState::default();
            let (mut path, mut decisions) = (Vec::new(), Vec::new());
            let mut crossings = Vec::new();
            for game in 0..400 {
                let first = start.next(&policy, &mut rng);
                with_lookups!(&Indexer::new(&shape), l => train_game(
                    l, &tables, rule, &policy, &mut start, first, &mut rng, &mut path, &mut decisions, |_, _| {},
                ));
                let crossed = decisions.iter().position(|&k| k == 1);
                if let Some(at) = crossed {
                    assert_eq!(
                        at + 1,
                        path.len(),
                        "game {game} went on after its first decision in stage 1"
                    );
                    assert!(at > 0, "game {game} started in stage 1");
                    if game >= 300 {
                        crossings.push(path[at - 1].0);
                    }
                } else {
                    assert!(
                        path.len() > 3,
                        "game {game} ended after {} moves without an 8",
                        path.len()
                    );
                }
            }
            let after: Vec<f32> = (shape.weights_per_stage()..shape.weight_count())
                .map(|i| tables.weight(i))
                .collect();
            assert!(late == after, "the frozen stage changed");
            assert!(crossings.len() > 50, "games crossing into stage 1: {}", crossings.len());
            // The crossing afterstates valued as the player does: in stage 0 (the stage of their decision).
            let stage0 = |b: Board| {
                let mut idx = [0u32; MAX_LOOKUPS];
                let n = with_lookups!(tables.indexer(), l => l.indices_in(0, b, b.transpose(), &mut idx));
                tables.value_of(&idx[..n])
            };
            crossings.iter().map(|&b| stage0(b)).sum::<f32>() / crossings.len() as f32
        };
        let next = crossing_value(StageTarget::Next);
        let own = crossing_value(StageTarget::Own);
        assert!(
            next > 600.0,
            "with next-stage targets the crossings are worth {next}, not about 800"
        );
        assert!(own < 300.0, "with own-stage targets the crossings are worth {own}");
    }

    /// With the first stage frozen, halving restarts replay only what can learn: the restart is the middle of the
    /// stretch played in the second stage (plus a spawn), and a game that never reaches it is not replayed.
    #[test]
    fn halving_with_a_frozen_stage_replays_only_the_stage_that_learns() {
        let mut tables = two_stage_tables(0.0);
        tables.freeze_below(1);
        let shape = tables.shape().clone();
        let policy = StartPolicy {
            source: StartSource::Fresh,
            halving: Some(Halving::default()),
        };
        let mut rng = Rng::new(3);
        let mut start = StartState::default();
        let (mut path, mut decisions) = (Vec::new(), Vec::new());
        let before: Vec<f32> = (0..shape.weights_per_stage()).map(|i| tables.weight(i)).collect();
        let mut restarts = 0;
        for _ in 0..30 {
            let mut seen: Vec<(Segment, Vec<(Board, u32)>)> = Vec::new();
            let first = start.next(&policy, &mut rng);
            with_lookups!(&Indexer::new(&shape), l => train_game(
                l, &tables, RULE, &policy, &mut start, first, &mut rng, &mut path, &mut decisions,
                |s, p| seen.push((s, p.to_vec())),
            ));
            for pair in seen.windows(2) {
                let ((played, moves), (restart, _)) = (&pair[0], &pair[1]);
                // The first afterstate chosen on a board holding an 8 (a spawn adds a 2 or a 4 only).
                let learns_from = if played.start.max_exponent() >= 3 {
                    0
                } else {
                    1 + moves.iter().position(|(b, _)| b.max_exponent() >= 3).unwrap()
                };
                let at = learns_from + (moves.len() - learns_from) / 2;
                let middle = moves[at].0;
                let new = restart.start.0 ^ middle.0;
                assert!(
                    new != 0 && new & middle.0 == 0,
                    "{:x} is not {:x} plus a tile",
                    restart.start.0,
                    middle.0
                );
                assert_eq!(restart.start.empty_count() + 1, middle.empty_count());
                restarts += 1;
            }
        }
        assert!(restarts > 30, "restarts: {restarts}");
        let after: Vec<f32> = (0..shape.weights_per_stage()).map(|i| tables.weight(i)).collect();
        assert!(before == after, "the frozen stage changed");

        // A second stage from 32768 on, which these games never reach: nothing is replayed.
        let shape = Shape::new(vec![vec![0, 1, 2, 3], vec![4, 5, 6, 7]], vec![0, 15]).unwrap();
        let mut tables = Tables::new(shape.clone(), 0.0, false, 0.1);
        tables.freeze_below(1);
        for _ in 0..10 {
            let mut segments = 0;
            let first = start.next(&policy, &mut rng);
            with_lookups!(&Indexer::new(&shape), l => train_game(
                l, &tables, RULE, &policy, &mut start, first, &mut rng, &mut path, &mut decisions,
                |_, _| segments += 1,
            ));
            assert!(path.len() > 10);
            assert_eq!(segments, 1);
        }
    }
}
