//! `ntuple`: a learned evaluator, the n-tuple network of the strongest published 2048 players (Szubert and
//! Jaśkowski, "Temporal difference learning of n-tuple networks for the game 2048", 2014; Jaśkowski, "Mastering 2048
//! with delayed temporal coherence learning ...", 2016).
//!
//! A network is a list of **tuples**, each a list of cells of the 4x4 board (numbered 0..16 row by row from the
//! top-left), and one table of 16^n weights per tuple (n = its number of cells). A tuple reads its cells' exponents
//! as the digits of an index (the first cell most significant); the board's value is the sum, over every tuple and
//! over each of the 8 symmetries of the square (identity, mirrors, rotations, transposes), of the weight that the
//! tuple's index on the transformed board selects. The network's shape is data (stored in the weight file, see
//! [`file`](mod@file)), not compiled in.
//!
//! **Stages.** A network may hold several weight sets: stage s applies to boards whose largest exponent is at
//! least `stages[s]` (the first stage starts at 0), so a board holding a 16384 can use weights of its own.
//!
//! **Tiles above 32768.** The tables index 4-bit exponents (tiles up to 32768). On a [`Tiles`] board a 65536 or
//! 131072 tile is read as 32768 (its exponent capped at 15): the answer is exact for that documented rule, never an
//! out-of-range index.
//!
//! The value predicts the score still to come from a board right after a move (an afterstate), which is why the
//! `learned` search profile adds the rewards along the path (reward weight 1) and evaluates boards right after a
//! move (odd plies).

pub mod file;
pub mod index;
mod reference;
mod shape;
pub mod shipped;
pub mod staged;

use std::sync::Arc;

use super::{Breakdown, Component, Evaluator};
use crate::engine::{Board, Tiles};

pub use reference::{value_reference, value_reference_in};
pub(crate) use shape::stage_index;
pub use shape::{Shape, ShapeError, MAX_STAGES, MAX_TUPLES, MAX_TUPLE_CELLS, TUPLES_4X6, TUPLES_8X6};

/// Breakdown names of the tuples, in network order (`tuple_1` is the first tuple).
const TUPLE_NAMES: [&str; MAX_TUPLES] = [
    "tuple_1", "tuple_2", "tuple_3", "tuple_4", "tuple_5", "tuple_6", "tuple_7", "tuple_8", "tuple_9", "tuple_10",
    "tuple_11", "tuple_12", "tuple_13", "tuple_14", "tuple_15", "tuple_16", "tuple_17", "tuple_18", "tuple_19",
    "tuple_20", "tuple_21", "tuple_22", "tuple_23", "tuple_24", "tuple_25", "tuple_26", "tuple_27", "tuple_28",
    "tuple_29", "tuple_30", "tuple_31", "tuple_32",
];

/// The 8 symmetries of a board as boards: the identity, the mirrors and the rotations, of the board and of its
/// transpose (in this order: identity, left-right mirror, top-bottom flip, half turn). The mirror is computed as the
/// flip of the half turn, the half turn as a byte swap and a nibble swap, the flip as a word rotation and a swap of
/// 16-bit rows: fewer operations than mirroring each row's cells.
#[inline(always)]
pub fn symmetries(board: Board, transposed: Board) -> [u64; 8] {
    let b = board.0;
    let t = transposed.0;
    let (hb, ht) = (half_turn(b), half_turn(t));
    [b, flip(hb), flip(b), hb, t, flip(ht), flip(t), ht]
}

/// Half turn: reverses the order of all 16 cells (a mirror and a flip at once).
#[inline(always)]
fn half_turn(x: u64) -> u64 {
    let y = x.swap_bytes();
    ((y >> 4) & 0x0F0F_0F0F_0F0F_0F0F) | ((y & 0x0F0F_0F0F_0F0F_0F0F) << 4)
}

/// Top-bottom flip: reverses the order of the rows.
#[inline(always)]
fn flip(x: u64) -> u64 {
    let y = x.rotate_left(32);
    ((y >> 16) & 0x0000_FFFF_0000_FFFF) | ((y & 0x0000_FFFF_0000_FFFF) << 16)
}

/// A tuple ready for lookups: the bit shift of each of its cells in a [`Board`] and the offset of its table.
#[derive(Clone, Debug)]
struct Lookup {
    shifts: [u8; MAX_TUPLE_CELLS],
    len: usize,
    offset: usize,
}

