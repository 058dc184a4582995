//! Minibatch training on a window of samples: which samples a window holds, and the steps
//! that train on it (encoding, mirroring and the value target happen here, at training
//! time, so shards never depend on the feature encoding). Used by the local loop, the fleet
//! trainer and `bao learn`.

use std::path::PathBuf;

use anyhow::Context;
use rand::rngs::SmallRng;
use rand::Rng;

use super::label::read_labels;
use super::runconfig::RunConfig;
use super::schedule::Minibatches;
use crate::dataio::shard::{list_shards, read_shard, Sample};
use crate::game::features::Encoding;
use crate::game::{mirror_action, ACTIONS};
use crate::neuralnet::{AuxTargets, Learner, Losses};

/// The newest `size` fully searched samples from `dirs`, given newest first.
pub fn load_window(dirs: &[PathBuf], size: usize) -> anyhow::Result<Vec<Sample>> {
    let mut window: Vec<Sample> = Vec::new();
    for d in dirs {
        if window.len() >= size {
            break;
        }
        let mut shards = list_shards(d)?;
        shards.reverse();
        for shard in shards {
            window.extend(
                read_shard(&shard)?
                    .samples
                    .into_iter()
                    .filter(|s| s.full_search),
            );
        }
    }
    window.truncate(size);
    Ok(window)
}

/// The solver labels a run mixes into its minibatches (`[train] labels`), or none; a
/// configured directory without labels is an error, not a silent run without them.
pub fn load_labels(config: &RunConfig) -> anyhow::Result<Vec<Sample>> {
    let Some(dir) = &config.train.labels else {
        return Ok(Vec::new());
    };
    let labels = read_labels(dir, config.variant)
        .with_context(|| format!("[train] labels: cannot read {}", dir.display()))?;
    anyhow::ensure!(
        !labels.is_empty(),
        "[train] labels: no label shards in {} (write them with `bao label --out {}`)",
        dir.display(),
        dir.display()
    );
    Ok(labels)
}

/// Trains the minibatches `plan` describes, drawn from `window` and, for
/// `plan.labels_fraction` of each, from `labels`; calls `on_step` after each step and returns
/// the mean losses.
pub fn train_steps(
    learner: &mut Learner,
    window: &[Sample],
    labels: &[Sample],
    plan: &mut Minibatches,
    mut on_step: impl FnMut(&Losses) -> anyhow::Result<()>,
) -> anyhow::Result<Losses> {
    anyhow::ensure!(!window.is_empty(), "no training samples");
    let labelled = labelled_per_batch(plan.batch_size, plan.labels_fraction);
    anyhow::ensure!(
        labelled == 0 || !labels.is_empty(),
        "a labels_fraction of {} needs solver labels",
        plan.labels_fraction
    );
    let mut batch = Batch::new(plan.batch_size, learner.network().encoding());
    let mut sums = [0f64; 7];
    for _ in 0..plan.steps {
        batch.fill(
            window,
            labels,
            labelled,
            &mut plan.rng,
            plan.mirror,
            plan.q_mix,
        )?;
        let aux = AuxTargets {
            margin: &batch.margin,
            reply: &batch.reply,
        };
        let l = learner.train_step_aux(
            &batch.features,
            &batch.masks,
            &batch.policy,
            &batch.value,
            Some(aux),
        )?;
        on_step(&l)?;
        for (s, v) in sums.iter_mut().zip([
            l.policy,
            l.value,
            l.margin,
            l.reply,
            l.total,
            l.policy_entropy,
            l.value_accuracy,
        ]) {
            *s += v as f64;
        }
    }
    let mean = sums.map(|s| (s / plan.steps.max(1) as f64) as f32);
    Ok(Losses {
        policy: mean[0],
        value: mean[1],
        margin: mean[2],
        reply: mean[3],
        total: mean[4],
        policy_entropy: mean[5],
        value_accuracy: mean[6],
    })
}

