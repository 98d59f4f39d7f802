//! `oracle-epoch`: a reference no real system has. The run is cut into
//! epochs of `epoch` references; at the start of each, the pages with the
//! most accesses *in that epoch* are moved to the fastest node (as many as
//! it holds) and the others off it, every move charged as a migration. It
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

    /// At the first reference of each epoch after the first: the fast
    /// node's pages that are not the epoch's top pages go down, then the
    /// top pages resident elsewhere come up.
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
        let mut down: Vec<u64> = nodes
            .pages_on(FAST)
            .filter(|p| plan.get(p) != Some(&FAST))
            .collect();
        down.sort_unstable();
        for page in down {
            m.push(Move {
                page,
                from: FAST,
                to: FAST + 1,
            });
        }
        let mut up: Vec<(u64, Node)> = plan
            .iter()
            .filter(|(_, &n)| n == FAST)
            .filter_map(|(&p, _)| match nodes.node_of(p) {
                Some(n) if n != FAST => Some((p, n)),
                _ => None,
            })
            .collect();
        up.sort_unstable();
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
}
