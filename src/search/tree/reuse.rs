//! Tree reuse: the child reached by the move played becomes the root of the next search, so
//! the visits below it are not thrown away.

use super::node::{State, NONE, ROOT};
use super::Tree;
use crate::game::{Move, Position};

impl Tree {
    /// The move from the root to a child whose position is `pos` (the opponent's reply after
    /// tree reuse kept our move's subtree), if the tree has one.
    pub fn move_to(&self, pos: &Position) -> Option<Move> {
        let root = &self.nodes[ROOT as usize];
        root.children()
            .find(|&c| self.nodes[c].state != State::Terminal && self.nodes[c].pos == *pos)
            .and_then(|c| Move::from_action(self.nodes[c].action as usize))
    }

    /// Makes the child reached by `mv` the new root, keeping its subtree (tree reuse).
    /// Returns false (and starts a fresh tree at the given position) when `mv` is not a
    /// child or the child is a finished game.
    pub fn advance(&mut self, mv: Move, after: Option<Position>) -> bool {
        assert!(self.pending.is_empty(), "advance while leaves are pending");
        let root = &self.nodes[ROOT as usize];
        let found = root
            .children()
            .find(|&c| self.nodes[c].action as usize == mv.action());
        let Some(c) = found else {
            if let Some(p) = after {
                *self = Tree::new(p);
            }
            return false;
        };
        if self.nodes[c].state == State::Terminal {
            if let Some(p) = after {
                *self = Tree::new(p);
            }
            return false;
        }
        // Breadth-first copy of the subtree into a fresh arena; children stay contiguous.
        let mut nodes = Vec::with_capacity(self.nodes.len() / 2 + 16);
        let mut top = self.nodes[c];
        top.parent = NONE;
        top.in_flight = 0;
        nodes.push(top);
        let mut k = 0;
        while k < nodes.len() {
            let old = nodes[k];
            if old.first_child != NONE {
                let first = nodes.len() as u32;
                for oc in old.children() {
                    let mut ch = self.nodes[oc];
                    ch.parent = k as u32;
                    nodes.push(ch);
                }
                nodes[k].first_child = first;
            }
            k += 1;
        }
        self.nodes = nodes;
        self.gumbel = None;
        self.root_prepared = false;
        self.target = 0;
        self.started = 0;
        self.done = 0;
        true
    }
}
