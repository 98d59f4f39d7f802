//! The `ftl = { ... }` key of a tier on raw flash, and its checks against
//! the medium: where an FTL belongs (raw flash rated in program/erase
//! cycles, with erase blocks) and where it does not (a drive whose figures
//! include its own FTL; a flashcache tier, which manages raw blocks
//! itself; media that do not erase).

use super::ftl::{FtlSpec, Victim};
use crate::tech::Technology;
use serde::{Deserialize, Serialize};

/// The key as a config gives it. Sizes in bytes (`"2KiB"` or a number).
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct FtlConfig {
    /// Over-provisioning: (physical - logical) / physical, in (0, 1).
    pub op: f64,
    #[serde(default = "greedy")]
    pub victim: Victim,
    /// A new frontier is the least-erased free block.
    #[serde(default = "yes")]
    pub dynamic_wl: bool,
    /// Static levelling: clean the least-erased closed block when the
    /// erase counts spread by more than this (absent: off).
    pub static_wl: Option<u32>,
    /// A tier's evictions are trimmed (the FTL stops copying them).
    #[serde(default)]
    pub trim: bool,
    /// The flash page (default: the medium's access unit).
    pub page: Option<crate::units::Size>,
    /// The erase block (default: the medium's `erase_block_bytes`).
    pub block: Option<crate::units::Size>,
    /// Free blocks GC keeps in reserve.
    #[serde(default = "two")]
    pub reserve_blocks: u32,
}

fn greedy() -> Victim {
    Victim::Greedy
}
fn yes() -> bool {
    true
}
fn two() -> u32 {
    2
}

/// A refused `ftl` key: the key (relative to the tier, `ftl.op`) and why.
#[derive(Debug, PartialEq)]
pub struct FtlConfigError {
    pub key: &'static str,
    pub msg: String,
}

fn err<T>(key: &'static str, msg: String) -> Result<T, FtlConfigError> {
    Err(FtlConfigError { key, msg })
}

fn bytes(s: &Option<crate::units::Size>, key: &'static str) -> Result<Option<u64>, FtlConfigError> {
    match s {
        None => Ok(None),
        Some(crate::units::Size::Absolute(b)) => Ok(Some(*b)),
        Some(crate::units::Size::Percent(_)) => {
            err(key, "must be a size in bytes, not a share".into())
        }
    }
}

