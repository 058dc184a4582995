//! Changing a tree: expanding a leaf with the rules core, backing a value up, and proving
//! results exactly (a node with a winning child is lost for its mover; one whose children
//! are all lost is won).

use super::node::{flip, Node, Proven, State, ROOT};
use super::{PendingLeaf, Tree};
use crate::game::{After, Position, Side};

impl Tree {
    /// Generates a leaf's children and queues it for evaluation, or settles it at once when
    /// the side to move has no move (lost) or a move that wins now (won: no evaluation).
    pub(super) fn expand(
        &mut self,
        i: u32,
        counts: bool,
        positions: &mut Vec<Position>,
        masks: &mut Vec<u64>,
    ) {
        let pos = self.nodes[i as usize].pos;
        let moves = pos.legal_moves();
        if moves.is_empty() {
            // The side to move has lost: an exact win for the node's mover.
            let node = &mut self.nodes[i as usize];
            node.state = State::Terminal;
            node.proven = Proven::Won;
            let mover = node.mover;
            if counts {
                self.done += 1;
            }
            self.backup(i, mover, 1.0, false);
            return;
        }
        let first = self.nodes.len() as u32;
        let me = pos.to_move();
        for lm in moves.iter() {
            let mut child = Node::new(pos, i, lm.mv.action() as u8, me);
            match lm.after {
                After::Position(p) => child.pos = p,
                After::Won(_) => {
                    child.state = State::Terminal;
                    child.proven = Proven::Won;
                }
            }
            self.nodes.push(child);
        }
        let node = &mut self.nodes[i as usize];
        node.first_child = first;
        node.n_children = moves.len() as u8;
        let wins = moves
            .iter()
            .filter(|lm| matches!(lm.after, After::Won(_)))
            .count();
        if wins > 0 {
            // Won for the side to move: the winning moves share the prior (so a principal
            // variation and a policy target point at them), and the exact value goes up.
            for c in first as usize..first as usize + moves.len() {
                self.nodes[c].prior = if self.nodes[c].proven == Proven::Won {
                    1.0 / wins as f32
                } else {
                    0.0
                };
            }
            let node = &mut self.nodes[i as usize];
            node.state = State::Expanded;
            node.proven = Proven::Lost;
            if counts {
                self.done += 1;
            }
            self.backup(i, me, 1.0, false);
            return;
        }
        node.state = State::Pending;
        positions.push(pos);
        masks.push(moves.mask());
        self.add_in_flight(i);
        self.pending.push(PendingLeaf { node: i, counts });
    }

    fn add_in_flight(&mut self, mut i: u32) {
        loop {
            self.nodes[i as usize].in_flight += 1;
            if i == ROOT {
                break;
            }
            i = self.nodes[i as usize].parent;
        }
    }

    /// Adds value `v` (for `side`) to every node from `i` up to the root, and propagates
    /// proven results.
    pub(super) fn backup(&mut self, mut i: u32, side: Side, v: f32, in_flight: bool) {
        let mut check = self.nodes[i as usize].proven.is_known();
        loop {
            let node = &mut self.nodes[i as usize];
            node.visits += 1;
            node.w += flip(v, side, node.mover);
            if in_flight {
                node.in_flight -= 1;
            }
            if check {
                check = self.settle(i);
            }
            if i == ROOT {
                break;
            }
            i = self.nodes[i as usize].parent;
        }
    }

    /// Recomputes a node's proven result from its children; true when it is now proven.
    fn settle(&mut self, i: u32) -> bool {
        let node = &self.nodes[i as usize];
        if node.proven.is_known() {
            return true;
        }
        if node.state != State::Expanded {
            return false;
        }
        let range = node.children();
        let mut all_lost = true;
        for c in range {
            match self.nodes[c].proven {
                Proven::Won => {
                    self.nodes[i as usize].proven = Proven::Lost;
                    return true;
                }
                Proven::Lost => {}
                Proven::Unknown => all_lost = false,
            }
        }
        if all_lost {
            self.nodes[i as usize].proven = Proven::Won;
        }
        all_lost
    }
}
