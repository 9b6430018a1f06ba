//! The lab's seeded random number generator.
//!
//! Semantics: [`LabRng::seed_from`] `(seed, stream)` gives a generator whose
//! output is a pure function of the two numbers, on every platform and for
//! every version of the `rand` crate (the algorithm is fixed here, unlike
//! `rand::rngs::StdRng`/`SmallRng`, which may change between releases).
//! Different `stream` numbers give independent-looking sequences, so each
//! generated column can own a stream and adding a column leaves the others
//! untouched.
//!
//! The algorithm is xoshiro256++ (Blackman and Vigna), seeded through
//! SplitMix64. It implements [`rand::RngCore`], so every `rand::Rng` method
//! and `rand_distr` distribution works with it.

use rand::RngCore;

/// xoshiro256++ with a SplitMix64-derived seed. Cheap to clone and `Send`.
#[derive(Clone, Debug)]
pub struct LabRng {
    s: [u64; 4],
}

/// One SplitMix64 step: advances `state` and returns a well-mixed word.
fn splitmix64(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

impl LabRng {
    /// The generator for stream `stream` under the global `seed`.
    pub fn seed_from(seed: u64, stream: u64) -> LabRng {
        // Mix the seed and the stream separately first, so that (seed, stream)
        // and (seed + 1, stream - 1) do not collide.
        let mut a = seed;
        let mut b = stream ^ 0x6a09_e667_f3bc_c909;
        let mut state = splitmix64(&mut a) ^ splitmix64(&mut b).rotate_left(17);
        let mut s = [0u64; 4];
        for w in &mut s {
            *w = splitmix64(&mut state);
        }
        // xoshiro must not start from all zeros; SplitMix64 output makes that
        // practically impossible, but keep the guarantee explicit.
        if s == [0; 4] {
            s[0] = 1;
        }
        LabRng { s }
    }
}

impl RngCore for LabRng {
    #[inline]
    fn next_u32(&mut self) -> u32 {
        (self.next_u64() >> 32) as u32
    }

    #[inline]
    fn next_u64(&mut self) -> u64 {
        let s = &mut self.s;
        let result = s[0].wrapping_add(s[3]).rotate_left(23).wrapping_add(s[0]);
        let t = s[1] << 17;
        s[2] ^= s[0];
        s[3] ^= s[1];
        s[1] ^= s[2];
        s[0] ^= s[3];
        s[2] ^= t;
        s[3] = s[3].rotate_left(45);
        result
    }

    fn fill_bytes(&mut self, dst: &mut [u8]) {
        let mut chunks = dst.chunks_exact_mut(8);
        for chunk in &mut chunks {
            chunk.copy_from_slice(&self.next_u64().to_le_bytes());
        }
        let rest = chunks.into_remainder();
        if !rest.is_empty() {
            let bytes = self.next_u64().to_le_bytes();
            rest.copy_from_slice(&bytes[..rest.len()]);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_seed_and_stream_same_sequence() {
        let mut a = LabRng::seed_from(42, 3);
        let mut b = LabRng::seed_from(42, 3);
        for _ in 0..100 {
            assert_eq!(a.next_u64(), b.next_u64());
        }
    }

    #[test]
    fn streams_and_seeds_differ() {
        let first = |seed, stream| LabRng::seed_from(seed, stream).next_u64();
        assert_ne!(first(0, 0), first(0, 1));
        assert_ne!(first(0, 0), first(1, 0));
        assert_ne!(first(1, 0), first(0, 1));
    }

    #[test]
    fn output_is_pinned() {
        // The sequence is part of the lab's reproducibility promise: a change
        // here changes every generated workload.
        let mut r = LabRng::seed_from(0, 0);
        let got: Vec<u64> = (0..3).map(|_| r.next_u64()).collect();
        assert_eq!(
            got,
            vec![864635625506747069, 3112464682387423947, 3650381576885478884]
        );
    }

    #[test]
    fn matches_the_xoshiro256plusplus_reference() {
        // Reference output for state [1, 2, 3, 4] (Vigna's C code, as
        // tested by the rand_xoshiro crate).
        let mut r = LabRng { s: [1, 2, 3, 4] };
        let got: Vec<u64> = (0..4).map(|_| r.next_u64()).collect();
        assert_eq!(
            got,
            vec![41943041, 58720359, 3588806011781223, 3591011842654386]
        );
    }

    #[test]
    fn fill_bytes_handles_remainders() {
        let mut r = LabRng::seed_from(7, 7);
        let mut buf = [0u8; 13];
        r.fill_bytes(&mut buf);
        assert!(buf.iter().any(|&b| b != 0));
    }
}