/// The index arithmetic of a shape, shared by the evaluator and the trainer.
#[derive(Clone, Debug)]
pub struct Features {
    shape: Shape,
    lookups: Vec<Lookup>,
    /// All tuples have 6 cells: the common case gets a loop the compiler unrolls.
    all_six: bool,
    /// The same lookups, grouped ([`index`]): what the evaluator's hot path uses.
    indexer: index::Indexer,
}

impl Features {
    pub fn new(shape: Shape) -> Features {
        let mut offset = 0;
        let lookups = shape
            .tuples
            .iter()
            .map(|cells| {
                let mut shifts = [0u8; MAX_TUPLE_CELLS];
                for (k, &c) in cells.iter().enumerate() {
                    shifts[k] = 4 * (15 - c);
                }
                let l = Lookup {
                    shifts,
                    len: cells.len(),
                    offset,
                };
                offset += 1 << (4 * cells.len());
                l
            })
            .collect::<Vec<_>>();
        let _ = offset;
        let all_six = shape.tuples.iter().all(|t| t.len() == 6);
        Features {
            indexer: index::Indexer::new(&shape),
            shape,
            lookups,
            all_six,
        }
    }

    pub fn shape(&self) -> &Shape {
        &self.shape
    }

    /// The grouped lookups of the shape (the same indices as [`Features::for_each`], faster).
    pub fn indexer(&self) -> &index::Indexer {
        &self.indexer
    }

    /// Lookups per evaluation (tuples x 8 symmetries).
    pub fn lookups_per_board(&self) -> usize {
        self.lookups.len() * 8
    }

    /// The stage of `board` (0 for a one-stage network).
    #[inline(always)]
    fn stage_of(&self, board: u64) -> usize {
        if self.shape.stages.len() == 1 {
            0
        } else {
            self.shape.stage_of(Board(board).max_exponent())
        }
    }

    /// The offset of the weight set that applies to `board`.
    #[inline(always)]
    pub fn stage_offset(&self, board: u64) -> usize {
        match self.stage_of(board) {
            0 => 0,
            k => self.shape.stage_start(k),
        }
    }

    /// Calls `f(tuple, weight index)` for every lookup of `board` (the tuples its stage reads x 8 symmetries),
    /// indices into the whole network (stage included).
    #[inline(always)]
    pub fn for_each(&self, board: Board, transposed: Board, mut f: impl FnMut(usize, usize)) {
        let stage = self.stage_of(board.0);
        let base = if stage == 0 { 0 } else { self.shape.stage_start(stage) };
        let lookups = &self.lookups[..self.shape.stage_tuple_count(stage)];
        let syms = symmetries(board, transposed);
        if self.all_six {
            for (t, l) in lookups.iter().enumerate() {
                let s = &l.shifts;
                let at = base + l.offset;
                for b in syms {
                    let idx = (((b >> s[0]) & 15) << 20)
                        | (((b >> s[1]) & 15) << 16)
                        | (((b >> s[2]) & 15) << 12)
                        | (((b >> s[3]) & 15) << 8)
                        | (((b >> s[4]) & 15) << 4)
                        | ((b >> s[5]) & 15);
                    f(t, at + idx as usize);
                }
            }
        } else {
            for (t, l) in lookups.iter().enumerate() {
                let at = base + l.offset;
                for b in syms {
                    let mut idx = 0u64;
                    for &s in &l.shifts[..l.len] {
                        idx = (idx << 4) | ((b >> s) & 15);
                    }
                    f(t, at + idx as usize);
                }
            }
        }
    }
}

/// Lookups per board at most ([`MAX_TUPLES`] x 8 symmetries).
pub const MAX_LOOKUPS: usize = MAX_TUPLES * 8;

impl Features {
    /// Writes the weight index of every lookup of `board` into `out` and returns how many there are.
    #[inline(always)]
    pub fn indices(&self, board: Board, transposed: Board, out: &mut [u32; MAX_LOOKUPS]) -> usize {
        let mut n = 0;
        self.for_each(board, transposed, |_, i| {
            out[n & (MAX_LOOKUPS - 1)] = i as u32;
            n += 1;
        });
        n
    }
}