impl FtlConfig {
    /// The FTL for a tier of `capacity` bytes (its logical space) on
    /// `tech`, or why not; `flashcache`: the tier's policy is flashcache.
    pub fn resolve(
        &self,
        tech: &Technology,
        capacity: u64,
        flashcache: bool,
    ) -> Result<FtlSpec, FtlConfigError> {
        if tech.kind == "ssd" || tech.kind == "scm" {
            return err(
                "ftl",
                format!(
                    "{} is a drive whose latency and endurance are drive-level figures that \
                     already include its own FTL; an FTL goes on raw flash (NAND-SLC, NAND-QLC)",
                    tech.name
                ),
            );
        }
        if flashcache {
            return err(
                "ftl",
                "a flashcache tier manages its raw flash blocks itself (its own erases and \
                 wear table); remove ftl or use another policy"
                    .into(),
            );
        }
        let block = bytes(&self.block, "ftl.block")?.or(tech.erase_block_bytes);
        if tech.kind != "flash" {
            return err(
                "ftl",
                format!(
                    "{} ({}) has no erase blocks: an FTL is for flash, which erases a block \
                     before it programs its pages again",
                    tech.name, tech.kind
                ),
            );
        }
        let Some(block) = block else {
            return err(
                "ftl.block",
                format!(
                    "{} has no erase_block_bytes in the catalog: give ftl.block",
                    tech.name
                ),
            );
        };
        if !(self.op > 0.0 && self.op < 1.0) {
            return err(
                "ftl.op",
                format!(
                    "op = {} is out of range: over-provisioning is (physical - logical) / \
                     physical, more than 0 and less than 1",
                    self.op
                ),
            );
        }
        let page = bytes(&self.page, "ftl.page")?.unwrap_or(tech.access_unit as u64);
        if page == 0 {
            return err("ftl.page", "must be at least 1 byte".into());
        }
        if block < page {
            return err(
                "ftl.block",
                format!("the erase block ({block} B) is smaller than a page ({page} B)"),
            );
        }
        if block % page != 0 {
            return err(
                "ftl.block",
                format!("the erase block ({block} B) is not a whole number of pages ({page} B)"),
            );
        }
        if self.reserve_blocks == 0 {
            return err("ftl.reserve_blocks", "must be at least 1 block".into());
        }
        let spec = FtlSpec {
            logical_pages: capacity.div_ceil(page),
            pages_per_block: (block / page) as u32,
            op: self.op,
            victim: self.victim,
            dynamic_wl: self.dynamic_wl,
            static_wl: self.static_wl,
            reserve_blocks: self.reserve_blocks,
        };
        // Too small a space for the frontier and the reserve: say so here.
        super::ftl::Ftl::check(&spec).map_err(|e| FtlConfigError {
            key: e.key(),
            msg: e.to_string(),
        })?;
        Ok(spec)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tech::Catalog;

    fn cfg(op: f64) -> FtlConfig {
        toml::from_str(&format!("op = {op}")).unwrap()
    }

    #[test]
    fn refuses_what_an_ftl_cannot_sit_on() {
        let c = Catalog::builtin();
        let slc = c.get("NAND-SLC").unwrap();
        let s = cfg(0.1).resolve(slc, 64 << 20, false).unwrap();
        assert_eq!(s.pages_per_block, 64);
        assert_eq!(s.logical_pages, (64 << 20) / 2048);
        let e = cfg(0.1)
            .resolve(c.get("SSD-NVME-TLC").unwrap(), 1 << 30, false)
            .unwrap_err();
        assert!(e.key == "ftl" && e.msg.contains("own FTL"), "{e:?}");
        let e = cfg(0.1).resolve(slc, 1 << 30, true).unwrap_err();
        assert!(e.msg.contains("flashcache"), "{e:?}");
        let e = cfg(0.1)
            .resolve(c.get("DRAM-DDR3").unwrap(), 1 << 30, false)
            .unwrap_err();
        assert!(e.msg.contains("no erase blocks"), "{e:?}");
        for op in [0.0, 1.0, -0.1, 1.5] {
            assert_eq!(
                cfg(op).resolve(slc, 1 << 30, false).unwrap_err().key,
                "ftl.op"
            );
        }
        let small: FtlConfig =
            toml::from_str("op = 0.1\npage = \"4KiB\"\nblock = \"2KiB\"").unwrap();
        let e = small.resolve(slc, 1 << 30, false).unwrap_err();
        assert!(
            e.key == "ftl.block" && e.msg.contains("smaller than a page"),
            "{e:?}"
        );
        // QLC's catalog entry gives no erase block: the key must.
        let qlc = c.get("NAND-QLC").unwrap();
        assert_eq!(
            cfg(0.1).resolve(qlc, 1 << 30, false).unwrap_err().key,
            "ftl.block"
        );
        let with: FtlConfig = toml::from_str("op = 0.1\nblock = \"4MiB\"").unwrap();
        assert_eq!(
            with.resolve(qlc, 1 << 30, false).unwrap().pages_per_block,
            256
        );
        assert!(toml::from_str::<FtlConfig>("op = 0.1\nnope = 1").is_err());
        // A space too small for the frontier and the reserve.
        assert_eq!(
            cfg(0.01).resolve(slc, 4 * 131072, false).unwrap_err().key,
            "ftl.op"
        );
    }

    #[test]
    fn refuses_more_pages_than_its_tables_hold() {
        // 16 TiB of 2 KiB pages asked for 34 GB of map and aborted.
        let c = Catalog::builtin();
        let slc = c.get("NAND-SLC").unwrap();
        let e = cfg(0.1).resolve(slc, 16 << 40, false).unwrap_err();
        assert!(e.key == "capacity" && e.msg.contains("at most"), "{e:?}");
        // The largest that fits, and one page more.
        let fits = crate::device::ftl::MAX_PAGES * 2048 * 8 / 10;
        assert!(cfg(0.1).resolve(slc, fits, false).is_ok());
        let over = crate::device::ftl::MAX_PAGES * 2048;
        assert_eq!(
            cfg(0.1).resolve(slc, over, false).unwrap_err().key,
            "capacity"
        );
        // One-byte pages: 131,072 to a 128 KiB block.
        let tiny: FtlConfig = toml::from_str("op = 0.1\npage = \"1B\"").unwrap();
        let e = tiny.resolve(slc, 1 << 20, false).unwrap_err();
        assert!(
            e.key == "ftl.block" && e.msg.contains("per erase block"),
            "{e:?}"
        );
    }
}
