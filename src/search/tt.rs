//! The transposition table: fixed size, allocated once and reused by search after search, keyed by the board at
//! chance nodes.
//!
//! An entry stores the plies that were left when its value was computed; it may be reused at a node with the same
//! or fewer plies left. Entries are invalidated in O(1) by a generation stamp (one generation per root move), so no
//! search clears memory. Replacement: always replace (the newest entry is the likeliest to be hit again).
//!
//! An entry is 16 bytes (four to a cache line, never straddling two): the board, the value as `f32` (as the
//! best-known public engine stores it; a reused value is exact to about 1e-7 relative, and the golden values are
//! checked without the table), and a stamp. Most of a search's memory stalls are table misses, so the search
//! prefetches the slots of a move node's children before descending ([`TranspositionTable::prefetch`]).
//!
//! Beside it, for an evaluator whose values are worth it (the n-tuple network: f32 values, 32 lookups each), a
//! small direct-mapped cache of the values of the boards after a leaf's moves (16,384 entries of the same 16 bytes,
//! allocated on first use). Unlike the table's values, these are exact: a board's value does not depend on where it
//! was met, and an f32 value is kept as it is. Many recur among a chance node's sibling leaves (a tile spawned
//! anywhere in one gap of a row slides to the same place), and among the leaves of the other root directions and of
//! the other iterations of a deepening search, and of the next move's search. So the cache is not invalidated with
//! the table's generation but by its own, advanced when a search whose values may differ takes the table
//! ([`TranspositionTable::begin_leaf_epoch`]): a search with an evaluator of another values key
//! ([`crate::eval::Evaluator::values_key`]: another network or stage), or one whose evaluator has none. A 5-ply
//! search of the shipped network computes about a tenth fewer values than with a cache invalidated per root
//! direction, and the default play another 12% fewer when the cache outlives the move; the results are the same.

#[derive(Clone, Copy, Default)]
#[repr(C, align(16))]
struct Entry {
    key: u64,
    value: f32,
    /// generation << 8 | plies
    stamp: u32,
}

/// log2 of the entries of the leaf-value cache ([`TranspositionTable::leaf_value`]): 16,384 entries, 256 KiB, within
/// a core's L2 cache (a 5-ply search computes 1% fewer values than with 4096 entries, the default play 7% fewer).
const LEAF_BITS: u8 = 14;

/// A fixed-size, direct-mapped table of chance-node values, and beside it a small cache of the values of the boards
/// after a leaf's moves.
pub struct TranspositionTable {
    entries: Vec<Entry>,
    bits: u8,
    generation: u32,
    /// The stamp of the leaf-value cache's valid entries, and the search ([`Self::begin_leaf_epoch`]) they belong to.
    leaf_generation: u32,
    leaf_epoch: u64,
    used: u64,
    /// The leaf-value cache: empty until a search with an evaluator that wants it ([`Self::enable_leaf_values`]).
    leaves: Vec<Entry>,
}

impl TranspositionTable {
    /// A table of 2^bits entries (16 bytes each).
    pub fn new(bits: u8) -> TranspositionTable {
        let bits = bits.clamp(4, 30);
        TranspositionTable {
            entries: vec![Entry::default(); 1 << bits],
            bits,
            generation: 1,
            leaf_generation: 1,
            leaf_epoch: 0,
            used: 0,
            leaves: Vec::new(),
        }
    }

    /// Allocates the leaf-value cache, if not yet (256 KiB, kept with the table).
    pub fn enable_leaf_values(&mut self) {
        if self.leaves.is_empty() {
            self.leaves = vec![Entry::default(); 1 << LEAF_BITS];
        }
    }

    /// Whether the leaf-value cache is allocated.
    #[inline(always)]
    pub fn has_leaf_values(&self) -> bool {
        !self.leaves.is_empty()
    }

    /// log2 of the entry count.
    pub fn bits(&self) -> u8 {
        self.bits
    }

    /// Memory held, in bytes (the leaf-value cache included once allocated).
    pub fn bytes(&self) -> u64 {
        ((self.entries.len() + self.leaves.len()) * std::mem::size_of::<Entry>()) as u64
    }

    /// The most bytes a table of 2^`bits` entries holds: its entries and, once a search has asked for it, its
    /// leaf-value cache.
    pub fn most_bytes(bits: u8) -> u64 {
        (((1usize << bits.clamp(4, 30)) + (1 << LEAF_BITS)) * std::mem::size_of::<Entry>()) as u64
    }

    /// Number of entries.
    pub fn capacity(&self) -> u64 {
        1 << self.bits
    }

    /// Entries written in the current generation that went to an empty or stale slot.
    pub fn used(&self) -> u64 {
        self.used
    }

    /// Forgets every entry of the table (O(1)); the leaf-value cache is kept ([`Self::begin_leaf_epoch`]).
    pub fn new_generation(&mut self) {
        self.generation = (self.generation + 1) & 0x00FF_FFFF;
        if self.generation == 0 {
            // Wrapped around: stale stamps could match again, so really clear.
            self.entries.fill(Entry::default());
            self.generation = 1;
        }
        self.used = 0;
    }

