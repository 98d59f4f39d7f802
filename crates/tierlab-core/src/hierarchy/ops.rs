//! The device operations a request causes, as the cache layer charges them:
//! what the time layer (time/) queues on devices. Off unless a time model
//! is configured: then each charge of the hierarchy is also written here,
//! in the order it is added to the request's latency.

/// Reads, writes (programs) and erases, as devices see them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum OpKind {
    Read,
    Write,
    Erase,
}

/// One access of one device: tier `dev` (0 = fastest), or the backing
/// store when `dev` equals the number of tiers.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct DevOp {
    pub dev: u8,
    pub kind: OpKind,
    /// Background work (a periodic flush): on no request's path.
    pub background: bool,
    pub bytes: u32,
    /// The key the operation moves, on the backing store's operations (a
    /// positioning disk places them by it, time/disk.rs); 0 on a tier's,
    /// where nothing in the time layer asks for it.
    pub key: u64,
    /// The charge (whole ns, cost.rs), the medium's time plus the tier's
    /// software overhead.
    pub ns: f64,
}

#[derive(Clone, Debug, Default)]
pub struct OpLog {
    on: bool,
    background: bool,
    ops: Vec<DevOp>,
}

impl OpLog {
    pub fn enable(&mut self) {
        self.on = true;
        self.ops.reserve(64);
    }

    pub fn is_on(&self) -> bool {
        self.on
    }

    /// Notes a charge and passes it through. One predictable branch when
    /// off (serial runs).
    #[inline(always)]
    pub fn note(&mut self, dev: usize, kind: OpKind, bytes: u32, ns: f64) -> f64 {
        if self.on {
            self.push(dev, kind, 0, bytes, ns);
        }
        ns
    }

    /// `note` for an operation of the backing store, with its key.
    #[inline(always)]
    pub fn note_key(&mut self, dev: usize, kind: OpKind, key: u64, bytes: u32, ns: f64) -> f64 {
        if self.on {
            self.push(dev, kind, key, bytes, ns);
        }
        ns
    }

    #[inline]
    fn push(&mut self, dev: usize, kind: OpKind, key: u64, bytes: u32, ns: f64) {
        self.ops.push(DevOp {
            dev: dev as u8,
            kind,
            background: self.background,
            bytes,
            key,
            ns,
        });
    }

    /// Marks the charges that follow as background work (or not).
    pub(crate) fn set_background(&mut self, on: bool) {
        self.background = on;
    }

    /// The operations noted since the last `take`, in order; the caller
    /// clears them with `clear`.
    pub fn ops(&self) -> &[DevOp] {
        &self.ops
    }

    pub fn clear(&mut self) {
        self.ops.clear();
    }
}
