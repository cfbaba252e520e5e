//! The expectimax recursion, generic over the board type: [`Board`] (tables) for every board whose tiles provably
//! stay below 65536 during the search, [`Tiles`] (plain code, no transposition table) for the rest.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Instant;

use super::tt::TranspositionTable;
use crate::engine::rng::Rng;
use crate::engine::{Board, Direction, Tiles, FOUR_PROBABILITY, TWO_PROBABILITY};
use crate::eval::Evaluator;

/// Nodes between two looks at the stop flag and the clock (a few microseconds of work).
const CHECK_EVERY: u64 = 4096;

/// What the recursion needs from a board type.
pub(crate) trait Position: Copy + PartialEq {
    /// The four moves in [`Direction::ALL`] order: `None` when illegal, else the board and the reward.
    fn moves(self) -> [Option<(Self, u64)>; 4];
    /// Row-major indices of the empty cells, and how many there are.
    fn empty_cells(self) -> ([u8; 16], usize);
    /// The board with exponent `e` placed in the empty cell `i`.
    fn place(self, i: u8, e: u8) -> Self;
    fn evaluate<E: Evaluator>(self, eval: &E) -> f64;
    /// The best `reward_weight x reward + h(board after the move)` over the legal moves (a move node with one ply
    /// left), `None` when no move is legal. `cache`, when given, holds values of boards after moves (see
    /// [`TranspositionTable::leaf_value`]): the values found there are used, the others computed and stored.
    fn best_leaf<E: Evaluator>(
        self,
        eval: &E,
        reward_weight: f64,
        cache: Option<&mut TranspositionTable>,
    ) -> Option<f64> {
        let _ = cache;
        let mut best: Option<f64> = None;
        for (after, reward) in self.moves().into_iter().flatten() {
            let v = reward_weight * reward as f64 + after.evaluate(eval);
            best = Some(best.map_or(v, |b| b.max(v)));
        }
        best
    }
    /// [`Position::best_leaf`] of every board a chance node on `self` leads to: a 2, then a 4, in each of `cells`
    /// in turn (cell 0's 2, cell 0's 4, cell 1's 2, ...), into the first `2 x cells.len()` places of `out` (at most
    /// 16 cells). The values are those of `best_leaf` on each board in that order, bit for bit; a board type may
    /// value the boards after their moves together instead of leaf by leaf.
    fn best_leaves_of_spawns<E: Evaluator>(
        self,
        cells: &[u8],
        eval: &E,
        reward_weight: f64,
        cache: Option<&mut TranspositionTable>,
        out: &mut [Option<f64>; 32],
    ) {
        leaves_one_by_one(self, cells, eval, reward_weight, cache, out);
    }
    /// Transposition key, `None` when this type does not use the table.
    fn tt_key(self) -> Option<u64>;
}

/// [`Position::best_leaves_of_spawns`] leaf by leaf: `best_leaf` on each board in turn.
#[inline(always)]
fn leaves_one_by_one<P: Position, E: Evaluator>(
    board: P,
    cells: &[u8],
    eval: &E,
    reward_weight: f64,
    mut cache: Option<&mut TranspositionTable>,
    out: &mut [Option<f64>; 32],
) {
    for (j, &i) in cells.iter().enumerate().take(16) {
        out[2 * j] = board.place(i, 1).best_leaf(eval, reward_weight, cache.as_deref_mut());
        out[2 * j + 1] = board.place(i, 2).best_leaf(eval, reward_weight, cache.as_deref_mut());
    }
}

impl Position for Board {
    #[inline(always)]
    fn moves(self) -> [Option<(Board, u64)>; 4] {
        let all = self.slide_all();
        all.map(|(b, r)| {
            debug_assert!(
                r & crate::engine::OVERFLOW_FLAG == 0,
                "fast path used on a board that can overflow"
            );
            (b != self).then_some((b, u64::from(r)))
        })
    }

    #[inline(always)]
    fn empty_cells(self) -> ([u8; 16], usize) {
        // One bit per empty cell (the lowest bit of its nibble), walked from the last cell to the first.
        let mut empty = self.empty_mask();
        let mut cells = [0u8; 16];
        let mut n = 0;
        while empty != 0 {
            cells[n] = 15 - (empty.trailing_zeros() / 4) as u8;
            n += 1;
            empty &= empty - 1;
        }
        (cells, n)
    }