/// Asks the CPU to start loading the cache line of `items[i]` (a lookup's table slot is almost never in cache:
/// loading all of a board's slots at once overlaps their latencies). The address is only computed, never read by the
/// program, so it needs no bounds check (an index past the end prefetches nothing useful, and never faults).
#[inline(always)]
pub fn prefetch<T>(items: &[T], i: usize) {
    #[cfg(target_arch = "x86_64")]
    {
        let ptr = items.as_ptr().wrapping_add(i).cast::<i8>();
        // SAFETY: a prefetch never faults, whatever the address, and reads nothing into the program.
        unsafe { std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(ptr) };
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = (items, i);
}

/// A loaded network: its shape and its weights (in memory as f32, or as f16 when read from an f16 file).
#[derive(Clone, Debug)]
pub struct Network {
    features: Features,
    weights: Weights,
    /// Where the weights came from: the file's header (training summary, checksum), if any.
    pub info: Option<file::NetInfo>,
    /// Unique to the weights in this process (a clone has the same weights, and so the same id): see
    /// [`Network::id`].
    id: u64,
}

/// The id of the next network built in this process.
static NEXT_NETWORK_ID: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);

fn next_network_id() -> u64 {
    NEXT_NETWORK_ID.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
}

/// A network's weights in memory.
#[derive(Clone, Debug)]
enum Weights {
    /// As training holds them (and f32 files store them).
    F32(Vec<f32>),
    /// As an f16 file stores them, in half the memory of f32: weight `i` is `f16_to_f32(bits[i]) * scale`. With
    /// `scale` a power of two, a sum of these weights in f32 times `scale` is bit for bit the sum of the f32 weights
    /// (scaling by a power of two commutes with every rounding), so the values are the f32 network's exactly.
    F16 { bits: Vec<u16>, scale: f32 },
}

/// The f32 value of a finite f16 bit pattern (IEEE 754 binary16), exact, without a branch: the pattern's sign,
/// exponent and mantissa moved into an f32's places, then the exponent's bias moved from 15 to 127 by multiplying
/// by 2^112 (which also turns the f16 subnormals, f32 subnormals at that point, into their exact values). The
/// networks' hot loop runs it for every lookup: a branch would mispredict, as most weights of a trained network are
/// 0 (never visited) beside normal numbers. An infinity or a NaN pattern reads as a finite number: networks hold
/// none (files holding one are refused).
///
/// # Examples
/// ```
/// use advisor2048::eval::ntuple::f16_to_f32;
/// assert_eq!(f16_to_f32(0x3c00), 1.0);
/// assert_eq!(f16_to_f32(0xc000), -2.0);
/// assert_eq!(f16_to_f32(0x7bff), 65504.0);
/// assert_eq!(f16_to_f32(0x0001), 2f32.powi(-24));
/// assert_eq!(f16_to_f32(0x8000), 0.0);
/// ```
#[inline(always)]
pub fn f16_to_f32(h: u16) -> f32 {
    const REBIAS: f32 = f32::from_bits((112 + 127) << 23); // 2^112
    let h = u32::from(h);
    f32::from_bits(((h & 0x8000) << 16) | ((h & 0x7fff) << 13)) * REBIAS
}

/// The weights given do not fit the shape.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("the shape needs {expected} weights, found {found}")]
pub struct WeightCountError {
    pub expected: usize,
    pub found: usize,
}

impl Network {
    /// A network with every weight set to `value`.
    pub fn filled(shape: Shape, value: f32) -> Network {
        let n = shape.weight_count();
        let mut weights = huge_page_vec(n);
        weights.resize(n, value);
        Network {
            features: Features::new(shape),
            weights: Weights::F32(weights),
            info: None,
            id: next_network_id(),
        }
    }

    /// A network from its shape and all its weights (stage by stage, tuple by tuple, index by index).
    pub fn from_weights(shape: Shape, weights: Vec<f32>) -> Result<Network, WeightCountError> {
        check_count(&shape, weights.len())?;
        Ok(Network {
            features: Features::new(shape),
            weights: Weights::F32(weights),
            info: None,
            id: next_network_id(),
        })
    }

