//! Tests of the catalog (`tech.rs`).

use super::*;

#[test]
fn catalog_parses_validates_and_cites() {
    let c = builtin();
    assert!(c.len() >= 13);
    for t in c {
        validate(t).unwrap_or_else(|(f, e)| panic!("{}: {f}: {e}", t.name));
        assert!(t.source.len() > 10, "{} has no source", t.name);
    }
    for name in [
        "DRAM-DDR2",
        "DRAM-DDR3",
        "FILE-MEMORY",
        "NAND-SLC",
        "NOR",
        "PCM-SLC",
        "PCM-MLC",
        "STT-MRAM",
        "ReRAM",
        "FRAM",
        "HDD",
        "SSD-SATA",
        "SCM-OPTANE",
        "DCPMM",
        "CXL-DRAM",
        "SSD-NVME-TLC",
        "SSD-ZNAND",
        "NAND-QLC",
        "DRAM-DDR4",
        "DRAM-DDR5",
    ] {
        Catalog::builtin().get(name).unwrap();
    }
}

#[test]
fn device_figures_are_checked() {
    let bad = |o: TechOverride| Catalog::builtin().apply("NAND-SLC", &o).unwrap_err();
    let (f, e) = bad(TechOverride {
        endurance: Some(0.0),
        ..Default::default()
    });
    assert_eq!(f, "endurance");
    assert!(e.to_string().contains("positive"), "{e}");
    for (field, o) in [
        (
            "idle_mw_per_gbit",
            TechOverride {
                idle_mw_per_gbit: Some(-1.0),
                ..Default::default()
            },
        ),
        (
            "energy_erase_pj",
            TechOverride {
                energy_erase_pj: Some(-5.0),
                ..Default::default()
            },
        ),
        (
            "powerdown_mw_per_gbit",
            TechOverride {
                powerdown_mw_per_gbit: Some(f64::NAN),
                ..Default::default()
            },
        ),
        (
            "good_block_fraction",
            TechOverride {
                good_block_fraction: Some(1.5),
                ..Default::default()
            },
        ),
        (
            "cell_area_f2",
            TechOverride {
                cell_area_f2: Some([6.0, 4.0]),
                ..Default::default()
            },
        ),
    ] {
        assert_eq!(bad(o).0, field);
    }
    // A price needs the year it is from, also over a base that has one.
    let (f, e) = bad(TechOverride {
        price_usd_per_gbit: Some(0.05),
        ..Default::default()
    });
    assert_eq!(f, "price_year");
    assert!(e.to_string().contains("price_year"), "{e}");
    let mut c = Catalog::builtin();
    c.apply(
        "NAND-SLC",
        &TechOverride {
            price_usd_per_gbit: Some(0.05),
            price_year: Some(2024),
            energy_read_pj: Some(0.0),
            ..Default::default()
        },
    )
    .unwrap();
    assert_eq!(c.get("NAND-SLC").unwrap().price_year, Some(2024));
    let mut t = c.get("NAND-SLC").unwrap().clone();
    t.price_year = None;
    assert_eq!(validate(&t).unwrap_err().0, "price_year");
}

#[test]
fn every_price_has_a_year_and_every_figure_a_source() {
    for t in builtin() {
        assert_eq!(
            t.price_usd_per_gbit.is_some(),
            t.price_year.is_some(),
            "{}",
            t.name
        );
        // Each year and feature size the entry gives is named in its source.
        if let Some(y) = t.price_year {
            assert!(t.source.contains(&y.to_string()), "{}: {y}", t.name);
        }
        if let Some(f) = t.feature_nm {
            assert!(t.source.contains(&format!("{f} nm")), "{}: {f} nm", t.name);
        }
    }
}

#[test]
fn overrides() {
    let mut c = Catalog::builtin();
    let o = TechOverride {
        base: Some("PCM-SLC".into()),
        write_ns: Some(crate::units::Nanos(500.0)),
        ..Default::default()
    };
    c.apply("MY-PCM", &o).unwrap();
    assert_eq!(c.get("MY-PCM").unwrap().write_ns, 500.0);
    assert_eq!(c.get("MY-PCM").unwrap().read_ns, 20.0);
    let bad = TechOverride {
        read_ns: Some(crate::units::Nanos(-1.0)),
        ..Default::default()
    };
    assert_eq!(c.apply("HDD", &bad).unwrap_err().0, "read_ns");
    assert!(c.apply("NEW", &TechOverride::default()).is_err());
}

