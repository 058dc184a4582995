//! [`Network`]: the model plus its weights, variant and lineage; building, saving, loading.

use std::collections::{BTreeMap, HashMap};
use std::path::Path;

use anyhow::Context;
use tch::{nn, Device, Kind, Tensor};

use super::checkpoint::{self, CheckpointMeta, Lineage, CHECKPOINT_FORMAT};
use super::config::NetConfig;
use super::model::Model;
use super::precision::Precision;
use crate::game::features::Encoding;
use crate::game::{Variant, ACTIONS};

/// Logit given to illegal actions: finite (a row with no legal action stays NaN-free, and
/// `0 * logp` stays 0 in the loss) yet far enough below any real logit that its probability
/// is exactly zero in f32.
const ILLEGAL_LOGIT: f64 = -1.0e9;

/// A policy/value network for one variant.
pub struct Network {
    vs: nn::VarStore,
    model: Model,
    config: NetConfig,
    variant: Variant,
    lineage: Lineage,
    /// The search settings of the run that trains this network, written into its sidecar.
    search: Option<crate::search::SearchParams>,
    /// The number format of the weights: f32 unless converted for inference.
    precision: Precision,
}

impl std::fmt::Debug for Network {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Network")
            .field("config", &self.config)
            .field("variant", &self.variant)
            .field("device", &self.vs.device())
            .field("precision", &self.precision)
            .field("lineage", &self.lineage)
            .finish()
    }
}

/// libtorch's random generator is one for the whole process: seeding it and drawing initial
/// weights from it must not interleave with another thread doing either (tests train many
/// runs in one process), so both happen under this lock.
static TORCH_GENERATOR: std::sync::Mutex<()> = std::sync::Mutex::new(());

impl Network {
    /// A freshly initialised network, its weights drawn from torch's generator as it stands
    /// (see [`Self::new_seeded`] for reproducible weights).
    pub fn new(config: &NetConfig, variant: Variant, device: Device) -> anyhow::Result<Network> {
        let _generator = TORCH_GENERATOR.lock().unwrap_or_else(|e| e.into_inner());
        Network::build(config, variant, device)
    }

    /// A freshly initialised network whose weights depend on `seed` alone: torch's generator
    /// is seeded and drawn from with no other thread in between.
    pub fn new_seeded(
        config: &NetConfig,
        variant: Variant,
        device: Device,
        seed: u64,
    ) -> anyhow::Result<Network> {
        let _generator = TORCH_GENERATOR.lock().unwrap_or_else(|e| e.into_inner());
        tch::manual_seed(seed as i64);
        Network::build(config, variant, device)
    }

    fn build(config: &NetConfig, variant: Variant, device: Device) -> anyhow::Result<Network> {
        config.validate()?;
        let vs = nn::VarStore::new(device);
        let model = Model::new(&vs.root(), config);
        Ok(Network {
            vs,
            model,
            config: config.clone(),
            variant,
            lineage: Lineage::default(),
            search: None,
            precision: Precision::F32,
        })
    }

    pub fn variant(&self) -> Variant {
        self.variant
    }

    pub fn config(&self) -> &NetConfig {
        &self.config
    }

    pub fn device(&self) -> Device {
        self.vs.device()
    }

    /// Step, generation and parent as loaded (default for a fresh network).
    pub fn lineage(&self) -> &Lineage {
        &self.lineage
    }

    pub fn set_lineage(&mut self, lineage: Lineage) {
        self.lineage = lineage;
    }

    /// Stops tracking gradients for all weights (inference-only copies, tracing).
    pub fn freeze(&mut self) {
        self.vs.freeze();
    }

    /// The number format of the weights (f32 unless converted for inference).
    pub fn precision(&self) -> Precision {
        self.precision
    }

    /// Converts this network for inference in `precision` (see [`Precision`]): the weights
    /// stop tracking gradients and, for bf16, are rounded, so a converted network refuses to
    /// be saved, copied, grown or trained, and cannot return to f32 (load the checkpoint
    /// again for that). [`Self::infer`] takes and returns f32 either way.
    pub fn set_inference_precision(&mut self, precision: Precision) -> anyhow::Result<()> {
        if precision == self.precision {
            return Ok(());
        }
        anyhow::ensure!(
            precision != Precision::Int8,
            "libtorch has no int8 forward pass: precision {precision} runs in the Rust pass only \
             (the CPU device, a backend other than `torch`)"
        );
        anyhow::ensure!(
            self.precision == Precision::F32,
            "a {} copy of a network cannot return to {precision} (its weights were rounded): \
             load the checkpoint again",
            self.precision
        );
        self.vs.freeze();
        match precision {
            Precision::F32 => {}
            Precision::Bf16 => self.vs.bfloat16(),
            Precision::Int8 => unreachable!("refused above"),
        }
        self.precision = precision;
        Ok(())
    }

