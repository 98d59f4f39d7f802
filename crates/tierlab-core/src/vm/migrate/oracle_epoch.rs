//! `oracle-epoch`: a reference no real system has. The run is cut into
//! epochs of `epoch` references; at the start of each, the pages with the
//! most accesses *in that epoch* are moved to the fastest node (as many as
//! it holds), and as many of its other pages as those need room for go
//! down (the ones the epoch does not reference first; room is kept for
//! the top pages the epoch touches first too), every move charged
//! as a migration: a page the fast node has room for stays. It
//! needs per-epoch access counts before the run (a pre-pass). It bounds
//! what an online policy that migrates once per epoch could gain, not what
//! any policy could: it pays for its moves.

use super::oracle_static::{place_ranked, rank};
use super::{
    BuildCtx, Hears, MigrationBuild, MigrationPolicy, Move, Moves, Node, PolicyReport, FAST,
};
use crate::hash::KeyMap;
use crate::vm::nodes::Nodes;
use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OracleEpochParams {
    /// References per epoch: required (no source gives one).
    pub epoch: u64,
}

/// Only for listing the keys (`epoch` has no default: it is required).
impl Default for OracleEpochParams {
    fn default() -> Self {
        OracleEpochParams { epoch: 0 }
    }
}

pub struct OracleEpoch;

impl MigrationBuild for OracleEpoch {
    type Params = OracleEpochParams;
    fn build(p: &OracleEpochParams, ctx: &BuildCtx) -> Result<Box<dyn MigrationPolicy>, String> {
        Ok(Box::new(OracleEpochPolicy::new(p, ctx)?))
    }
    fn check(p: &OracleEpochParams) -> Result<(), (&'static str, String)> {
        if p.epoch == 0 {
            return Err(("epoch", "must be at least 1 reference".into()));
        }
        Ok(())
    }
}

pub struct OracleEpochPolicy {
    epoch: u64,
    /// Per epoch: each ranked page's node.
    plans: Vec<KeyMap<Node>>,
    seen: u64,
}

impl OracleEpochPolicy {
    pub fn new(p: &OracleEpochParams, ctx: &BuildCtx) -> Result<Self, String> {
        let epochs = ctx
            .epoch_counts
            .ok_or("oracle-epoch needs the per-epoch access counts of a pre-pass")?;
        Ok(OracleEpochPolicy {
            epoch: p.epoch,
            plans: epochs.iter().map(|c| rank(c, &ctx.frames)).collect(),
            seen: 0,
        })
    }

    fn plan(&self) -> Option<&KeyMap<Node>> {
        self.plans.get((self.seen / self.epoch) as usize)
    }
}

impl MigrationPolicy for OracleEpochPolicy {
    fn hears(&self) -> Hears {
        Hears::Every
    }

    /// At the first reference of each epoch after the first: the epoch's
    /// top pages resident elsewhere come up, and first, of the fast node's
    /// pages that are not top pages, as many go down as the fast node lacks
    /// free frames for the top pages not on it (those resident elsewhere and
    /// those the epoch will touch first): those the epoch does not reference, then
    /// those it ranks on slower nodes (each group in page order). Demoting
    /// more would be moves no bound needs (at a fast node that holds the
    /// footprint, every page not referenced in an epoch went down and came
    /// back: 140,992 migrations where none was needed).
    fn on_access(
        &mut self,
        _page: u64,
        _node: Node,
        _write: bool,
        _t_ns: f64,
        nodes: &Nodes,
        m: &mut Moves,
    ) {
        let boundary = self.seen > 0 && self.seen.is_multiple_of(self.epoch);
        self.seen += 1;
        if !boundary {
            return;
        }
        let Some(plan) = self.plans.get(((self.seen - 1) / self.epoch) as usize) else {
            return;
        };
        let mut up: Vec<(u64, Node)> = plan
            .iter()
            .filter(|(_, &n)| n == FAST)
            .filter_map(|(&p, _)| match nodes.node_of(p) {
                Some(n) if n != FAST => Some((p, n)),
                _ => None,
            })
            .collect();
        up.sort_unstable();
        // Room for every top page not on the fast node: those resident
        // elsewhere come up now, those not yet in memory are placed there
        // when first touched in this epoch.
        let coming = plan
            .iter()
            .filter(|(&p, &n)| n == FAST && nodes.node_of(p) != Some(FAST))
            .count() as u64;
        let need = coming.saturating_sub(nodes.free(FAST));
        if need > 0 {
            // Unreferenced this epoch (false) before ranked lower (true).
            let mut down: Vec<(bool, u64)> = nodes
                .pages_on(FAST)
                .filter_map(|p| match plan.get(&p) {
                    Some(&FAST) => None,
                    ranked => Some((ranked.is_some(), p)),
                })
                .collect();
            down.sort_unstable();
            for &(_, page) in down.iter().take(need as usize) {
                m.push(Move {
                    page,
                    from: FAST,
                    to: FAST + 1,
                });
            }
        }
        for (page, from) in up {
            m.push(Move {
                page,
                from,
                to: FAST,
            });
        }
    }

