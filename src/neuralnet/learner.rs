//! [`Learner`]: one training step of a [`Network`] on a batch of samples.
//!
//! Loss = masked policy cross-entropy + `value_loss_weight` x value MSE, plus L2 weight decay;
//! a network with auxiliary heads adds `margin_loss_weight` x seed-margin MSE and
//! `reply_loss_weight` x the opponent's reply cross-entropy, each over the samples that have
//! the target (KataGo weighs its opponent-policy head 0.15).
//! The optimizer (Adam or SGD with momentum) is implemented here on the `VarStore`'s tensors
//! rather than with `tch::nn::Optimizer`, because that type does not expose its state: owning
//! the moment tensors lets a checkpoint carry them (`NAME.optim.safetensors`, counters in
//! `NAME.optim.json`) so that a resumed run continues bit-for-bit as if never stopped.
//!
//! Weight decay is classic L2 for `adam` and `sgd` (`grad += weight_decay * w`, i.e.
//! `weight_decay / 2 * |w|^2` added to the loss) and decoupled for `adamw` (Loshchilov and
//! Hutter: `w -= lr * weight_decay * w` beside the Adam step, so the decay does not pass
//! through Adam's per-weight scaling). Either way it applies to convolution and linear
//! weights only (tensors of rank >= 2), not to biases or batch-norm parameters, as in
//! AlphaZero and KataGo.

use std::collections::BTreeMap;
use std::path::Path;

use anyhow::Context;
use serde::{Deserialize, Serialize};
use tch::{Device, Kind, Tensor};

use super::checkpoint::{self, Lineage};
use super::network::{legal_tensor, Network};
use crate::game::ACTIONS;

/// Which update rule.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum OptimizerKind {
    #[default]
    Adam,
    /// Adam with decoupled weight decay.
    AdamW,
    /// SGD with (heavy-ball, PyTorch-style) momentum.
    Sgd,
}

/// Optimizer settings (TOML `[optimizer]`); every field has a default.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct OptimizerConfig {
    pub kind: OptimizerKind,
    /// Initial learning rate; [`Learner::set_learning_rate`] changes it between steps.
    pub learning_rate: f64,
    /// L2 coefficient on convolution and linear weights.
    pub weight_decay: f64,
    /// SGD momentum (ignored by Adam).
    pub momentum: f64,
    /// Adam's first-moment decay (ignored by SGD).
    pub beta1: f64,
    /// Adam's second-moment decay (ignored by SGD).
    pub beta2: f64,
    /// Adam's denominator epsilon (ignored by SGD).
    pub eps: f64,
    /// Weight of the value MSE relative to the policy cross-entropy.
    pub value_loss_weight: f64,
    /// Weight of the seed-margin MSE (networks with auxiliary heads).
    pub margin_loss_weight: f64,
    /// Weight of the opponent's reply cross-entropy (networks with auxiliary heads).
    pub reply_loss_weight: f64,
}

impl Default for OptimizerConfig {
    fn default() -> OptimizerConfig {
        OptimizerConfig {
            kind: OptimizerKind::Adam,
            learning_rate: 1e-3,
            weight_decay: 1e-4,
            momentum: 0.9,
            beta1: 0.9,
            beta2: 0.999,
            eps: 1e-8,
            value_loss_weight: 1.0,
            margin_loss_weight: 0.5,
            reply_loss_weight: 0.15,
        }
    }
}

impl OptimizerConfig {
    pub fn validate(&self) -> anyhow::Result<()> {
        let finite_nonneg = |v: f64, name: &str| {
            anyhow::ensure!(
                v.is_finite() && v >= 0.0,
                "optimizer: `{name}` = {v} must be >= 0"
            );
            Ok(())
        };
        finite_nonneg(self.learning_rate, "learning_rate")?;
        finite_nonneg(self.weight_decay, "weight_decay")?;
        finite_nonneg(self.value_loss_weight, "value_loss_weight")?;
        finite_nonneg(self.margin_loss_weight, "margin_loss_weight")?;
        finite_nonneg(self.reply_loss_weight, "reply_loss_weight")?;
        for (v, name) in [
            (self.momentum, "momentum"),
            (self.beta1, "beta1"),
            (self.beta2, "beta2"),
        ] {
            anyhow::ensure!(
                (0.0..1.0).contains(&v),
                "optimizer: `{name}` = {v} must be in [0, 1)"
            );
        }
        anyhow::ensure!(
            self.eps > 0.0,
            "optimizer: `eps` = {} must be > 0",
            self.eps
        );
        Ok(())
    }
}