    #[inline(always)]
    fn place(self, i: u8, e: u8) -> Board {
        Board(self.0 | (u64::from(e) << (4 * (15 - u32::from(i)))))
    }

    #[inline(always)]
    fn evaluate<E: Evaluator>(self, eval: &E) -> f64 {
        eval.evaluate(self)
    }

    #[inline(always)]
    fn best_leaf<E: Evaluator>(
        self,
        eval: &E,
        reward_weight: f64,
        cache: Option<&mut TranspositionTable>,
    ) -> Option<f64> {
        if reward_weight != 0.0 {
            // Rewards needed: the values of the legal moves' boards from the cache, the others computed side by side
            // (an evaluator whose lookups miss the cache overlaps them) and stored; then each legal move's reward
            // added, in the general path's order.
            let children = self.leaf_children_rewarded();
            debug_assert!(
                children.iter().all(|c| c.2 & crate::engine::OVERFLOW_FLAG == 0),
                "fast path used on a board that can overflow"
            );
            let mut values = [0.0f64; 4];
            let mut todo = [(Board::EMPTY, Board::EMPTY); 4];
            let mut slot = [0usize; 4];
            let mut n = 0;
            for (k, &(after, transposed, _, legal)) in children.iter().enumerate() {
                if !legal {
                    continue;
                }
                match cache.as_deref().and_then(|c| c.leaf_value(after.0)) {
                    Some(v) => values[k] = f64::from(v),
                    None => {
                        todo[n] = (after, transposed);
                        slot[n] = k;
                        n += 1;
                    }
                }
            }
            if n > 0 {
                let computed = eval.evaluate_first(todo, n);
                for j in 0..n {
                    values[slot[j] & 3] = computed[j];
                }
                if let Some(cache) = cache {
                    for j in 0..n {
                        // Exact: the evaluator's values are f32 numbers (`values_worth_caching`).
                        cache.put_leaf_value(todo[j].0 .0, computed[j] as f32);
                    }
                }
            }
            let mut best: Option<f64> = None;
            for (&(_, _, reward, legal), h) in children.iter().zip(values) {
                if legal {
                    let v = reward_weight * f64::from(reward) + h;
                    best = Some(best.map_or(v, |b| b.max(v)));
                }
            }
            return best;
        }
        // Every direction is evaluated and the illegal ones masked: no branch on legality to mispredict.
        let mut best = f64::NEG_INFINITY;
        for (after, transposed, legal) in self.leaf_children() {
            let v = if legal {
                eval.evaluate_with_transpose(after, transposed)
            } else {
                f64::NEG_INFINITY
            };
            // Values are never NaN, so a plain comparison (one `maxsd`) gives `f64::max`.
            best = if v > best { v } else { best };
        }
        (best != f64::NEG_INFINITY).then_some(best)
    }

