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

/// Checks the buffers of an [`Evaluator::evaluate`] call against each other and returns the
/// batch size `n`, so every evaluator refuses a mis-sized call with the same clear message.
pub fn batch_size(features: &[f32], masks: &[u64], policy: &[f32], values: &[f32]) -> anyhow::Result<usize> {
    let n = masks.len();
    anyhow::ensure!(
        features.len() == n * FEATURES && policy.len() == n * ACTIONS && values.len() == n,
        "evaluator buffers for {n} positions hold {} features, {} policy and {} value floats; expected {}, {} and {n}",
        features.len(),
        policy.len(),
        values.len(),
        n * FEATURES,
        n * ACTIONS
    );
    Ok(n)
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
        batch_size(features, masks, policy, values)?;
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