    /// Fails on an inference-only copy in reduced precision: `what` it is asked to be (saved,
    /// copied, trained) would keep rounded weights as if they were the network's own.
    pub(crate) fn ensure_full_precision(&self, what: &str) -> anyhow::Result<()> {
        anyhow::ensure!(
            self.precision == Precision::F32,
            "a {} inference copy of a network cannot be {what}: load the checkpoint in f32",
            self.precision
        );
        Ok(())
    }

    /// The search settings recorded with these weights (see [`CheckpointMeta::search`]).
    pub fn search_params(&self) -> Option<&crate::search::SearchParams> {
        self.search.as_ref()
    }

    /// Records the search settings of the run that trains this network; every later save
    /// writes them into the sidecar.
    pub fn set_search_params(&mut self, search: Option<crate::search::SearchParams>) {
        self.search = search;
    }

    pub(crate) fn lineage_mut(&mut self) -> &mut Lineage {
        &mut self.lineage
    }

    /// Number of scalars in all tensors (weights and batch-norm statistics).
    pub fn parameters(&self) -> u64 {
        self.vs.variables().values().map(|t| t.numel() as u64).sum()
    }

    /// The input planes the network reads (its config's).
    pub fn encoding(&self) -> Encoding {
        self.config.encoding()
    }

    /// The variables (for the optimizer and tests).
    pub fn var_store(&self) -> &nn::VarStore {
        &self.vs
    }

    /// Masked log-probabilities `[n, ACTIONS]` and values `[n]`. `features`: `[n, encoding features]`
    /// (or `[n, PLANES, 4, 8]`) floats; `legal`: `[n, ACTIONS]` bool (see [`legal_tensor`]).
    /// `train` = batch norm on batch statistics. Gradients are tracked unless the caller is
    /// inside `tch::no_grad`.
    pub fn forward_t(&self, features: &Tensor, legal: &Tensor, train: bool) -> (Tensor, Tensor) {
        let (logits, value) = self.model.forward_t(features, train);
        (masked_log_softmax(&logits, legal), value)
    }

    /// The training forward pass (batch norm on batch statistics): [`Self::forward_t`]'s
    /// log-policy and value, plus, when the network has auxiliary heads, the seed margin `[n]`
    /// and the reply's log-probabilities `[n, ACTIONS]` (over every action: the reply
    /// position's legal moves are not stored).
    pub(crate) fn forward_train(&self, features: &Tensor, legal: &Tensor) -> TrainForward {
        let out = self.model.forward_train(features, true);
        TrainForward {
            log_policy: masked_log_softmax(&out.logits, legal),
            value: out.value,
            aux: out
                .aux
                .map(|(margin, reply)| (margin, reply.log_softmax(1, Kind::Float))),
        }
    }

    /// Evaluation-mode forward pass without gradients on host buffers: returns
    /// `[n, ACTIONS + 1]` on the CPU, row = probabilities then value, copied out of the device
    /// once. Rows whose mask is empty get all-zero probabilities.
    pub fn infer(&self, features: &[f32], masks: &[u64]) -> anyhow::Result<Vec<f32>> {
        let n = masks.len();
        anyhow::ensure!(
            features.len() == n * self.encoding().features(),
            "feature buffer holds {} floats, expected {} x {}",
            features.len(),
            n,
            self.encoding().features()
        );
        if n == 0 {
            return Ok(Vec::new());
        }
        let out = tch::no_grad(|| {
            let x = Tensor::from_slice(features)
                .to_device(self.device())
                // Never int8: `set_inference_precision` refuses it.
                .to_kind(self.precision.torch_kind().unwrap_or(Kind::Float))
                .view([n as i64, -1]);
            let legal = legal_tensor(masks, self.device());
            // The log-softmax is computed in f32 whatever the network's precision
            // (`masked_log_softmax`): bf16's 8 mantissa bits are too few for the small
            // probabilities of a wide policy. The value comes back as f32 too.
            let (log_policy, value) = self.forward_t(&x, &legal, false);
            let value = value.to_kind(Kind::Float);
            // Empty masks: softmax over all-equal logits would be uniform; zero it instead.
            let any = legal.any_dim(1, true);
            let policy = log_policy.exp() * any.to_kind(Kind::Float);
            Tensor::cat(&[policy, value.unsqueeze(1)], 1).to_device(Device::Cpu)
        });
        let mut host = vec![0f32; n * (ACTIONS + 1)];
        out.f_copy_data(&mut host, n * (ACTIONS + 1))
            .context("cannot copy network output")?;
        Ok(host)
    }