    fn place(&mut self, page: u64, nodes: &Nodes) -> Option<Node> {
        place_ranked(self.plan().and_then(|p| p.get(&page).copied()), nodes)
    }

    fn report(&self) -> PolicyReport {
        PolicyReport::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_epoch_of_zero_is_refused() {
        assert_eq!(
            OracleEpoch::check(&OracleEpochParams { epoch: 0 })
                .unwrap_err()
                .0,
            "epoch"
        );
        assert!(OracleEpoch::check(&OracleEpochParams { epoch: 1 }).is_ok());
    }

    #[test]
    fn each_epoch_brings_its_top_pages_up_and_the_others_down() {
        let e0: KeyMap<u64> = [(1, 9), (2, 1), (3, 1)].into_iter().collect();
        let e1: KeyMap<u64> = [(1, 1), (2, 1), (3, 9)].into_iter().collect();
        let epochs = [e0, e1];
        let ctx = BuildCtx {
            page_bytes: 4096,
            frames: vec![1, 4],
            counts: None,
            epoch_counts: Some(&epochs),
        };
        let mut o = OracleEpochPolicy::new(&OracleEpochParams { epoch: 3 }, &ctx).unwrap();
        let mut n = Nodes::new(4096, &[1, 4]);
        let mut m = Moves::default();
        for page in [1, 2, 3] {
            let node = o.place(page, &n).unwrap();
            n.insert(page, node);
            o.on_access(page, node, false, 0.0, &n, &mut m);
        }
        assert!(m.is_empty());
        assert_eq!(n.node_of(1), Some(FAST));
        // The first reference of epoch 1: page 1 down, page 3 up.
        o.on_access(3, 1, false, 0.0, &n, &mut m);
        assert_eq!(
            m.moves,
            [
                Move {
                    page: 1,
                    from: FAST,
                    to: 1
                },
                Move {
                    page: 3,
                    from: 1,
                    to: FAST
                }
            ]
        );
        let a = n.apply(&mut m);
        assert_eq!((a.promotions(), a.demotions()), (1, 1));
        assert_eq!(n.node_of(3), Some(FAST));
        assert!(OracleEpoch::build(
            &OracleEpochParams { epoch: 3 },
            &BuildCtx {
                epoch_counts: None,
                ..ctx
            }
        )
        .is_err());
    }

    /// The plan's moves at the first reference of epoch 1, for pages 1..=4
    /// placed in epoch 0 on nodes of `frames`.
    fn epoch_one_moves(frames: Vec<u64>, e0: &[(u64, u64)], e1: &[(u64, u64)]) -> Vec<Move> {
        let epochs: [KeyMap<u64>; 2] = [e0.iter().copied().collect(), e1.iter().copied().collect()];
        let ctx = BuildCtx {
            page_bytes: 4096,
            frames: frames.clone(),
            counts: None,
            epoch_counts: Some(&epochs),
        };
        let mut o = OracleEpochPolicy::new(&OracleEpochParams { epoch: 4 }, &ctx).unwrap();
        let mut n = Nodes::new(4096, &frames);
        let mut m = Moves::default();
        for page in [1, 2, 3, 4] {
            let node = o.place(page, &n).unwrap();
            n.insert(page, node);
            o.on_access(page, node, false, 0.0, &n, &mut m);
        }
        assert!(m.is_empty());
        o.on_access(1, n.node_of(1).unwrap(), false, 0.0, &n, &mut m);
        m.moves
    }

    #[test]
    fn a_fast_node_with_room_keeps_the_pages_an_epoch_leaves_alone() {
        // Room for all four: epoch 1 references pages 1 and 2 only, and
        // nothing needs to move.
        let e0 = [(1, 5), (2, 5), (3, 5), (4, 5)];
        let e1 = [(1, 5), (2, 5)];
        assert!(epoch_one_moves(vec![4, 4], &e0, &e1).is_empty());
    }

    #[test]
    fn only_as_many_go_down_as_the_top_pages_need_unreferenced_first() {
        // Fast holds 3 of 4: pages 1, 2, 3 in epoch 0 (page 4 below). In
        // epoch 1 the top three are 4, 1, 3: page 4 needs one frame, and
        // page 2 (not referenced in epoch 1) goes down for it.
        let e0 = [(1, 9), (2, 8), (3, 7), (4, 1)];
        let e1 = [(4, 9), (1, 8), (3, 7)];
        assert_eq!(
            epoch_one_moves(vec![3, 4], &e0, &e1),
            [
                Move {
                    page: 2,
                    from: FAST,
                    to: 1
                },
                Move {
                    page: 4,
                    from: 1,
                    to: FAST
                }
            ]
        );
        // Every page referenced in epoch 1, top three 4, 1, 2: page 3,
        // ranked on the slower node, makes the room.
        let e1 = [(4, 9), (1, 8), (2, 7), (3, 1)];
        assert_eq!(
            epoch_one_moves(vec![3, 4], &e0, &e1),
            [
                Move {
                    page: 3,
                    from: FAST,
                    to: 1
                },
                Move {
                    page: 4,
                    from: 1,
                    to: FAST
                }
            ]
        );
    }
}