/// What one step measured (all before the update, on the given batch).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Losses {
    /// Cross-entropy of the policy targets under the masked policy (nats per sample).
    pub policy: f32,
    /// Mean squared error of the value.
    pub value: f32,
    /// Seed-margin MSE and the reply's cross-entropy (nats), over the samples with those
    /// targets; 0 without auxiliary heads or targets.
    #[serde(default)]
    pub margin: f32,
    #[serde(default)]
    pub reply: f32,
    /// Every loss with its weight (weight decay excluded).
    pub total: f32,
    /// Mean entropy of the predicted policy (nats): collapse towards 0 flags overconfidence.
    pub policy_entropy: f32,
    /// Fraction of samples with a non-zero value target whose predicted value has the same
    /// sign (0 when there are none).
    pub value_accuracy: f32,
}

/// The mean of `per_sample(mask)` over the samples `present` marks (`mask` is 1.0 for them,
/// 0.0 for the others); `None` when none is.
fn masked_mean_loss(
    present: impl Iterator<Item = bool>,
    dev: Device,
    per_sample: impl FnOnce(&Tensor) -> Tensor,
) -> Option<Tensor> {
    let mask: Vec<f32> = present.map(|p| p as u8 as f32).collect();
    let count = mask.iter().sum::<f32>();
    (count > 0.0).then(|| {
        let mask = Tensor::from_slice(&mask).to_device(dev);
        per_sample(&mask).sum(Kind::Float) / count as f64
    })
}

/// Targets of the auxiliary heads for one batch; a network without them ignores them.
#[derive(Clone, Copy, Debug)]
pub struct AuxTargets<'a> {
    /// Final seed margins in `[-1, 1]`, NaN where a sample has none.
    pub margin: &'a [f32],
    /// The opponent's reply actions, -1 where a sample has none.
    pub reply: &'a [i64],
}

/// One trainable tensor and its optimizer state.
struct Param {
    name: String,
    var: Tensor,
    decay: bool,
    /// Adam first moment, or SGD momentum buffer.
    m: Tensor,
    /// Adam second moment (zeros and unused for SGD).
    v: Tensor,
}

/// Counters saved in `NAME.optim.json`.
#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct OptimizerFile {
    format: u32,
    kind: OptimizerKind,
    /// Updates applied so far (Adam's bias correction needs it).
    step: u64,
    learning_rate: f64,
}

/// A network being trained, with its optimizer.
pub struct Learner {
    net: Network,
    config: OptimizerConfig,
    params: Vec<Param>,
    learning_rate: f64,
}

impl std::fmt::Debug for Learner {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Learner")
            .field("net", &self.net)
            .field("config", &self.config)
            .field("learning_rate", &self.learning_rate)
            .finish()
    }
}

impl Learner {
    /// Starts training `net` with fresh optimizer state. The step counter continues from the
    /// network's lineage.
    pub fn new(net: Network, config: OptimizerConfig) -> anyhow::Result<Learner> {
        config.validate()?;
        net.ensure_full_precision("trained")?;
        let vars: BTreeMap<String, Tensor> = net.var_store().variables().into_iter().collect();
        let params = vars
            .into_iter()
            .filter(|(_, t)| t.requires_grad())
            .map(|(name, var)| Param {
                decay: var.dim() >= 2,
                m: var.zeros_like(),
                v: var.zeros_like(),
                name,
                var,
            })
            .collect();
        Ok(Learner {
            learning_rate: config.learning_rate,
            net,
            config,
            params,
        })
    }