    /// The metadata this network would be saved with.
    pub fn meta(&self, lineage: &Lineage) -> CheckpointMeta {
        CheckpointMeta {
            format: CHECKPOINT_FORMAT,
            variant: self.variant,
            encoding_version: self.encoding().version(),
            config: self.config.clone(),
            step: lineage.step,
            generation: lineage.generation,
            parent: lineage.parent.clone(),
            created_unix: checkpoint::now_unix(),
            parameters: self.parameters(),
            writer: format!("bao-zero {}", env!("CARGO_PKG_VERSION")),
            search: self.search.clone(),
            weights_sha256: None,
        }
    }

    /// Writes `path` (must end in `.safetensors`) and its `.json` sidecar, each atomically,
    /// sidecar last.
    pub fn save(&self, path: &Path, lineage: &Lineage) -> anyhow::Result<()> {
        self.ensure_full_precision("saved")?;
        let path = checkpoint::weights_path(path)?;
        let named: BTreeMap<String, Tensor> = self.vs.variables().into_iter().collect();
        let named: Vec<(String, Tensor)> = named
            .into_iter()
            .map(|(k, t)| (k, t.to_device(Device::Cpu)))
            .collect();
        crate::dataio::atomic::write_with(&path, |tmp| {
            Tensor::write_safetensors(&named, tmp).map_err(anyhow::Error::from)
        })?;
        let written =
            std::fs::read(&path).with_context(|| format!("cannot read back {}", path.display()))?;
        let meta = CheckpointMeta {
            weights_sha256: Some(crate::dataio::store::sha256_hex(&written)),
            ..self.meta(lineage)
        };
        meta.write(&path)
    }

    /// Loads the checkpoint `NAME.safetensors` (sidecar `NAME.json` beside it) onto `device`.
    /// Fails on an old feature encoding, a sidecar that does not describe the weights, and
    /// corrupt files. Use [`Self::load_for`] where the variant is known.
    pub fn load(path: &Path, device: Device) -> anyhow::Result<Network> {
        Network::load_checked(path, None, device)
    }

    /// [`Self::load`], refusing a checkpoint trained for another variant.
    pub fn load_for(path: &Path, variant: Variant, device: Device) -> anyhow::Result<Network> {
        Network::load_checked(path, Some(variant), device)
    }

    /// Checks before anything is allocated, in the order that names the real fault: the
    /// weights' digest against the sidecar (so the sidecar of another checkpoint, of the other
    /// variant too, is named as such), then variant and encoding, then the tensors the weights
    /// file's header lists against those the sidecar's architecture needs (so a sidecar that
    /// claims a far larger network is refused before that network is built).
    fn load_checked(
        path: &Path,
        variant: Option<Variant>,
        device: Device,
    ) -> anyhow::Result<Network> {
        let path = checkpoint::weights_path(path)?;
        let meta = CheckpointMeta::read(&path)?;
        let bytes = std::fs::read(&path)
            .with_context(|| format!("cannot read checkpoint weights {}", path.display()))?;
        meta.check_weights(&path, &bytes)?;
        match variant {
            Some(v) => meta.check_compatible(&path, v)?,
            None => meta.check_encoding(&path)?,
        }
        check_header(&path, &bytes, &meta.config)?;
        drop(bytes);
        let mut net = Network::new(&meta.config, meta.variant, device).with_context(|| {
            format!(
                "checkpoint metadata {} has a bad architecture",
                path.display()
            )
        })?;
        net.load_weights(&path)?;
        net.lineage = meta.lineage();
        net.search = meta.search;
        Ok(net)
    }

