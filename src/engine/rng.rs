//! The seeded generator every random choice goes through, so a game is reproducible from a `u64` seed.
//!
//! The generator is **xoshiro256\*\*** (Blackman & Vigna, "Scrambled linear pseudorandom number generators", 2021),
//! its 256-bit state filled from the seed by **SplitMix64**, as its authors recommend. It is written out here rather
//! than taken from a crate so that a seed means the same game in every version of this project.
//! Bounded draws use rejection (no modulo bias); a 4 spawns when a draw below [`FOUR_ONE_IN`] is 0 (exactly p = 0.1).

use super::rules::FOUR_ONE_IN;

/// xoshiro256** seeded by SplitMix64. Not for cryptography.
///
/// # Examples
/// ```
/// use advisor2048::engine::rng::Rng;
/// let (mut a, mut b) = (Rng::new(7), Rng::new(7));
/// assert_eq!(a.next_u64(), b.next_u64());
/// ```
#[derive(Clone, Debug)]
pub struct Rng {
    s: [u64; 4],
}

/// One SplitMix64 step: advances `state` and returns a well-mixed output.
pub fn splitmix64(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// The seed of game `index` of a run seeded with `seed`: distinct, well-mixed, and independent of thread count.
pub fn derive_seed(seed: u64, index: u64) -> u64 {
    let mut s = seed ^ index.wrapping_mul(0xD1B5_4A32_D192_ED03);
    splitmix64(&mut s)
}

impl Rng {
    /// A generator whose whole stream is determined by `seed`.
    pub fn new(seed: u64) -> Rng {
        let mut sm = seed;
        Rng {
            s: std::array::from_fn(|_| splitmix64(&mut sm)),
        }
    }

    /// The generator's whole state (to save a run and continue it later with [`Rng::from_state`]).
    pub fn state(&self) -> [u64; 4] {
        self.s
    }

    /// The generator whose state is `s`, as [`Rng::state`] returned it. An all-zero state (which xoshiro cannot
    /// leave) is replaced by the state of seed 0.
    pub fn from_state(s: [u64; 4]) -> Rng {
        if s == [0; 4] {
            return Rng::new(0);
        }
        Rng { s }
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        let s = &mut self.s;
        let result = s[1].wrapping_mul(5).rotate_left(7).wrapping_mul(9);
        let t = s[1] << 17;
        s[2] ^= s[0];
        s[3] ^= s[1];
        s[1] ^= s[2];
        s[0] ^= s[3];
        s[2] ^= t;
        s[3] = s[3].rotate_left(45);
        result
    }

    /// A uniform integer in `0..n` (n > 0), without modulo bias.
    pub fn below(&mut self, n: u64) -> u64 {
        debug_assert!(n > 0);
        let zone = u64::MAX - (u64::MAX % n + 1) % n; // largest multiple of n, minus 1
        loop {
            let x = self.next_u64();
            if x <= zone {
                return x % n;
            }
        }
    }

    /// True with probability exactly 1/[`FOUR_ONE_IN`]: whether a spawned tile is a 4.
    pub fn chance_of_four(&mut self) -> bool {
        self.below(FOUR_ONE_IN) == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn below_stays_in_range_and_hits_every_value() {
        let mut rng = Rng::new(1);
        let mut seen = [false; 7];
        for _ in 0..1000 {
            let x = rng.below(7) as usize;
            seen[x] = true;
        }
        assert!(seen.iter().all(|&s| s));
    }

    #[test]
    fn splitmix_first_output_matches_published_value() {
        // SplitMix64 with state 0: first output 0xE220A8397B1DCDAF (the reference implementation's value).
        let mut s = 0u64;
        assert_eq!(splitmix64(&mut s), 0xE220_A839_7B1D_CDAF);
    }
}
