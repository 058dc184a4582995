//! UCT with random rollouts and no network: OpenSpiel's `mcts` baseline (random-rollout
//! evaluator, UCT constant 2, 1000 simulations, most-visited move).
//!
//! Every node is expanded on its first visit (all children at once, as move generation yields
//! them played out); unvisited children are tried first, in random order.

use rand::rngs::SmallRng;
use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};

use super::spec::RolloutParams;
use super::{Analysis, ChosenMove, Limits, MoveScore, Player};
use crate::game::{After, LegalMove, Position};
use crate::search::no_legal_move;

/// A rollout that runs this long is scored as a draw (0); Bao games rarely last so long.
pub const ROLLOUT_PLY_CAP: u32 = 400;

struct Node {
    /// The move into this node (none at the root).
    mv: Option<LegalMove>,
    /// `None` when the move into this node won at once.
    pos: Option<Position>,
    first_child: u32,
    children: u16,
    expanded: bool,
    visits: u32,
    /// Sum of results for the player who made the move into this node.
    total: f32,
}

impl Node {
    fn q(&self) -> f32 {
        if self.visits == 0 {
            0.0
        } else {
            self.total / self.visits as f32
        }
    }
}

/// Plays uniformly random moves from `pos` to the end; the result for `pos`'s side to move.
pub fn random_rollout(pos: &Position, rng: &mut SmallRng) -> f32 {
    let me = pos.to_move();
    let mut cur = *pos;
    for _ in 0..ROLLOUT_PLY_CAP {
        let moves = cur.legal_moves();
        if moves.is_empty() {
            return if cur.to_move() == me { -1.0 } else { 1.0 };
        }
        let lm = moves.as_slice()[rng.random_range(0..moves.len())];
        match lm.after {
            After::Won(o) => return if o.winner == me { 1.0 } else { -1.0 },
            After::Position(p) => cur = p,
        }
    }
    0.0
}

pub struct RolloutMctsPlayer {
    name: String,
    params: RolloutParams,
    rng: SmallRng,
}

impl RolloutMctsPlayer {
    pub fn new(name: String, params: RolloutParams, seed: u64) -> RolloutMctsPlayer {
        RolloutMctsPlayer {
            name,
            params,
            rng: SmallRng::seed_from_u64(seed),
        }
    }

    fn expand(nodes: &mut Vec<Node>, at: usize) {
        let node = &nodes[at];
        let Some(pos) = node.pos else { return };
        let moves = pos.legal_moves();
        let first = nodes.len() as u32;
        for lm in moves.iter() {
            let pos = match lm.after {
                After::Position(p) => Some(p),
                After::Won(_) => None,
            };
            nodes.push(Node {
                mv: Some(*lm),
                pos,
                first_child: 0,
                children: 0,
                expanded: false,
                visits: 0,
                total: 0.0,
            });
        }
        let node = &mut nodes[at];
        node.first_child = first;
        node.children = moves.len() as u16;
        node.expanded = true;
    }

    fn select(&mut self, nodes: &[Node], at: usize) -> usize {
        let node = &nodes[at];
        let range = node.first_child as usize..node.first_child as usize + node.children as usize;
        let unvisited: Vec<usize> = range.clone().filter(|&c| nodes[c].visits == 0).collect();
        if !unvisited.is_empty() {
            return unvisited[self.rng.random_range(0..unvisited.len())];
        }
        let ln_n = (node.visits.max(1) as f32).ln();
        let c = self.params.c();
        let mut best = (f32::NEG_INFINITY, range.start);
        for i in range {
            let ch = &nodes[i];
            let u = ch.q() + c * (ln_n / ch.visits as f32).sqrt();
            if u > best.0 {
                best = (u, i);
            }
        }
        best.1
    }
}

impl Player for RolloutMctsPlayer {
    fn name(&self) -> String {
        self.name.clone()
    }

    fn choose(&mut self, pos: &Position, limits: &Limits) -> anyhow::Result<ChosenMove> {
        let root_moves = pos.legal_moves();
        if root_moves.is_empty() {
            return Err(no_legal_move(pos));
        }
        let (sims, time) = if limits.overrides() {
            (
                limits.sims.unwrap_or(if limits.movetime.is_some() {
                    u32::MAX
                } else {
                    self.params.sims()
                }),
                limits.movetime,
            )
        } else {
            (
                self.params.sims(),
                self.params.ms.map(std::time::Duration::from_millis),
            )
        };
        let sims = sims.max(1);
        let clock = limits.clock_for(time);
        let mut nodes = vec![Node {
            mv: None,
            pos: Some(*pos),
            first_child: 0,
            children: 0,
            expanded: false,
            visits: 0,
            total: 0.0,
        }];
        Self::expand(&mut nodes, 0);
        let mut path = Vec::with_capacity(64);
        for sim in 0..sims {
            // A simulation is one rollout (tens of microseconds): reading the clock before
            // each keeps the budget to within one.
            if sim > 0 && clock.expired() {
                break;
            }
            path.clear();
            let mut at = 0;
            path.push(at);
            while nodes[at].expanded && nodes[at].children > 0 {
                at = self.select(&nodes, at);
                path.push(at);
            }
            // Result for the player who moved into `at`.
            let mut v = match nodes[at].pos {
                None => 1.0, // that move won at once
                Some(p) => {
                    Self::expand(&mut nodes, at);
                    if nodes[at].children == 0 {
                        1.0 // the side to move there has no move: lost
                    } else {
                        -random_rollout(&p, &mut self.rng)
                    }
                }
            };
            for &i in path.iter().rev() {
                nodes[i].visits += 1;
                nodes[i].total += v;
                v = -v;
            }
        }
        let root = &nodes[0];
        let mut children: Vec<usize> = (root.first_child as usize
            ..(root.first_child + root.children as u32) as usize)
            .collect();
        // Shuffle first so that equal visit counts are broken at random (seeded).
        children.shuffle(&mut self.rng);
        children.sort_by(|&a, &b| nodes[b].visits.cmp(&nodes[a].visits));
        let best = children[0];
        let mover = pos.to_move();
        let top = children
            .iter()
            .take(5)
            .map(|&c| MoveScore {
                notation: nodes[c].mv.expect("child has a move").notation(mover),
                visits: Some(nodes[c].visits),
                score: Some(nodes[c].q()),
            })
            .collect();
        // Expected line: most visited child at each level.
        let mut pv = Vec::new();
        let mut at = best;
        let mut side = mover;
        loop {
            pv.push(nodes[at].mv.expect("child has a move").notation(side));
            side = side.opponent();
            let n = &nodes[at];
            if !n.expanded || n.children == 0 || pv.len() >= 16 {
                break;
            }
            let next = (n.first_child as usize..(n.first_child + n.children as u32) as usize)
                .max_by_key(|&c| nodes[c].visits)
                .expect("children");
            if nodes[next].visits == 0 {
                break;
            }
            at = next;
        }
        Ok(ChosenMove {
            mv: nodes[best].mv.expect("child has a move"),
            analysis: Analysis {
                value: Some(nodes[best].q()),
                top,
                pv,
                nodes: Some(nodes[0].visits as u64),
                depth: None,
                batch_fill: None,
            },
        })
    }

    fn new_game(&mut self, seed: u64) {
        self.rng = SmallRng::seed_from_u64(seed);
    }
}