    /// Fails unless this network plays `variant`.
    pub fn ensure_variant(&self, variant: Variant) -> anyhow::Result<()> {
        anyhow::ensure!(
            self.variant == variant,
            "network was trained for bao la {} but bao la {} is being played",
            self.variant,
            variant
        );
        Ok(())
    }

    /// A copy of this network (weights included) on `device`.
    pub fn duplicate(&self, device: Device) -> anyhow::Result<Network> {
        self.ensure_full_precision("copied")?;
        let mut copy = Network::new(&self.config, self.variant, device)?;
        copy.vs
            .copy(&self.vs)
            .context("cannot copy network weights")?;
        copy.lineage = self.lineage.clone();
        copy.search = self.search.clone();
        Ok(copy)
    }

    /// This network grown into `config`, which may add what a trained network can learn to use
    /// without forgetting what it knows (`bao train --init` of an older model into a config
    /// with these switches on, or with more blocks). Move and threat features: the stem's
    /// weights for the new planes start at zero (the board planes come first in every
    /// [`Encoding`]), so the grown network computes exactly what this one does until training
    /// teaches it to read them. More blocks: appended after the old ones with their last batch
    /// norm's scale and shift at zero (Goyal et al.'s zero-initialised residual), so each adds
    /// nothing to its input, which a ReLU already made non-negative: the deeper network starts
    /// as the trained one and the new blocks learn from there, which is what makes a larger
    /// network affordable on a machine that cannot train one from scratch. Auxiliary heads:
    /// freshly initialised; inference never reads them. Any other difference is refused.
    pub fn grown_to(&self, config: &NetConfig) -> anyhow::Result<Network> {
        self.ensure_full_precision("grown")?;
        let additions_only = NetConfig {
            aux_heads: config.aux_heads,
            move_features: config.move_features,
            threat_features: config.threat_features,
            blocks: config.blocks,
            ..self.config.clone()
        };
        anyhow::ensure!(
            additions_only == *config
                && config.blocks >= self.config.blocks
                && config.aux_heads >= self.config.aux_heads
                && config.move_features >= self.config.move_features
                && config.threat_features >= self.config.threat_features,
            "network {:?} cannot grow into {:?}: only move_features, threat_features and \
             aux_heads may be turned on and blocks added; the widths must match",
            self.config,
            config
        );
        let mut grown = Network::new(config, self.variant, self.device())?;
        let ours = self.vs.variables();
        for (name, var) in grown.vs.variables().iter_mut() {
            let copied = tch::no_grad(|| {
                let Some(src) = ours.get(name) else {
                    // A new block's last batch norm starts as zero, so the block passes its
                    // input through; any other new tensor (a new block's convolutions and
                    // first batch norm, an auxiliary head) keeps its fresh init.
                    if super::model::is_block_output_norm(name) {
                        let _zeroed_in_place = var.f_zero_()?;
                    }
                    return Ok(());
                };
                if src.size() == var.size() {
                    return var.f_copy_(src);
                }
                // Only the stem's input planes may differ: old planes copied, new ones zero.
                let _zeroed_in_place = var.f_zero_()?;
                var.f_narrow(1, 0, src.size()[1])?.f_copy_(src)
            });
            copied.with_context(|| format!("cannot grow tensor `{name}`"))?;
        }
        grown.lineage = self.lineage.clone();
        grown.search = self.search.clone();
        Ok(grown)
    }

    /// Copies the tensors of a `.safetensors` file into this network, requiring exactly the
    /// same names, shapes and float type (unlike `VarStore::load`, which would broadcast a
    /// wrongly shaped tensor and ignore extra ones), finite values and batch-norm variances
    /// that are not negative.
    fn load_weights(&mut self, path: &Path) -> anyhow::Result<()> {
        let stored: HashMap<String, Tensor> = Tensor::read_safetensors(path)
            .map_err(|e| {
                anyhow::anyhow!(
                    "checkpoint weights {} are unreadable or corrupt: {e}",
                    path.display()
                )
            })?
            .into_iter()
            .collect();
        let mut ours = self.vs.variables();
        let mut extra: Vec<&String> = stored.keys().filter(|k| !ours.contains_key(*k)).collect();
        extra.sort();
        anyhow::ensure!(
            extra.is_empty(),
            "checkpoint weights {} hold tensors the architecture in its sidecar lacks: {:?}",
            path.display(),
            extra
        );
        for (name, var) in ours.iter_mut() {
            let src = stored.get(name).with_context(|| {
                format!("checkpoint weights {} lack tensor `{name}`", path.display())
            })?;
            anyhow::ensure!(
                src.size() == var.size() && src.kind() == var.kind(),
                "checkpoint weights {}: tensor `{name}` is {:?} {:?}, the architecture needs {:?} {:?}",
                path.display(),
                src.kind(),
                src.size(),
                var.kind(),
                var.size()
            );
            ensure_finite(path, name, src)?;
            if name.ends_with(".running_var") {
                ensure_non_negative(path, name, src)?;
            }
            tch::no_grad(|| var.f_copy_(src))
                .with_context(|| format!("cannot copy tensor `{name}`"))?;
        }
        Ok(())
    }
}

