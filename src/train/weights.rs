//! The shared tables every training thread reads and updates: the weights, and (with temporal coherence) each
//! weight's two accumulators.
//!
//! Weights are `AtomicU32` holding `f32` bits, read and written with relaxed ordering: an update can be lost when two
//! threads touch the same weight at once (the lock-free optimism of Jaśkowski 2016), but there is no data race.
//! With temporal coherence each weight keeps E (the sum of its errors) and A (the sum of their magnitudes) side by
//! side (one cache line for both); its own rate is `beta = |E| / A` (1 while A = 0). Without it no accumulators are
//! allocated at all.

use std::sync::atomic::{AtomicU32, Ordering};

use crate::eval::ntuple::index::{Indexer, Lookups as _};
use crate::eval::ntuple::{huge_page_vec, prefetch, Network, Shape, MAX_LOOKUPS};
use crate::with_lookups;

#[inline(always)]
pub(super) fn load(a: &AtomicU32) -> f32 {
    f32::from_bits(a.load(Ordering::Relaxed))
}

#[inline(always)]
fn store(a: &AtomicU32, v: f32) {
    a.store(v.to_bits(), Ordering::Relaxed)
}

/// The trainable tables of one network.
pub struct Tables {
    shape: Shape,
    indexer: Indexer,
    weights: Vec<AtomicU32>,
    /// E and A of every weight; empty without temporal coherence.
    coherence: Vec<[AtomicU32; 2]>,
    /// `alpha / lookups per board`.
    step: f32,
    /// The frozen stages (a first or a last stretch of them) and their weights, which are never updated.
    frozen_stages: std::ops::Range<usize>,
    frozen: std::ops::Range<usize>,
}

impl Tables {
    /// Tables of `shape` with every weight `init` and (when `tc`) empty accumulators.
    pub fn new(shape: Shape, init: f32, tc: bool, alpha: f32) -> Tables {
        let n = shape.weight_count();
        let mut weights = huge_page_vec(n);
        weights.extend((0..n).map(|_| AtomicU32::new(init.to_bits())));
        Tables::assemble(shape, weights, tc.then(|| Self::accumulators(n)), alpha)
    }

    /// Tables holding a network's weights (f32 as they are; f16 widened, values unchanged).
    pub fn from_network(net: Network, coherence: Option<Vec<[AtomicU32; 2]>>, alpha: f32) -> Tables {
        let shape = net.shape().clone();
        let weights = net.into_atomic_weights();
        Tables::assemble(shape, weights, coherence, alpha)
    }

    /// Accumulators for `n` weights, each E = 0 and A = 0.
    pub fn accumulators(n: usize) -> Vec<[AtomicU32; 2]> {
        let mut c = huge_page_vec(n);
        c.extend((0..n).map(|_| [AtomicU32::new(0), AtomicU32::new(0)]));
        c
    }

    /// Gives tables without accumulators new ones: E = 0 for every weight, A = `prior` for each weight that has
    /// been trained (is not 0) and A = 0 for the others (never visited: they learn at the full rate at once).
    pub fn add_prior_accumulators(&mut self, prior: f32) {
        let mut c = huge_page_vec(self.weights.len());
        c.extend(self.weights.iter().map(|w| {
            let a = if load(w) != 0.0 { prior } else { 0.0 };
            [AtomicU32::new(0), AtomicU32::new(a.to_bits())]
        }));
        self.coherence = c;
    }

    fn assemble(shape: Shape, weights: Vec<AtomicU32>, coherence: Option<Vec<[AtomicU32; 2]>>, alpha: f32) -> Tables {
        let lookups = 8 * shape.tuples.len();
        Tables {
            indexer: Indexer::new(&shape),
            shape,
            weights,
            coherence: coherence.unwrap_or_default(),
            step: alpha / lookups as f32,
            frozen_stages: 0..0,
            frozen: 0..0,
        }
    }

    /// Freezes the stages below `stage` (their weights stay as they are; the later ones learn).
    pub fn freeze_below(&mut self, stage: usize) {
        self.freeze(0..stage.min(self.shape.stages.len()));
    }

    /// Freezes stage `stage` and those after it (their weights stay as they are; the earlier ones learn).
    pub fn freeze_from(&mut self, stage: usize) {
        let n = self.shape.stages.len();
        self.freeze(stage.min(n)..n);
    }

