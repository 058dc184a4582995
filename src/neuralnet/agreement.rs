//! How closely a low-precision forward pass follows the f32 one: the gates a bf16 pass must
//! pass before it may judge positions for a player (`tests/native_lowp.rs`, `bao bench net
//! --gate`).
//!
//! Why these two figures: a search reads the policy to order its moves and the value to judge
//! leaves. Policy top-1 agreement says whether the pass would send the search down the same
//! first line; the mean absolute value difference is the error a leaf's value carries (on the
//! [-1, 1] scale, 0.01 is half a percentage point of winning chance).

use rand::SeedableRng;

use crate::game::{Position, Variant, ACTIONS};
use crate::search::Evaluator;

/// Top-1 agreement a low-precision pass must reach with the f32 pass.
pub const MIN_TOP1: f64 = 0.99;
/// The largest mean absolute value difference from the f32 pass a low-precision pass may have.
pub const MAX_MEAN_VALUE_DIFF: f64 = 0.01;

/// A pass's outputs against the reference pass's on the same positions.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Agreement {
    pub positions: usize,
    /// Share of positions whose most probable legal move is the same.
    pub top1: f64,
    /// Mean and largest absolute difference of the values.
    pub mean_value_diff: f64,
    pub max_value_diff: f64,
    /// Largest absolute difference of any move's probability.
    pub max_policy_diff: f64,
}

impl Agreement {
    /// True when both gates ([`MIN_TOP1`], [`MAX_MEAN_VALUE_DIFF`]) hold.
    pub fn passes(&self) -> bool {
        self.top1 >= MIN_TOP1 && self.mean_value_diff <= MAX_MEAN_VALUE_DIFF
    }
}

impl std::fmt::Display for Agreement {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} positions: top-1 {:.2}% (gate {:.0}%), value diff mean {:.4} max {:.4} (gate {}), policy diff max {:.4}",
            self.positions,
            100.0 * self.top1,
            100.0 * MIN_TOP1,
            self.mean_value_diff,
            self.max_value_diff,
            MAX_MEAN_VALUE_DIFF,
            self.max_policy_diff
        )
    }
}

/// The held-out sample the gates are measured on: `n` positions of `variant` with a legal
/// move, random walks of 0 to 80 plies from a fixed seed (no network was trained on them).
pub fn gate_positions(variant: Variant, n: usize) -> Vec<Position> {
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(20261207);
    crate::game::random_games::sample_positions(variant, n, 0..80, &mut rng)
}

/// `other`'s outputs against `reference`'s on `positions`, judged in batches of `batch` (a
/// player's 8, say: both passes see the calls a search makes).
pub fn agreement(
    reference: &mut dyn Evaluator,
    other: &mut dyn Evaluator,
    positions: &[Position],
    batch: usize,
) -> anyhow::Result<Agreement> {
    anyhow::ensure!(
        !positions.is_empty() && batch > 0,
        "no positions to compare"
    );
    let (mut same, mut sum, mut max_v, mut max_p) = (0usize, 0.0f64, 0.0f64, 0.0f64);
    for chunk in positions.chunks(batch) {
        let masks: Vec<u64> = chunk.iter().map(|p| p.legal_moves().mask()).collect();
        let n = chunk.len();
        let judge = |e: &mut dyn Evaluator| -> anyhow::Result<(Vec<f32>, Vec<f32>)> {
            let (mut p, mut v) = (vec![0.0; n * ACTIONS], vec![0.0; n]);
            e.evaluate(chunk, &masks, &mut p, &mut v)?;
            Ok((p, v))
        };
        let (p_ref, v_ref) = judge(reference)?;
        let (p_other, v_other) = judge(other)?;
        for i in 0..n {
            let row = |p: &[f32]| p[i * ACTIONS..(i + 1) * ACTIONS].to_vec();
            let (a, b) = (row(&p_ref), row(&p_other));
            same += (top1(&a, masks[i]) == top1(&b, masks[i])) as usize;
            for (x, y) in a.iter().zip(&b) {
                max_p = max_p.max((x - y).abs() as f64);
            }
            let d = (v_ref[i] - v_other[i]).abs() as f64;
            sum += d;
            max_v = max_v.max(d);
        }
    }
    Ok(Agreement {
        positions: positions.len(),
        top1: same as f64 / positions.len() as f64,
        mean_value_diff: sum / positions.len() as f64,
        max_value_diff: max_v,
        max_policy_diff: max_p,
    })
}

/// The legal action with the highest probability (the first of equals).
fn top1(policy: &[f32], mask: u64) -> Option<usize> {
    (0..ACTIONS)
        .filter(|a| mask >> a & 1 == 1)
        .fold(None, |best: Option<usize>, a| match best {
            Some(b) if policy[b] >= policy[a] => Some(b),
            _ => Some(a),
        })
}