    /// Declares the search now using the table: `epoch` names the values its leaves get (an evaluator's values key,
    /// or a name unique to one search). When it is not the name the table was last used under, the leaf-value cache
    /// is forgotten (O(1)); under the same name it is kept: across root directions and iterations of one search, and
    /// across searches whose evaluator values every board alike.
    pub fn begin_leaf_epoch(&mut self, epoch: u64) {
        if epoch != self.leaf_epoch {
            self.leaf_epoch = epoch;
            self.leaf_generation = self.leaf_generation.wrapping_add(1);
            if self.leaf_generation == 0 {
                self.leaves.fill(Entry::default());
                self.leaf_generation = 1;
            }
        }
    }

    #[inline]
    fn slot(&self, key: u64) -> usize {
        (key.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> (64 - self.bits)) as usize
    }

    /// The value stored for `key` with at least `plies` plies, if any.
    #[inline]
    pub fn get(&self, key: u64, plies: u32) -> Option<f64> {
        let e = &self.entries[self.slot(key)];
        (e.key == key && e.stamp >> 8 == self.generation && (e.stamp & 0xFF) >= plies).then_some(f64::from(e.value))
    }

    /// Stores the value of `key` computed with `plies` plies left.
    #[inline]
    pub fn put(&mut self, key: u64, plies: u32, value: f64) {
        let slot = self.slot(key);
        let generation = self.generation;
        let e = &mut self.entries[slot];
        if e.stamp >> 8 != generation {
            self.used += 1;
        }
        *e = Entry {
            key,
            value: value as f32,
            stamp: (generation << 8) | plies.min(255),
        };
    }

    /// The cached value of the board `key` (a board after a leaf's move), if stored under the current leaf epoch.
    #[inline(always)]
    pub fn leaf_value(&self, key: u64) -> Option<f32> {
        let e = &self.leaves[leaf_slot(key)];
        (e.key == key && e.stamp == self.leaf_generation).then_some(e.value)
    }

    /// Stores the value of the board `key` (a board after a leaf's move) in the leaf-value cache (always replacing).
    #[inline(always)]
    pub fn put_leaf_value(&mut self, key: u64, value: f32) {
        let generation = self.leaf_generation;
        self.leaves[leaf_slot(key)] = Entry {
            key,
            value,
            stamp: generation,
        };
    }

    /// Asks the CPU to start loading the slot of `key` into cache (a hint: no effect on results).
    #[inline(always)]
    pub fn prefetch(&self, key: u64) {
        #[cfg(target_arch = "x86_64")]
        {
            let ptr = std::ptr::from_ref(&self.entries[self.slot(key)]).cast::<i8>();
            // SAFETY: a prefetch never faults and reads nothing into the program; the pointer is in bounds anyway.
            unsafe { std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(ptr) };
        }
        #[cfg(not(target_arch = "x86_64"))]
        let _ = key;
    }
}

/// The slot of `key` in the leaf-value cache (below 2^[`LEAF_BITS`]).
#[inline(always)]
fn leaf_slot(key: u64) -> usize {
    (key.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> (64 - LEAF_BITS)) as usize
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn leaf_values_outlive_generations_within_a_search_and_not_beyond_it() {
        let mut t = TranspositionTable::new(8);
        t.enable_leaf_values();
        t.begin_leaf_epoch(7);
        t.new_generation();
        t.put(0x1234, 3, 1.5);
        t.put_leaf_value(0xABCD, 2.25);
        assert_eq!(t.get(0x1234, 3), Some(1.5));
        assert_eq!(t.leaf_value(0xABCD), Some(2.25));
        // The next root direction of the same search: the table forgets, the leaf values stay.
        t.new_generation();
        t.begin_leaf_epoch(7);
        assert_eq!(t.get(0x1234, 3), None);
        assert_eq!(t.leaf_value(0xABCD), Some(2.25));
        // Another search (another evaluator, maybe): the leaf values are forgotten too.
        t.new_generation();
        t.begin_leaf_epoch(8);
        assert_eq!(t.leaf_value(0xABCD), None);
        t.put_leaf_value(0xABCD, 4.0);
        assert_eq!(t.leaf_value(0xABCD), Some(4.0));
        // Back to an earlier epoch's name: still a change of search, still forgotten.
        t.begin_leaf_epoch(7);
        assert_eq!(t.leaf_value(0xABCD), None);
    }

    #[test]
    fn a_wrapped_leaf_generation_really_clears_the_leaf_values() {
        let mut t = TranspositionTable::new(8);
        t.enable_leaf_values();
        t.begin_leaf_epoch(1);
        t.put_leaf_value(0x55, 1.0);
        t.leaf_generation = u32::MAX;
        t.put_leaf_value(0x66, 2.0);
        t.begin_leaf_epoch(2);
        assert_eq!(t.leaf_generation, 1);
        assert_eq!(t.leaf_value(0x55), None);
        assert_eq!(t.leaf_value(0x66), None);
    }
}
