//! A small seeded generator (SplitMix64): the same seed gives the same
//! inputs on every machine and with every dependency version, so a seed
//! and an index name an input for good.

#[derive(Clone, Debug)]
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed)
    }

    /// The generator of input `index` of `category` in a run seeded `seed`:
    /// each input is made alone, without the ones before it.
    pub fn for_input(seed: u64, category: u64, index: u64) -> Rng {
        let mut r = Rng(seed ^ 0x9e37_79b9_7f4a_7c15);
        let a = r.next_u64() ^ category.wrapping_mul(0xbf58_476d_1ce4_e5b9);
        let mut r = Rng(a);
        let b = r.next_u64() ^ index.wrapping_mul(0x94d0_49bb_1331_11eb);
        Rng(b)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Uniform in `0..n` (`n` > 0).
    pub fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n.max(1) as u64) as usize
    }

    /// Uniform in `lo..=hi`.
    pub fn range(&mut self, lo: usize, hi: usize) -> usize {
        lo + self.below(hi - lo + 1)
    }

    /// True with probability `p`.
    pub fn chance(&mut self, p: f64) -> bool {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64 * 1.0 < p
    }

    pub fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }

    /// A count biased to small values, up to `max`: mostly 1–3, sometimes
    /// up to `max` (mutations that repeat, nest, lengthen).
    pub fn small_or_large(&mut self, max: usize) -> usize {
        match self.below(10) {
            0..=6 => self.range(1, 3.min(max.max(1))),
            7 | 8 => self.range(1, 50.min(max.max(1))),
            _ => self.range(1, max.max(1)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Rng;

    #[test]
    fn the_same_seed_gives_the_same_values() {
        let a: Vec<u64> = (0..5).map(|i| Rng::for_input(7, 2, i).next_u64()).collect();
        let b: Vec<u64> = (0..5).map(|i| Rng::for_input(7, 2, i).next_u64()).collect();
        assert_eq!(a, b);
        assert_ne!(a[0], a[1]);
        assert_ne!(
            Rng::for_input(7, 1, 0).next_u64(),
            Rng::for_input(7, 2, 0).next_u64()
        );
    }
}
