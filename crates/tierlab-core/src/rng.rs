//! The engine's random numbers: xoshiro256++ seeded by splitmix64, and
//! alias tables for fixed discrete distributions.
//!
//! The generator is implemented here rather than taken from a crate whose
//! stream may change between versions: the same seed must give the same
//! trace (and the same random policy, admission and time-model draws) on
//! every machine, forever. It lives in the base layer because generators,
//! policies, admission rules and the time model all draw from it.

/// xoshiro256++ (Blackman & Vigna, 2019).
#[derive(Clone, Debug)]
pub struct Rng {
    s: [u64; 4],
}

impl Rng {
    pub fn new(seed: u64) -> Self {
        // splitmix64 expands the seed so that nearby seeds give unrelated streams.
        let mut x = seed;
        let mut s = [0u64; 4];
        for v in &mut s {
            x = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
            let mut z = x;
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            *v = z ^ (z >> 31);
        }
        Rng { s }
    }

    #[inline(always)]
    pub fn next_u64(&mut self) -> u64 {
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

    /// Uniform in [0, 1) with 53 bits.
    #[inline(always)]
    pub fn next_f64(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }

    /// Uniform in [0, n) without modulo bias worth measuring (Lemire's multiply-shift).
    #[inline(always)]
    pub fn below(&mut self, n: u64) -> u64 {
        ((self.next_u64() as u128 * n as u128) >> 64) as u64
    }
}

/// Walker/Vose alias table: O(1) draws from a fixed discrete distribution.
/// A column's probability and alias sit side by side: a draw from a
/// large table reads one random line, not two.
pub struct Alias {
    cols: Vec<Column>,
}

#[derive(Clone, Copy)]
struct Column {
    prob: f64,
    alias: u32,
}

impl Alias {
    pub fn new(weights: &[f64]) -> Self {
        let n = weights.len();
        let total: f64 = weights.iter().sum();
        let mut scaled: Vec<f64> = weights.iter().map(|w| w * n as f64 / total).collect();
        let mut cols: Vec<Column> = (0..n as u32)
            .map(|i| Column {
                prob: 1.0,
                alias: i,
            })
            .collect();
        let (mut small, mut large): (Vec<u32>, Vec<u32>) = (Vec::new(), Vec::new());
        for (i, &p) in scaled.iter().enumerate() {
            if p < 1.0 {
                small.push(i as u32)
            } else {
                large.push(i as u32)
            }
        }
        while let (Some(s), Some(&l)) = (small.pop(), large.last()) {
            cols[s as usize] = Column {
                prob: scaled[s as usize],
                alias: l,
            };
            scaled[l as usize] -= 1.0 - scaled[s as usize];
            if scaled[l as usize] < 1.0 {
                large.pop();
                small.push(l);
            }
        }
        // What remains is 1 up to rounding error.
        Alias { cols }
    }

    #[inline(always)]
    pub fn sample(&self, rng: &mut Rng) -> usize {
        let (i, u) = self.draw(rng);
        self.resolve(i, u)
    }

    /// A draw's random numbers: its column and its coin, as `sample`
    /// takes them from `rng`. `resolve` gives the value; apart, a batch of
    /// draws can ask for its columns (`prefetch`) before reading any.
    #[inline(always)]
    pub fn draw(&self, rng: &mut Rng) -> (usize, f64) {
        let i = rng.below(self.cols.len() as u64) as usize;
        (i, rng.next_f64())
    }

    /// The value of draw (`i`, `u`).
    #[inline(always)]
    pub fn resolve(&self, i: usize, u: f64) -> usize {
        let c = self.cols[i];
        if u < c.prob {
            i
        } else {
            c.alias as usize
        }
    }

    /// Starts loading column `i`.
    #[inline(always)]
    pub fn prefetch(&self, i: usize) {
        crate::index::prefetch(self.cols.as_ptr().wrapping_add(i));
    }
}
