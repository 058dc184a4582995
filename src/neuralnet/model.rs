//! The residual convolutional network (AlphaZero shape, sized for the 4 x 8 board).
//!
//! input `[n, PLANES, 4, 8]` -> 3x3 conv + BN + ReLU -> `blocks` x (3x3 conv, BN, ReLU, 3x3 conv,
//! BN, + skip, ReLU) -> two heads:
//! - policy: 1x1 conv (`policy_channels`) + BN + ReLU -> linear to `ACTIONS` logits;
//! - value: 1x1 conv (`value_channels`) + BN + ReLU -> linear `value_hidden` + ReLU -> linear 1
//!   -> tanh;
//! - with `aux_heads`, two training-only heads: the seed margin (linear from the value head's
//!   hidden layer -> tanh) and the opponent's reply (linear from the policy head's features to
//!   `ACTIONS` logits). Inference ([`Model::forward_t`]) skips them.
//!
//! Convolutions before batch norm carry no bias (BN's shift replaces it). Variable names in the
//! [`nn::VarStore`] (`stem.conv.weight`, `block3.b.bn.running_var`, ...) are the checkpoint's
//! tensor names, so renaming a layer breaks old checkpoints.

use std::collections::BTreeMap;

use tch::nn::{self, Module, ModuleT};
use tch::Tensor;

use super::config::NetConfig;
use crate::game::features::{CELLS, COLS, ROWS};
use crate::game::ACTIONS;

/// A convolution followed by batch norm (no ReLU: blocks add the skip first).
#[derive(Debug)]
struct ConvBn {
    conv: nn::Conv2D,
    bn: nn::BatchNorm,
}

impl ConvBn {
    fn new(p: nn::Path, c_in: usize, c_out: usize, kernel: i64) -> ConvBn {
        let cfg = nn::ConvConfig {
            padding: kernel / 2,
            bias: false,
            ..Default::default()
        };
        ConvBn {
            conv: nn::conv2d(&p / "conv", c_in as i64, c_out as i64, kernel, cfg),
            bn: nn::batch_norm2d(&p / "bn", c_out as i64, Default::default()),
        }
    }

    fn forward_t(&self, x: &Tensor, train: bool) -> Tensor {
        self.bn.forward_t(&x.apply(&self.conv), train)
    }
}

#[derive(Debug)]
struct Block {
    first: ConvBn,
    second: ConvBn,
}

impl Block {
    fn forward_t(&self, x: &Tensor, train: bool) -> Tensor {
        let y = self.first.forward_t(x, train).relu();
        (self.second.forward_t(&y, train) + x).relu()
    }
}

/// The network's layers; weights live in the [`nn::VarStore`] it was built on.
#[derive(Debug)]
pub(crate) struct Model {
    stem: ConvBn,
    blocks: Vec<Block>,
    policy_conv: ConvBn,
    policy_fc: nn::Linear,
    value_conv: ConvBn,
    value_fc1: nn::Linear,
    value_fc2: nn::Linear,
    aux: Option<AuxHeads>,
    /// Input planes (the config's encoding).
    planes: usize,
}

/// The auxiliary heads' layers (see the module docs).
#[derive(Debug)]
struct AuxHeads {
    margin_fc: nn::Linear,
    reply_fc: nn::Linear,
}

/// Everything a training forward pass predicts.
#[derive(Debug)]
pub(crate) struct TrainOutputs {
    /// Raw policy logits `[n, ACTIONS]`.
    pub logits: Tensor,
    /// Values `[n]` in `[-1, 1]`.
    pub value: Tensor,
    /// With auxiliary heads: seed margins `[n]` in `[-1, 1]` and reply logits `[n, ACTIONS]`.
    pub aux: Option<(Tensor, Tensor)>,
}

impl Model {
    pub(crate) fn new(root: &nn::Path, cfg: &NetConfig) -> Model {
        let c = cfg.channels;
        let blocks = (0..cfg.blocks)
            .map(|i| {
                let p = root / format!("block{i}");
                Block {
                    first: ConvBn::new(&p / "a", c, c, 3),
                    second: ConvBn::new(&p / "b", c, c, 3),
                }
            })
            .collect();
        let lin = Default::default;
        Model {
            stem: ConvBn::new(root / "stem", cfg.encoding().planes(), c, 3),
            planes: cfg.encoding().planes(),
            blocks,
            policy_conv: ConvBn::new(root / "policy", c, cfg.policy_channels, 1),
            policy_fc: nn::linear(
                root / "policy_fc",
                (cfg.policy_channels * CELLS) as i64,
                ACTIONS as i64,
                lin(),
            ),
            value_conv: ConvBn::new(root / "value", c, cfg.value_channels, 1),
            value_fc1: nn::linear(
                root / "value_fc1",
                (cfg.value_channels * CELLS) as i64,
                cfg.value_hidden as i64,
                lin(),
            ),
            value_fc2: nn::linear(root / "value_fc2", cfg.value_hidden as i64, 1, lin()),
            aux: cfg.aux_heads.then(|| AuxHeads {
                margin_fc: nn::linear(root / "aux_margin_fc", cfg.value_hidden as i64, 1, lin()),
                reply_fc: nn::linear(
                    root / "aux_reply_fc",
                    (cfg.policy_channels * CELLS) as i64,
                    ACTIONS as i64,
                    lin(),
                ),
            }),
        }
    }