    /// Loads checkpoint `path` and goes on with the optimizer saved beside it, of the kind it
    /// was saved with (`defaults` gives the other hyperparameters), or `None` when no
    /// optimizer state lies beside it. State that is there but cannot be resumed (malformed,
    /// from another save, another shape) is an error, not a silent fresh start.
    pub fn resume_saved(
        path: &Path,
        device: Device,
        defaults: OptimizerConfig,
    ) -> anyhow::Result<Option<Learner>> {
        let (_, json_path) = checkpoint::optimizer_paths(path)?;
        let text = match std::fs::read_to_string(&json_path) {
            Ok(text) => text,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(e).context(format!("cannot read {}", json_path.display())),
        };
        let file: OptimizerFile = serde_json::from_str(&text)
            .with_context(|| format!("optimizer state {} is malformed", json_path.display()))?;
        let config = OptimizerConfig {
            kind: file.kind,
            ..defaults
        };
        Self::resume(path, device, config).map(Some)
    }

    /// Loads checkpoint `path` and the optimizer state saved beside it by [`Self::save`].
    /// `config` supplies the hyperparameters (same as before for an exact resume); its `kind`
    /// must match the saved state. The learning rate resumes at the saved value.
    pub fn resume(path: &Path, device: Device, config: OptimizerConfig) -> anyhow::Result<Learner> {
        let net = Network::load(path, device)?;
        let mut learner = Learner::new(net, config)?;
        let (tensors_path, json_path) = checkpoint::optimizer_paths(path)?;
        let text = std::fs::read_to_string(&json_path).with_context(|| {
            format!(
                "cannot resume: no optimizer state {} beside the checkpoint",
                json_path.display()
            )
        })?;
        let file: OptimizerFile = serde_json::from_str(&text)
            .with_context(|| format!("optimizer state {} is malformed", json_path.display()))?;
        anyhow::ensure!(
            file.kind == learner.config.kind,
            "optimizer state {} is for {:?} but the config asks for {:?}",
            json_path.display(),
            file.kind,
            learner.config.kind
        );
        anyhow::ensure!(
            file.step == learner.net.lineage().step,
            "optimizer state {} is at step {} but the checkpoint at step {}: files of different saves",
            json_path.display(),
            file.step,
            learner.net.lineage().step
        );
        let stored: BTreeMap<String, Tensor> = Tensor::read_safetensors(&tensors_path)
            .map_err(|e| {
                anyhow::anyhow!(
                    "optimizer state {} is unreadable or corrupt: {e}",
                    tensors_path.display()
                )
            })?
            .into_iter()
            .collect();
        for p in &mut learner.params {
            for (prefix, slot) in [("m/", &mut p.m), ("v/", &mut p.v)] {
                let name = format!("{prefix}{}", p.name);
                let src = stored.get(&name).with_context(|| {
                    format!("optimizer state {} lacks `{name}`", tensors_path.display())
                })?;
                anyhow::ensure!(
                    src.size() == slot.size(),
                    "optimizer state {}: `{name}` has shape {:?}, expected {:?}",
                    tensors_path.display(),
                    src.size(),
                    slot.size()
                );
                slot.copy_(src);
            }
        }
        learner.learning_rate = file.learning_rate;
        Ok(learner)
    }

    pub fn network(&self) -> &Network {
        &self.net
    }

    pub fn into_network(self) -> Network {
        self.net
    }

    /// Records the run's search settings in every checkpoint this learner saves.
    pub fn set_search_params(&mut self, search: crate::search::SearchParams) {
        self.net.set_search_params(Some(search));
    }

    pub fn config(&self) -> &OptimizerConfig {
        &self.config
    }

    /// Optimizer steps taken (including those before a resume).
    pub fn step(&self) -> u64 {
        self.net.lineage().step
    }

    /// Generation and parent recorded by [`Self::save`]; the step is kept by the learner.
    pub fn set_lineage(&mut self, generation: u64, parent: Option<String>) {
        let step = self.net.lineage().step;
        self.net.set_lineage(Lineage {
            step,
            generation,
            parent,
        });
    }

    pub fn learning_rate(&self) -> f64 {
        self.learning_rate
    }

    /// Learning rate for the following steps (schedules call this before each step).
    pub fn set_learning_rate(&mut self, lr: f64) -> anyhow::Result<()> {
        anyhow::ensure!(
            lr.is_finite() && lr >= 0.0,
            "learning rate {lr} must be >= 0"
        );
        self.learning_rate = lr;
        Ok(())
    }

