//! The one interface between search and whatever judges positions (a network, a uniform prior).

use crate::game::{Position, ACTIONS};

/// Judges a batch of positions. Search passes the `positions` and their `masks` (`n`
/// legal-action bitmasks, which search knows from expanding them); the evaluator writes
/// `policy` (`n * ACTIONS` probabilities, zero on illegal actions, summing to one) and
/// `values` (`n` expected results in `[-1, 1]` for the side to move).
///
/// The evaluator owns the encoding (a network writes [`crate::game::features`] into its own
/// input buffer, one buffer per batch), so a cache in front of it can key on the position
/// itself ([`Position::hash64`]) and search never touches network inputs.
pub trait Evaluator {
    fn evaluate(
        &mut self,
        positions: &[Position],
        masks: &[u64],
        policy: &mut [f32],
        values: &mut [f32],
    ) -> anyhow::Result<()>;

    /// A short description for logs and tables.
    fn name(&self) -> String;
}

/// Checks the buffers of an [`Evaluator::evaluate`] call against each other and returns the
/// batch size `n`, so every evaluator refuses a mis-sized call with the same clear message.
pub fn batch_size(
    positions: &[Position],
    masks: &[u64],
    policy: &[f32],
    values: &[f32],
) -> anyhow::Result<usize> {
    let n = positions.len();
    anyhow::ensure!(
        masks.len() == n && policy.len() == n * ACTIONS && values.len() == n,
        "evaluator buffers for {n} positions hold {} masks, {} policy and {} value floats; expected {n}, {} and {n}",
        masks.len(),
        policy.len(),
        values.len(),
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
        positions: &[Position],
        masks: &[u64],
        policy: &mut [f32],
        values: &mut [f32],
    ) -> anyhow::Result<()> {
        batch_size(positions, masks, policy, values)?;
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

/// A borrowed evaluator is an evaluator (a wrapper such as the self-play's leaf alpha-beta can
/// hold the caller's).
impl<E: Evaluator + ?Sized> Evaluator for &mut E {
    fn evaluate(
        &mut self,
        positions: &[Position],
        masks: &[u64],
        policy: &mut [f32],
        values: &mut [f32],
    ) -> anyhow::Result<()> {
        (**self).evaluate(positions, masks, policy, values)
    }
    fn name(&self) -> String {
        (**self).name()
    }
}

/// A boxed evaluator is an evaluator (players hold `Box<dyn Evaluator + Send>`).
impl<E: Evaluator + ?Sized> Evaluator for Box<E> {
    fn evaluate(
        &mut self,
        positions: &[Position],
        masks: &[u64],
        policy: &mut [f32],
        values: &mut [f32],
    ) -> anyhow::Result<()> {
        (**self).evaluate(positions, masks, policy, values)
    }
    fn name(&self) -> String {
        (**self).name()
    }
}