    /// A network kept as f16 in memory: weight `i` is `f16_to_f32(bits[i]) * scale` (`bits` finite: see
    /// [`f16_to_f32`]). Its values are exactly those
    /// of the f32 network of the same weights when `scale` is a power of two (the weight files' scales are);
    /// another scale is applied to the sum, within a rounding of the f32 network's values.
    pub fn from_f16(shape: Shape, bits: Vec<u16>, scale: f32) -> Result<Network, WeightCountError> {
        check_count(&shape, bits.len())?;
        Ok(Network {
            features: Features::new(shape),
            weights: Weights::F16 { bits, scale },
            info: None,
            id: next_network_id(),
        })
    }

    /// Stage `k`'s weights as a one-stage network of the tuples it reads (its weights kept as they are, f16 or f32;
    /// no file information), e.g. to write one stage of a trained multi-stage network as its own file. `None`
    /// when the network has no stage `k`.
    pub fn stage(&self, k: usize) -> Option<Network> {
        let shape = self.shape();
        if k >= shape.stages.len() {
            return None;
        }
        let one = Shape::new(shape.tuples[..shape.stage_tuple_count(k)].to_vec(), vec![0]).ok()?;
        Some(self.part(one, shape.stage_start(k)))
    }

    /// The network of `shape` whose weights are this one's from `start` on (as many as `shape` has), kept as they
    /// are (f16 or f32), with no file information.
    fn part(&self, shape: Shape, start: usize) -> Network {
        let range = start..start + shape.weight_count();
        let weights = match &self.weights {
            Weights::F32(w) => {
                let mut out = huge_page_vec(range.len());
                out.extend_from_slice(&w[range]);
                Weights::F32(out)
            }
            Weights::F16 { bits, scale } => Weights::F16 {
                bits: bits[range].to_vec(),
                scale: *scale,
            },
        };
        Network {
            features: Features::new(shape),
            weights,
            info: None,
            id: next_network_id(),
        }
    }

    /// This network with more tuples: `tuples` begins with this network's tuples, in their order, and adds others,
    /// whose weights start at 0 in every stage. The wider network values every board exactly as this one (the new
    /// tables add 0), so training can continue from it with room for more (e.g. a 4x6 network as the 8x6 set's
    /// first four tuples). Keeps the weights as they are (f16 or f32) and the stages; no file information.
    pub fn widen(&self, tuples: Vec<Vec<u8>>) -> Result<Network, WidenError> {
        let shape = self.shape();
        if !shape.is_uniform() || tuples.len() <= shape.tuples.len() || tuples[..shape.tuples.len()] != shape.tuples[..]
        {
            return Err(WidenError::NotAnExtension {
                have: shape.tuples.clone(),
                asked: tuples,
            });
        }
        let wide = Shape::new(tuples, shape.stages.clone())?;
        let (old, new) = (shape.weights_per_stage(), wide.weights_per_stage());
        let stages = shape.stages.len();
        let weights = match &self.weights {
            Weights::F32(w) => {
                let mut out = huge_page_vec(new * stages);
                for stage in w.chunks_exact(old) {
                    out.extend_from_slice(stage);
                    out.resize(out.len() + new - old, 0.0);
                }
                Weights::F32(out)
            }
            Weights::F16 { bits, scale } => {
                let mut out = huge_page_vec(new * stages);
                for stage in bits.chunks_exact(old) {
                    out.extend_from_slice(stage);
                    out.resize(out.len() + new - old, 0);
                }
                Weights::F16 {
                    bits: out,
                    scale: *scale,
                }
            }
        };
        Ok(Network {
            features: Features::new(wide),
            weights,
            info: None,
            id: next_network_id(),
        })
    }

    /// The tuples `range` of a one-stage network as a network of their own (weights kept as they are), e.g. to keep
    /// a stage too large for one file in two ([`staged`]). `None` for a network of several stages or a range
    /// outside its tuples or empty.
    pub fn tuple_range(&self, range: std::ops::Range<usize>) -> Option<Network> {
        let shape = self.shape();
        if shape.stages.len() != 1 || range.is_empty() || range.end > shape.tuples.len() {
            return None;
        }
        let part = Shape::new(shape.tuples[range.clone()].to_vec(), vec![0]).ok()?;
        let start: usize = shape.tuples[..range.start]
            .iter()
            .map(|t| 1usize << (4 * t.len()))
            .sum();
        Some(self.part(part, start))
    }

