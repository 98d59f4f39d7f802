//! Exact internal order of each policy on tiny sequences.

use super::*;

fn req() -> Request {
    Request::read(0, 1)
}

fn build(name: &str) -> AnyPolicy {
    PolicySpec::named(name).unwrap().build(&BuildCtx {
        capacity: 4,
        seed: 1,
        unit_size: true,
    })
}

#[test]
fn lru_evicts_least_recent() {
    let mut p = build("lru");
    for s in 0..3 {
        p.on_insert(s, &req());
    }
    p.on_hit(0, &req());
    assert_eq!(p.evict(), 1);
    assert_eq!(p.evict(), 2);
    assert_eq!(p.evict(), 0);
}

#[test]
fn fifo_ignores_hits() {
    let mut p = build("fifo");
    for s in 0..3 {
        p.on_insert(s, &req());
    }
    p.on_hit(0, &req());
    p.on_remove(1);
    assert_eq!(p.evict(), 0);
    assert_eq!(p.evict(), 2);
}

#[test]
fn clock_gives_one_second_chance() {
    let mut p = build("clock");
    for s in 0..3 {
        p.on_insert(s, &req());
    }
    p.on_hit(0, &req());
    p.on_hit(0, &req());
    // 0 is referenced: it goes back to the head with its bit cleared.
    assert_eq!(p.evict(), 1);
    assert_eq!(p.evict(), 2);
    assert_eq!(p.evict(), 0);
}

#[test]
fn clock_with_two_bits_counts_hits() {
    let mut p = PolicySpec::from_parts(
        "clock",
        serde_json::json!({"bits": 2}).as_object().unwrap().clone(),
    )
    .unwrap()
    .build(&BuildCtx {
        capacity: 4,
        seed: 1,
        unit_size: true,
    });
    p.on_insert(0, &req());
    p.on_insert(1, &req());
    p.on_hit(0, &req());
    p.on_hit(0, &req());
    p.on_hit(1, &req());
    // 0 (counter 2) survives two passes, 1 (counter 1) one.
    assert_eq!(p.evict(), 1);
    assert_eq!(p.evict(), 0);
}
