//! Simulated sizes: any policy or whole hierarchy, one simulator per size
//! over one read of the trace; and lists of sizes parsed and resolved.

use crate::config::Config;
use crate::error::Error;
use crate::mrc::Mrc;
use crate::source::setup;
use crate::source::setup::Progress;
use crate::source::Source;
use crate::spec::ConfigError;
use crate::units::Size;

/// Capacities `caps` (adding up to `sum`) scaled to add up to `size`:
/// rounded down, then the units left over go to the largest remainders
/// (Hamilton's method), so the total is exactly `size`; at least one each.
pub(crate) fn scale(caps: &[u64], sum: u64, size: u64) -> Vec<u64> {
    let exact: Vec<(u64, u128)> = caps
        .iter()
        .map(|&c| {
            let p = c as u128 * size as u128;
            ((p / sum as u128) as u64, p % sum as u128)
        })
        .collect();
    let mut out: Vec<u64> = exact.iter().map(|e| e.0).collect();
    let left = size.saturating_sub(out.iter().sum());
    let mut order: Vec<usize> = (0..caps.len()).collect();
    order.sort_by_key(|&i| std::cmp::Reverse(exact[i].1));
    for &i in order.iter().take(left as usize) {
        out[i] += 1;
    }
    out.iter().map(|&c| c.max(1)).collect()
}

/// Requests read at once and handed to every simulator.
const SIM_BATCH: usize = 1 << 16;

/// The miss ratio of a whole hierarchy at each of `sizes`, one simulator
/// per size, all fed from one read of the trace by parallel threads.
///
/// A size is the total capacity of the hierarchy: each tier's capacity in
/// the config is scaled by size / (sum of the config's capacities), so a
/// single tier gets exactly `size` and several keep their proportions,
/// rounded to add up to `size` (at least one unit each). Sizes given as a share resolve against the
/// footprint (bytes, or objects with `unit_size`), like capacities.
pub fn simulate_sizes(cfg: &Config, sizes: &[Size], progress: impl Progress) -> Result<Mrc, Error> {
    Ok(simulate_resolved(cfg, sizes, progress)?.0)
}

/// [`simulate_sizes`], and `sizes` resolved (in the order given) against
/// the footprint the run saw, so points can be matched to what was given.
pub(crate) fn simulate_resolved(
    cfg: &Config,
    sizes: &[Size],
    mut progress: impl Progress,
) -> Result<(Mrc, Vec<u64>), Error> {
    // The same setup as a run of the config: footprint, seed, limit and
    // next-access times (Belady) alike.
    let run = crate::run::assembly::run_setup(cfg, sizes, &mut progress)?;
    let footprint = run.footprint;
    let given = setup::resolve(sizes, footprint, "sizes")?;
    let mut abs = given.clone();
    abs.sort_unstable();
    abs.dedup();
    if abs.is_empty() {
        return Err(ConfigError::at("sizes", "give at least one size").into());
    }
    let caps: Vec<u64> = cfg
        .tiers
        .iter()
        .map(|t| t.capacity.resolve(footprint).max(1))
        .collect();
    let sum: u64 = caps.iter().sum();
    let cat = cfg.catalog()?;
    let mut sims = Vec::with_capacity(abs.len());
    for &size in &abs {
        let mut c = cfg.clone();
        for (t, cap) in c.tiers.iter_mut().zip(scale(&caps, sum, size)) {
            t.capacity = Size::Absolute(cap);
        }
        sims.push(super::assembly::hierarchy_of(&c, &cat, footprint, run.unit_size, run.seed)?.0);
    }
    let threads = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .min(sims.len())
        .max(1);
    let per = sims.len().div_ceil(threads);
    let mut batches = run.open(SIM_BATCH, &mut progress)?;
    let n = batches.drive(&mut progress, |batch| {
        std::thread::scope(|sc| {
            for group in sims.chunks_mut(per) {
                sc.spawn(move || {
                    for h in group {
                        for r in batch {
                            h.access_inlined(r);
                        }
                    }
                });
            }
        });
        Ok::<(), Error>(())
    })?;
    let points = abs
        .iter()
        .zip(&sims)
        .map(|(&s, h)| {
            let t = &h.totals;
            (s, crate::stats::ratio(t.misses, t.reads + t.writes))
        })
        .collect();
    Ok((Mrc::new(points, n, n, 0), given))
}

/// Parses sizes as capacities are written ("10%", "1GiB", 4096); the error
/// names the position in the list.
pub fn parse_sizes<S: AsRef<str>>(sizes: &[S]) -> Result<Vec<Size>, ConfigError> {
    if sizes.is_empty() {
        return Err(ConfigError::at("sizes", "give at least one size"));
    }
    sizes
        .iter()
        .enumerate()
        .map(|(i, s)| {
            match crate::units::parse_size(s.as_ref()) {
                Ok(Size::Absolute(0)) => Err("must be greater than zero".to_string()),
                r => r,
            }
            .map_err(|m| ConfigError::at(format!("sizes[{i}]"), m))
        })
        .collect()
}

/// Sizes made absolute: a share resolves against the source's footprint
/// (bytes, or distinct keys with `unit_size`), read in a pre-pass only when
/// a share is given.
pub fn resolve_sizes(source: &Source, sizes: &[Size], unit_size: bool) -> Result<Vec<u64>, Error> {
    let (footprint, _) = setup::footprint(source, unit_size, sizes, |_| true)?;
    Ok(setup::resolve(sizes, footprint, "sizes")?)
}