    /// A number naming this network's weights in this process: no other network built here has it (its clones,
    /// whose weights are the same, do). Weights never change once a network is built.
    pub fn id(&self) -> u64 {
        self.id
    }

    pub fn shape(&self) -> &Shape {
        self.features.shape()
    }

    pub fn features(&self) -> &Features {
        &self.features
    }

    /// All weights as f32 (borrowed from an f32 network; widened, a new vector, from an f16 one).
    pub fn weights(&self) -> std::borrow::Cow<'_, [f32]> {
        match &self.weights {
            Weights::F32(w) => std::borrow::Cow::Borrowed(w),
            Weights::F16 { bits, scale } => bits.iter().map(|&h| f16_to_f32(h) * scale).collect(),
        }
    }

    /// The weights as atomics holding f32 bits, for training (an f32 network's vector is reused in place; an f16
    /// one is widened).
    pub fn into_atomic_weights(self) -> Vec<std::sync::atomic::AtomicU32> {
        use std::sync::atomic::AtomicU32;
        match self.weights {
            // Same size and alignment: the collect reuses the allocation (and its huge pages).
            Weights::F32(w) => w.into_iter().map(|x| AtomicU32::new(x.to_bits())).collect(),
            Weights::F16 { bits, scale } => {
                let mut out = huge_page_vec(bits.len());
                out.extend(bits.iter().map(|&h| AtomicU32::new((f16_to_f32(h) * scale).to_bits())));
                out
            }
        }
    }

    /// The power-of-two scale of f16 weights in memory (`None` for f32 weights).
    pub fn f16_scale(&self) -> Option<f32> {
        match &self.weights {
            Weights::F32(_) => None,
            Weights::F16 { scale, .. } => Some(*scale),
        }
    }

    /// Whether the weights are held as f16 (half the memory of f32).
    pub fn is_f16(&self) -> bool {
        matches!(self.weights, Weights::F16 { .. })
    }

    /// Bytes the weight tables take in memory.
    pub fn weight_bytes(&self) -> usize {
        match &self.weights {
            Weights::F32(w) => w.len() * 4,
            Weights::F16 { bits, .. } => bits.len() * 2,
        }
    }

    /// The value of a board, given its transpose. The lookups are summed in [`Features::for_each`]'s order, so the
    /// value is the same bit for bit whichever way the indices are computed.
    #[inline]
    pub fn value(&self, board: Board, transposed: Board) -> f64 {
        use index::Lookups as _;
        if let Some(v) = self.value_f16_fixed(None, board, transposed) {
            return v;
        }
        let mut idx = [0u32; MAX_LOOKUPS];
        let n = crate::with_lookups!(self.features.indexer(), l => l.indices(board, transposed, &mut idx));
        self.sum(&idx[..n])
    }

    /// The value of a board in the weights of stage `stage` (below the number of stages) instead of its own: how
    /// a decision made on a board of that stage values the boards after its moves (see [`Network::decision_stage`]).
    #[inline]
    pub fn value_in(&self, stage: usize, board: Board, transposed: Board) -> f64 {
        use index::Lookups as _;
        if let Some(v) = self.value_f16_fixed(Some(stage), board, transposed) {
            return v;
        }
        let mut idx = [0u32; MAX_LOOKUPS];
        let n = crate::with_lookups!(self.features.indexer(), l => l.indices_in(stage, board, transposed, &mut idx));
        self.sum(&idx[..n])
    }

    /// The stage whose weights value the boards after the moves from `board`: `board`'s own stage (the stage of
    /// its largest tile), also for a move that makes the next stage's start tile. Within one decision the values of
    /// two stages are never compared, in play as in training (the multi-stage rule of Yeh et al. 2016); `None` for a
    /// one-stage network, where there is nothing to choose.
    pub fn decision_stage(&self, board_max_exponent: u8) -> Option<usize> {
        (self.shape().stages.len() > 1).then(|| self.shape().stage_of(board_max_exponent))
    }

    /// The values of up to four boards (each with its transpose; `None` is skipped), as [`Network::value`] gives
    /// them one by one, bit for bit: every board's indices are computed and all their weights prefetched before
    /// any is summed, so the loads of the four boards (over a hundred cache misses in a table of tens of megabytes)
    /// overlap, as the trainer's greedy play does.
    #[inline]
    pub fn values_of_four(&self, boards: [Option<(Board, Board)>; 4]) -> [Option<f64>; 4] {
        self.values_of_four_in(None, boards)
    }

    /// [`Network::values_of_four`] in stage `stage`'s weights ([`Network::value_in`]), or each board's own with
    /// `None`.
    #[inline]
    pub fn values_of_four_in(&self, stage: Option<usize>, boards: [Option<(Board, Board)>; 4]) -> [Option<f64>; 4] {
        match self.features.indexer() {
            index::Indexer::Four6(l) => self.values_of_four_fixed(l, stage, boards),
            index::Indexer::Eight6(l) => self.values_of_four_fixed(l, stage, boards),
            index::Indexer::Any(_) => boards.map(|b| {
                b.map(|(board, transposed)| match stage {
                    Some(k) => self.value_in(k, board, transposed),
                    None => self.value(board, transposed),
                })
            }),
        }
    }

    #[inline(always)]
    fn values_of_four_fixed<S: index::FixedSet<T>, const T: usize>(
        &self,
        lookups: &index::Fixed<S, T>,
        stage: Option<usize>,
        boards: [Option<(Board, Board)>; 4],
    ) -> [Option<f64>; 4] {
        if let Weights::F16 { bits, scale } = &self.weights {
            if let Some(sums) = lookups.sums_f16_of_some(bits, stage, boards) {
                return sums.map(|s| s.map(|s| f16_total(s, *scale)));
            }
        }
        // Plain loops over plain arrays (no closures through `array::map`, which the compiler kept out of line).
        let mut idx = [[[0u32; 8]; T]; 4];
        let mut len = [0usize; 4];
        for (k, b) in boards.iter().enumerate() {
            if let Some((board, transposed)) = *b {
                let s = stage.unwrap_or_else(|| lookups.stage_of(board));
                idx[k] = lookups.lookups_in(s, board, transposed);
                len[k] = 8 * lookups.tuple_count(s).min(T);
                self.prefetch(&idx[k].as_flattened()[..len[k]]);
            }
        }
        let mut values = [None; 4];
        for (k, b) in boards.iter().enumerate() {
            if b.is_some() {
                values[k] = Some(self.sum(&idx[k].as_flattened()[..len[k]]));
            }
        }
        values
    }

    /// [`Network::value_in`] (or [`Network::value`] with `None`) by [`index::Fixed::sums_f16`], when the weights are
    /// f16 and the tuples a compile-time set; `None` otherwise.
    #[inline(always)]
    fn value_f16_fixed(&self, stage: Option<usize>, board: Board, transposed: Board) -> Option<f64> {
        let Weights::F16 { bits, scale } = &self.weights else {
            return None;
        };
        let sum = match self.features.indexer() {
            index::Indexer::Four6(l) => {
                l.sums_f16(bits, stage.unwrap_or_else(|| l.stage_of(board)), [(board, transposed)])
            }
            index::Indexer::Eight6(l) => {
                l.sums_f16(bits, stage.unwrap_or_else(|| l.stage_of(board)), [(board, transposed)])
            }
            index::Indexer::Any(_) => return None,
        };
        Some(f16_total(sum[0], *scale))
    }

    /// The values of the first `n` (0 to 4) of `boards`, each in the weights of stage `stage` or, with `None`, its
    /// own: [`Network::value_in`] / [`Network::value`] of each, bit for bit (the other places unspecified). The
    /// search's leaves call it (see [`crate::eval::Evaluator::evaluate_first`]).
    #[inline]
    pub fn values_of_first(&self, stage: Option<usize>, boards: [(Board, Board); 4], n: usize) -> [f64; 4] {
        if let Weights::F16 { bits, scale } = &self.weights {
            let sums = match self.features.indexer() {
                index::Indexer::Four6(l) => l.sums_f16_of_first(bits, stage, boards, n),
                index::Indexer::Eight6(l) => l.sums_f16_of_first(bits, stage, boards, n),
                index::Indexer::Any(_) => None,
            };
            if let Some(sums) = sums {
                return sums.map(|s| f16_total(s, *scale));
            }
        }
        let mut values = [0.0; 4];
        for (v, &(board, transposed)) in values.iter_mut().zip(&boards).take(n) {
            *v = match stage {
                Some(k) => self.value_in(k, board, transposed),
                None => self.value(board, transposed),
            };
        }
        values
    }

    /// Starts loading the weights of the lookups `idx`.
    #[inline(always)]
    fn prefetch(&self, idx: &[u32]) {
        match &self.weights {
            Weights::F32(w) => idx.iter().for_each(|&i| prefetch(w, i as usize)),
            Weights::F16 { bits, .. } => idx.iter().for_each(|&i| prefetch(bits, i as usize)),
        }
    }

    /// The value whose lookups are `idx`: the weights summed in f32 in that order.
    #[inline(always)]
    fn sum(&self, idx: &[u32]) -> f64 {
        let mut sum = 0.0f32;
        match &self.weights {
            Weights::F32(w) => {
                for &i in idx {
                    sum += w[i as usize];
                }
                f64::from(sum)
            }
            Weights::F16 { bits, scale } => {
                for &i in idx {
                    sum += f16_to_f32(bits[i as usize]);
                }
                f64::from(sum * scale)
            }
        }
    }

    /// Each tuple's contribution (summed over its 8 symmetries), for the tuples the board's stage reads.
    pub fn contributions(&self, board: Board) -> Vec<f64> {
        let stage = self.shape().stage_of(board.max_exponent());
        let mut out = vec![0.0f32; self.shape().stage_tuple_count(stage)];
        let scale = match &self.weights {
            Weights::F32(w) => {
                self.features.for_each(board, board.transpose(), |t, i| out[t] += w[i]);
                1.0
            }
            Weights::F16 { bits, scale } => {
                self.features
                    .for_each(board, board.transpose(), |t, i| out[t] += f16_to_f32(bits[i]));
                *scale
            }
        };
        out.into_iter().map(|c| f64::from(c * scale)).collect()
    }
}