#[test]
fn every_latency_states_its_basis_and_relatives_are_computed() {
    use super::LatencyBasis;
    for t in builtin() {
        assert!(
            t.latency_basis.is_some(),
            "{} states no latency basis",
            t.name
        );
        assert!(
            t.latency_source.as_deref().unwrap_or("").len() > 10,
            "{}",
            t.name
        );
    }
    let c = Catalog::builtin();
    let (dram, cxl) = (c.get("DRAM-DDR4").unwrap(), c.get("CXL-DRAM").unwrap());
    assert_eq!(cxl.read_ns, 2.0 * dram.read_ns);
    assert_eq!(cxl.write_ns, 2.0 * dram.write_ns);
    assert_eq!(cxl.latency_basis, Some(LatencyBasis::Loaded));
    // A change to the base carries into the entry defined from it.
    let mut c = Catalog::builtin();
    let o = TechOverride {
        read_ns: Some(crate::units::Nanos(120.0)),
        ..Default::default()
    };
    c.apply("DRAM-DDR4", &o).unwrap();
    assert_eq!(c.get("CXL-DRAM").unwrap().read_ns, 240.0);
    // Its own figures end the relation.
    c.apply("CXL-DRAM", &o).unwrap();
    assert_eq!(c.get("CXL-DRAM").unwrap().read_ns, 120.0);
    assert_eq!(c.get("CXL-DRAM").unwrap().latency_relative_to, None);
    // A new entry relative to a catalog one, without its own latencies.
    let rel = TechOverride {
        latency_relative_to: Some("dram-ddr4".into()),
        latency_factor: Some(3.0),
        bandwidth_mb_s: Some(100.0),
        source: Some("mine".into()),
        ..Default::default()
    };
    c.apply("SLOW", &rel).unwrap();
    assert_eq!(c.get("SLOW").unwrap().read_ns, 360.0);
    let both = TechOverride {
        read_ns: Some(crate::units::Nanos(5.0)),
        ..rel.clone()
    };
    let (f, e) = c.apply("SLOW", &both).unwrap_err();
    assert_eq!(f, "latency_relative_to");
    assert!(e.to_string().contains("one or the other"), "{e}");
    let nowhere = TechOverride {
        latency_relative_to: Some("NOPE".into()),
        ..Default::default()
    };
    assert!(c
        .apply("SLOW", &nowhere)
        .unwrap_err()
        .1
        .to_string()
        .contains("not in the catalog"));
    let cycle = TechOverride {
        latency_relative_to: Some("SLOW".into()),
        ..Default::default()
    };
    let e = c.apply("DRAM-DDR4", &cycle).unwrap_err().1.to_string();
    assert!(e.contains("cycle"), "{e}");
    let zero = TechOverride {
        latency_factor: Some(0.0),
        ..Default::default()
    };
    assert_eq!(c.apply("SLOW", &zero).unwrap_err().0, "latency_factor");
}

#[test]
fn names_in_any_case() {
    let mut c = Catalog::builtin();
    assert_eq!(c.get("dram-ddr3").unwrap().name, "DRAM-DDR3");
    assert_eq!(c.get("Pcm-Slc").unwrap().name, "PCM-SLC");
    let e = c.get("nope").unwrap_err().to_string();
    assert!(e.contains("DRAM-DDR3") && e.contains("ReRAM"), "{e}");
    // `[techs.hdd]` changes HDD rather than adding a second entry.
    let o = TechOverride {
        read_ns: Some(crate::units::Nanos(1e6)),
        ..Default::default()
    };
    c.apply("hdd", &o).unwrap();
    assert_eq!(c.get("HDD").unwrap().read_ns, 1e6);
    assert_eq!(
        c.all()
            .filter(|t| t.name.eq_ignore_ascii_case("hdd"))
            .count(),
        1
    );
}

#[test]
fn every_medium_needs_a_transfer_model() {
    for t in builtin() {
        let burst = t.burst_bytes.is_some() && t.burst_ns.is_some();
        assert!(
            t.bandwidth_mb_s.is_some() != burst,
            "{}: one transfer model",
            t.name
        );
    }
    let mut c = Catalog::builtin();
    let bare = TechOverride {
        read_ns: Some(crate::units::Nanos(5.0)),
        write_ns: Some(crate::units::Nanos(5.0)),
        source: Some("mine".into()),
        ..Default::default()
    };
    let (field, e) = c.apply("MINE", &bare).unwrap_err();
    assert_eq!(field, "bandwidth_mb_s");
    let msg = e.to_string();
    assert!(
        msg.contains("bandwidth_mb_s") && msg.contains("burst_ns"),
        "{msg}"
    );
    let burst = TechOverride {
        burst_bytes: Some(8),
        burst_ns: Some(crate::units::Nanos(10.0)),
        ..bare.clone()
    };
    c.apply("MINE", &burst).unwrap();
    // An override's model replaces the base's, whichever form.
    let bw = TechOverride {
        base: Some("MINE".into()),
        bandwidth_mb_s: Some(100.0),
        ..Default::default()
    };
    c.apply("MINE2", &bw).unwrap();
    assert_eq!(c.get("MINE2").unwrap().burst_bytes, None);
    let both = TechOverride {
        burst_bytes: Some(8),
        burst_ns: Some(crate::units::Nanos(10.0)),
        bandwidth_mb_s: Some(100.0),
        ..Default::default()
    };
    assert!(c
        .apply("HDD", &both)
        .unwrap_err()
        .1
        .to_string()
        .contains("not both"));
    let half = TechOverride {
        burst_bytes: Some(8),
        ..Default::default()
    };
    assert_eq!(c.apply("HDD", &half).unwrap_err().0, "burst_ns");
}
