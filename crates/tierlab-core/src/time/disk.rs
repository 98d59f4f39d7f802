//! A disk that positions like a disk: the backing store's service time from
//! where its head is, instead of one figure per access (docs/time.md,
//! "A positioning disk").
//!
//! An operation that starts at the block right after the head (the end of
//! the disk's previous operation) pays its transfer only; any other pays a
//! seek over the distance in cylinders, half a revolution on average (the
//! expected rotational latency of a target at a random angle: no rotational
//! position is tracked), then its transfer. Seek time by distance follows
//! Ruemmler and Wilkes ("An introduction to disk drive modeling", IEEE
//! Computer 27(3), 1994): a + b*sqrt(d) for short seeks, c + e*d for long
//! ones. The curve is fitted to the datasheet's three figures, which is a
//! fit to the drive's specification, not to any result: it passes through
//! the single-track time at d = 1 and the full-stroke time at d = max, joins
//! its two pieces with equal value and slope, and its weighted mean over all
//! seek pairs (the datasheet's definition of the average: each distance d
//! weighted max + 1 - d, e.g. IBM's and Hitachi's SCSI specifications) is
//! the datasheet's average. Reads and writes may have curves of their own
//! (writes settle longer).
//!
//! Blocks: a key is a page of a file (workloads/mod.rs `page_key`: the file
//! id in the high 32 bits, the page below). The disk lays each file's pages
//! out contiguously, files one after another in id order (creation order in
//! the generators), from block 0: a fresh file system that placed every file
//! whole, at its final size, in the order it was created. A pre-pass over
//! the workload (`Layout::scan`) finds each file's page count. Keys of other
//! traces map the same way (a plain key below 2^32 is page `key` of file 0);
//! a block past the disk's end wraps around.
//!
//! Write-back batches (the flush daemon's) are issued sorted by block and
//! adjacent blocks merged into one operation up to `max_merge` bytes, as
//! Linux 2.4's elevator does (drivers/block/elevator.c, `elevator_linus`
//! inserts a request in ascending sector order and `elevator_linus_merge`
//! merges a buffer into an adjacent request while it stays within
//! `max_sectors`; include/linux/blkdev.h: `MAX_SECTORS 255`).
//!
//! The head moves in the order the time model issues operations to the disk
//! (a job's service time is set when the request runs through the
//! hierarchy), which is the disk's first-come-first-served order when
//! requests reach it in the order they were issued; several clients whose
//! requests overtake each other on the CPU can reach the disk in another
//! order than the head assumed.

use crate::spec::ConfigError;
use crate::units::{Nanos, Size};
use hashbrown::HashMap;
use serde::{Deserialize, Serialize};

/// Linux 2.4's largest request: `MAX_SECTORS` (255) sectors of 512 bytes
/// (include/linux/blkdev.h).
pub const LINUX_24_MAX_SECTORS_BYTES: u64 = 255 * 512;

/// `[backing.disk]`: the drive's datasheet figures.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct DiskConfig {
    /// Spindle speed, revolutions per minute.
    pub rpm: f64,
    /// Cylinders (seek distances are counted in them).
    pub cylinders: u64,
    /// Formatted capacity: blocks are spread evenly over the cylinders.
    pub capacity: Size,
    /// Media transfer rate ("40MB/s").
    pub transfer: super::config::Rate,
    /// Seek times (reads; writes too unless `write_seek` is given).
    pub seek: SeekConfig,
    pub write_seek: Option<SeekConfig>,
    /// Bytes each key occupies on the disk (default 4 KiB, a page).
    pub block: Option<Size>,
    /// The largest merged write-back (default: Linux 2.4's 255 sectors).
    pub max_merge: Option<Size>,
}

/// Single-track, average and full-stroke seek times.
#[derive(Clone, Copy, Debug, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct SeekConfig {
    pub track: Nanos,
    pub average: Nanos,
    pub full: Nanos,
}

/// What is wrong with a `[backing.disk]` table: the key below it, and why.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum DiskError {
    #[error("backing.disk.{key}: {msg}")]
    Bad { key: String, msg: String },
}

