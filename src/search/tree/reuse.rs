//! Tree reuse: the child reached by the move played becomes the root of the next search, so
//! the visits below it are not thrown away.

use super::node::{Node, State, NONE, ROOT};
use super::Tree;
use crate::game::{Move, Position};

impl Tree {
    /// Makes the node whose position is `pos` the root, keeping its subtree, when that node is
    /// the root, a child or a grandchild (the position after our move and the opponent's
    /// reply, when a player keeps its whole tree until its next search: the copy then runs on
    /// that search's clock instead of after the last one's). Of several such nodes, the
    /// shallowest and then the most visited. Returns whether the root is now `pos`.
    pub fn advance_to(&mut self, pos: &Position) -> bool {
        if self.nodes[ROOT as usize].pos == *pos {
            return true;
        }
        let live = |n: &Node| n.state != State::Terminal && n.pos == *pos;
        let root = &self.nodes[ROOT as usize];
        let child = root
            .children()
            .filter(|&c| live(&self.nodes[c]))
            .max_by_key(|&c| self.nodes[c].visits);
        let found = child.or_else(|| {
            root.children()
                .filter(|&c| self.nodes[c].state != State::Terminal)
                .flat_map(|c| self.nodes[c].children())
                .filter(|&g| live(&self.nodes[g]))
                .max_by_key(|&g| self.nodes[g].visits)
        });
        match found {
            Some(node) => {
                self.keep_subtree(node);
                true
            }
            None => false,
        }
    }

    /// Makes the child reached by `mv` the new root, keeping its subtree (tree reuse).
    /// Returns false (and starts a fresh tree at the given position) when `mv` is not a
    /// child or the child is a finished game.
    pub fn advance(&mut self, mv: Move, after: Option<Position>) -> bool {
        let root = &self.nodes[ROOT as usize];
        let found = root
            .children()
            .find(|&c| self.nodes[c].action as usize == mv.action())
            .filter(|&c| self.nodes[c].state != State::Terminal);
        match found {
            Some(c) => {
                self.keep_subtree(c);
                true
            }
            None => {
                if let Some(p) = after {
                    *self = Tree::new(p);
                }
                false
            }
        }
    }

    /// Makes node `top` the root: a breadth-first copy of its subtree into the spare arena
    /// (children stay contiguous), which then becomes the tree's. The two arenas swap roles,
    /// so each keeps the capacity it grew to: after the first moves of a game a search
    /// rarely grows its arena (a growth copies the whole tree in one step, which the search's
    /// clock cannot foresee) and writes into memory it already touched.
    fn keep_subtree(&mut self, top: usize) {
        assert!(
            self.pending.is_empty(),
            "tree moved while leaves are pending"
        );
        let mut nodes = std::mem::take(&mut self.spare);
        nodes.clear();
        let mut root = self.nodes[top];
        root.parent = NONE;
        root.in_flight = 0;
        nodes.push(root);
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
        self.spare = std::mem::replace(&mut self.nodes, nodes);
        self.gumbel = None;
        self.root_prepared = false;
        self.target = 0;
        self.started = 0;
        self.done = 0;
    }
}
