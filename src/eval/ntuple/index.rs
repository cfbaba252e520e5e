//! Lookup indices computed from patterns fixed ahead of time: each tuple's cells grouped by the one shift that
//! carries them from the board to their digits of the index, so a 6-cell tuple costs one or two rotate-and-mask
//! steps instead of six shift-and-mask steps.
//!
//! A cell `c` of a [`Board`] sits at bit `4 x (15 - c)`; as the `j`-th of a tuple's `n` cells it is the digit at bit
//! `4 x (n - 1 - j)` of the index (the first cell most significant). Cells whose two positions differ by the same
//! amount move together: one rotation (a right rotation by the difference, modulo 64, which also covers a move to
//! the left without losing bits) and one mask. The tuple sets named in the code ([`TUPLES_4X6`], [`TUPLES_8X6`]) are
//! grouped at compile time ([`INDEX_4X6`], [`INDEX_8X6`]) and reach the lookups as constants of a type ([`FixedSet`]),
//! so the compiler sees every rotation and mask as a literal; any other shape is grouped when it is loaded
//! ([`Indexer::Any`]).

use super::{symmetries, Shape, MAX_LOOKUPS, MAX_STAGES, MAX_TUPLE_CELLS, TUPLES_4X6, TUPLES_8X6};
use crate::engine::Board;

/// Cells of a tuple that reach the index by one rotation and one mask.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Group {
    /// Right rotation of the board, in bits (0..64).
    pub rotation: u32,
    /// The index bits these cells fill.
    pub mask: u64,
}

/// A tuple's groups (the first `len` of `groups`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TupleIndex {
    groups: [Group; MAX_TUPLE_CELLS],
    len: usize,
}

impl TupleIndex {
    /// The groups of a tuple of cells (each 0..16, at most [`MAX_TUPLE_CELLS`], as a checked [`Shape`] has them).
    pub const fn new(cells: &[u8]) -> TupleIndex {
        let n = cells.len();
        let mut groups = [Group { rotation: 0, mask: 0 }; MAX_TUPLE_CELLS];
        let mut len = 0;
        let mut j = 0;
        while j < n {
            let from = 4 * (15 - cells[j] as i32);
            let to = 4 * (n as i32 - 1 - j as i32);
            let rotation = (from - to).rem_euclid(64) as u32;
            let mut g = 0;
            while g < len && groups[g].rotation != rotation {
                g += 1;
            }
            if g == len {
                groups[g] = Group { rotation, mask: 0 };
                len += 1;
            }
            groups[g].mask |= 0xF << to;
            j += 1;
        }
        TupleIndex { groups, len }
    }

    /// The groups in use.
    pub fn groups(&self) -> &[Group] {
        &self.groups[..self.len]
    }

    /// The tuple's index on `board` (a board's bits, one of its symmetries).
    #[inline(always)]
    pub fn index(&self, board: u64) -> u64 {
        let mut idx = 0;
        let mut g = 0;
        while g < self.len {
            idx |= board.rotate_right(self.groups[g].rotation) & self.groups[g].mask;
            g += 1;
        }
        idx
    }
}

/// A tuple set of `T` tuples grouped at compile time, with each tuple's table offset within a stage.
#[derive(Clone, Copy, Debug)]
pub struct SetIndex<const T: usize> {
    tuples: [TupleIndex; T],
    offsets: [usize; T],
}

impl<const T: usize> SetIndex<T> {
    /// The grouping of `tuples` (exactly `T` of them; a wrong count fails the constant's evaluation).
    pub const fn new(tuples: &[&[u8]]) -> SetIndex<T> {
        assert!(tuples.len() == T);
        let mut out = [TupleIndex::new(&[]); T];
        let mut offsets = [0usize; T];
        let mut offset = 0;
        let mut t = 0;
        while t < T {
            out[t] = TupleIndex::new(tuples[t]);
            offsets[t] = offset;
            offset += 1 << (4 * tuples[t].len());
            t += 1;
        }
        SetIndex { tuples: out, offsets }
    }
}

/// The 4x6 set, grouped at compile time.
pub const INDEX_4X6: SetIndex<4> = SetIndex::new(TUPLES_4X6);
/// The 8x6 set, grouped at compile time.
pub const INDEX_8X6: SetIndex<8> = SetIndex::new(TUPLES_8X6);

/// A tuple set whose grouping is a constant of the type: code generic over it sees every rotation, mask and table
/// offset as a literal, and unrolls each tuple's groups (a grouping held in a field, even one pointing at a
/// constant, is read from memory and looped over at run time).
pub trait FixedSet<const T: usize>: Clone + Copy + std::fmt::Debug + Send + Sync + 'static {
    const SET: SetIndex<T>;
}

/// The 4x6 set as a type.
#[derive(Clone, Copy, Debug)]
pub struct Set4x6;

impl FixedSet<4> for Set4x6 {
    const SET: SetIndex<4> = INDEX_4X6;
}

/// The 8x6 set as a type.
#[derive(Clone, Copy, Debug)]
pub struct Set8x6;