    /// One optimizer step on a batch of `n = masks.len()` samples: `features` `n` encoded positions,
    /// `masks` legal-action bitmasks, `policy_targets` `n * ACTIONS` distributions (no mass on
    /// illegal actions), `value_targets` `n` results in `[-1, 1]` for the side to move.
    /// Batch norm runs in training mode. A non-finite loss is an error and leaves the weights
    /// untouched.
    pub fn train_step(
        &mut self,
        features: &[f32],
        masks: &[u64],
        policy_targets: &[f32],
        value_targets: &[f32],
    ) -> anyhow::Result<Losses> {
        self.train_step_aux(features, masks, policy_targets, value_targets, None)
    }

    /// [`Self::train_step`] with targets for the auxiliary heads (`aux`, `n` each).
    pub fn train_step_aux(
        &mut self,
        features: &[f32],
        masks: &[u64],
        policy_targets: &[f32],
        value_targets: &[f32],
        aux: Option<AuxTargets>,
    ) -> anyhow::Result<Losses> {
        super::flush_denormals();
        let n = masks.len();
        let features_per = self.net.encoding().features();
        anyhow::ensure!(n > 0, "empty training batch");
        anyhow::ensure!(
            features.len() == n * features_per
                && policy_targets.len() == n * ACTIONS
                && value_targets.len() == n,
            "training batch of {n}: got {} features, {} policy targets, {} value targets \
             (expected {}, {}, {n})",
            features.len(),
            policy_targets.len(),
            value_targets.len(),
            n * features_per,
            n * ACTIONS
        );
        let dev = self.net.device();
        let x = Tensor::from_slice(features)
            .to_device(dev)
            .view([n as i64, -1]);
        let legal = legal_tensor(masks, dev);
        let illegal = legal.logical_not();
        let pt = Tensor::from_slice(policy_targets)
            .to_device(dev)
            .view([n as i64, ACTIONS as i64]);
        let vt = Tensor::from_slice(value_targets).to_device(dev);
        let stray = f64::try_from(pt.masked_select(&illegal).abs().sum(Kind::Float))?;
        anyhow::ensure!(
            stray < 1e-6,
            "policy targets put mass {stray} on illegal actions"
        );
        if let Some(a) = aux {
            anyhow::ensure!(
                a.margin.len() == n && a.reply.len() == n,
                "training batch of {n}: got {} margin and {} reply targets",
                a.margin.len(),
                a.reply.len()
            );
            anyhow::ensure!(
                a.reply.iter().all(|&r| (-1..ACTIONS as i64).contains(&r)),
                "reply targets must be actions 0..{ACTIONS} or -1 (none)"
            );
        }

        let out = self.net.forward_train(&x, &legal);
        let (log_policy, value) = (&out.log_policy, &out.value);
        let logp = log_policy.masked_fill(&illegal, 0.0);
        let policy_loss = -(&pt * &logp)
            .sum_dim_intlist(1, false, Kind::Float)
            .mean(Kind::Float);
        let value_loss = (value - &vt).square().mean(Kind::Float);
        let mut total = &policy_loss + &value_loss * self.config.value_loss_weight;
        let (mut margin_loss, mut reply_loss) = (None, None);
        if let (Some((margin, reply_logp)), Some(a)) = (&out.aux, aux) {
            margin_loss = masked_mean_loss(a.margin.iter().map(|m| !m.is_nan()), dev, |mask| {
                let target = Tensor::from_slice(a.margin)
                    .to_device(dev)
                    .nan_to_num(0.0, None, None);
                (margin - target).square() * mask
            });
            reply_loss = masked_mean_loss(a.reply.iter().map(|&r| r >= 0), dev, |mask| {
                let target = Tensor::from_slice(a.reply).to_device(dev).clamp_min(0);
                -reply_logp
                    .gather(1, &target.unsqueeze(1), false)
                    .squeeze_dim(1)
                    * mask
            });
            for (loss, weight) in [
                (&margin_loss, self.config.margin_loss_weight),
                (&reply_loss, self.config.reply_loss_weight),
            ] {
                if let Some(l) = loss {
                    total += l * weight;
                }
            }
        }
        let total_f = f64::try_from(&total)? as f32;
        anyhow::ensure!(
            total_f.is_finite(),
            "training loss is not finite ({total_f})"
        );

        for p in &mut self.params {
            p.var.zero_grad();
        }
        total.backward();
        tch::no_grad(|| self.update());
        self.net.lineage_mut().step += 1;

        let (entropy, values) = tch::no_grad(|| {
            let entropy = -(log_policy.exp() * &logp).sum_dim_intlist(1, false, Kind::Float);
            (
                entropy.mean(Kind::Float),
                value.detach().to_device(Device::Cpu),
            )
        });
        let mut predicted = vec![0f32; n];
        values.f_copy_data(&mut predicted, n)?;
        let decided = value_targets.iter().filter(|t| **t != 0.0).count();
        let agree = predicted
            .iter()
            .zip(value_targets)
            .filter(|(p, t)| **t != 0.0 && **p * **t > 0.0)
            .count();
        let scalar = |t: &Option<Tensor>| -> anyhow::Result<f32> {
            Ok(match t {
                Some(t) => f64::try_from(t)? as f32,
                None => 0.0,
            })
        };
        Ok(Losses {
            policy: f64::try_from(&policy_loss)? as f32,
            value: f64::try_from(&value_loss)? as f32,
            margin: scalar(&margin_loss)?,
            reply: scalar(&reply_loss)?,
            total: total_f,
            policy_entropy: f64::try_from(&entropy)? as f32,
            value_accuracy: if decided == 0 {
                0.0
            } else {
                agree as f32 / decided as f32
            },
        })
    }