    #[inline(always)]
    fn best_leaves_of_spawns<E: Evaluator>(
        self,
        cells: &[u8],
        eval: &E,
        reward_weight: f64,
        mut cache: Option<&mut TranspositionTable>,
        out: &mut [Option<f64>; 32],
    ) {
        if reward_weight == 0.0 {
            // No rewards (the heuristic profiles): `best_leaf` keeps no cache of values there; leaf by leaf.
            return leaves_one_by_one(self, cells, eval, reward_weight, cache, out);
        }
        // Every leaf's moves first; the values of their boards from the cache, the others gathered four at a time
        // (a full call of the evaluator, whose lookups then overlap across leaves) and stored; then each leaf's best
        // in `best_leaf`'s order. A board already waiting to be valued is not valued twice: its place takes the
        // value when it comes (siblings often leave the same board: a tile spawned anywhere in one gap of a row
        // slides to the same place).
        let leaves = 2 * cells.len().min(16);
        let mut rewards = [[0u32; 4]; 32];
        let mut legal = [0u8; 32];
        let mut values = [[0.0f64; 4]; 32];
        let mut todo = [(Board::EMPTY, Board::EMPTY); 4];
        let mut n = 0;
        // Where each waiting value goes: (leaf << 2 | direction, its place in `todo`).
        let mut places = [(0u8, 0u8); 128];
        let mut m = 0;
        let flush = |todo: &[(Board, Board); 4],
                     n: usize,
                     places: &[(u8, u8)],
                     values: &mut [[f64; 4]; 32],
                     cache: &mut Option<&mut TranspositionTable>| {
            let computed = eval.evaluate_first(*todo, n);
            for &(to, j) in places {
                values[usize::from(to >> 2) & 31][usize::from(to & 3)] = computed[usize::from(j & 3)];
            }
            if let Some(cache) = cache.as_deref_mut() {
                for j in 0..n.min(4) {
                    // Exact: the evaluator's values are f32 numbers (`values_worth_caching`).
                    cache.put_leaf_value(todo[j].0 .0, computed[j] as f32);
                }
            }
        };
        for c in 0..leaves {
            let leaf = self.place(cells[c / 2], 1 + (c & 1) as u8);
            let children = leaf.leaf_children_rewarded();
            debug_assert!(
                children.iter().all(|m| m.2 & crate::engine::OVERFLOW_FLAG == 0),
                "fast path used on a board that can overflow"
            );
            for (k, &(after, transposed, reward, is_legal)) in children.iter().enumerate() {
                rewards[c][k] = reward;
                if !is_legal {
                    continue;
                }
                legal[c] |= 1 << k;
                if let Some(v) = cache.as_deref().and_then(|t| t.leaf_value(after.0)) {
                    values[c][k] = f64::from(v);
                    continue;
                }
                let to = ((c << 2) | k) as u8;
                if let Some(j) = todo[..n].iter().position(|w| w.0 == after) {
                    places[m & 127] = (to, j as u8);
                    m += 1;
                    continue;
                }
                todo[n & 3] = (after, transposed);
                places[m & 127] = (to, n as u8);
                m += 1;
                n += 1;
                if n == 4 {
                    flush(&todo, n, &places[..m.min(128)], &mut values, &mut cache);
                    n = 0;
                    m = 0;
                }
            }
        }
        if n > 0 {
            flush(&todo, n, &places[..m.min(128)], &mut values, &mut cache);
        }
        for c in 0..leaves {
            let mut best: Option<f64> = None;
            for k in 0..4 {
                if legal[c] & (1 << k) != 0 {
                    let v = reward_weight * f64::from(rewards[c][k]) + values[c][k];
                    best = Some(best.map_or(v, |b| b.max(v)));
                }
            }
            out[c] = best;
        }
    }

    #[inline(always)]
    fn tt_key(self) -> Option<u64> {
        Some(self.0)
    }
}

impl Position for Tiles {
    fn moves(self) -> [Option<(Tiles, u64)>; 4] {
        Direction::ALL.map(|d| self.play(d))
    }

    fn empty_cells(self) -> ([u8; 16], usize) {
        let mut cells = [0u8; 16];
        let mut n = 0;
        for (i, e) in self.exponents().into_iter().enumerate() {
            if e == 0 {
                cells[n] = i as u8;
                n += 1;
            }
        }
        (cells, n)
    }

    fn place(self, i: u8, e: u8) -> Tiles {
        self.with_exponent_at(usize::from(i), e)
    }

    fn evaluate<E: Evaluator>(self, eval: &E) -> f64 {
        eval.evaluate_tiles(&self)
    }

    fn tt_key(self) -> Option<u64> {
        None
    }
}

/// The fixed parameters and the running counters of one root move's search.
pub(crate) struct Ctx<'a, E> {
    pub eval: &'a E,
    pub reward_weight: f64,
    pub terminal_heuristic: bool,
    pub prob_cutoff: f64,
    /// Moves expanded per move node below the root (4 = all).
    pub top_k: usize,
    /// Empty cells averaged per chance node (0 = all).
    pub sample_cells: usize,
    pub rng: Rng,
    pub tt: Option<&'a mut TranspositionTable>,
    /// Whether the leaves keep their boards' values in the table's leaf-value cache (an evaluator whose values are
    /// worth caching, and a table).
    leaf_cache: bool,
    pub stop: &'a AtomicBool,
    pub deadline: Option<Instant>,
    /// The end of the time budget, on its clock.
    budget: Option<super::Budget>,
    /// Abort when the nodes of all threads pass this.
    pub node_limit: u64,
    /// Nodes of all threads of this search, updated at every check.
    pub shared_nodes: &'a AtomicU64,
    pub nodes: u64,
    reported: u64,
    pub tt_hits: u64,
    next_check: u64,
    pub aborted: bool,
}

