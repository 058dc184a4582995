//! The policy and value heads of the low-precision passes ([`super::bf16`], [`super::int8`]),
//! in f32, as the f32 pass computes them.
//!
//! Why f32: the heads are about 2% of a position's multiply-adds at the shipped sizes, and
//! their outputs are what the accuracy gates judge, so rounding them would buy little speed for
//! the error it adds. The trunk they read is f32 too (the low-precision passes keep their
//! residual stream in f32).

use super::{matmul_bias, outputs, relu, Conv, Linear};
use crate::game::features::CELLS;
use crate::game::ACTIONS;

/// A 1x1 convolution of a head, f32: `out[o][cell] = bias[o] + sum_i weight[o][i] x[i][cell]`.
#[derive(Clone, Debug)]
struct HeadConv {
    c_in: usize,
    c_out: usize,
    /// `[c_out][c_in]`.
    weight: Vec<f32>,
    bias: Vec<f32>,
}

impl HeadConv {
    fn new(conv: &Conv) -> HeadConv {
        assert_eq!(conv.kernel, 1);
        let (c_in, c_out) = (conv.c_in, conv.c_out);
        let mut weight = vec![0.0; c_in * c_out];
        for i in 0..c_in {
            for o in 0..c_out {
                weight[o * c_in + i] = conv.weight[i * c_out + o];
            }
        }
        HeadConv {
            c_in,
            c_out,
            weight,
            bias: conv.bias.clone(),
        }
    }

    /// One position: `x` is `[channels][CELLS]` (its first `c_in` channels are read), `out`
    /// `[c_out][CELLS]`, ReLU applied.
    fn forward_relu(&self, x: &[f32], out: &mut [f32]) {
        for (o, row) in out.chunks_exact_mut(CELLS).enumerate().take(self.c_out) {
            row.fill(self.bias[o]);
            for (i, xi) in x.chunks_exact(CELLS).enumerate().take(self.c_in) {
                let w = self.weight[o * self.c_in + i];
                for (y, &v) in row.iter_mut().zip(xi) {
                    *y += w * v;
                }
            }
            row.iter_mut().for_each(|v| *v = v.max(0.0));
        }
    }
}

/// Buffers of the heads, kept between calls.
#[derive(Clone, Debug, Default)]
struct Scratch {
    policy_features: Vec<f32>,
    value_features: Vec<f32>,
    value_hidden: Vec<f32>,
    logits: Vec<f32>,
}

/// Both heads, from the trunk's f32 activations to probabilities and values.
#[derive(Clone, Debug)]
pub(super) struct Heads {
    policy_conv: HeadConv,
    /// Over the policy features flattened channel-major, as torch flattens them.
    policy_fc: Linear,
    value_conv: HeadConv,
    value_fc1: Linear,
    value_fc2: Linear,
    scratch: Scratch,
}

impl Heads {
    /// From the f32 pass's layers; the linear layers' inputs in torch's channel-major order.
    pub(super) fn new(
        policy_conv: &Conv,
        policy_fc: Linear,
        value_conv: &Conv,
        value_fc1: Linear,
        value_fc2: Linear,
    ) -> Heads {
        Heads {
            policy_conv: HeadConv::new(policy_conv),
            policy_fc,
            value_conv: HeadConv::new(value_conv),
            value_fc1,
            value_fc2,
            scratch: Scratch::default(),
        }
    }

    /// `masks.len()` positions' probabilities and values (as [`super::NativeNet::forward`]
    /// writes them) from `trunk`, each position's activations `[stride][CELLS]` f32 of which
    /// the heads read the first channels (a pass may pad its trunk with zero channels).
    pub(super) fn forward(
        &mut self,
        trunk: &[f32],
        stride: usize,
        masks: &[u64],
        policy: &mut [f32],
        values: &mut [f32],
    ) {
        let n = masks.len();
        let s = &mut self.scratch;
        let (pc, vc) = (self.policy_conv.c_out, self.value_conv.c_out);
        s.policy_features.resize(n * pc * CELLS, 0.0);
        s.value_features.resize(n * vc * CELLS, 0.0);
        for ((x, p), v) in trunk
            .chunks_exact(stride * CELLS)
            .zip(s.policy_features.chunks_exact_mut(pc * CELLS))
            .zip(s.value_features.chunks_exact_mut(vc * CELLS))
        {
            self.policy_conv.forward_relu(x, p);
            self.value_conv.forward_relu(x, v);
        }
        s.logits.resize(n * ACTIONS, 0.0);
        let fc = &self.policy_fc;
        matmul_bias(
            &s.policy_features,
            &fc.weight,
            &fc.bias,
            &mut s.logits,
            n,
            fc.inputs,
            fc.outputs,
        );
        let (fc1, fc2) = (&self.value_fc1, &self.value_fc2);
        s.value_hidden.resize(n * fc1.outputs, 0.0);
        matmul_bias(
            &s.value_features,
            &fc1.weight,
            &fc1.bias,
            &mut s.value_hidden,
            n,
            fc1.inputs,
            fc1.outputs,
        );
        relu(&mut s.value_hidden);
        matmul_bias(
            &s.value_hidden,
            &fc2.weight,
            &fc2.bias,
            values,
            n,
            fc2.inputs,
            fc2.outputs,
        );
        outputs(&s.logits, masks, policy, values);
    }
}