    /// Applies one update from the gradients (inside `no_grad`).
    fn update(&mut self) {
        let c = &self.config;
        let lr = self.learning_rate;
        let t = (self.net.lineage().step + 1) as f64;
        for p in &mut self.params {
            let grad = p.var.grad();
            if !grad.defined() {
                continue;
            }
            let decay = p.decay && c.weight_decay > 0.0;
            let g = if decay && c.kind != OptimizerKind::AdamW {
                &grad + &p.var * c.weight_decay
            } else {
                grad
            };
            if decay && c.kind == OptimizerKind::AdamW {
                let _ = p.var.f_sub_(&(&p.var * (lr * c.weight_decay)));
            }
            match c.kind {
                OptimizerKind::Adam | OptimizerKind::AdamW => {
                    p.m.copy_(&(&p.m * c.beta1 + &g * (1.0 - c.beta1)));
                    p.v.copy_(&(&p.v * c.beta2 + g.square() * (1.0 - c.beta2)));
                    let bias1 = 1.0 - c.beta1.powf(t);
                    let bias2 = 1.0 - c.beta2.powf(t);
                    let denom = (&p.v / bias2).sqrt() + c.eps;
                    let delta = &p.m / denom * (lr / bias1);
                    let _ = p.var.f_sub_(&delta);
                }
                OptimizerKind::Sgd => {
                    p.m.copy_(&(&p.m * c.momentum + &g));
                    let _ = p.var.f_sub_(&(&p.m * lr));
                }
            }
        }
    }

    /// Saves the network (checkpoint `path`, see [`Network::save`]) and the optimizer state
    /// beside it, all atomically; the optimizer files are written first so a complete
    /// checkpoint sidecar implies they are there.
    pub fn save(&self, path: &Path) -> anyhow::Result<()> {
        let (tensors_path, json_path) = checkpoint::optimizer_paths(path)?;
        let mut named = Vec::with_capacity(2 * self.params.len());
        for p in &self.params {
            named.push((format!("m/{}", p.name), p.m.to_device(Device::Cpu)));
            named.push((format!("v/{}", p.name), p.v.to_device(Device::Cpu)));
        }
        crate::dataio::atomic::write_with(&tensors_path, |tmp| {
            Tensor::write_safetensors(&named, tmp).map_err(anyhow::Error::from)
        })?;
        let file = OptimizerFile {
            format: 1,
            kind: self.config.kind,
            step: self.net.lineage().step,
            learning_rate: self.learning_rate,
        };
        let text = serde_json::to_string_pretty(&file)? + "\n";
        crate::dataio::atomic::write_with(&json_path, |tmp| Ok(std::fs::write(tmp, text)?))?;
        self.net.save(path, self.net.lineage())
    }
}