impl From<DiskError> for ConfigError {
    fn from(e: DiskError) -> Self {
        let DiskError::Bad { key, msg } = e;
        ConfigError::at(format!("backing.disk.{key}"), msg)
    }
}

fn bad(key: &str, msg: impl Into<String>) -> DiskError {
    DiskError::Bad {
        key: key.into(),
        msg: msg.into(),
    }
}

fn absolute(key: &str, s: Size) -> Result<u64, DiskError> {
    match s {
        Size::Absolute(n) if n > 0 => Ok(n),
        Size::Absolute(_) => Err(bad(key, "must be greater than zero")),
        _ => Err(bad(key, "a size in bytes (\"18.4GB\"), not a share")),
    }
}

/// Seek time (ns) by distance in cylinders: `a + b*sqrt(d)` up to
/// `boundary`, `c + e*d` past it, 0 for no move.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SeekCurve {
    pub a: f64,
    pub b: f64,
    pub c: f64,
    pub e: f64,
    pub boundary: f64,
}

impl SeekCurve {
    /// The curve with its pieces joined at `boundary` (value and slope),
    /// through `track` at d = 1 and `full` at d = `max`.
    fn joined(track: f64, full: f64, max: f64, boundary: f64) -> SeekCurve {
        let r = boundary.sqrt();
        // a + b = track; e = b / (2r); c = a + b*r/2; c + e*max = full.
        let b = (full - track) / (r / 2.0 - 1.0 + max / (2.0 * r));
        let a = track - b;
        SeekCurve {
            a,
            b,
            c: a + b * r / 2.0,
            e: b / (2.0 * r),
            boundary,
        }
    }

    #[inline]
    pub fn at(&self, d: u64) -> f64 {
        if d == 0 {
            return 0.0;
        }
        let x = d as f64;
        if x <= self.boundary {
            self.a + self.b * x.sqrt()
        } else {
            self.c + self.e * x
        }
    }

    /// The datasheet's average: each distance d of 1..=max weighted by the
    /// max + 1 - d start cylinders it can be taken from (both directions
    /// weigh the same, so one suffices).
    pub fn weighted_mean(&self, max: u64) -> f64 {
        let (mut sum, mut weight) = (0.0, 0.0);
        for d in 1..=max {
            let w = (max + 1 - d) as f64;
            sum += w * self.at(d);
            weight += w;
        }
        sum / weight
    }

    /// Fits the curve to a datasheet's single-track, average and
    /// full-stroke seek times over `cylinders`; `at` names the table in
    /// messages ("seek", "write_seek").
    pub fn fit(s: &SeekConfig, cylinders: u64, at: &str) -> Result<SeekCurve, DiskError> {
        let (track, avg, full) = (s.track.0, s.average.0, s.full.0);
        if !(track > 0.0 && track.is_finite()) {
            return Err(bad(
                &format!("{at}.track"),
                format!("{track} ns is out of range; greater than zero"),
            ));
        }
        if !(track < avg && avg < full && full.is_finite()) {
            return Err(bad(
                at,
                format!(
                    "track ({track} ns) < average ({avg} ns) < full ({full} ns) is required: single-track, average and full-stroke seek times, in that order"
                ),
            ));
        }
        let max = cylinders - 1;
        let m = max as f64;
        let mean = |b: f64| SeekCurve::joined(track, full, m, b).weighted_mean(max);
        // The mean grows as the square-root piece reaches further: from a
        // straight line (boundary 1) to a square root over the whole stroke.
        let (mut lo, mut hi) = (1.0, m);
        let (low, high) = (mean(lo), mean(hi));
        if !(low..=high).contains(&avg) {
            return Err(bad(
                &format!("{at}.average"),
                format!(
                    "{avg} ns cannot be the mean of a seek curve through track = {track} ns and full = {full} ns over {cylinders} cylinders (square root then linear, Ruemmler & Wilkes): between {low:.0} and {high:.0} ns"
                ),
            ));
        }
        for _ in 0..60 {
            let mid = (lo * hi).sqrt();
            if mean(mid) < avg {
                lo = mid;
            } else {
                hi = mid;
            }
        }
        Ok(SeekCurve::joined(track, full, m, (lo * hi).sqrt()))
    }
}