    fn freeze(&mut self, stages: std::ops::Range<usize>) {
        let per = self.shape.weights_per_stage();
        self.frozen = stages.start * per..stages.end * per;
        self.frozen_stages = stages;
    }

    pub fn shape(&self) -> &Shape {
        &self.shape
    }

    /// Whether stage `stage`'s weights are frozen.
    #[inline(always)]
    pub fn is_frozen(&self, stage: usize) -> bool {
        self.frozen_stages.contains(&stage)
    }

    /// Whether the frozen stages are the last ones, after stages that learn: a game's learning then ends where its
    /// first frozen stage begins.
    #[inline(always)]
    pub fn frozen_after_learning(&self) -> bool {
        self.frozen_stages.start > 0 && !self.frozen_stages.is_empty()
    }

    pub fn indexer(&self) -> &Indexer {
        &self.indexer
    }

    /// Whether the tables keep temporal-coherence accumulators.
    pub fn has_coherence(&self) -> bool {
        !self.coherence.is_empty()
    }

    pub fn weight_count(&self) -> usize {
        self.weights.len()
    }

    /// Weight `i` (f32).
    #[inline]
    pub fn weight(&self, i: usize) -> f32 {
        load(&self.weights[i])
    }

    /// E and A of weight `i` (0 without temporal coherence).
    pub fn accumulator(&self, i: usize) -> (f32, f32) {
        match self.coherence.get(i) {
            Some([e, a]) => (load(e), load(a)),
            None => (0.0, 0.0),
        }
    }

    /// Bytes of memory the tables hold.
    pub fn bytes(&self) -> usize {
        4 * self.weights.len() + 8 * self.coherence.len()
    }

    /// The value of an afterstate under the current weights.
    pub fn value(&self, board: crate::engine::Board) -> f32 {
        let mut idx = [0u32; MAX_LOOKUPS];
        let n = with_lookups!(&self.indexer, l => l.indices(board, board.transpose(), &mut idx));
        self.value_of(&idx[..n])
    }

    /// Starts loading the weights of the lookups `idx`.
    #[inline(always)]
    pub(super) fn prefetch_weights(&self, idx: &[u32]) {
        for &i in idx {
            prefetch(&self.weights, i as usize);
        }
    }

    /// Starts loading the weights and accumulators of the lookups `idx` (before an update).
    #[inline(always)]
    pub(super) fn prefetch_for_update(&self, idx: &[u32]) {
        for &i in idx {
            prefetch(&self.weights, i as usize);
            if !self.coherence.is_empty() {
                prefetch(&self.coherence, i as usize);
            }
        }
    }

    /// The value of an afterstate whose lookups are `idx`: summed in four lanes (lookup k into lane k mod 4, the
    /// lanes added pairwise at the end), so the additions of a board are four short chains instead of one of 32.
    #[inline(always)]
    pub(super) fn value_of(&self, idx: &[u32]) -> f32 {
        let w = &self.weights[..];
        let mut lanes = [0.0f32; 4];
        let mut chunks = idx.chunks_exact(4);
        for c in &mut chunks {
            for (lane, &i) in lanes.iter_mut().zip(c) {
                *lane += load(&w[i as usize]);
            }
        }
        for (lane, &i) in lanes.iter_mut().zip(chunks.remainder()) {
            *lane += load(&w[i as usize]);
        }
        (lanes[0] + lanes[1]) + (lanes[2] + lanes[3])
    }

    /// Moves the weights of the lookups `idx` (all of one board, so of one stage) towards reducing `error`.
    #[inline(always)]
    pub(super) fn update_at(&self, idx: &[u32], error: f32) {
        if idx.first().is_some_and(|&i| self.frozen.contains(&(i as usize))) {
            return;
        }
        let w = &self.weights[..];
        let step = self.step * error;
        if self.coherence.is_empty() {
            for &i in idx {
                let i = i as usize;
                store(&w[i], load(&w[i]) + step);
            }
            return;
        }
        let c = &self.coherence[..];
        let abs = error.abs();
        for &i in idx {
            let i = i as usize;
            let [e, a] = &c[i];
            let (ev, av) = (load(e), load(a));
            let beta = if av > 0.0 { ev.abs() / av } else { 1.0 };
            store(&w[i], load(&w[i]) + step * beta);
            store(e, ev + error);
            store(a, av + abs);
        }
    }

