//! Placement: the node of a page entering memory (`[vm.placement]`,
//! docs/tiered-memory.md). A migration policy may override it for a page
//! (the oracles do); otherwise this rule decides.
//!
//! - `first-touch`: the fastest node with a free frame (Linux allocates on
//!   the local node and falls back down the tiers).
//! - `slow-first`: the slowest node with a free frame first.
//! - `interleave`: the nodes take turns, `weights[i]` consecutive new pages
//!   for node `i` per turn, in first-touch order (Linux's weighted
//!   interleave, 6.9: `weighted_interleave_nodes` hands each node its
//!   weight of allocations before moving to the next); a full node is
//!   skipped.

use super::migrate::Node;
use super::nodes::Nodes;
use super::tiered_config::{PlacementConfig, PlacementKind};

#[derive(Clone, Debug, PartialEq)]
pub enum Placement {
    FirstTouch,
    SlowFirst,
    Interleave {
        weights: Vec<u32>,
        /// The node whose turn it is and the pages left in its turn.
        turn: Node,
        left: u32,
    },
}

impl Placement {
    /// The rule for `nodes` nodes (the config is checked: weights, when
    /// given, are one per node).
    pub fn new(c: Option<&PlacementConfig>, nodes: usize) -> Self {
        match c.map(|c| (c.kind, c.weights.clone())) {
            None | Some((PlacementKind::FirstTouch, _)) => Placement::FirstTouch,
            Some((PlacementKind::SlowFirst, _)) => Placement::SlowFirst,
            Some((PlacementKind::Interleave, w)) => {
                let weights = w.unwrap_or_else(|| vec![1; nodes]);
                let left = weights[0];
                Placement::Interleave {
                    weights,
                    turn: 0,
                    left,
                }
            }
        }
    }

    /// The node for the next page entering memory; None when every node
    /// is full (the model then frees a frame first).
    pub fn place(&mut self, nodes: &Nodes) -> Option<Node> {
        let n = nodes.len() as Node;
        match self {
            Placement::FirstTouch => (0..n).find(|&i| nodes.free(i) > 0),
            Placement::SlowFirst => (0..n).rev().find(|&i| nodes.free(i) > 0),
            Placement::Interleave {
                weights,
                turn,
                left,
            } => {
                // At most one full round of turns to find a node with room.
                for _ in 0..=n {
                    if *left == 0 {
                        *turn = (*turn + 1) % n;
                        *left = weights[*turn as usize];
                    }
                    if nodes.free(*turn) > 0 {
                        *left -= 1;
                        return Some(*turn);
                    }
                    // A full node loses the rest of its turn.
                    *left = 0;
                }
                None
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(p: &mut Placement, nodes: &mut Nodes, pages: u64) -> Vec<Option<Node>> {
        (0..pages)
            .map(|page| {
                let n = p.place(nodes);
                if let Some(n) = n {
                    nodes.insert(page, n);
                }
                n
            })
            .collect()
    }

    #[test]
    fn first_touch_fills_the_fastest_first() {
        let mut nodes = Nodes::new(4096, &[2, 3]);
        let mut p = Placement::new(None, 2);
        assert_eq!(
            run(&mut p, &mut nodes, 6),
            [Some(0), Some(0), Some(1), Some(1), Some(1), None]
        );
    }

    #[test]
    fn slow_first_fills_the_slowest_first() {
        let mut nodes = Nodes::new(4096, &[2, 1]);
        let c = PlacementConfig {
            kind: PlacementKind::SlowFirst,
            weights: None,
        };
        let mut p = Placement::new(Some(&c), 2);
        assert_eq!(
            run(&mut p, &mut nodes, 4),
            [Some(1), Some(0), Some(0), None]
        );
    }

    #[test]
    fn weighted_interleave_deals_by_weight_and_skips_full_nodes() {
        let mut nodes = Nodes::new(4096, &[100, 100]);
        let c = PlacementConfig {
            kind: PlacementKind::Interleave,
            weights: Some(vec![3, 1]),
        };
        let mut p = Placement::new(Some(&c), 2);
        let got = run(&mut p, &mut nodes, 8);
        let want: Vec<Option<Node>> = [0, 0, 0, 1, 0, 0, 0, 1].iter().map(|&n| Some(n)).collect();
        assert_eq!(got, want);
        // Node 1 full: every page goes to node 0.
        let mut nodes = Nodes::new(4096, &[10, 1]);
        let mut p = Placement::new(Some(&c), 2);
        let got = run(&mut p, &mut nodes, 8);
        assert_eq!(got.iter().filter(|&&n| n == Some(1)).count(), 1);
        assert!(got.iter().all(|n| n.is_some()));
        // Plain interleave without weights: alternate.
        let plain = PlacementConfig {
            kind: PlacementKind::Interleave,
            weights: None,
        };
        let mut nodes = Nodes::new(4096, &[4, 4]);
        let mut p = Placement::new(Some(&plain), 2);
        let got = run(&mut p, &mut nodes, 4);
        assert_eq!(got, [Some(0), Some(1), Some(0), Some(1)]);
    }
}
