//! Desnoyers' closed forms for the write amplification of a page-mapped
//! FTL under uniform random writes ("Analytic Modeling of SSD Write
//! Performance", SYSTOR 2012), which the FTL's tests (ftl_tests.rs) hold
//! the simulation to, and the Lambert W they need.

/// Lambert's W on its principal branch, W0(x) for x >= -1/e: the w >= -1
/// with w e^w = x. Halley's iteration from a start near the answer (the
/// branch-point series near -1/e, log1p elsewhere), to full precision.
pub fn lambert_w0(x: f64) -> f64 {
    let e = std::f64::consts::E;
    assert!(x >= -1.0 / e - 1e-15, "W0 needs x >= -1/e, got {x}");
    if x <= -1.0 / e {
        return -1.0;
    }
    if x == 0.0 {
        return 0.0;
    }
    let mut w = if x < -0.25 {
        let p = (2.0 * (e * x + 1.0)).sqrt();
        -1.0 + p - p * p / 3.0 + 11.0 / 72.0 * p * p * p
    } else {
        x.ln_1p()
    };
    for _ in 0..50 {
        let ew = w.exp();
        let f = w * ew - x;
        let d = ew * (w + 1.0) - (w + 2.0) * f / (2.0 * w + 2.0);
        if d == 0.0 {
            break;
        }
        let next = w - f / d;
        if (next - w).abs() <= 1e-15 * (1.0 + next.abs()) {
            return next;
        }
        w = next;
    }
    w
}

/// Desnoyers' closed form for uniform random single-page writes with
/// FIFO (his LRU) cleaning and many pages per block: a cleaned block's
/// valid share X0 solves X0 = exp(-alpha (1 - X0)) with alpha = physical
/// / logical = 1 / (1 - spare), i.e. X0 = -W0(-alpha e^-alpha) / alpha, and
/// the write amplification is 1 / (1 - X0) (his Eq. 4).
pub fn closed_form_wa(spare: f64) -> f64 {
    lru_wa(1.0 / (1.0 - spare))
}

fn lru_wa(alpha: f64) -> f64 {
    let x0 = -lambert_w0(-alpha * (-alpha).exp()) / alpha;
    1.0 / (1.0 - x0)
}

/// Desnoyers' approximation for greedy cleaning of blocks of `ppb` pages
/// under the same traffic (his Eq. 12): FIFO's form at alpha scaled by k =
/// 1 + 1 / (2 ppb), divided by k. A victim's valid count is spread around
/// its age's mean; greedy takes the low side, worth about half a page per
/// block, and the form tends to FIFO's as blocks grow.
pub fn greedy_closed_form_wa(spare: f64, ppb: u32) -> f64 {
    let k = 1.0 + 1.0 / (2.0 * ppb as f64);
    lru_wa(k / (1.0 - spare)) / k
}
