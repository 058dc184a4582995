//! The static evaluation of the alpha-beta baseline, in centi-seeds for the side to move.
//!
//! Bao is won by emptying the opponent's front row or leaving them without a move, and seeds
//! change hands only by captures from front row to front row. So the evaluation counts:
//!
//! - **material**: seeds owned (board + hand) minus the opponent's, 100 per seed. Every seed
//!   taken is a seed the opponent can no longer capture with or defend with.
//! - **front rows**: seeds in one's own front row (they both attack and keep the game alive)
//!   and occupied front holes (each one more the opponent must take before the row is empty).
//! - **mobility**: holes that can start a move (2+ seeds in mtaji, occupied front holes in
//!   namua), since a player with none has lost.
//! - **threats**: facing front holes that are both occupied are where captures happen. The
//!   side to move strikes first, so its best target counts fully and the opponent's only in
//!   part (the move may parry it).
//!
//! Weights are plain fields so that they can be tuned by matches (`Weights::default()` is what
//! the `alphabeta` player uses).

use crate::game::{facing, Position, Side};

/// Evaluation weights, per unit (see module docs).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Weights {
    pub material: i32,
    pub front_seed: i32,
    pub front_hole: i32,
    pub mobility: i32,
    pub own_threat: i32,
    pub their_threat: i32,
}

impl Default for Weights {
    fn default() -> Weights {
        Weights {
            material: 100,
            front_seed: 10,
            front_hole: 25,
            mobility: 8,
            own_threat: 60,
            their_threat: 30,
        }
    }
}

/// Per-side figures the evaluation combines.
struct SideStats {
    material: i32,
    front_seeds: i32,
    front_holes: i32,
    mobile: i32,
}

fn stats(pos: &Position, side: Side) -> SideStats {
    let ring = pos.ring(side);
    let hand = pos.hand(side) as i32;
    let front = &ring[..8];
    let mobile = if hand > 0 {
        front.iter().filter(|&&c| c > 0).count()
    } else {
        ring.iter().filter(|&&c| c >= 2).count()
    } as i32;
    SideStats {
        material: ring.iter().map(|&c| c as i32).sum::<i32>() + hand,
        front_seeds: front.iter().map(|&c| c as i32).sum(),
        front_holes: front.iter().filter(|&&c| c > 0).count() as i32,
        mobile,
    }
}

/// The largest opponent front hole that faces an occupied front hole of `attacker`.
fn best_target(pos: &Position, attacker: Side) -> i32 {
    let mine = pos.ring(attacker);
    let theirs = pos.ring(attacker.opponent());
    (0..8)
        .filter(|&r| mine[r] > 0)
        .map(|r| theirs[facing(r)] as i32)
        .max()
        .unwrap_or(0)
}

/// The evaluation of `pos` for its side to move (positive = good for them).
pub fn evaluate(pos: &Position, w: &Weights) -> i32 {
    let me = pos.to_move();
    let op = me.opponent();
    let (a, b) = (stats(pos, me), stats(pos, op));
    w.material * (a.material - b.material)
        + w.front_seed * (a.front_seeds - b.front_seeds)
        + w.front_hole * (a.front_holes - b.front_holes)
        + w.mobility * (a.mobile - b.mobile)
        + w.own_threat * best_target(pos, me)
        - w.their_threat * best_target(pos, op)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::game::Variant;

    #[test]
    fn start_positions_are_nearly_even_and_material_dominates() {
        for v in Variant::ALL {
            let s = Position::start(v);
            // Symmetric start: only the threat terms differ (the mover strikes first).
            let e = evaluate(&s, &Weights::default());
            assert!(e.abs() <= 60 * 6, "{v}: {e}");
        }
        // A side a few seeds up scores higher than the side a few seeds down.
        let up = Position::from_json(
            r#"{"variant":"kujifunza","to_move":"S",
            "S":{"front":[3,3,3,3,3,3,3,3],"back":[2,2,2,2,2,2,2,2],"hand":0,"nyumba":false},
            "N":{"front":[1,1,1,1,1,1,1,1],"back":[2,2,2,2,2,2,2,2],"hand":0,"nyumba":false},
            "takasia":null}"#,
        )
        .unwrap();
        assert!(evaluate(&up, &Weights::default()) > 1000);
    }
}
