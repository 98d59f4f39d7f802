//! `oracle-static`: a reference no real system has. The pages with the
//! most accesses over the whole run live on the fastest node for the whole
//! run (as many as it holds), the others below it; nothing migrates. It
//! needs the run's per-page access counts before the run (a pre-pass over
//! the trace). Without contention, no other static placement of the same
//! capacities has a lower total access time: each access costs its node's
//! time, so the sum is least when the most-accessed pages take the fastest
//! frames (an exchange argument).

use super::{BuildCtx, Hears, MigrationBuild, MigrationPolicy, Node, PolicyReport};
use crate::hash::KeyMap;
use crate::vm::nodes::Nodes;
use serde::{Deserialize, Serialize};

/// No keys besides `type` and `cost`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OracleStaticParams {}

pub struct OracleStatic;

impl MigrationBuild for OracleStatic {
    type Params = OracleStaticParams;
    fn build(_: &OracleStaticParams, ctx: &BuildCtx) -> Result<Box<dyn MigrationPolicy>, String> {
        Ok(Box::new(OracleStaticPolicy::new(ctx)?))
    }
}

/// Each page's node when the pages with the most accesses fill the nodes
/// in order, fastest first (`frames` per node); ties go to the lower page
/// number, so a run gives the same placement every time. Pages beyond the
/// nodes' frames get none.
pub fn rank(counts: &KeyMap<u64>, frames: &[u64]) -> KeyMap<Node> {
    let mut pages: Vec<(u64, u64)> = counts.iter().map(|(&p, &c)| (c, p)).collect();
    pages.sort_unstable_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
    let mut out = KeyMap::default();
    let mut it = pages.into_iter();
    for (n, &f) in frames.iter().enumerate() {
        for (_, p) in it.by_ref().take(f as usize) {
            out.insert(p, n as Node);
        }
    }
    out
}

/// The node a ranked page goes to when entering memory: its rank's node
/// or, that one full, the nearest slower node with room (a page of no rank
/// is placed from node 1 down: node 0's frames are the top pages').
pub(super) fn place_ranked(node: Option<Node>, nodes: &Nodes) -> Option<Node> {
    let first = node.unwrap_or(1.min(nodes.slowest()));
    (first..nodes.len() as Node).find(|&n| nodes.free(n) > 0)
}

pub struct OracleStaticPolicy {
    node: KeyMap<Node>,
}

impl OracleStaticPolicy {
    pub fn new(ctx: &BuildCtx) -> Result<Self, String> {
        let counts = ctx
            .counts
            .ok_or("oracle-static needs the per-page access counts of a pre-pass")?;
        Ok(OracleStaticPolicy {
            node: rank(counts, &ctx.frames),
        })
    }
}

impl MigrationPolicy for OracleStaticPolicy {
    fn hears(&self) -> Hears {
        Hears::Nothing
    }
    fn place(&mut self, page: u64, nodes: &Nodes) -> Option<Node> {
        place_ranked(self.node.get(&page).copied(), nodes)
    }
    fn report(&self) -> PolicyReport {
        PolicyReport::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_most_accessed_pages_take_the_fastest_frames() {
        let counts: KeyMap<u64> = [(1, 5), (2, 9), (3, 1), (4, 9), (5, 7)]
            .into_iter()
            .collect();
        let r = rank(&counts, &[2, 2]);
        // 2 and 4 (9 each) fast; 5 and 1 next; 3 beyond the frames.
        assert_eq!((r[&2], r[&4], r[&5], r[&1], r.get(&3)), (0, 0, 1, 1, None));
        let mut o = OracleStaticPolicy::new(&BuildCtx {
            page_bytes: 4096,
            frames: vec![2, 2],
            counts: Some(&counts),
            epoch_counts: None,
        })
        .unwrap();
        let mut n = Nodes::new(4096, &[2, 2]);
        // A cold page first: never on the fast node, kept for the top pages.
        for page in [3, 2, 5, 4] {
            let node = o.place(page, &n).unwrap();
            n.insert(page, node);
        }
        assert_eq!(
            (n.node_of(2), n.node_of(4), n.node_of(3), n.node_of(5)),
            (Some(0), Some(0), Some(1), Some(1))
        );
        // Every node full: the model must free a frame.
        assert_eq!(o.place(1, &n), None);
    }

    #[test]
    fn no_other_static_placement_has_less_access_time() {
        // Per-page counts and a time per access on each node: the ranked
        // placement's total is the least of 200 random placements of the
        // same capacities, and equals the sum over pages by hand.
        let mut rng = crate::rng::Rng::new(11);
        let counts: KeyMap<u64> = (0..60u64).map(|p| (p, rng.below(1000))).collect();
        let frames = [10u64, 20, 30];
        let ns = [80.0, 170.0, 300.0];
        let total = |place: &KeyMap<Node>| -> f64 {
            counts
                .iter()
                .map(|(p, &c)| c as f64 * ns[place[p] as usize])
                .sum()
        };
        let best = total(&rank(&counts, &frames));
        let mut sorted: Vec<u64> = counts.values().copied().collect();
        sorted.sort_unstable_by(|a, b| b.cmp(a));
        let by_hand: f64 = sorted
            .iter()
            .enumerate()
            .map(|(i, &c)| {
                c as f64
                    * ns[if i < 10 {
                        0
                    } else if i < 30 {
                        1
                    } else {
                        2
                    }]
            })
            .sum();
        assert_eq!(best, by_hand);
        for _ in 0..200 {
            let mut pages: Vec<u64> = (0..60).collect();
            for i in (1..pages.len()).rev() {
                pages.swap(i, rng.below(i as u64 + 1) as usize);
            }
            let place: KeyMap<Node> = pages
                .iter()
                .enumerate()
                .map(|(i, &p)| {
                    (
                        p,
                        if i < 10 {
                            0
                        } else if i < 30 {
                            1
                        } else {
                            2
                        },
                    )
                })
                .collect();
            assert!(total(&place) >= best);
        }
    }

    #[test]
    fn it_needs_the_counts() {
        let ctx = BuildCtx {
            page_bytes: 4096,
            frames: vec![1, 1],
            counts: None,
            epoch_counts: None,
        };
        assert!(OracleStatic::build(&OracleStaticParams {}, &ctx).is_err());
    }
}