    /// Moves every weight of `board` towards reducing `error` (tests and tools).
    pub fn update(&self, board: crate::engine::Board, error: f32) {
        let mut idx = [0u32; MAX_LOOKUPS];
        let n = with_lookups!(&self.indexer, l => l.indices(board, board.transpose(), &mut idx));
        self.update_at(&idx[..n], error);
    }

    /// The network as it stands (a copy of the weights as f32).
    pub fn network(&self) -> Network {
        let weights = self.weights.iter().map(load).collect();
        // The shape is the tables' own, so the count always fits.
        Network::from_weights(self.shape.clone(), weights).unwrap_or_else(|_| Network::filled(self.shape.clone(), 0.0))
    }

    /// Writes the accumulators (E then A of every weight, f32 little-endian) to `out`, in chunks.
    pub fn write_coherence(&self, out: &mut dyn std::io::Write) -> std::io::Result<()> {
        let mut buf = Vec::with_capacity(1 << 16);
        for chunk in self.coherence.chunks(1 << 13) {
            buf.clear();
            for [e, a] in chunk {
                buf.extend_from_slice(&e.load(Ordering::Relaxed).to_le_bytes());
                buf.extend_from_slice(&a.load(Ordering::Relaxed).to_le_bytes());
            }
            out.write_all(&buf)?;
        }
        Ok(())
    }
}

/// Accumulators read from a checkpoint's bytes (E then A of every weight, f32 little-endian).
pub fn accumulators_from_bytes(bytes: &[u8]) -> Vec<[AtomicU32; 2]> {
    let mut c = huge_page_vec(bytes.len() / 8);
    c.extend(bytes.chunks_exact(8).map(|c| {
        [
            AtomicU32::new(u32::from_le_bytes([c[0], c[1], c[2], c[3]])),
            AtomicU32::new(u32::from_le_bytes([c[4], c[5], c[6], c[7]])),
        ]
    }));
    c
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::Board;
    use crate::eval::ntuple::Features;

    #[test]
    fn an_update_moves_the_value_towards_the_target() {
        let shape = Shape::named("4x6", vec![0]).unwrap();
        let t = Tables::new(shape, 0.0, true, 1.0);
        let b = Board(0x1200_0000_0000_0031);
        assert_eq!(t.value(b), 0.0);
        t.update(b, 100.0);
        // alpha = 1 with beta = 1 (every weight's errors so far have one sign): each of the 32 lookups moves its
        // weight by 100/32. A weight that k lookups share moves k times and counts k times: k^2 x 100/32.
        let mut idx = [0u32; MAX_LOOKUPS];
        let n = Features::new(t.shape().clone()).indices(b, b.transpose(), &mut idx);
        let mut counts = std::collections::HashMap::new();
        for &i in &idx[..n] {
            *counts.entry(i).or_insert(0u32) += 1;
        }
        let expected: f32 = counts.values().map(|&k| (k * k) as f32 * 100.0 / 32.0).sum();
        assert!(expected > 100.0, "this board shares some weights between its lookups");
        assert!((t.value(b) - expected).abs() < 1e-3, "{} vs {expected}", t.value(b));
        // An opposite error moves the value back down.
        t.update(b, -100.0);
        assert!(t.value(b) < expected);
    }

    #[test]
    fn frozen_stages_keep_their_weights_and_no_tc_keeps_no_accumulators() {
        let shape = Shape::new(vec![vec![0, 1, 2, 3]], vec![0, 13]).unwrap();
        let mut t = Tables::new(shape, 0.0, false, 1.0);
        assert!(!t.has_coherence());
        assert_eq!(t.bytes(), 4 * t.weight_count());
        t.freeze_below(1);
        let (early, late) = (Board(0x1234_0000_0000_0000), Board(0xd234_0000_0000_0000));
        t.update(early, 100.0);
        t.update(late, 100.0);
        assert_eq!(t.value(early), 0.0);
        assert!(t.value(late) > 0.0);
    }
}