/// A board's value from its sum of [`index::f16_to_f32_scaled_down`] weights: exactly the f16 path of
/// [`Network::sum`] (`sum x 2^112` is the sum of the f16 values, exactly; then times `scale`, in f32).
#[inline(always)]
fn f16_total(scaled_down: f32, scale: f32) -> f64 {
    f64::from(scaled_down * index::F16_SCALED_UP * scale)
}

fn check_count(shape: &Shape, found: usize) -> Result<(), WeightCountError> {
    match shape.weight_count() {
        expected if expected == found => Ok(()),
        expected => Err(WeightCountError { expected, found }),
    }
}

/// Why a network cannot be widened to a tuple set.
#[derive(Debug, thiserror::Error)]
pub enum WidenError {
    #[error(
        "the network's tuples {have:?} (read by every stage) are not the first tuples of {asked:?}, followed by at \
         least one more"
    )]
    NotAnExtension { have: Vec<Vec<u8>>, asked: Vec<Vec<u8>> },
    #[error(transparent)]
    Shape(#[from] ShapeError),
}

/// An empty vector with room for `n` items, whose memory the kernel is asked to back with huge pages (Linux:
/// `madvise(MADV_HUGEPAGE)` before the first write, so the pages are huge from their first touch). A network's
/// lookups are random reads over tens of megabytes: with 4 KiB pages nearly every lookup also misses the TLB, with
/// 2 MiB pages the whole table fits in it (training runs several times faster). Elsewhere, a plain vector.
pub(crate) fn huge_page_vec<T>(n: usize) -> Vec<T> {
    let v: Vec<T> = Vec::with_capacity(n);
    #[cfg(target_os = "linux")]
    {
        const HUGE: usize = 2 << 20;
        let start = v.as_ptr() as usize;
        let end = start + n * std::mem::size_of::<T>();
        let aligned = start.next_multiple_of(HUGE);
        if end > aligned + HUGE {
            let len = (end - aligned) / HUGE * HUGE;
            // SAFETY: madvise only advises the kernel about an address range inside this vector's own allocation
            // (which no one has read or written yet); it neither reads nor writes memory nor changes its contents
            // as the program sees them. A failure (no transparent huge pages) leaves ordinary pages.
            unsafe {
                libc::madvise(aligned as *mut libc::c_void, len, libc::MADV_HUGEPAGE);
            }
        }
    }
    v
}

