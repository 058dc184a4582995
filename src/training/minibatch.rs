//! Minibatch training on a window of samples: which samples a window holds, and the steps
//! that train on it (encoding, mirroring and the value target happen here, at training
//! time, so shards never depend on the feature encoding). Used by the local loop, the fleet
//! trainer and `bao learn`.

use std::path::PathBuf;

use anyhow::Context;
use rand::rngs::SmallRng;
use rand::Rng;

use crate::dataio::shard::{list_shards, read_shard, Sample};
use crate::game::features::Encoding;
use crate::game::{mirror_action, ACTIONS};
use crate::neuralnet::{AuxTargets, Learner, Losses, Network};
use crate::training::label::read_labels;
use crate::training::runconfig::RunConfig;
use crate::training::schedule::Minibatches;

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

/// A frozen network whose outputs become training targets: knowledge distillation
/// (`bao learn --teacher`). A student of another size learns what the teacher's search-trained
/// judgement is on every position, not the noisier visit counts and game results it was
/// itself trained on, and the positions may come from any games. Used to try smaller, faster
/// networks at equal time without the self-play hours a network from nothing would need.
pub struct Teacher {
    net: Network,
    weight: f32,
}

impl Teacher {
    /// `weight` (0 < w <= 1): every target becomes `(1 - w) * sample's + w * teacher's`, the
    /// policy (probabilities over the legal moves) and the value alike. The teacher must read
    /// the student's inputs (same variant and feature encoding), since it judges the
    /// minibatch's encoded features as they are.
    pub fn new(net: Network, weight: f32, student: &Network) -> anyhow::Result<Teacher> {
        anyhow::ensure!(
            weight > 0.0 && weight <= 1.0,
            "teacher weight {weight}: must lie in (0, 1]"
        );
        net.ensure_variant(student.variant())?;
        anyhow::ensure!(
            net.encoding() == student.encoding(),
            "the teacher reads {:?} inputs and the student {:?}: a teacher must read the \
             student's features (set move_features / threat_features alike)",
            net.encoding(),
            student.encoding()
        );
        Ok(Teacher { net, weight })
    }

    /// Blends the teacher's judgement of the batch's positions into its targets.
    fn relabel(&self, batch: &mut Batch) -> anyhow::Result<()> {
        let out = self.net.infer(&batch.features, &batch.masks)?;
        let w = self.weight;
        for (i, row) in out.chunks_exact(ACTIONS + 1).enumerate() {
            let policy = &mut batch.policy[i * ACTIONS..(i + 1) * ACTIONS];
            for (p, t) in policy.iter_mut().zip(&row[..ACTIONS]) {
                *p = (1.0 - w) * *p + w * t;
            }
            batch.value[i] = (1.0 - w) * batch.value[i] + w * row[ACTIONS];
        }
        Ok(())
    }
}

/// Trains the minibatches `plan` describes, drawn from `window` and, for
/// `plan.labels_fraction` of each, from `labels`, their targets blended with a `teacher`'s
/// when one is given; calls `on_step` after each step and returns the mean losses.
pub fn train_steps(
    learner: &mut Learner,
    window: &[Sample],
    labels: &[Sample],
    teacher: Option<&Teacher>,
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
        if let Some(teacher) = teacher {
            teacher.relabel(&mut batch)?;
        }
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

    /// `labels_fraction`: a minibatch of 256 at 0.25 holds exactly 64 labels, and
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

    /// `--teacher-weight w`: each target is `(1 - w)` the sample's plus `w` the teacher's
    /// output for the same encoded position, policy and value alike.
    #[test]
    fn a_teachers_targets_are_the_stated_blend() {
        use crate::neuralnet::NetConfig;
        let config = NetConfig::preset("tiny").unwrap();
        let net = |seed| {
            Network::new_seeded(&config, Variant::Kujifunza, tch::Device::Cpu, seed).unwrap()
        };
        let mut s = sample(1.0);
        let first = s.legal.trailing_zeros() as usize;
        s.policy[first] = 1.0;
        let mut batch = Batch::new(4, Encoding::Board);
        let mut rng = SmallRng::seed_from_u64(1);
        batch
            .fill(&[s.clone()], &[], 0, &mut rng, false, 0.0)
            .unwrap();
        let (student, teacher) = (net(1), net(2));
        let out = teacher.infer(&batch.features[..Encoding::Board.features()], &[s.legal]);
        let out = out.unwrap();
        Teacher::new(teacher, 0.25, &student)
            .unwrap()
            .relabel(&mut batch)
            .unwrap();
        for i in 0..4 {
            let v = batch.value[i];
            assert!((v - (0.75 + 0.25 * out[ACTIONS])).abs() < 1e-6, "{v}");
            for (a, t) in out[..ACTIONS].iter().enumerate() {
                let hot = if a == first { 0.75 } else { 0.0 };
                assert!((batch.policy[i * ACTIONS + a] - (hot + 0.25 * t)).abs() < 1e-6);
            }
        }
    }
}