/// Fails if the stored tensor `name` holds a NaN or an infinity. Such weights (a diverged
/// run, a damaged file) still evaluate, but every output turns NaN, which the search treats
/// like a uniform prior: the player would look alive while playing at random.
fn ensure_finite(path: &Path, name: &str, tensor: &Tensor) -> anyhow::Result<()> {
    let bad = tensor
        .isfinite()
        .logical_not()
        .sum(Kind::Int64)
        .int64_value(&[]);
    anyhow::ensure!(
        bad == 0,
        "checkpoint weights {}: tensor `{name}` holds {bad} non-finite value(s) (NaN or \
         infinity) out of {}; the run that wrote it diverged or the file is damaged",
        path.display(),
        tensor.numel()
    );
    Ok(())
}

/// Fails if the stored batch-norm variance `name` holds a negative value, which no training
/// produces: a damaged file, which would otherwise load and play (its square root is NaN).
fn ensure_non_negative(path: &Path, name: &str, tensor: &Tensor) -> anyhow::Result<()> {
    let bad = tensor.lt(0.0).sum(Kind::Int64).int64_value(&[]);
    anyhow::ensure!(
        bad == 0,
        "checkpoint weights {}: tensor `{name}` holds {bad} negative variance(s) out of {}; a \
         batch norm's running variance is never negative, so the file is damaged",
        path.display(),
        tensor.numel()
    );
    Ok(())
}

/// Compares the tensors the header of the `.safetensors` file `bytes` (at `path`) lists with
/// those the architecture `config` needs, by name and shape, allocating nothing.
fn check_header(path: &Path, bytes: &[u8], config: &NetConfig) -> anyhow::Result<()> {
    let corrupt = |why: &str| {
        anyhow::anyhow!(
            "checkpoint weights {} are unreadable or corrupt: {why}",
            path.display()
        )
    };
    let sidecar = checkpoint::sidecar_path(path)?;
    let len = bytes
        .get(..8)
        .map(|b| u64::from_le_bytes(b.try_into().expect("8 bytes")))
        .ok_or_else(|| corrupt("shorter than a safetensors header"))?;
    let header = usize::try_from(len)
        .ok()
        .and_then(|n| bytes.get(8..8usize.checked_add(n)?))
        .ok_or_else(|| corrupt("its header runs past the end of the file"))?;
    let header: serde_json::Map<String, serde_json::Value> =
        serde_json::from_slice(header).map_err(|e| corrupt(&format!("its header: {e}")))?;
    let mut stored = BTreeMap::new();
    for (name, entry) in &header {
        if name == "__metadata__" {
            continue;
        }
        let shape: Vec<i64> = entry
            .get("shape")
            .and_then(|s| serde_json::from_value(s.clone()).ok())
            .ok_or_else(|| corrupt(&format!("tensor `{name}` has no shape")))?;
        stored.insert(name.clone(), shape);
    }
    let needed = super::model::tensor_shapes(config);
    for (name, shape) in &needed {
        if let Some(have) = stored.get(name) {
            anyhow::ensure!(
                have == shape,
                "checkpoint weights {}: tensor `{name}` is {have:?} but the architecture needs \
                 {shape:?} (the {} its sidecar {} describes)",
                path.display(),
                config.short_name(),
                sidecar.display()
            );
        }
    }
    if let Some(name) = needed.keys().find(|n| !stored.contains_key(*n)) {
        anyhow::bail!(
            "checkpoint weights {} lack tensor `{name}`, which the architecture ({}) in its \
             sidecar {} needs",
            path.display(),
            config.short_name(),
            sidecar.display()
        );
    }
    let extra: Vec<&String> = stored.keys().filter(|n| !needed.contains_key(*n)).collect();
    anyhow::ensure!(
        extra.is_empty(),
        "checkpoint weights {} hold tensors the architecture in its sidecar {} lacks: {:?}",
        path.display(),
        sidecar.display(),
        extra
    );
    Ok(())
}