/// Most file ids a [`ById`] keeps in a plain array (8 MiB of `u64`): the
/// generators number their files 0, 1, 2, ... (PostMark's hundred-odd
/// thousand files fit), so a lookup is one load instead of a hash probe,
/// which missed the CPU caches on every disk operation of a large file set.
/// Ids past this (a trace whose keys carry arbitrary high bits) go to a hash
/// map; the values are the same either way.
const DENSE_FILES: u64 = 1 << 20;

/// A value per file id: ids below [`DENSE_FILES`] in a plain array, the
/// rest (and a value equal to the array's `empty` marker) in a hash map.
#[derive(Clone, Debug)]
struct ById {
    /// The array's "no value" marker.
    empty: u64,
    dense: Vec<u64>,
    sparse: HashMap<u64, u64>,
}

impl ById {
    fn new(empty: u64) -> Self {
        ById {
            empty,
            dense: Vec::new(),
            sparse: HashMap::new(),
        }
    }

    #[inline]
    fn get(&self, f: u64) -> Option<u64> {
        match self.dense.get(f as usize) {
            Some(&v) if v != self.empty => Some(v),
            _ => self.sparse.get(&f).copied(),
        }
    }

    fn set(&mut self, f: u64, v: u64) {
        if f < DENSE_FILES && v != self.empty {
            let i = f as usize;
            if i >= self.dense.len() {
                self.dense.resize((i + 1).next_power_of_two(), self.empty);
            }
            self.dense[i] = v;
        } else {
            self.sparse.insert(f, v);
        }
    }

    /// (id, value) of every id set, in id order.
    fn into_sorted(self) -> Vec<(u64, u64)> {
        let empty = self.empty;
        let mut all: Vec<(u64, u64)> = (0u64..)
            .zip(self.dense)
            .filter(|&(_, v)| v != empty)
            .collect();
        all.extend(self.sparse);
        all.sort_unstable();
        all
    }
}

/// Each file's pages (the highest page named, plus one), as a pre-pass
/// counts them.
#[derive(Clone, Debug)]
pub struct Pages(ById);

impl Default for Pages {
    fn default() -> Self {
        // A file named has at least one page: 0 marks no file.
        Pages(ById::new(0))
    }
}

impl Pages {
    #[inline]
    pub fn add(&mut self, key: u64) {
        let (f, n) = (key >> 32, (key & 0xffff_ffff) + 1);
        let p = self.0.get(f).unwrap_or(0);
        if n > p {
            self.0.set(f, n);
        }
    }
}

/// Where each file's pages start on the disk (see the module's notes).
#[derive(Clone, Debug)]
pub struct Layout(ById);

impl Default for Layout {
    fn default() -> Self {
        Layout(ById::new(u64::MAX))
    }
}

impl Layout {
    /// Each file's first block, from the pages the workload ever names.
    pub fn from_keys(keys: impl IntoIterator<Item = u64>) -> Layout {
        let mut pages = Pages::default();
        for k in keys {
            pages.add(k);
        }
        Layout::from_pages(pages)
    }

    /// Each file's first block, from its pages: files one after another in
    /// id order from block 0.
    pub fn from_pages(pages: Pages) -> Layout {
        let mut l = Layout::default();
        let mut next = 0u64;
        for (f, n) in pages.0.into_sorted() {
            l.0.set(f, next);
            next = next.saturating_add(n);
        }
        l
    }

    /// Key `key`'s block (before wrapping at the disk's end).
    #[inline]
    pub fn block(&self, key: u64) -> u64 {
        match self.0.get(key >> 32) {
            Some(b) => b.wrapping_add(key & 0xffff_ffff),
            // A key the pre-pass did not see: its own number.
            None => key,
        }
    }
}

/// A write-back waiting for the elevator: its first block, blocks, bytes
/// and the memory-copy time it carries (ns).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Pending {
    pub block: u64,
    pub blocks: u64,
    pub bytes: u64,
    pub copy: u64,
}