impl FixedSet<8> for Set8x6 {
    const SET: SetIndex<8> = INDEX_8X6;
}

/// Where each stage starts (largest exponents) and how many weights a stage has.
#[derive(Clone, Copy, Debug)]
struct Stages {
    starts: [u8; MAX_STAGES],
    len: usize,
    per_stage: usize,
}

impl Stages {
    fn new(shape: &Shape) -> Stages {
        let mut starts = [u8::MAX; MAX_STAGES];
        starts[..shape.stages.len()].copy_from_slice(&shape.stages);
        Stages {
            starts,
            len: shape.stages.len(),
            per_stage: shape.weights_per_stage(),
        }
    }

    /// The stage of a board.
    #[inline(always)]
    fn of(&self, board: u64) -> usize {
        if self.len == 1 {
            return 0;
        }
        super::stage_index(&self.starts[..self.len], Board(board).max_exponent())
    }
}

/// The lookups of a network's shape, by the fastest means that fits it.
#[derive(Clone, Debug)]
pub enum Indexer {
    /// The 4x6 set ([`INDEX_4X6`]).
    Four6(Stages4),
    /// The 8x6 set ([`INDEX_8X6`]).
    Eight6(Stages8),
    /// Any other shape, grouped when loaded.
    Any(AnyIndex),
}

/// A compile-time tuple set with a network's stages.
#[derive(Clone, Copy, Debug)]
pub struct Fixed<S, const T: usize> {
    set: std::marker::PhantomData<S>,
    stages: Stages,
}

/// The 4x6 set with its stages.
pub type Stages4 = Fixed<Set4x6, 4>;
/// The 8x6 set with its stages.
pub type Stages8 = Fixed<Set8x6, 8>;

/// Another shape's groups, with its stages.
#[derive(Clone, Debug)]
pub struct AnyIndex {
    tuples: Vec<(TupleIndex, usize)>,
    stages: Stages,
}

/// What the trainer and the evaluator need of an index: the weight index of every lookup of a board.
pub trait Lookups: Sync {
    /// Writes the weight index of every lookup of `board` (given its transpose) into `out`, in the board's own
    /// stage; returns how many.
    #[inline(always)]
    fn indices(&self, board: Board, transposed: Board, out: &mut [u32; MAX_LOOKUPS]) -> usize {
        self.indices_in(self.stage(board), board, transposed, out)
    }
    /// [`Lookups::indices`] in the weights of stage `stage` (below the number of stages), whatever the board's own
    /// stage: a decision values every board after its moves by the stage of the board it is made on (a move that
    /// makes a stage's start tile is still valued by the stage before it).
    fn indices_in(&self, stage: usize, board: Board, transposed: Board, out: &mut [u32; MAX_LOOKUPS]) -> usize;
    /// The stage (weight set) a board is valued by.
    fn stage(&self, board: Board) -> usize;
    /// Weights per stage.
    fn per_stage(&self) -> usize;
}

impl<S: FixedSet<T>, const T: usize> Fixed<S, T> {
    /// The weight index of every lookup of `board` (given its transpose), by tuple then symmetry: the order of
    /// [`Lookups::indices`], in an array of exactly the lookups' size (nothing to clear before it is filled).
    #[inline(always)]
    pub fn lookups(&self, board: Board, transposed: Board) -> [[u32; 8]; T] {
        self.lookups_in(self.stages.of(board.0), board, transposed)
    }

    /// [`Fixed::lookups`] in the weights of stage `stage` (see [`Lookups::indices_in`]).
    #[inline(always)]
    pub fn lookups_in(&self, stage: usize, board: Board, transposed: Board) -> [[u32; 8]; T] {
        let base = stage * self.stages.per_stage;
        let syms = symmetries(board, transposed);
        let mut out = [[0u32; 8]; T];
        for (t, row) in out.iter_mut().enumerate() {
            let at = base + S::SET.offsets[t];
            let tuple = &S::SET.tuples[t];
            for (slot, &b) in row.iter_mut().zip(&syms) {
                *slot = (at + tuple.index(b) as usize) as u32;
            }
        }
        out
    }
}

impl<S: FixedSet<T>, const T: usize> Lookups for Fixed<S, T> {
    #[inline(always)]
    fn indices_in(&self, stage: usize, board: Board, transposed: Board, out: &mut [u32; MAX_LOOKUPS]) -> usize {
        let base = stage * self.stages.per_stage;
        let syms = symmetries(board, transposed);
        for (t, tuple) in S::SET.tuples.iter().enumerate() {
            let at = base + S::SET.offsets[t];
            for (s, &b) in syms.iter().enumerate() {
                out[(8 * t + s) & (MAX_LOOKUPS - 1)] = (at + tuple.index(b) as usize) as u32;
            }
        }
        8 * T
    }

    #[inline(always)]
    fn stage(&self, board: Board) -> usize {
        self.stages.of(board.0)
    }

    fn per_stage(&self) -> usize {
        self.stages.per_stage
    }
}

