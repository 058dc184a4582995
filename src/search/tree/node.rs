//! The nodes of a search tree's arena and their exact results.

use crate::game::{Position, Side};

/// Arena index of the root.
pub(super) const ROOT: u32 = 0;
/// "No node" in `parent` (the root's) and `first_child` (not expanded).
pub(super) const NONE: u32 = u32::MAX;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum State {
    /// Children not generated yet.
    Unexpanded,
    /// Children generated, waiting for the evaluator's priors and value.
    Pending,
    Expanded,
    /// The game is over here (a winning capture into it, or no legal move in it).
    Terminal,
}

/// An exact result of a node, for the side that played the move into it (its `mover`).
/// The root's mover is the opponent of the side to move there, so a root that is `Lost` is
/// a forced win for the side to move.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Proven {
    Unknown,
    /// The mover wins with best play (the side to move here has lost or will lose).
    Won,
    /// The mover loses with best play (the side to move here has a winning move).
    Lost,
}

impl Proven {
    /// The exact value for the mover: 1, -1, or `None` while unknown.
    pub(super) fn value(self) -> Option<f32> {
        match self {
            Proven::Won => Some(1.0),
            Proven::Lost => Some(-1.0),
            Proven::Unknown => None,
        }
    }
    /// `Some(true)` when the mover wins, `Some(false)` when it loses.
    pub(super) fn mover_wins(self) -> Option<bool> {
        match self {
            Proven::Won => Some(true),
            Proven::Lost => Some(false),
            Proven::Unknown => None,
        }
    }
    pub(super) fn is_known(self) -> bool {
        self != Proven::Unknown
    }
}

#[derive(Clone, Copy, Debug)]
pub(super) struct Node {
    /// The position at this node; for a terminal "won" child, a copy of the parent's.
    pub(super) pos: Position,
    pub(super) parent: u32,
    pub(super) first_child: u32,
    pub(super) n_children: u8,
    pub(super) action: u8,
    pub(super) state: State,
    pub(super) proven: Proven,
    /// The side that played the move into this node.
    pub(super) mover: Side,
    pub(super) visits: u32,
    pub(super) in_flight: u32,
    /// Sum of backed-up values, from `mover`'s point of view.
    pub(super) w: f32,
    pub(super) prior: f32,
}

impl Node {
    pub(super) fn new(pos: Position, parent: u32, action: u8, mover: Side) -> Node {
        Node {
            pos,
            parent,
            first_child: NONE,
            n_children: 0,
            action,
            state: State::Unexpanded,
            proven: Proven::Unknown,
            mover,
            visits: 0,
            in_flight: 0,
            w: 0.0,
            prior: 0.0,
        }
    }

    /// Arena indices of the children (empty until expanded).
    pub(super) fn children(&self) -> std::ops::Range<usize> {
        if self.first_child == NONE {
            0..0
        } else {
            self.first_child as usize..self.first_child as usize + self.n_children as usize
        }
    }

    /// Mean value for `mover`, if visited.
    pub(super) fn q(&self) -> Option<f32> {
        (self.visits > 0).then(|| self.w / self.visits as f32)
    }

    /// Mean value for `side`, if visited: the one place values change perspective.
    pub(super) fn q_for(&self, side: Side) -> Option<f32> {
        self.q().map(|q| flip(q, self.mover, side))
    }
}

/// `v`, a value for `from`, seen by `to`.
pub(super) fn flip(v: f32, from: Side, to: Side) -> f32 {
    if from == to {
        v
    } else {
        -v
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::game::Variant;

    #[test]
    fn values_change_perspective_between_the_sides() {
        let mut n = Node::new(Position::start(Variant::Kujifunza), NONE, 0, Side::South);
        assert_eq!(n.q_for(Side::North), None);
        n.visits = 4;
        n.w = 2.0;
        assert_eq!(n.q_for(Side::South), Some(0.5));
        assert_eq!(n.q_for(Side::North), Some(-0.5));
        assert_eq!(Proven::Won.value(), Some(1.0));
        assert_eq!(Proven::Lost.mover_wins(), Some(false));
        assert!(!Proven::Unknown.is_known());
        assert_eq!(n.children(), 0..0);
    }
}