/// The disk's figures and its head.
#[derive(Clone, Debug)]
pub struct Disk {
    read_seek: SeekCurve,
    write_seek: SeekCurve,
    half_turn_ns: f64,
    ns_per_byte: f64,
    block_bytes: u64,
    blocks: u64,
    blocks_per_cylinder: f64,
    max_merge: u64,
    /// The block right after the last operation's.
    head: u64,
    pub layout: Layout,
    /// Operations that positioned, and that went on from the head.
    pub positioned: u64,
    pub sequential: u64,
}

impl Disk {
    pub fn new(c: &DiskConfig) -> Result<Disk, DiskError> {
        if !(c.rpm.is_finite() && c.rpm > 0.0) {
            return Err(bad(
                "rpm",
                format!(
                    "{} is out of range; revolutions per minute, greater than zero",
                    c.rpm
                ),
            ));
        }
        if c.cylinders < 4 {
            return Err(bad("cylinders", "must be at least 4"));
        }
        let capacity = absolute("capacity", c.capacity)?;
        let block_bytes = match c.block {
            Some(s) => absolute("block", s)?,
            None => 4096,
        };
        let max_merge = match c.max_merge {
            Some(s) => absolute("max_merge", s)?,
            None => LINUX_24_MAX_SECTORS_BYTES,
        };
        if max_merge > 1 << 30 {
            return Err(bad("max_merge", "at most 1 GiB"));
        }
        let blocks = capacity / block_bytes;
        if blocks < c.cylinders {
            return Err(bad(
                "capacity",
                format!(
                    "{capacity} bytes is less than one block of {block_bytes} bytes per cylinder ({} cylinders)",
                    c.cylinders
                ),
            ));
        }
        let read_seek = SeekCurve::fit(&c.seek, c.cylinders, "seek")?;
        let write_seek = match &c.write_seek {
            Some(w) => SeekCurve::fit(w, c.cylinders, "write_seek")?,
            None => read_seek,
        };
        Ok(Disk {
            read_seek,
            write_seek,
            half_turn_ns: 30e9 / c.rpm,
            ns_per_byte: 1e9 / c.transfer.0,
            block_bytes,
            blocks,
            blocks_per_cylinder: blocks as f64 / c.cylinders as f64,
            max_merge,
            head: 0,
            layout: Layout::default(),
            positioned: 0,
            sequential: 0,
        })
    }

    pub fn block_bytes(&self) -> u64 {
        self.block_bytes
    }

    /// Where `key` lies on the disk.
    #[inline]
    pub fn block_of(&self, key: u64) -> u64 {
        self.layout.block(key) % self.blocks
    }

    /// The blocks `bytes` occupy (at least one).
    #[inline]
    pub fn blocks_of(&self, bytes: u64) -> u64 {
        bytes.div_ceil(self.block_bytes).max(1)
    }

    #[inline]
    fn cylinder(&self, block: u64) -> u64 {
        (block as f64 / self.blocks_per_cylinder) as u64
    }

    /// The seek curve of reads (`write` false) or writes.
    pub fn seek(&self, write: bool) -> &SeekCurve {
        if write {
            &self.write_seek
        } else {
            &self.read_seek
        }
    }

    /// The service time (ns, not rounded) of `bytes` at `block` (spanning
    /// `blocks`), and the head moved past it.
    pub fn access(&mut self, block: u64, blocks: u64, bytes: u64, write: bool) -> f64 {
        let transfer = bytes as f64 * self.ns_per_byte;
        let t = if block == self.head {
            self.sequential += 1;
            transfer
        } else {
            self.positioned += 1;
            let d = self.cylinder(block).abs_diff(self.cylinder(self.head));
            self.seek(write).at(d) + self.half_turn_ns + transfer
        };
        self.head = (block + blocks) % self.blocks;
        t
    }

    /// The service time (whole ns) of one operation on `key`.
    #[inline]
    pub fn access_key(&mut self, key: u64, bytes: u32, write: bool) -> u64 {
        let block = self.block_of(key);
        let t = self.access(block, self.blocks_of(bytes as u64), bytes as u64, write);
        crate::cost::whole_u64(t)
    }