impl Lookups for AnyIndex {
    #[inline]
    fn indices_in(&self, stage: usize, board: Board, transposed: Board, out: &mut [u32; MAX_LOOKUPS]) -> usize {
        let base = stage * self.stages.per_stage;
        let syms = symmetries(board, transposed);
        let mut n = 0;
        for (tuple, offset) in &self.tuples {
            for &b in &syms {
                out[n & (MAX_LOOKUPS - 1)] = (base + offset + tuple.index(b) as usize) as u32;
                n += 1;
            }
        }
        n
    }

    #[inline]
    fn stage(&self, board: Board) -> usize {
        self.stages.of(board.0)
    }

    fn per_stage(&self) -> usize {
        self.stages.per_stage
    }
}

impl Indexer {
    /// The indexer of a checked shape: a compile-time set when its tuples are one of the named sets.
    pub fn new(shape: &Shape) -> Indexer {
        let stages = Stages::new(shape);
        let same = |set: &[&[u8]]| shape.tuples.len() == set.len() && shape.tuples.iter().zip(set).all(|(a, b)| a == b);
        if same(TUPLES_4X6) {
            Indexer::Four6(Fixed {
                set: std::marker::PhantomData,
                stages,
            })
        } else if same(TUPLES_8X6) {
            Indexer::Eight6(Fixed {
                set: std::marker::PhantomData,
                stages,
            })
        } else {
            let mut offset = 0;
            let tuples = shape
                .tuples
                .iter()
                .map(|cells| {
                    let t = (TupleIndex::new(cells), offset);
                    offset += 1 << (4 * cells.len());
                    t
                })
                .collect();
            Indexer::Any(AnyIndex { tuples, stages })
        }
    }
}

/// Runs `$body` with `$l` bound to the indexer's concrete [`Lookups`], so the body is compiled once per kind with
/// every pattern a constant.
#[macro_export]
macro_rules! with_lookups {
    ($indexer:expr, $l:ident => $body:expr) => {
        match $indexer {
            $crate::eval::ntuple::index::Indexer::Four6($l) => $body,
            $crate::eval::ntuple::index::Indexer::Eight6($l) => $body,
            $crate::eval::ntuple::index::Indexer::Any($l) => $body,
        }
    };
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::rng::Rng;
    use crate::eval::ntuple::Features;

    #[test]
    fn the_4x6_rectangles_are_one_or_two_groups() {
        assert_eq!(INDEX_4X6.tuples[0].groups().len(), 1);
        assert_eq!(INDEX_4X6.tuples[1].groups().len(), 1);
        assert_eq!(INDEX_4X6.tuples[2].groups().len(), 2);
        assert_eq!(INDEX_4X6.tuples[3].groups().len(), 2);
        // Cells 0..5 are the top 24 bits: one shift by 40.
        assert_eq!(INDEX_4X6.tuples[0].index(0x1234_56ff_ffff_ffff), 0x12_3456);
    }

    /// Every indexer agrees with the plain shift-per-cell lookups, on random boards and every stage.
    #[test]
    fn grouped_indices_equal_the_cell_by_cell_ones() {
        let shapes = [
            Shape::named("4x6", vec![0]).unwrap(),
            Shape::named("4x6", vec![0, 13, 14]).unwrap(),
            Shape::named("8x6", vec![0, 14]).unwrap(),
            // Unsorted cells (a left rotation) and tuples of other sizes.
            Shape::new(
                vec![vec![15, 0, 7], vec![3, 2, 1, 0], vec![5, 9, 6, 10, 14]],
                vec![0, 12],
            )
            .unwrap(),
        ];
        let mut rng = Rng::new(5);
        for shape in shapes {
            let features = Features::new(shape.clone());
            let indexer = Indexer::new(&shape);
            for _ in 0..2000 {
                let b = Board(rng.next_u64());
                let (mut want, mut got) = ([0u32; MAX_LOOKUPS], [0u32; MAX_LOOKUPS]);
                let n = features.indices(b, b.transpose(), &mut want);
                let m = with_lookups!(&indexer, l => l.indices(b, b.transpose(), &mut got));
                assert_eq!(n, m);
                assert_eq!(want[..n], got[..m], "{shape:?} {b:?}");
                let stage = with_lookups!(&indexer, l => l.stage(b));
                assert_eq!(stage, shape.stage_of(b.max_exponent()));
                // In another stage's weights: the same patterns, that stage's block of the table.
                let per = shape.weights_per_stage() as i64;
                for k in 0..shape.stages.len() {
                    let mut other = [0u32; MAX_LOOKUPS];
                    let m = with_lookups!(&indexer, l => l.indices_in(k, b, b.transpose(), &mut other));
                    assert_eq!(n, m);
                    for (w, o) in want[..n].iter().zip(&other[..m]) {
                        assert_eq!(
                            i64::from(*o) - i64::from(*w),
                            (k as i64 - stage as i64) * per,
                            "{shape:?} {b:?}"
                        );
                    }
                }
            }
        }
    }
}
