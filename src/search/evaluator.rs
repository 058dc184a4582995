//! The one interface between search and whatever judges positions (a network, a uniform prior).

use crate::game::{features::FEATURES, ACTIONS};

/// Judges a batch of positions. Search fills `features` (`n * FEATURES` floats, see
/// [`crate::game::features`]) and `masks` (`n` legal-action bitmasks); the evaluator writes
/// `policy` (`n * ACTIONS` probabilities, zero on illegal actions, summing to one) and
/// `values` (`n` expected results in `[-1, 1]` for the side to move).
pub trait Evaluator {
    fn evaluate(
        &mut self,
        features: &[f32],
        masks: &[u64],
        policy: &mut [f32],
        values: &mut [f32],
    ) -> anyhow::Result<()>;

    /// A short description for logs and tables.
    fn name(&self) -> String;
}

/// Uniform priors over legal moves and value 0: search with no knowledge at all. Used in tests
/// and to measure search overhead alone.
#[derive(Clone, Copy, Debug, Default)]
pub struct UniformEvaluator;

impl Evaluator for UniformEvaluator {
    fn evaluate(
        &mut self,
        features: &[f32],
        masks: &[u64],
        policy: &mut [f32],
        values: &mut [f32],
    ) -> anyhow::Result<()> {
        let n = masks.len();
        anyhow::ensure!(features.len() == n * FEATURES, "feature buffer size mismatch");
        anyhow::ensure!(policy.len() == n * ACTIONS && values.len() == n, "output size mismatch");
        for (p, &m) in policy.chunks_mut(ACTIONS).zip(masks) {
            let k = m.count_ones().max(1) as f32;
            for (a, x) in p.iter_mut().enumerate() {
                *x = if m >> a & 1 == 1 { 1.0 / k } else { 0.0 };
            }
        }
        values.fill(0.0);
        Ok(())
    }

    fn name(&self) -> String {
        "uniform".into()
    }
}