    /// A batch of write-backs as the elevator issues it: sorted by block,
    /// adjacent ones merged up to `max_merge` bytes; `each` gets every
    /// merged write's service time (whole ns), bytes and copy time, in
    /// order. `batch` is left empty.
    pub fn elevator(&mut self, batch: &mut Vec<Pending>, mut each: impl FnMut(u64, u64, u64)) {
        batch.sort_unstable_by_key(|p| p.block);
        let mut i = 0;
        while i < batch.len() {
            let mut m = batch[i];
            i += 1;
            while let Some(n) = batch.get(i) {
                if n.block != m.block + m.blocks || m.bytes + n.bytes > self.max_merge {
                    break;
                }
                m.blocks += n.blocks;
                m.bytes += n.bytes;
                m.copy += n.copy;
                i += 1;
            }
            let t = self.access(m.block, m.blocks, m.bytes, true);
            each(crate::cost::whole_u64(t), m.bytes, m.copy);
        }
        batch.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::config::Rate;

    fn cfg() -> DiskConfig {
        DiskConfig {
            rpm: 10_000.0,
            cylinders: 20_000,
            capacity: Size::Absolute(18_000_000_000),
            transfer: Rate(40e6),
            seek: SeekConfig {
                track: Nanos(0.6e6),
                average: Nanos(5.0e6),
                full: Nanos(11.0e6),
            },
            write_seek: None,
            block: None,
            max_merge: None,
        }
    }

    #[test]
    fn the_seek_curve_goes_through_the_datasheets_three_points() {
        let c = cfg();
        let s = SeekCurve::fit(&c.seek, c.cylinders, "seek").unwrap();
        let max = c.cylinders - 1;
        assert!((s.at(1) - 0.6e6).abs() < 1.0, "{}", s.at(1));
        assert!((s.at(max) - 11.0e6).abs() < 1.0, "{}", s.at(max));
        assert!((s.weighted_mean(max) - 5.0e6).abs() < 10.0);
        // Square root below the boundary, straight above, joined smoothly.
        assert!(s.boundary > 1.0 && s.boundary < max as f64);
        let x = s.boundary;
        let short = s.a + s.b * x.sqrt();
        let long = s.c + s.e * x;
        assert!((short - long).abs() < 1e-3);
        assert!(((s.b / (2.0 * x.sqrt())) - s.e).abs() < 1e-9);
        // Monotonic, and concave at short distances.
        let mut last = 0.0;
        for d in [1, 2, 10, 100, 1_000, 5_000, 10_000, max] {
            assert!(s.at(d) > last);
            last = s.at(d);
        }
        assert!(s.at(4) - s.at(1) > s.at(7) - s.at(4));
    }

    #[test]
    fn a_sequential_run_costs_one_positioning_and_its_transfers() {
        let mut d = Disk::new(&cfg()).unwrap();
        d.layout = Layout::from_keys((0..64).map(|p| (7u64 << 32) | p));
        // Put the head elsewhere first.
        d.access(1_000_000, 1, 4096, false);
        let n = 50u64;
        let total: u64 = (0..n)
            .map(|p| d.access_key((7 << 32) | p, 4096, false))
            .sum();
        let transfer = 4096.0 / 40e6 * 1e9;
        let first = d.seek(false).at(d.cylinder(1_000_001)) + 3e6 + transfer;
        let want = first + (n - 1) as f64 * transfer;
        assert!((total as f64 - want).abs() <= n as f64, "{total} vs {want}");
        assert_eq!(d.sequential, n - 1);
        assert_eq!(d.positioned, 2);
    }

    #[test]
    fn a_sorted_flush_costs_less_than_the_unsorted_one() {
        let c = cfg();
        // Every other page of a few hundred files spread over the disk, in a
        // scrambled order.
        let mut blocks: Vec<u64> = (0..400u64).map(|i| (i * 7_919 % 400) * 10_000).collect();
        blocks.extend((0..100u64).map(|i| 4_000_000 + 2 * i));
        let batch: Vec<Pending> = blocks
            .iter()
            .map(|&b| Pending {
                block: b,
                blocks: 1,
                bytes: 4096,
                copy: 0,
            })
            .collect();
        let mut unsorted = Disk::new(&c).unwrap();
        let unsorted_ns: f64 = batch
            .iter()
            .map(|p| unsorted.access(p.block, 1, 4096, true))
            .sum();
        let mut sorted = Disk::new(&c).unwrap();
        let mut b = batch.clone();
        let mut sorted_ns = 0u64;
        let mut ops = 0;
        sorted.elevator(&mut b, |t, _, _| {
            sorted_ns += t;
            ops += 1;
        });
        assert!(b.is_empty());
        // Short seeks instead of random ones (half a turn each stays), and the
        // 100 pages two blocks apart cost a short seek each, not a random one.
        assert!(
            (sorted_ns as f64) < 0.7 * unsorted_ns,
            "{sorted_ns} vs {unsorted_ns}"
        );
        // Adjacent blocks are merged, up to 255 sectors.
        let mut adjacent: Vec<Pending> = (0..100u64)
            .map(|i| Pending {
                block: 500 + i,
                blocks: 1,
                bytes: 4096,
                copy: 3,
            })
            .collect();
        let mut merged = Vec::new();
        Disk::new(&c)
            .unwrap()
            .elevator(&mut adjacent, |t, bytes, copy| {
                merged.push((t, bytes, copy))
            });
        // 31 pages fit in 130,560 bytes: 100 pages are 4 writes.
        assert_eq!(merged.len(), 4);
        assert_eq!(merged[0].1, 31 * 4096);
        assert_eq!(merged.iter().map(|m| m.2).sum::<u64>(), 300);
        let _ = ops;
    }

    #[test]
    fn bad_figures_are_refused_with_their_key() {
        let mut c = cfg();
        c.rpm = 0.0;
        let e = Disk::new(&c).unwrap_err().to_string();
        assert!(e.starts_with("backing.disk.rpm:"), "{e}");
        let mut c = cfg();
        c.seek.average = Nanos(20e6);
        let e = Disk::new(&c).unwrap_err().to_string();
        assert!(e.starts_with("backing.disk.seek:"), "{e}");
        let mut c = cfg();
        c.seek.average = Nanos(1e6);
        let e = Disk::new(&c).unwrap_err().to_string();
        assert!(e.starts_with("backing.disk.seek.average:"), "{e}");
    }

    #[test]
    fn files_are_laid_out_whole_in_id_order() {
        let keys = [(2u64 << 32) | 1, 1 << 32, (1 << 32) | 2, 2 << 32, 5];
        let l = Layout::from_keys(keys);
        // File 0 (the plain key 5): pages 0..=5; file 1: 3 pages; file 2: 2.
        assert_eq!(l.block(5), 5);
        assert_eq!(l.block(1 << 32), 6);
        assert_eq!(l.block((1 << 32) | 2), 8);
        assert_eq!(l.block(2 << 32), 9);
        assert_eq!(l.block((2 << 32) | 1), 10);
        // A file the pre-pass never saw keeps its own number.
        assert_eq!(l.block((3 << 32) | 4), (3 << 32) | 4);
    }

    #[test]
    fn ids_past_the_dense_array_follow_in_id_order() {
        // File 1 (2 pages), then one far past the dense ids (3 pages), then
        // one further still: blocks in id order whatever table holds them.
        let far = DENSE_FILES + 5;
        let keys = [(far + 9) << 32, (1 << 32) | 1, (far << 32) | 2, 1 << 32];
        let l = Layout::from_keys(keys);
        assert_eq!(l.block(1 << 32), 0);
        assert_eq!(l.block((1 << 32) | 1), 1);
        assert_eq!(l.block(far << 32), 2);
        assert_eq!(l.block((far << 32) | 2), 4);
        assert_eq!(l.block((far + 9) << 32), 5);
        // Unnamed ids below and past the dense array: their own numbers.
        assert_eq!(l.block(7), 7);
        assert_eq!(l.block((far + 1) << 32), (far + 1) << 32);
    }
}
