//! The parts together on a moving hot set: nodes, placement, the sampler
//! and each policy, driven by this test's own short loop (the model's loop
//! belongs to vm/tiered.rs, on the run driver). Checks that the policies'
//! moves, carried out by the nodes, bring the hot set to the fast node,
//! and that a run is the same every time.

use super::*;
use crate::rng::Rng;
use crate::vm::placement::Placement;

/// References to 1,000 pages: 90% to a window of 100 that moves by 100
/// pages every 50,000 references (the `hotset` generator's shape).
fn stream(seed: u64, n: u64) -> Vec<(u64, bool)> {
    let mut rng = Rng::new(seed);
    (0..n)
        .map(|i| {
            let start = (i / 50_000) * 100 % 1000;
            let off = if rng.next_f64() < 0.9 {
                rng.below(100)
            } else {
                100 + rng.below(900)
            };
            ((start + off) % 1000, rng.next_f64() < 0.2)
        })
        .collect()
}

/// The fast node's share of the references, and the moves made.
fn run(spec: &MigrationSpec, refs: &[(u64, bool)], epochs: Option<&[KeyMap<u64>]>) -> (f64, u64) {
    let frames = [150u64, 2000];
    let mut nodes = Nodes::new(4096, &frames);
    let mut placement = Placement::new(None, 2);
    let ctx = BuildCtx {
        page_bytes: 4096,
        frames: frames.to_vec(),
        counts: None,
        epoch_counts: epochs,
    };
    let mut p = spec.build(&ctx).unwrap();
    let mut sampler = match p.hears() {
        Hears::Sampled {
            read_period,
            write_period,
        } => Some(Sampler::new(read_period, write_period)),
        _ => None,
    };
    let mut m = Moves::default();
    let (mut fast, mut moved) = (0u64, 0u64);
    for (i, &(page, write)) in refs.iter().enumerate() {
        // 100 ns a reference: the policies' periods are in this clock.
        let t = i as f64 * 100.0;
        match nodes.frame_of(page) {
            Some(f) => {
                let node = nodes.node_of(page).unwrap();
                let hint = nodes.touch(f);
                match (p.hears(), hint) {
                    (Hears::Every, _) => p.on_access(page, node, write, t, &nodes, &mut m),
                    (Hears::Sampled { .. }, _) if sampler.as_mut().unwrap().sample(write) => {
                        p.on_access(page, node, write, t, &nodes, &mut m)
                    }
                    (Hears::HintFaults, Some(s)) => {
                        p.on_hint_fault(page, node, s, t, &nodes, &mut m)
                    }
                    _ => {}
                }
                fast += (node == FAST) as u64;
            }
            None => {
                let node = p
                    .place(page, &nodes)
                    .or_else(|| placement.place(&nodes))
                    .expect("2,150 frames hold the 1,000 pages");
                nodes.insert(page, node);
                p.on_insert(page, node, &nodes, &mut m);
                if p.hears() == Hears::Every {
                    p.on_access(page, node, write, t, &nodes, &mut m);
                }
                fast += (node == FAST) as u64;
            }
        }
        if t >= p.next_tick() {
            p.tick(t, &nodes, &mut m);
        }
        if m.scan > 0 {
            nodes.scan(m.scan, t);
        }
        moved += nodes.apply(&mut m).moves.len() as u64;
        assert!(m.evict.is_empty(), "no swap in this test");
    }
    (fast as f64 / refs.len() as f64, moved)
}

fn spec(json: &str) -> MigrationSpec {
    match serde_json::from_str::<serde_json::Value>(json).unwrap() {
        serde_json::Value::Object(m) => MigrationConfig::from_params(m).unwrap().spec,
        _ => unreachable!(),
    }
}

#[test]
fn policies_bring_a_moving_hot_set_to_the_fast_node() {
    let refs = stream(3, 400_000);
    let (none, none_moves) = run(&spec(r#"{"type": "none"}"#), &refs, None);
    assert_eq!(none_moves, 0);
    // Sampled policies, with periods short enough for 40 ms of references.
    let hemem = spec(r#"{"type": "hemem", "sample_period": 11, "period_ms": 1}"#);
    let memtis = spec(
        r#"{"type": "memtis", "sample_period": 11, "store_sample_period": 11, "period_ms": 1, "adaptation_samples": 500, "cooling_samples": 2000}"#,
    );
    let (h, h_moves) = run(&hemem, &refs, None);
    let (mt, mt_moves) = run(&memtis, &refs, None);
    // The epoch oracle, told each window's counts.
    let mut epochs = vec![KeyMap::default(); 8];
    for (i, &(p, _)) in refs.iter().enumerate() {
        *epochs[i / 50_000].entry(p).or_insert(0u64) += 1;
    }
    let (o, o_moves) = run(
        &spec(r#"{"type": "oracle-epoch", "epoch": 50000}"#),
        &refs,
        Some(&epochs),
    );
    // Static first-touch keeps the first window: its share falls to the
    // cold references' once the window moves on.
    assert!(none < 0.3, "{none}");
    for (name, share, moves) in [
        ("hemem", h, h_moves),
        ("memtis", mt, mt_moves),
        ("oracle-epoch", o, o_moves),
    ] {
        assert!(share > none + 0.3, "{name}: {share} vs none {none}");
        assert!(moves > 0, "{name}");
    }
    // Same input, same result.
    assert_eq!(run(&hemem, &refs, None), (h, h_moves));
    assert_eq!(run(&memtis, &refs, None), (mt, mt_moves));
}

#[test]
fn sampler_takes_every_nth_read_and_write_apart() {
    let mut s = Sampler::new(3, 2);
    let reads: Vec<bool> = (0..7).map(|_| s.sample(false)).collect();
    assert_eq!(reads, [false, false, true, false, false, true, false]);
    let writes: Vec<bool> = (0..4).map(|_| s.sample(true)).collect();
    assert_eq!(writes, [false, true, false, true]);
}
