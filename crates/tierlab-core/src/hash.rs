//! A fast hasher for u64 keys.
//!
//! Keys are often page numbers or byte offsets (multiples of 4096), so a plain
//! multiply leaves the low bits, which pick the bucket, all zero. A folded
//! 128-bit multiply (the mixing step of foldhash/ahash) spreads every input bit
//! over the whole word at the cost of one `mul`.

use std::hash::{BuildHasherDefault, Hasher};

#[derive(Default, Clone, Copy)]
pub struct KeyHasher(u64);

const MUL: u64 = 0x9E37_79B9_7F4A_7C15;
const SEED: u64 = 0x243F_6A88_85A3_08D3;

#[inline(always)]
fn fold_mul2(a: u64, b: u64) -> u64 {
    let full = (a as u128).wrapping_mul(b as u128);
    (full as u64) ^ ((full >> 64) as u64)
}

impl Hasher for KeyHasher {
    #[inline(always)]
    fn finish(&self) -> u64 {
        self.0
    }
    #[inline]
    fn write(&mut self, bytes: &[u8]) {
        for chunk in bytes.chunks(8) {
            let mut b = [0u8; 8];
            b[..chunk.len()].copy_from_slice(chunk);
            self.write_u64(u64::from_le_bytes(b));
        }
    }
    #[inline(always)]
    fn write_u64(&mut self, k: u64) {
        self.0 = fold_mul2(k ^ self.0 ^ SEED, MUL);
    }
}

pub type KeyBuild = BuildHasherDefault<KeyHasher>;
/// Map from key to a dense slot index.
pub type KeyMap<V> = hashbrown::HashMap<u64, V, KeyBuild>;
pub type KeySet = hashbrown::HashSet<u64, KeyBuild>;

/// The hash of a key: every input bit reaches the low bits that pick a bucket.
#[inline(always)]
pub fn fold_mul(k: u64) -> u64 {
    fold_mul2(k ^ SEED, MUL)
}