/// What [`Network::forward_train`] returns.
pub(crate) struct TrainForward {
    pub log_policy: Tensor,
    pub value: Tensor,
    /// Seed margins and reply log-probabilities, with auxiliary heads.
    pub aux: Option<(Tensor, Tensor)>,
}

/// Log-softmax over the legal actions (illegal ones get a huge negative logit), computed in
/// f32 whatever the logits' number format.
fn masked_log_softmax(logits: &Tensor, legal: &Tensor) -> Tensor {
    logits
        .masked_fill(&legal.logical_not(), ILLEGAL_LOGIT)
        .log_softmax(1, Kind::Float)
}

/// `[n, ACTIONS]` bool tensor on `device`: entry `(i, a)` = bit `a` of `masks[i]`.
pub fn legal_tensor(masks: &[u64], device: Device) -> Tensor {
    let mut bits = Vec::with_capacity(masks.len() * ACTIONS);
    for &m in masks {
        bits.extend((0..ACTIONS).map(|a| m >> a & 1 == 1));
    }
    Tensor::from_slice(&bits)
        .view([masks.len() as i64, ACTIONS as i64])
        .to_device(device)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::neuralnet::{Learner, OptimizerConfig};

    /// The shapes a loader checks a weights file's header against are exactly the tensors the
    /// model makes, for every switch of the architecture.
    #[test]
    fn tensor_shapes_are_the_models_tensors() {
        let tiny = NetConfig::preset("tiny").unwrap();
        for config in [
            tiny.clone(),
            NetConfig {
                blocks: 3,
                aux_heads: true,
                move_features: true,
                threat_features: true,
                ..tiny.clone()
            },
            NetConfig {
                blocks: 0,
                move_features: true,
                ..tiny
            },
        ] {
            let net = Network::new(&config, Variant::Kujifunza, Device::Cpu).unwrap();
            let made: BTreeMap<String, Vec<i64>> = net
                .vs
                .variables()
                .into_iter()
                .map(|(k, t)| (k, t.size()))
                .collect();
            assert_eq!(
                super::super::model::tensor_shapes(&config),
                made,
                "{config:?}"
            );
        }
    }

    /// The blocks [`Network::grown_to`] adds start as identities but are not stuck there: one
    /// training step moves their zeroed output scale (its gradient is the block's residual
    /// branch times the upstream gradient, nonzero), after which their convolutions learn too.
    #[test]
    fn added_blocks_learn_from_their_first_step() {
        let small = NetConfig::preset("tiny").unwrap();
        let net = Network::new_seeded(&small, Variant::Kujifunza, Device::Cpu, 5).unwrap();
        let deeper = NetConfig {
            blocks: small.blocks + 1,
            ..small.clone()
        };
        let grown = net.grown_to(&deeper).unwrap();
        let new_scale = format!("block{}.b.bn.weight", small.blocks);
        let scale = |n: &Network| {
            n.vs.variables()[&new_scale]
                .abs()
                .sum(Kind::Float)
                .double_value(&[])
        };
        assert_eq!(scale(&grown), 0.0, "a new block starts as an identity");

        let n = 8;
        let per = grown.encoding().features();
        let features: Vec<f32> = (0..n * per).map(|i| ((i * 7) % 3) as f32).collect();
        let masks = vec![0b1111u64; n];
        let mut policy = vec![0.0; n * ACTIONS];
        for row in policy.chunks_exact_mut(ACTIONS) {
            row[..4].copy_from_slice(&[0.7, 0.1, 0.1, 0.1]);
        }
        let values: Vec<f32> = (0..n)
            .map(|i| if i % 2 == 0 { 0.8 } else { -0.8 })
            .collect();
        let mut learner = Learner::new(grown, OptimizerConfig::default()).unwrap();
        learner
            .train_step(&features, &masks, &policy, &values)
            .unwrap();
        assert!(
            scale(learner.network()) > 0.0,
            "the new block's output scale did not move"
        );
    }
}