    /// `x`: `[n, planes * CELLS]` or `[n, planes, ROWS, COLS]` floats (the config's encoding). Returns raw policy
    /// logits `[n, ACTIONS]` (unmasked) and values `[n]` in `[-1, 1]`. `train` selects batch
    /// statistics (and updates the running ones) in batch norm.
    pub(crate) fn forward_t(&self, x: &Tensor, train: bool) -> (Tensor, Tensor) {
        let (p, v) = self.head_features(x, train);
        (self.policy_fc.forward(&p), self.value_out(&v))
    }

    /// The training forward pass: [`Self::forward_t`] plus the auxiliary heads when the
    /// network has them, on one pass through the trunk.
    pub(crate) fn forward_train(&self, x: &Tensor, train: bool) -> TrainOutputs {
        let (p, v) = self.head_features(x, train);
        TrainOutputs {
            logits: self.policy_fc.forward(&p),
            value: self.value_out(&v),
            aux: self.aux.as_ref().map(|a| {
                let margin = a.margin_fc.forward(&v).tanh().squeeze_dim(1);
                (margin, a.reply_fc.forward(&p))
            }),
        }
    }

    /// The trunk and the heads' shared layers: the policy head's flattened features and the
    /// value head's hidden layer.
    fn head_features(&self, x: &Tensor, train: bool) -> (Tensor, Tensor) {
        let x = x.reshape([-1, self.planes as i64, ROWS as i64, COLS as i64]);
        let mut h = self.stem.forward_t(&x, train).relu();
        for block in &self.blocks {
            h = block.forward_t(&h, train);
        }
        let p = self.policy_conv.forward_t(&h, train).relu().flatten(1, -1);
        let v = self.value_conv.forward_t(&h, train).relu().flatten(1, -1);
        (p, self.value_fc1.forward(&v).relu())
    }

    fn value_out(&self, hidden: &Tensor) -> Tensor {
        self.value_fc2.forward(hidden).tanh().squeeze_dim(1)
    }
}

/// The name and shape of every tensor [`Model::new`] makes for `cfg` (the checkpoint's
/// tensors), computed without allocating any: how a loader compares what a sidecar claims with
/// what a weights file holds before it builds the network.
pub(crate) fn tensor_shapes(cfg: &NetConfig) -> BTreeMap<String, Vec<i64>> {
    let mut shapes = BTreeMap::new();
    let mut conv_bn = |path: &str, c_in: usize, c_out: usize, kernel: i64| {
        let (c_in, c_out) = (c_in as i64, c_out as i64);
        shapes.insert(
            format!("{path}.conv.weight"),
            vec![c_out, c_in, kernel, kernel],
        );
        for t in ["weight", "bias", "running_mean", "running_var"] {
            shapes.insert(format!("{path}.bn.{t}"), vec![c_out]);
        }
    };
    let c = cfg.channels;
    conv_bn("stem", cfg.encoding().planes(), c, 3);
    for i in 0..cfg.blocks {
        conv_bn(&format!("block{i}.a"), c, c, 3);
        conv_bn(&format!("block{i}.b"), c, c, 3);
    }
    conv_bn("policy", c, cfg.policy_channels, 1);
    conv_bn("value", c, cfg.value_channels, 1);
    let mut linear = |path: &str, inputs: usize, outputs: usize| {
        shapes.insert(
            format!("{path}.weight"),
            vec![outputs as i64, inputs as i64],
        );
        shapes.insert(format!("{path}.bias"), vec![outputs as i64]);
    };
    linear("policy_fc", cfg.policy_channels * CELLS, ACTIONS);
    linear("value_fc1", cfg.value_channels * CELLS, cfg.value_hidden);
    linear("value_fc2", cfg.value_hidden, 1);
    if cfg.aux_heads {
        linear("aux_margin_fc", cfg.value_hidden, 1);
        linear("aux_reply_fc", cfg.policy_channels * CELLS, ACTIONS);
    }
    shapes
}

/// Whether a checkpoint tensor is a block's last batch norm's scale or shift
/// (`block{i}.b.bn.weight` / `.bias`): zeroed, they make the block pass its input through, which
/// is how [`super::Network::grown_to`] adds blocks to a trained network.
pub(crate) fn is_block_output_norm(name: &str) -> bool {
    name.strip_prefix("block").is_some_and(|rest| {
        rest.split_once('.').is_some_and(|(index, tensor)| {
            index.parse::<usize>().is_ok() && matches!(tensor, "b.bn.weight" | "b.bn.bias")
        })
    })
}

/// Multiply-adds x 2 of one forward pass for one position (convolutions and linear layers;
/// batch norm, ReLU and softmax are ignored as they are a few percent at most). Used by
/// `bao bench net` to turn positions/s into GFLOP/s.
pub fn flops_per_position(cfg: &NetConfig) -> f64 {
    let cells = CELLS as f64;
    let conv = |c_in: usize, c_out: usize, k: usize| 2.0 * (c_in * c_out * k * k) as f64 * cells;
    let linear = |i: usize, o: usize| 2.0 * (i * o) as f64;
    let c = cfg.channels;
    conv(cfg.encoding().planes(), c, 3)
        + cfg.blocks as f64 * 2.0 * conv(c, c, 3)
        + conv(c, cfg.policy_channels, 1)
        + linear(cfg.policy_channels * CELLS, ACTIONS)
        + conv(c, cfg.value_channels, 1)
        + linear(cfg.value_channels * CELLS, cfg.value_hidden)
        + linear(cfg.value_hidden, 1)
}