/// The board a network reads for `tiles`: every exponent above 15 (65536, 131072) capped at 15.
pub fn capped_board(tiles: &Tiles) -> Board {
    let mut bits = 0u64;
    for e in tiles.exponents() {
        bits = (bits << 4) | u64::from(e.min(15));
    }
    Board(bits)
}

/// The evaluator of a shared, read-only network (cloning shares it).
#[derive(Clone, Debug)]
pub struct NTupleEvaluator {
    net: Arc<Network>,
    /// The stage every board is valued in during one decision ([`Network::decision_stage`]); `None`: each board's
    /// own stage (a one-stage network, or a board explained on its own).
    stage: Option<usize>,
}

impl NTupleEvaluator {
    pub fn new(net: Arc<Network>) -> NTupleEvaluator {
        NTupleEvaluator { net, stage: None }
    }

    pub fn network(&self) -> &Arc<Network> {
        &self.net
    }

    /// The evaluator for a decision on a board whose largest exponent is `max_exponent`: every board of the search
    /// below it valued in that board's stage (see [`Network::decision_stage`]); `None` when the network has one
    /// stage (this evaluator is then the one to use as it is).
    pub fn for_decision(&self, max_exponent: u8) -> Option<NTupleEvaluator> {
        let stage = self.net.decision_stage(max_exponent)?;
        Some(NTupleEvaluator {
            net: Arc::clone(&self.net),
            stage: Some(stage),
        })
    }