/// Samples of a minibatch of `batch_size` drawn from the labels at `fraction`.
pub fn labelled_per_batch(batch_size: usize, fraction: f32) -> usize {
    ((batch_size as f64 * fraction as f64).round() as usize).min(batch_size)
}

/// A training minibatch, refilled in place.
struct Batch {
    n: usize,
    encoding: Encoding,
    features: Vec<f32>,
    masks: Vec<u64>,
    policy: Vec<f32>,
    value: Vec<f32>,
    /// Auxiliary targets: seed margin (NaN: none) and reply action (-1: none).
    margin: Vec<f32>,
    reply: Vec<i64>,
}

impl Batch {
    fn new(n: usize, encoding: Encoding) -> Batch {
        Batch {
            n,
            encoding,
            features: vec![0.0; n * encoding.features()],
            masks: vec![0; n],
            policy: vec![0.0; n * ACTIONS],
            value: vec![0.0; n],
            margin: vec![f32::NAN; n],
            reply: vec![-1; n],
        }
    }

    /// Draws the first `labelled` samples uniformly from `labels`, the rest uniformly from
    /// the window (each mirrored at random when `mirror`).
    fn fill(
        &mut self,
        window: &[Sample],
        labels: &[Sample],
        labelled: usize,
        rng: &mut SmallRng,
        mirror: bool,
        q_mix: f32,
    ) -> anyhow::Result<()> {
        for i in 0..self.n {
            let from = if i < labelled { labels } else { window };
            let s = &from[rng.random_range(0..from.len())];
            let mut pos = s.position()?;
            let policy = &mut self.policy[i * ACTIONS..(i + 1) * ACTIONS];
            let reply = s.reply.map(|r| r as usize);
            if mirror && rng.random_bool(0.5) {
                self.reply[i] = reply.map_or(-1, |r| mirror_action(r) as i64);
                pos = pos.mirrored();
                policy.fill(0.0);
                for a in 0..ACTIONS {
                    policy[mirror_action(a)] = s.policy[a];
                }
                self.masks[i] = (0..ACTIONS)
                    .filter(|&a| s.legal >> a & 1 == 1)
                    .fold(0, |m, a| m | 1 << mirror_action(a));
            } else {
                self.reply[i] = reply.map_or(-1, |r| r as i64);
                policy.copy_from_slice(&s.policy);
                self.masks[i] = s.legal;
            }
            self.margin[i] = s.margin.unwrap_or(f32::NAN);
            let f = self.encoding.features();
            self.encoding
                .encode(&pos, &mut self.features[i * f..(i + 1) * f]);
            self.value[i] = (1.0 - q_mix) * s.z + q_mix * s.q;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use rand::SeedableRng;

    use super::*;
    use crate::game::{Position, Variant};

    fn sample(z: f32) -> Sample {
        let pos = Position::start(Variant::Kujifunza);
        Sample {
            position: pos.to_bytes(),
            legal: pos.legal_moves().mask(),
            policy: [0.0; ACTIONS],
            z,
            q: z,
            game_id: 0,
            ply: 0,
            full_search: true,
            reply: None,
            margin: None,
        }
    }

    /// `labels_fraction` (issue 18): a minibatch of 256 at 0.25 holds exactly 64 labels, and
    /// the share rounds to whole samples.
    #[test]
    fn a_minibatch_draws_its_stated_share_from_the_labels() {
        assert_eq!(labelled_per_batch(256, 0.25), 64);
        assert_eq!(labelled_per_batch(10, 0.25), 3);
        assert_eq!(labelled_per_batch(256, 0.0), 0);
        let (window, labels) = (vec![sample(0.5)], vec![sample(1.0)]);
        let mut batch = Batch::new(256, Encoding::Board);
        let mut rng = SmallRng::seed_from_u64(1);
        let k = labelled_per_batch(256, 0.25);
        batch
            .fill(&window, &labels, k, &mut rng, true, 0.0)
            .unwrap();
        assert_eq!(batch.value.iter().filter(|&&v| v == 1.0).count(), 64);
        assert_eq!(batch.value.iter().filter(|&&v| v == 0.5).count(), 192);
    }
}
