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
    /// The tuple's cells in a board's bits, when its cells are in ascending order: then the index is those bits
    /// packed together in order (one `pext`, see [`Fixed::sums_f16`]); 0 for a tuple in another order.
    packed: u64,
}

impl TupleIndex {
    /// The groups of a tuple of cells (each 0..16, at most [`MAX_TUPLE_CELLS`], as a checked [`Shape`] has them).
    pub const fn new(cells: &[u8]) -> TupleIndex {
        let n = cells.len();
        let mut groups = [Group { rotation: 0, mask: 0 }; MAX_TUPLE_CELLS];
        let mut len = 0;
        let mut packed = 0u64;
        let mut ascending = true;
        let mut j = 0;
        while j < n {
            if j > 0 && cells[j] <= cells[j - 1] {
                ascending = false;
            }
            packed |= 0xF << (4 * (15 - cells[j] as u32));
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
        TupleIndex {
            groups,
            len,
            packed: if ascending { packed } else { 0 },
        }
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

/// The bits of `x` under `mask`, packed to the low end in their order (BMI2 `pext`).
///
/// # Safety
/// The processor has BMI2 ([`pext_is_fast`] said so).
#[cfg(target_arch = "x86_64")]
#[inline(always)]
unsafe fn pext(x: u64, mask: u64) -> u64 {
    let out: u64;
    // SAFETY: the caller's processor has BMI2; the instruction reads only its registers.
    unsafe {
        std::arch::asm!(
            "pext {out}, {x}, {mask}",
            out = lateout(reg) out,
            x = in(reg) x,
            mask = in(reg) mask,
            options(pure, nomem, nostack, preserves_flags),
        );
    }
    out
}

/// [`pext`] where there is no such instruction (never called there: [`pext_is_fast`] is false).
///
/// # Safety
/// None needed; `unsafe` as the instruction's version is.
#[cfg(not(target_arch = "x86_64"))]
#[inline(always)]
unsafe fn pext(x: u64, mask: u64) -> u64 {
    pext_bit_by_bit(x, mask)
}

/// What `pext` computes, bit by bit: the bits of `x` under `mask`, packed to the low end in their order.
#[cfg_attr(target_arch = "x86_64", allow(dead_code))]
fn pext_bit_by_bit(x: u64, mut mask: u64) -> u64 {
    let (mut out, mut bit) = (0, 0);
    while mask != 0 {
        let low = mask & mask.wrapping_neg();
        if x & low != 0 {
            out |= 1 << bit;
        }
        bit += 1;
        mask ^= low;
    }
    out
}

/// Whether this processor extracts a tuple's index in one fast instruction (`pext`): it has BMI2 and is an Intel
/// processor or an AMD one from Zen 3 on (family 0x19; before it, AMD runs `pext` in microcode, tens of cycles,
/// slower than the rotations it replaces). Read once, when a network is indexed.
pub fn pext_is_fast() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::__cpuid;
        if !std::is_x86_feature_detected!("bmi2") {
            return false;
        }
        let vendor = __cpuid(0);
        let name = [vendor.ebx, vendor.edx, vendor.ecx];
        let intel = name == [0x756E_6547, 0x4965_6E69, 0x6C65_746E]; // "GenuineIntel"
        let amd = name == [0x6874_7541, 0x6974_6E65, 0x444D_4163]; // "AuthenticAMD"
        let signature = __cpuid(1).eax;
        let (base, extended) = ((signature >> 8) & 0xF, (signature >> 20) & 0xFF);
        let family = if base == 0xF { base + extended } else { base };
        intel || (amd && family >= 0x19)
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}

/// A tuple set of `T` tuples grouped at compile time, with each tuple's table offset within a stage.
#[derive(Clone, Copy, Debug)]
pub struct SetIndex<const T: usize> {
    tuples: [TupleIndex; T],
    offsets: [usize; T],
    /// Weights of each tuple's table (16^cells).
    sizes: [usize; T],
}

impl<const T: usize> SetIndex<T> {
    /// The grouping of `tuples` (exactly `T` of them; a wrong count fails the constant's evaluation).
    pub const fn new(tuples: &[&[u8]]) -> SetIndex<T> {
        assert!(tuples.len() == T);
        let mut out = [TupleIndex::new(&[]); T];
        let mut offsets = [0usize; T];
        let mut sizes = [0usize; T];
        let mut offset = 0;
        let mut t = 0;
        while t < T {
            out[t] = TupleIndex::new(tuples[t]);
            offsets[t] = offset;
            sizes[t] = 1 << (4 * tuples[t].len());
            offset += sizes[t];
            t += 1;
        }
        SetIndex {
            tuples: out,
            offsets,
            sizes,
        }
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

/// Where each stage starts (largest exponents), where its weights begin and how many tuples it reads.
#[derive(Clone, Copy, Debug)]
struct Stages {
    starts: [u8; MAX_STAGES],
    len: usize,
    /// Where each stage's weights begin.
    bases: [usize; MAX_STAGES],
    /// How many of the tuples (the first ones) each stage reads.
    tuples: [usize; MAX_STAGES],
}

impl Stages {
    fn new(shape: &Shape) -> Stages {
        let mut starts = [u8::MAX; MAX_STAGES];
        starts[..shape.stages.len()].copy_from_slice(&shape.stages);
        let (mut bases, mut tuples) = ([0; MAX_STAGES], [0; MAX_STAGES]);
        for k in 0..shape.stages.len() {
            bases[k] = shape.stage_start(k);
            tuples[k] = shape.stage_tuple_count(k);
        }
        Stages {
            starts,
            len: shape.stages.len(),
            bases,
            tuples,
        }
    }

    /// Where stage `k`'s weights begin (`k` below the number of stages).
    #[inline(always)]
    fn base(&self, k: usize) -> usize {
        self.bases[k & (MAX_STAGES - 1)]
    }

    /// How many tuples stage `k` reads.
    #[inline(always)]
    fn tuple_count(&self, k: usize) -> usize {
        self.tuples[k & (MAX_STAGES - 1)]
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
    /// Whether [`Fixed::sums_f16`] extracts indices with `pext` ([`pext_is_fast`]).
    pext: bool,
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
}

impl<S: FixedSet<T>, const T: usize> Fixed<S, T> {
    /// The weight index of every lookup of `board` (given its transpose), by tuple then symmetry: the order of
    /// [`Lookups::indices`], in an array of exactly the lookups' size (nothing to clear before it is filled).
    #[inline(always)]
    pub fn lookups(&self, board: Board, transposed: Board) -> [[u32; 8]; T] {
        self.lookups_in(self.stages.of(board.0), board, transposed)
    }

    /// [`Fixed::lookups`] in the weights of stage `stage` (see [`Lookups::indices_in`]): the rows of the tuples the
    /// stage reads ([`Fixed::tuple_count`]); the others' are left 0.
    #[inline(always)]
    pub fn lookups_in(&self, stage: usize, board: Board, transposed: Board) -> [[u32; 8]; T] {
        let base = self.stages.base(stage);
        let syms = symmetries(board, transposed);
        let mut out = [[0u32; 8]; T];
        for (t, row) in out.iter_mut().enumerate().take(self.stages.tuple_count(stage)) {
            let at = base + S::SET.offsets[t];
            let tuple = &S::SET.tuples[t];
            for (slot, &b) in row.iter_mut().zip(&syms) {
                *slot = (at + tuple.index(b) as usize) as u32;
            }
        }
        out
    }
}

/// The f32 value of a finite f16 bit pattern, times 2^-112: [`super::f16_to_f32`] without its final
/// multiplication. The pattern is read sign-extended (a free `movsx` load), shifted into an f32's exponent and
/// mantissa places, and the three copies of the sign that land in the exponent's top bits are masked off.
///
/// A sum of such values in f32, multiplied by 2^112 at the end, is bit for bit the sum of the `f16_to_f32` values in
/// the same order: every term is a multiple of 2^-136, so every partial sum is too; a partial sum of magnitude at
/// least 2^-126 is rounded to 24 significant bits at both scales, and a smaller one is k x 2^-136 with k < 2^10,
/// exact at both scales. Saves one multiplication per lookup.
#[inline(always)]
pub fn f16_to_f32_scaled_down(h: u16) -> f32 {
    f32::from_bits((i32::from(h as i16) << 13) as u32 & 0x8FFF_FFFF)
}

/// 2^112: what a sum of [`f16_to_f32_scaled_down`] values is multiplied by to be the sum of the f16 values.
pub const F16_SCALED_UP: f32 = f32::from_bits((112 + 127) << 23);

impl<S: FixedSet<T>, const T: usize> Fixed<S, T> {
    /// The stage of `board` (the one its own largest tile selects).
    #[inline(always)]
    pub fn stage_of(&self, board: Board) -> usize {
        self.stages.of(board.0)
    }

    /// How many of the set's tuples (the first ones) stage `stage` reads: `T` unless the stages differ.
    #[inline(always)]
    pub fn tuple_count(&self, stage: usize) -> usize {
        self.stages.tuple_count(stage)
    }

    /// The stage all of `boards` are valued in: `stage` when given, else their own when they share one (always so
    /// with one stage); `None` when their own stages differ.
    #[inline(always)]
    fn common_stage(&self, stage: Option<usize>, boards: &[(Board, Board)]) -> Option<usize> {
        if let Some(k) = stage {
            return Some(k);
        }
        if self.stages.len == 1 {
            return Some(0);
        }
        let k = self.stage_of(boards.first()?.0);
        boards.iter().all(|&(b, _)| self.stage_of(b) == k).then_some(k)
    }

    /// [`Fixed::sums_f16`] of the first `n` (0 to 4) of `boards` (the other places unspecified), in `stage` or
    /// their common own stage (`None` when they have none): four or three boards as four (the third's copy in the
    /// fourth place), two as two, one alone.
    #[inline(always)]
    pub fn sums_f16_of_first(
        &self,
        bits: &[u16],
        stage: Option<usize>,
        boards: [(Board, Board); 4],
        n: usize,
    ) -> Option<[f32; 4]> {
        let k = self.common_stage(stage, &boards[..n.min(4)])?;
        let [a, b, c, d] = boards;
        Some(match n {
            0 => [0.0; 4],
            1 => [self.sums_f16(bits, k, [a])[0], 0.0, 0.0, 0.0],
            2 => {
                let [x, y] = self.sums_f16(bits, k, [a, b]);
                [x, y, 0.0, 0.0]
            }
            3 => self.sums_f16(bits, k, [a, b, c, c]),
            _ => self.sums_f16(bits, k, [a, b, c, d]),
        })
    }

    /// [`Fixed::sums_f16`] of the boards given (`None` skipped, its sum `None`), side by side: four or three
    /// boards as four (the third's copy in the fourth place), two as two, one alone. `None` when the boards' own
    /// stages differ.
    #[inline(always)]
    pub fn sums_f16_of_some(
        &self,
        bits: &[u16],
        stage: Option<usize>,
        boards: [Option<(Board, Board)>; 4],
    ) -> Option<[Option<f32>; 4]> {
        let mut given = [(Board::EMPTY, Board::EMPTY); 4];
        let mut slot = [0usize; 4];
        let mut n = 0;
        for (k, b) in boards.iter().enumerate() {
            if let Some(b) = *b {
                given[n] = b;
                slot[n] = k;
                n += 1;
            }
        }
        let sums = self.sums_f16_of_first(bits, stage, given, n)?;
        let mut out = [None; 4];
        for j in 0..n {
            out[slot[j] & 3] = Some(sums[j]);
        }
        Some(out)
    }

    /// The f32 sums of the f16 weights of `N` boards (each given with its transpose), all in the weights of stage
    /// `stage`, each in the order of [`Lookups::indices`] (tuple by tuple, symmetry by symmetry), times 2^-112 (see
    /// [`f16_to_f32_scaled_down`]): bit for bit the sums the generic path makes, with no index array and no bounds
    /// check per lookup (each tuple's table is a slice of the size its indices fill).
    ///
    /// The boards go side by side: lookup j of every board, then lookup j + 1. With four boards the compiler keeps
    /// the four sums in one vector register, converting and adding four weights per instruction (each board's sum
    /// still adds its own weights one by one, in order), which takes 27% fewer instructions per board than one
    /// board at a time; two or three boards get no such vector code (a caller with three passes a fourth copy).
    /// The work itself is never inlined: inside a caller that also holds the generic path, the compiler merged the
    /// two and kept every index on the stack.
    ///
    /// Where [`pext_is_fast`], a tuple whose cells ascend gets its index by one `pext` of its cells instead of its
    /// rotations and masks (the same index): 2-5 instructions fewer a lookup. Every lookup's slot is asked for before
    /// any is read, so the reads' waits overlap.
    #[inline(always)]
    pub fn sums_f16<const N: usize>(&self, bits: &[u16], stage: usize, boards: [(Board, Board); N]) -> [f32; N] {
        if self.pext {
            // SAFETY: `pext` is set only where `pext_is_fast` found BMI2.
            unsafe { self.sums_f16_by::<N, true>(bits, stage, boards) }
        } else {
            // SAFETY: without `pext`, no instruction the processor may lack.
            unsafe { self.sums_f16_by::<N, false>(bits, stage, boards) }
        }
    }

    /// [`Fixed::sums_f16`], its indices by `pext` when `PEXT`.
    ///
    /// # Safety
    /// With `PEXT`, the processor has BMI2.
    #[inline(never)]
    unsafe fn sums_f16_by<const N: usize, const PEXT: bool>(
        &self,
        bits: &[u16],
        stage: usize,
        boards: [(Board, Board); N],
    ) -> [f32; N] {
        let base = self.stages.base(stage);
        let count = self.stages.tuple_count(stage);
        let mut syms = [[0u64; 8]; N];
        for (s, &(board, transposed)) in syms.iter_mut().zip(&boards) {
            *s = symmetries(board, transposed);
        }
        let mut sums = [0.0f32; N];
        // One call per tuple, its number a constant: the compiler sees the tuple's rotations, masks, offset and table
        // size as literals (a loop over the tuples kept them in memory, with a bounds check per lookup).
        // SAFETY (each): `PEXT` only where the caller's processor has BMI2.
        unsafe {
            // Every lookup's slot asked for first, then read: the loads' waits overlap instead of queueing behind
            // the sums (each index is worked out twice; with `pext` that is two instructions).
            Self::prefetch_tuple::<0, N, PEXT>(bits, base, count, &syms);
            Self::prefetch_tuple::<1, N, PEXT>(bits, base, count, &syms);
            Self::prefetch_tuple::<2, N, PEXT>(bits, base, count, &syms);
            Self::prefetch_tuple::<3, N, PEXT>(bits, base, count, &syms);
            Self::prefetch_tuple::<4, N, PEXT>(bits, base, count, &syms);
            Self::prefetch_tuple::<5, N, PEXT>(bits, base, count, &syms);
            Self::prefetch_tuple::<6, N, PEXT>(bits, base, count, &syms);
            Self::prefetch_tuple::<7, N, PEXT>(bits, base, count, &syms);
            Self::add_tuple::<0, N, PEXT>(bits, base, count, &syms, &mut sums);
            Self::add_tuple::<1, N, PEXT>(bits, base, count, &syms, &mut sums);
            Self::add_tuple::<2, N, PEXT>(bits, base, count, &syms, &mut sums);
            Self::add_tuple::<3, N, PEXT>(bits, base, count, &syms, &mut sums);
            Self::add_tuple::<4, N, PEXT>(bits, base, count, &syms, &mut sums);
            Self::add_tuple::<5, N, PEXT>(bits, base, count, &syms, &mut sums);
            Self::add_tuple::<6, N, PEXT>(bits, base, count, &syms, &mut sums);
            Self::add_tuple::<7, N, PEXT>(bits, base, count, &syms, &mut sums);
        }
        const { assert!(T <= 8, "sums_f16 adds up to 8 tuples") };
        sums
    }

    /// Tuple `I`'s index on `board` (one of a board's symmetries), below its table's size: with `PEXT`, one `pext`
    /// when the tuple's cells ascend, else its rotations and masks.
    ///
    /// # Safety
    /// With `PEXT`, the processor has BMI2.
    #[inline(always)]
    unsafe fn index_of<const I: usize, const PEXT: bool>(board: u64) -> usize {
        let tuple = S::SET.tuples[I];
        if PEXT && tuple.packed != 0 {
            // SAFETY: the caller's processor has BMI2 when `PEXT`. The mask (the table's size less one, the very bits
            // `pext` fills) tells the compiler the index is in the table: no bounds check.
            (unsafe { pext(board, tuple.packed) } & (S::SET.sizes[I] as u64 - 1)) as usize
        } else {
            tuple.index(board) as usize
        }
    }

    /// Tuple `I`'s table in the stage whose weights begin at `base`: `None` when the set has no tuple `I` or the
    /// stage reads only the first `count`.
    #[inline(always)]
    fn table_of<const I: usize>(bits: &[u16], base: usize, count: usize) -> Option<&[u16]> {
        if I >= T || I >= count {
            return None;
        }
        Some(&bits[base + S::SET.offsets[I]..][..S::SET.sizes[I]])
    }

    /// Asks for the table slots of tuple `I`'s 8 lookups of each board (see [`super::prefetch`]).
    ///
    /// # Safety
    /// With `PEXT`, the processor has BMI2.
    #[inline(always)]
    unsafe fn prefetch_tuple<const I: usize, const N: usize, const PEXT: bool>(
        bits: &[u16],
        base: usize,
        count: usize,
        syms: &[[u64; 8]; N],
    ) {
        let Some(table) = Self::table_of::<I>(bits, base, count) else {
            return;
        };
        for sym in syms {
            for &b in sym {
                // SAFETY: as the caller's.
                super::prefetch(table, unsafe { Self::index_of::<I, PEXT>(b) });
            }
        }
    }

    /// Adds tuple `I`'s 8 lookups of each board to that board's sum (nothing when the set has no tuple `I`, or the
    /// stage reads only the first `count`).
    ///
    /// # Safety
    /// With `PEXT`, the processor has BMI2.
    #[inline(always)]
    unsafe fn add_tuple<const I: usize, const N: usize, const PEXT: bool>(
        bits: &[u16],
        base: usize,
        count: usize,
        syms: &[[u64; 8]; N],
        sums: &mut [f32; N],
    ) {
        let Some(table) = Self::table_of::<I>(bits, base, count) else {
            return;
        };
        // Symmetry s of every board, then s + 1 (the boards side by side, as the sums are).
        #[allow(clippy::needless_range_loop)]
        for s in 0..8 {
            // SAFETY: as the caller's.
            let h: [u16; N] = std::array::from_fn(|k| table[unsafe { Self::index_of::<I, PEXT>(syms[k][s]) }]);
            for (sum, h) in sums.iter_mut().zip(h) {
                *sum += f16_to_f32_scaled_down(h);
            }
        }
    }
}

impl<S: FixedSet<T>, const T: usize> Lookups for Fixed<S, T> {
    #[inline(always)]
    fn indices_in(&self, stage: usize, board: Board, transposed: Board, out: &mut [u32; MAX_LOOKUPS]) -> usize {
        let base = self.stages.base(stage);
        let count = self.stages.tuple_count(stage);
        let syms = symmetries(board, transposed);
        for (t, tuple) in S::SET.tuples.iter().enumerate().take(count) {
            let at = base + S::SET.offsets[t];
            for (s, &b) in syms.iter().enumerate() {
                out[(8 * t + s) & (MAX_LOOKUPS - 1)] = (at + tuple.index(b) as usize) as u32;
            }
        }
        8 * count.min(T)
    }

    #[inline(always)]
    fn stage(&self, board: Board) -> usize {
        self.stages.of(board.0)
    }
}

impl Lookups for AnyIndex {
    #[inline]
    fn indices_in(&self, stage: usize, board: Board, transposed: Board, out: &mut [u32; MAX_LOOKUPS]) -> usize {
        let base = self.stages.base(stage);
        let syms = symmetries(board, transposed);
        let mut n = 0;
        for (tuple, offset) in self.tuples.iter().take(self.stages.tuple_count(stage)) {
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
                pext: pext_is_fast(),
            })
        } else if same(TUPLES_8X6) {
            Indexer::Eight6(Fixed {
                set: std::marker::PhantomData,
                stages,
                pext: pext_is_fast(),
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
    /// A tuple whose cells ascend is indexed by packing its cells' bits (`pext`), the same index its groups make;
    /// one in another order is not. Where the processor has BMI2, the instruction packs as the bit-by-bit version.
    #[test]
    fn packed_indices_equal_the_grouped_ones() {
        let unsorted = TupleIndex::new(&[15, 0, 7]);
        assert_eq!(unsorted.packed, 0);
        assert_eq!(INDEX_4X6.tuples[0].packed, 0xFFFF_FF00_0000_0000);
        #[cfg(target_arch = "x86_64")]
        let bmi2 = std::is_x86_feature_detected!("bmi2");
        let mut rng = Rng::new(11);
        for tuple in INDEX_4X6.tuples.iter().chain(&INDEX_8X6.tuples) {
            assert_ne!(tuple.packed, 0, "{tuple:?}");
            for _ in 0..2000 {
                let b = rng.next_u64();
                assert_eq!(pext_bit_by_bit(b, tuple.packed), tuple.index(b), "{tuple:?} {b:x}");
                #[cfg(target_arch = "x86_64")]
                if bmi2 {
                    // SAFETY: the processor has BMI2.
                    assert_eq!(unsafe { pext(b, tuple.packed) }, tuple.index(b), "{tuple:?} {b:x}");
                }
            }
        }
    }

    /// The evaluator's sums by `pext` equal its sums by rotations bit for bit, on random boards, one board at a time
    /// and four side by side, in every stage (where the processor has BMI2; elsewhere only the rotations run).
    #[test]
    fn sums_by_pext_equal_the_sums_by_rotation() {
        #[cfg(target_arch = "x86_64")]
        if !std::is_x86_feature_detected!("bmi2") {
            return;
        }
        #[cfg(not(target_arch = "x86_64"))]
        return;
        let shape = Shape::named("4x6", vec![0, 14]).unwrap();
        let Indexer::Four6(l) = Indexer::new(&shape) else {
            panic!("the 4x6 set is indexed at compile time");
        };
        // Finite f16 patterns of both signs, different at every index.
        let mut rng = Rng::new(12);
        let bits: Vec<u16> = (0..2 * shape.weights_per_stage())
            .map(|_| rng.next_u64() as u16 & 0xBBFF)
            .collect();
        for _ in 0..3000 {
            let boards: [(Board, Board); 4] = std::array::from_fn(|_| {
                let b = Board(rng.next_u64());
                (b, b.transpose())
            });
            for stage in 0..2 {
                // SAFETY: the processor has BMI2 (checked above).
                let (by_pext, by_rotation) = unsafe {
                    (
                        l.sums_f16_by::<4, true>(&bits, stage, boards),
                        l.sums_f16_by::<4, false>(&bits, stage, boards),
                    )
                };
                assert_eq!(by_pext.map(f32::to_bits), by_rotation.map(f32::to_bits), "{boards:?}");
                // SAFETY: as above.
                let (one_pext, one_rotation) = unsafe {
                    (
                        l.sums_f16_by::<1, true>(&bits, stage, [boards[0]]),
                        l.sums_f16_by::<1, false>(&bits, stage, [boards[0]]),
                    )
                };
                assert_eq!(one_pext[0].to_bits(), one_rotation[0].to_bits());
                assert_eq!(one_pext[0].to_bits(), by_pext[0].to_bits());
            }
        }
    }
}