    /// [`Evaluator::evaluate_four`] of the evaluator [`NTupleEvaluator::for_decision`] gives (this one when it gives
    /// none), without building it: a greedy move's whole search, where cloning the network's `Arc` is a cost.
    #[inline]
    pub fn evaluate_four_for_decision(
        &self,
        max_exponent: u8,
        boards: [Option<(Board, Board)>; 4],
    ) -> [Option<f64>; 4] {
        let stage = self.net.decision_stage(max_exponent).or(self.stage);
        self.net.values_of_four_in(stage, boards)
    }
}

impl Evaluator for NTupleEvaluator {
    fn name(&self) -> &'static str {
        "ntuple"
    }

    #[inline]
    fn evaluate_with_transpose(&self, board: Board, transposed: Board) -> f64 {
        match self.stage {
            None => self.net.value(board, transposed),
            Some(k) => self.net.value_in(k, board, transposed),
        }
    }

    #[inline]
    fn evaluate_four(&self, boards: [Option<(Board, Board)>; 4]) -> [Option<f64>; 4] {
        self.net.values_of_four_in(self.stage, boards)
    }

    #[inline]
    fn evaluate_first(&self, boards: [(Board, Board); 4], n: usize) -> [f64; 4] {
        self.net.values_of_first(self.stage, boards, n)
    }

    fn values_worth_caching(&self) -> bool {
        // Every value is an f32 sum widened to f64; 32 lookups cost far more than a look in a small cache.
        true
    }

    fn values_key(&self) -> Option<u64> {
        // The network's weights and the stage every board is valued in name the values.
        Some((self.net.id() << 8) | self.stage.map_or(0, |k| k as u64 + 1))
    }

    fn evaluate_tiles(&self, tiles: &Tiles) -> f64 {
        let b = capped_board(tiles);
        self.evaluate_with_transpose(b, b.transpose())
    }

    fn node_cost(&self) -> f64 {
        // A stage's lookups are its tuples x 8: a node valued in a stage that reads more tuples than the first
        // costs that many times more.
        let shape = self.net.shape();
        match self.stage {
            Some(k) => shape.stage_tuple_count(k) as f64 / shape.stage_tuple_count(0) as f64,
            None => 1.0,
        }
    }

    fn afterstate_values(&self) -> bool {
        true
    }

    fn breakdown(&self, tiles: &Tiles) -> Breakdown {
        let contributions = self.net.contributions(capped_board(tiles));
        let components = contributions
            .into_iter()
            .enumerate()
            .map(|(t, c)| Component::new(TUPLE_NAMES[t], c, 1.0))
            .collect();
        let mut b = Breakdown::from_components("ntuple", components);
        // The fast path sums in f32; report that very total so breakdown and search values agree to the bit.
        b.total = self.evaluate_tiles(tiles);
        b
    }
}
