//! The hierarchy's devices as the time model and a serial run's driver
//! see them: their FTLs' queues (a serial run runs each FTL's work once a
//! batch), and the erases, bytes and GC copies each device has made.

use super::Hierarchy;

impl Hierarchy {
    /// Whether any tier has an FTL.
    pub fn has_ftl(&self) -> bool {
        self.tiers.iter().any(|t| t.ftl.is_some())
    }

    /// The tiers' FTLs queue their operations (`on`) or run each at once.
    pub fn defer_ftl(&mut self, on: bool) {
        for t in &mut self.tiers {
            if let Some(f) = t.ftl.as_deref_mut() {
                f.set_defer(on);
            }
        }
    }

    /// Runs the operations the tiers' FTLs have queued.
    pub fn flush_ftl(&mut self) {
        for t in &mut self.tiers {
            if let Some(f) = t.ftl.as_deref_mut() {
                f.flush();
            }
        }
    }

    /// The erases device `dev` (a tier, or the backing store at
    /// `tiers.len()`) has made so far, where it counts them (flashcache
    /// or an FTL): the time model queues them (time/engine.rs).
    #[inline]
    pub fn dev_flash_erases(&self, dev: usize) -> Option<u64> {
        match self.tiers.get(dev) {
            Some(t) => t.flash_erases(),
            None => self.backing_ftl.as_ref().map(|f| f.space.ftl().c.erases),
        }
    }

    /// Bytes written into device `dev` so far (as `dev_flash_erases`).
    #[inline]
    pub fn dev_bytes_in(&self, dev: usize) -> u64 {
        self.tiers
            .get(dev)
            .map_or(self.backing.bytes_written, |t| t.c.bytes_in)
    }

    /// Pages device `dev`'s FTL has copied so far (as `dev_flash_erases`).
    #[inline]
    pub fn dev_ftl_copies(&self, dev: usize) -> Option<u64> {
        match self.tiers.get(dev) {
            Some(t) => t.ftl_copies(),
            None => self.backing_ftl.as_ref().map(|f| f.space.copies()),
        }
    }
}
