//! Page-table walks after a TLB miss: `levels` memory references, each
//! charged as a read of one 8-byte table entry from the memory tier. With a
//! page-walk cache, a walk whose leaf table's parent entry is cached reads
//! the leaf entry alone (the cache holds the upper levels' entries as
//! Intel's paging-structure caches do; modelled as one LRU cache of the
//! leaf table's address).

use super::config::{VmConfig, BITS_PER_LEVEL};
use super::tlb::Tlb;

/// Bytes of one page-table entry (x86-64).
pub const PTE_BYTES: u32 = 8;

pub struct Walker {
    pub levels: u32,
    cache: Option<Tlb>,
    pub walks: u64,
    /// Memory references made by walks.
    pub references: u64,
}

impl Walker {
    pub fn new(c: &VmConfig) -> Self {
        Walker {
            levels: c.walk_levels(),
            cache: c.walk.cache.as_ref().map(|w| {
                Tlb::new(&super::config::TlbConfig {
                    entries: w.entries,
                    ways: None,
                    latency_ns: w.latency_ns,
                })
            }),
            walks: 0,
            references: 0,
        }
    }

    /// Walks for `tag` (a process's page number); returns the memory
    /// references it makes and the page-walk cache's lookup time.
    #[inline]
    pub fn walk(&mut self, tag: u64) -> (u32, f64) {
        self.walks += 1;
        let (refs, t) = match &mut self.cache {
            Some(c) if self.levels > 1 => {
                // The leaf table covers 512 pages: its address is the tag
                // without its low index bits.
                let hit = c.access(tag >> BITS_PER_LEVEL);
                (if hit { 1 } else { self.levels }, c.latency_ns)
            }
            _ => (self.levels, 0.0),
        };
        self.references += refs as u64;
        (refs, t)
    }

    /// A walk for a huge page: one level shorter (its leaf is the level
    /// above the base pages' leaf), and not through the page-walk cache.
    #[inline]
    pub fn walk_huge(&mut self) -> u32 {
        self.walks += 1;
        let refs = self.levels.saturating_sub(1).max(1);
        self.references += refs as u64;
        refs
    }

    pub fn cache_hits(&self) -> u64 {
        self.cache.as_ref().map_or(0, |c| c.hits)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Config;

    fn vm(extra: &str) -> VmConfig {
        let cfg = Config::from_toml_str(&format!(
            "[[tier]]\ntech = \"DRAM-DDR3\"\ncapacity = \"2GiB\"\n[vm]\n{extra}\n"
        ))
        .unwrap();
        cfg.vm.unwrap()
    }

    #[test]
    fn levels_follow_the_page_size() {
        for (page, levels) in [
            ("512", 5),
            ("\"4KiB\"", 4),
            ("\"2MiB\"", 3),
            ("\"1GiB\"", 2),
        ] {
            assert_eq!(vm(&format!("page_size = {page}")).walk_levels(), levels);
        }
        assert_eq!(vm("walk = { levels = 1 }").walk_levels(), 1);
    }

    #[test]
    fn the_walk_cache_spares_the_upper_levels() {
        let mut w = Walker::new(&vm("walk = { cache = { entries = 4 } }"));
        assert_eq!(w.walk(5).0, 4);
        // Page 6 shares page 5's leaf table.
        assert_eq!(w.walk(6).0, 1);
        assert_eq!(w.walk(6 + 512).0, 4);
        assert_eq!((w.walks, w.references, w.cache_hits()), (3, 9, 1));
    }
}