impl<'a, E: Evaluator> Ctx<'a, E> {
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        eval: &'a E,
        settings: &super::SearchSettings,
        rng: Rng,
        tt: Option<&'a mut TranspositionTable>,
        stop: &'a AtomicBool,
        (deadline, budget): (Option<Instant>, Option<super::Budget>),
        node_limit: u64,
        shared_nodes: &'a AtomicU64,
    ) -> Self {
        let mut tt = tt;
        let leaf_cache = eval.values_worth_caching() && tt.is_some();
        if let (true, Some(t)) = (leaf_cache, tt.as_deref_mut()) {
            t.enable_leaf_values();
        }
        Ctx {
            eval,
            leaf_cache,
            reward_weight: settings.reward_weight,
            terminal_heuristic: settings.terminal == super::Terminal::Heuristic,
            prob_cutoff: settings.prob_cutoff,
            top_k: settings.top_k.map_or(4, |k| k.clamp(1, 4) as usize),
            sample_cells: settings.sample_cells.map_or(0, |k| k.max(1) as usize),
            rng,
            tt,
            stop,
            deadline,
            budget,
            node_limit,
            shared_nodes,
            nodes: 0,
            reported: 0,
            tt_hits: 0,
            next_check: CHECK_EVERY,
            aborted: false,
        }
    }

    /// Counts `n` nodes and, every [`CHECK_EVERY`], looks at the stop flag, the clock and the node limit.
    #[inline(always)]
    fn count(&mut self, n: u64) {
        self.nodes += n;
        if self.nodes >= self.next_check {
            self.next_check = self.nodes + CHECK_EVERY;
            let total = self
                .shared_nodes
                .fetch_add(self.nodes - self.reported, Ordering::Relaxed)
                + self.nodes
                - self.reported;
            self.reported = self.nodes;
            if self.stop.load(Ordering::Relaxed)
                || total >= self.node_limit
                || self.deadline.is_some_and(|d| Instant::now() >= d)
                || self.budget.is_some_and(|b| b.is_over())
            {
                self.aborted = true;
            }
        }
    }

    /// A move node with `plies` left and path probability `prob`.
    pub fn move_node<P: Position>(&mut self, board: P, plies: u32, prob: f64) -> f64 {
        if plies == 0 {
            return board.evaluate(self.eval);
        }
        self.count(4);
        if self.aborted {
            return 0.0;
        }
        if self.is_leaf(plies, prob) {
            return self.leaf(board);
        }
        let moves = board.moves();
        if self.top_k < 4 {
            return self.move_node_top_k(board, moves, plies, prob);
        }
        if plies > 2 {
            // Start loading the children's table slots now: a table miss is the search's most common stall.
            if let Some(tt) = self.tt.as_deref() {
                for (after, _) in moves.iter().flatten() {
                    if let Some(key) = after.tt_key() {
                        tt.prefetch(key);
                    }
                }
            }
        }
        let mut best = f64::NEG_INFINITY;
        for (after, reward) in moves.into_iter().flatten() {
            let v = self.reward_weight * reward as f64 + self.chance_node(after, plies - 1, prob);
            best = best.max(v);
        }
        if best == f64::NEG_INFINITY {
            return self.terminal(board);
        }
        best
    }

    /// Whether a move node with `plies` left (at least 1) and path probability `prob` is a leaf (see `leaf`).
    #[inline(always)]
    fn is_leaf(&self, plies: u32, prob: f64) -> bool {
        self.top_k >= 4 && (plies == 1 || prob < self.prob_cutoff)
    }

    /// A leaf move node: one ply left, or a path probability below the cut-off (then every chance child is cut off
    /// and worth its heuristic value). Its value is the best `reward_weight x reward + h(board after the move)`, the
    /// same as the general path gives, without the calls. The hottest code of a search: most move nodes are leaves.
    #[inline(always)]
    fn leaf<P: Position>(&mut self, board: P) -> f64 {
        self.count(4);
        if self.aborted {
            return 0.0;
        }
        let cache = if self.leaf_cache { self.tt.as_deref_mut() } else { None };
        match board.best_leaf(self.eval, self.reward_weight, cache) {
            Some(v) => v,
            None => self.terminal(board),
        }
    }

    fn move_node_top_k<P: Position>(&mut self, board: P, moves: [Option<(P, u64)>; 4], plies: u32, prob: f64) -> f64 {
        let mut ranked: [Option<(f64, P, u64)>; 4] = [None; 4];
        for (slot, m) in ranked.iter_mut().zip(moves) {
            *slot = m.map(|(after, r)| (after.evaluate(self.eval), after, r));
        }
        if ranked.iter().all(Option::is_none) {
            return self.terminal(board);
        }
        // Best evaluation first, illegal moves last; the sort is stable, so ties keep the up, down, left, right order.
        ranked.sort_by(|a, b| match (a, b) {
            (Some(a), Some(b)) => b.0.total_cmp(&a.0),
            (Some(_), None) => std::cmp::Ordering::Less,
            (None, Some(_)) => std::cmp::Ordering::Greater,
            (None, None) => std::cmp::Ordering::Equal,
        });
        let mut best = f64::NEG_INFINITY;
        for (_, after, reward) in ranked.into_iter().take(self.top_k).flatten() {
            best = best.max(self.reward_weight * reward as f64 + self.chance_node(after, plies - 1, prob));
        }
        best
    }

    fn terminal<P: Position>(&self, board: P) -> f64 {
        if self.terminal_heuristic {
            board.evaluate(self.eval)
        } else {
            0.0
        }
    }

    /// A chance node (after a move, before the spawn) with `plies` left and path probability `prob`.
    pub fn chance_node<P: Position>(&mut self, board: P, plies: u32, prob: f64) -> f64 {
        if plies == 0 || prob < self.prob_cutoff {
            return board.evaluate(self.eval);
        }
        let key = board.tt_key();
        if let (Some(key), Some(tt)) = (key, self.tt.as_deref()) {
            if let Some(v) = tt.get(key, plies) {
                self.tt_hits += 1;
                return v;
            }
        }
        let (mut cells, mut n) = board.empty_cells();
        if n == 0 {
            return board.evaluate(self.eval);
        }
        if self.sample_cells != 0 && n > self.sample_cells {
            // Partial Fisher-Yates: a uniform sample of `sample_cells` distinct cells; the mean stays unbiased.
            for i in 0..self.sample_cells {
                let j = i + self.rng.below((n - i) as u64) as usize;
                cells.swap(i, j);
            }
            n = self.sample_cells;
        }
        let p2 = prob * TWO_PROBABILITY / n as f64;
        let p4 = prob * FOUR_PROBABILITY / n as f64;
        // Most children are leaves (see `leaf`): those are computed here, without the call.
        // (With one ply left here, the children have none: `move_node` evaluates them.)
        let two_is_leaf = plies > 1 && self.is_leaf(plies - 1, p2);
        let four_is_leaf = plies > 1 && self.is_leaf(plies - 1, p4);
        let sum = if two_is_leaf && four_is_leaf {
            self.leaves_of_spawns(board, &cells[..n])
        } else {
            self.children_of_spawns(board, &cells[..n], plies, (p2, p4), (two_is_leaf, four_is_leaf))
        };
        let value = sum / n as f64;
        if let (Some(key), Some(tt)) = (key, self.tt.as_deref_mut()) {
            if !self.aborted {
                tt.put(key, plies, value);
            }
        }
        value
    }

    /// The sum over a chance node's children (a 2 with its probability, then a 4, in each of `cells`) when every
    /// child is a leaf: counted as the leaves one by one are (`leaf`), valued together
    /// ([`Position::best_leaves_of_spawns`]), added in the same order.
    #[inline(always)]
    fn leaves_of_spawns<P: Position>(&mut self, board: P, cells: &[u8]) -> f64 {
        for _ in 0..2 * cells.len() {
            self.count(4);
        }
        if self.aborted {
            return 0.0;
        }
        let mut best = [None; 32];
        let cache = if self.leaf_cache { self.tt.as_deref_mut() } else { None };
        board.best_leaves_of_spawns(cells, self.eval, self.reward_weight, cache, &mut best);
        let mut sum = 0.0;
        for (j, &i) in cells.iter().enumerate().take(16) {
            let two = best[2 * j].unwrap_or_else(|| self.terminal(board.place(i, 1)));
            sum += TWO_PROBABILITY * two;
            let four = best[2 * j + 1].unwrap_or_else(|| self.terminal(board.place(i, 2)));
            sum += FOUR_PROBABILITY * four;
        }
        sum
    }

    /// The sum over a chance node's children (see `leaves_of_spawns`) when some are not leaves: one by one.
    #[inline(always)]
    fn children_of_spawns<P: Position>(
        &mut self,
        board: P,
        cells: &[u8],
        plies: u32,
        (p2, p4): (f64, f64),
        (two_is_leaf, four_is_leaf): (bool, bool),
    ) -> f64 {
        let mut sum = 0.0;
        for &i in cells {
            let two = board.place(i, 1);
            sum += TWO_PROBABILITY
                * if two_is_leaf {
                    self.leaf(two)
                } else {
                    self.move_node(two, plies - 1, p2)
                };
            let four = board.place(i, 2);
            sum += FOUR_PROBABILITY
                * if four_is_leaf {
                    self.leaf(four)
                } else {
                    self.move_node(four, plies - 1, p4)
                };
        }
        sum
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;
    use crate::eval::ntuple::{NTupleEvaluator, Network, Shape};

    /// The leaves of a chance node valued together equal the leaves valued one by one (`best_leaf` on each child,
    /// in order), bit for bit, with the leaf-value cache and without, on boards whose children share boards after
    /// their moves and on boards some of whose children have no legal move.
    #[test]
    fn leaves_valued_together_equal_the_leaves_one_by_one() {
        let shape = Shape::new(
            vec![vec![0, 1, 2, 3], vec![4, 5, 6, 7], vec![0, 4, 8, 12], vec![1, 5, 9, 13]],
            vec![0],
        )
        .expect("a valid shape");
        let mut rng = Rng::new(3);
        let weights = (0..shape.weight_count())
            .map(|_| (rng.below(2001) as f32 - 1000.0) * 0.37)
            .collect();
        let eval = NTupleEvaluator::new(Arc::new(
            Network::from_weights(shape, weights).expect("the shape's count"),
        ));
        // Ends with a board one of whose children is dead: a 2 in its last cell leaves a full board without pairs.
        let dead = Board(0x1212_2121_1212_2120);
        let boards = (0..3000)
            .map(|k| {
                let mut bits = 0u64;
                for _ in 0..16 {
                    let empty = rng.below(16) < [1, 3, 8][k % 3];
                    bits = (bits << 4) | if empty { 0 } else { 1 + rng.below(11) };
                }
                Board(bits)
            })
            .chain([dead]);
        let mut terminal = 0;
        for board in boards {
            let (cells, n) = board.empty_cells();
            for cached in [false, true] {
                let table = || {
                    let mut t = TranspositionTable::new(8);
                    t.enable_leaf_values();
                    t.begin_leaf_epoch(1);
                    t
                };
                let (mut one, mut all) = (table(), table());
                // Twice: the second time most values come from the cache the first time filled.
                for _ in 0..2 {
                    let mut want = [None; 32];
                    for (j, &i) in cells[..n].iter().enumerate() {
                        for e in [1u8, 2] {
                            let cache = cached.then_some(&mut one);
                            want[2 * j + usize::from(e) - 1] = board.place(i, e).best_leaf(&eval, 1.0, cache);
                        }
                    }
                    let mut got = [None; 32];
                    board.best_leaves_of_spawns(&cells[..n], &eval, 1.0, cached.then_some(&mut all), &mut got);
                    assert_eq!(want[..2 * n], got[..2 * n], "{board:?}");
                    terminal += want[..2 * n].iter().filter(|v| v.is_none()).count();
                }
            }
        }
        assert!(terminal > 0, "no child without a legal move was met");
    }
}
