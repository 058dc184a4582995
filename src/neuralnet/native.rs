//! The network's inference forward pass on the CPU in Rust, for search.
//!
//! Why: a search evaluates a handful of leaves per call (8 for a player), and at the sizes that
//! win at equal time (2 blocks of 24 channels, 1.7 MFLOP a position) libtorch spends most of a
//! call outside arithmetic: operator dispatch, oneDNN primitive set-up, a dozen tensors
//! allocated and freed (a profile of `bao bench search` put ~28% of the time in convolution
//! kernels, the rest in libtorch, oneDNN and malloc). This pass does the same arithmetic into
//! buffers it keeps between calls: batch norm folded into the convolutions once at load,
//! convolutions as one matrix product each (im2col), products by the `gemm` crate (its AVX-512
//! kernels where the CPU has them), batches cut into chunks whose buffers stay in cache.
//! It is [`super::model::Model`]'s inference pass and nothing else: the weights are the
//! network's, read from its variables, and `tests/neuralnet.rs` holds the two passes to the
//! same outputs for every architecture shape. Training and CUDA stay with libtorch. In bf16
//! the trunk runs in [`bf16`] (AVX-512 BF16, detected at run time; the f32 pass is the
//! fallback), held to the f32 pass by the gates of [`super::agreement`]; in int8 it runs in
//! [`int8`] (AVX-512 VNNI, likewise detected, with the same fallback and gates).
//!
//! Layout: activations are `[n * CELLS, channels]` row-major (a position's cells, each cell's
//! channels contiguous), so a 1x1 convolution is a plain product and a position's flattened
//! head features are one contiguous row; the linear layers' weights are permuted at load to
//! read them in that order (torch flattens channel-major).

use std::collections::HashMap;

#[cfg(target_arch = "x86_64")]
pub mod bf16;
#[cfg(target_arch = "x86_64")]
mod heads;
#[cfg(target_arch = "x86_64")]
pub mod int8;
#[cfg(target_arch = "x86_64")]
mod lanes;
#[cfg(target_arch = "x86_64")]
mod peak;

use anyhow::Context;
use tch::{Kind, Tensor};

use super::config::NetConfig;
use super::network::Network;
use super::precision::Precision;
use crate::game::features::{CELLS, COLS, ROWS};
use crate::game::ACTIONS;

/// Positions judged together: enough to fill the matrix kernels, few enough that a chunk's
/// activations and im2col stay in the core's cache (at 4x48, 256 positions at once ran 16%
/// slower than chunks of 32).
const CHUNK: usize = 32;

/// The batch-norm epsilon of the torch model (`tch::nn::BatchNormConfig`'s default).
const BN_EPS: f32 = 1e-5;

/// A convolution with its batch norm folded in: `out = im2col(in) x weight + bias`.
#[derive(Clone, Debug)]
struct Conv {
    /// 1 or 3.
    kernel: usize,
    c_in: usize,
    c_out: usize,
    /// `[kernel * kernel * c_in, c_out]`, rows ordered (kernel row, kernel column, channel in).
    weight: Vec<f32>,
    bias: Vec<f32>,
}

/// A linear layer: `out = in x weight + bias`.
#[derive(Clone, Debug)]
struct Linear {
    inputs: usize,
    outputs: usize,
    /// `[inputs, outputs]`.
    weight: Vec<f32>,
    bias: Vec<f32>,
}

/// Buffers one forward pass writes, kept between calls.
#[derive(Clone, Debug, Default)]
struct Scratch {
    /// The input planes transposed to `[n * CELLS, planes]`.
    input: Vec<f32>,
    /// im2col of the current 3x3 convolution's input.
    columns: Vec<f32>,
    /// The trunk's activations, and a block's inner one.
    trunk: Vec<f32>,
    inner: Vec<f32>,
    block_out: Vec<f32>,
    policy_features: Vec<f32>,
    value_features: Vec<f32>,
    value_hidden: Vec<f32>,
    logits: Vec<f32>,
}

/// A network's inference pass in Rust (see the module docs): built from a [`Network`], judged
/// through [`Self::forward`].
#[derive(Clone, Debug)]
pub struct NativeNet {
    planes: usize,
    stem: Conv,
    blocks: Vec<(Conv, Conv)>,
    policy_conv: Conv,
    policy_fc: Linear,
    value_conv: Conv,
    value_fc1: Linear,
    value_fc2: Linear,
    scratch: Scratch,
    /// The bf16 pass that judges instead, where one was asked for and the CPU runs it.
    #[cfg(target_arch = "x86_64")]
    bf16: Option<Box<bf16::Bf16Net>>,
    /// The int8 pass that judges instead, where one was asked for and the CPU runs it.
    #[cfg(target_arch = "x86_64")]
    int8: Option<Box<int8::Int8Net>>,
}

/// Whether this CPU runs the Rust pass in `precision`: f32 everywhere, bf16 with AVX-512 BF16,
/// int8 with AVX-512 VNNI (detected at run time).
pub fn supports(precision: Precision) -> bool {
    match precision {
        Precision::F32 => true,
        #[cfg(target_arch = "x86_64")]
        Precision::Bf16 => bf16::supported(),
        #[cfg(target_arch = "x86_64")]
        Precision::Int8 => int8::supported(),
        #[cfg(not(target_arch = "x86_64"))]
        Precision::Bf16 | Precision::Int8 => false,
    }
}

/// GFLOP/s of this core's widest f32 FMA (AVX-512, else none measured) on registers alone:
/// the instruction peak the f32 pass is measured against.
pub fn f32_instruction_peak_gflops(seconds: f64) -> Option<f64> {
    #[cfg(target_arch = "x86_64")]
    return peak::f32_gflops(seconds);
    #[cfg(not(target_arch = "x86_64"))]
    {
        let _ = seconds;
        None
    }
}

/// Instruction peak of the Rust pass in `precision` on this core, in GFLOP/s (GOP/s for int8,
/// whose multiply-adds count 2 operations as the float ones do; measured by the `peak` module).
pub fn instruction_peak_gflops(precision: Precision, seconds: f64) -> Option<f64> {
    match precision {
        Precision::F32 => f32_instruction_peak_gflops(seconds),
        #[cfg(target_arch = "x86_64")]
        Precision::Bf16 => peak::bf16_gflops(seconds),
        #[cfg(target_arch = "x86_64")]
        Precision::Int8 => peak::int8_gops(seconds),
        #[cfg(not(target_arch = "x86_64"))]
        Precision::Bf16 | Precision::Int8 => None,
    }
}

/// The network's variables as f32 host vectors, by checkpoint name.
struct Weights(HashMap<String, Tensor>);

impl Weights {
    fn get(&self, name: &str) -> anyhow::Result<Vec<f32>> {
        let t = self
            .0
            .get(name)
            .with_context(|| format!("the network has no tensor `{name}`"))?;
        let flat = t
            .to_device(tch::Device::Cpu)
            .to_kind(Kind::Float)
            .flatten(0, -1);
        Vec::<f32>::try_from(&flat).with_context(|| format!("cannot read tensor `{name}`"))
    }

    /// The convolution `prefix.conv` with the batch norm `prefix.bn` folded into it.
    fn conv(&self, prefix: &str, c_in: usize, c_out: usize, kernel: usize) -> anyhow::Result<Conv> {
        let w = self.get(&format!("{prefix}.conv.weight"))?;
        anyhow::ensure!(
            w.len() == c_out * c_in * kernel * kernel,
            "`{prefix}.conv.weight` holds {} numbers, expected {c_out} x {c_in} x {kernel} x {kernel}",
            w.len()
        );
        let [gamma, beta, mean, var] = ["weight", "bias", "running_mean", "running_var"]
            .map(|s| self.get(&format!("{prefix}.bn.{s}")));
        let (gamma, beta, mean, var) = (gamma?, beta?, mean?, var?);
        for (what, v) in [
            ("weight", &gamma),
            ("bias", &beta),
            ("mean", &mean),
            ("var", &var),
        ] {
            anyhow::ensure!(
                v.len() == c_out,
                "`{prefix}.bn` {what} holds {} numbers, expected {c_out}",
                v.len()
            );
        }
        let scale: Vec<f32> = (0..c_out)
            .map(|o| gamma[o] / (var[o] + BN_EPS).sqrt())
            .collect();
        let taps = kernel * kernel;
        let mut weight = vec![0.0; taps * c_in * c_out];
        // torch: [c_out, c_in, kernel row, kernel column].
        for o in 0..c_out {
            for i in 0..c_in {
                for t in 0..taps {
                    weight[(t * c_in + i) * c_out + o] = w[(o * c_in + i) * taps + t] * scale[o];
                }
            }
        }
        let bias = (0..c_out).map(|o| beta[o] - mean[o] * scale[o]).collect();
        Ok(Conv {
            kernel,
            c_in,
            c_out,
            weight,
            bias,
        })
    }

    /// The linear layer `prefix` (torch's `[outputs, inputs]` weight). With `channels`, its
    /// input is a head's features flattened by torch channel-major (`channel * CELLS + cell`)
    /// and is permuted to this pass's cell-major order (`cell * channels + channel`).
    fn linear(
        &self,
        prefix: &str,
        inputs: usize,
        outputs: usize,
        channels: Option<usize>,
    ) -> anyhow::Result<Linear> {
        let w = self.get(&format!("{prefix}.weight"))?;
        let bias = self.get(&format!("{prefix}.bias"))?;
        anyhow::ensure!(
            w.len() == inputs * outputs && bias.len() == outputs,
            "`{prefix}` holds {} weights and {} biases, expected {outputs} x {inputs} and {outputs}",
            w.len(),
            bias.len()
        );
        let mut weight = vec![0.0; inputs * outputs];
        for o in 0..outputs {
            for i in 0..inputs {
                let row = match channels {
                    Some(c) => (i % CELLS) * c + i / CELLS,
                    None => i,
                };
                weight[row * outputs + o] = w[o * inputs + i];
            }
        }
        Ok(Linear {
            inputs,
            outputs,
            weight,
            bias,
        })
    }
}

impl NativeNet {
    /// The inference pass of `net` (its current weights: a copy, so later changes to `net` are
    /// not seen). Refuses a network converted to another precision than f32.
    pub fn new(net: &Network) -> anyhow::Result<NativeNet> {
        anyhow::ensure!(
            net.precision() == Precision::F32,
            "the Rust forward pass computes in f32; this network was converted to {}",
            net.precision()
        );
        let weights = Weights(net.var_store().variables());
        let cfg: &NetConfig = net.config();
        let (c, planes) = (cfg.channels, cfg.encoding().planes());
        let blocks = (0..cfg.blocks)
            .map(|i| {
                Ok((
                    weights.conv(&format!("block{i}.a"), c, c, 3)?,
                    weights.conv(&format!("block{i}.b"), c, c, 3)?,
                ))
            })
            .collect::<anyhow::Result<_>>()?;
        let (pc, vc) = (cfg.policy_channels, cfg.value_channels);
        Ok(NativeNet {
            planes,
            stem: weights.conv("stem", planes, c, 3)?,
            blocks,
            policy_conv: weights.conv("policy", c, pc, 1)?,
            policy_fc: weights.linear("policy_fc", pc * CELLS, ACTIONS, Some(pc))?,
            value_conv: weights.conv("value", c, vc, 1)?,
            value_fc1: weights.linear("value_fc1", vc * CELLS, cfg.value_hidden, Some(vc))?,
            value_fc2: weights.linear("value_fc2", cfg.value_hidden, 1, None)?,
            scratch: Scratch::default(),
            #[cfg(target_arch = "x86_64")]
            bf16: None,
            #[cfg(target_arch = "x86_64")]
            int8: None,
        })
    }

    /// The inference pass of `net` (an f32 network) computing in `precision`: bf16 or int8
    /// where the CPU runs it ([`supports`]), else the f32 pass (the fallback;
    /// [`Self::precision`] says which runs). int8 calibrates its activation scales here, on
    /// positions of the network's variant ([`int8::CALIBRATION_POSITIONS`]).
    pub fn with_precision(net: &Network, precision: Precision) -> anyhow::Result<NativeNet> {
        #[allow(unused_mut)]
        let mut native = NativeNet::new(net)?;
        #[cfg(target_arch = "x86_64")]
        if precision == Precision::Bf16 && bf16::supported() {
            let weights = Weights(net.var_store().variables());
            let cfg: &NetConfig = net.config();
            let (pc, vc) = (cfg.policy_channels, cfg.value_channels);
            // The bf16 pass keeps the heads' features channel-major, torch's own order.
            native.bf16 = bf16::Bf16Net::new(
                native.planes,
                &native.stem,
                &native.blocks,
                &native.policy_conv,
                weights.linear("policy_fc", pc * CELLS, ACTIONS, None)?,
                &native.value_conv,
                weights.linear("value_fc1", vc * CELLS, cfg.value_hidden, None)?,
                native.value_fc2.clone(),
            )
            .map(Box::new);
            if native.bf16.is_none() {
                tracing::warn!("the bf16 Rust pass needs an even channel count; f32 judges");
            }
        }
        #[cfg(target_arch = "x86_64")]
        if precision == Precision::Int8 && int8::supported() {
            let weights = Weights(net.var_store().variables());
            let cfg: &NetConfig = net.config();
            let (pc, vc) = (cfg.policy_channels, cfg.value_channels);
            let heads = heads::Heads::new(
                &native.policy_conv,
                weights.linear("policy_fc", pc * CELLS, ACTIONS, None)?,
                &native.value_conv,
                weights.linear("value_fc1", vc * CELLS, cfg.value_hidden, None)?,
                native.value_fc2.clone(),
            );
            let encoding = net.encoding();
            let (features, masks) =
                int8::calibration_sample(net.variant(), encoding.features(), |pos, f| {
                    encoding.encode(pos, f)
                });
            let (mut policy, mut values) =
                (vec![0.0; masks.len() * ACTIONS], vec![0.0; masks.len()]);
            native.forward(&features, &masks, &mut policy, &mut values)?;
            native.int8 = int8::Int8Net::calibrated(
                native.planes,
                &native.stem,
                &native.blocks,
                heads,
                &features,
                &masks,
                &policy,
                &values,
            )
            .map(Box::new);
        }
        let _ = precision;
        Ok(native)
    }

    /// The number format this pass computes its trunk in.
    pub fn precision(&self) -> Precision {
        #[cfg(target_arch = "x86_64")]
        if self.bf16.is_some() {
            return Precision::Bf16;
        }
        #[cfg(target_arch = "x86_64")]
        if self.int8.is_some() {
            return Precision::Int8;
        }
        Precision::F32
    }

    /// Judges `masks.len()` positions: `features` holds each position's input planes as the
    /// encoding writes them (`[planes, CELLS]`); writes probabilities over the legal actions
    /// (`[n, ACTIONS]`, zero elsewhere and for a position with no legal action) and values in
    /// `[-1, 1]`, as [`Network::infer`] does.
    pub fn forward(
        &mut self,
        features: &[f32],
        masks: &[u64],
        policy: &mut [f32],
        values: &mut [f32],
    ) -> anyhow::Result<()> {
        let n = masks.len();
        let per = self.planes * CELLS;
        anyhow::ensure!(
            features.len() == n * per
                && policy.len() == n * ACTIONS
                && values.len() == n,
            "forward pass buffers: {} features, {} policy, {} values for {n} positions of {} planes",
            features.len(),
            policy.len(),
            values.len(),
            self.planes
        );
        #[cfg(target_arch = "x86_64")]
        if let Some(b) = self.bf16.as_mut() {
            b.forward(features, masks, policy, values);
            return Ok(());
        }
        #[cfg(target_arch = "x86_64")]
        if let Some(b) = self.int8.as_mut() {
            b.forward(features, masks, policy, values);
            return Ok(());
        }
        for (start, end) in (0..n).step_by(CHUNK).map(|i| (i, (i + CHUNK).min(n))) {
            self.forward_chunk(
                &features[start * per..end * per],
                &masks[start..end],
                &mut policy[start * ACTIONS..end * ACTIONS],
                &mut values[start..end],
            );
        }
        Ok(())
    }

    /// [`Self::forward`] on buffers of matching sizes.
    fn forward_chunk(
        &mut self,
        features: &[f32],
        masks: &[u64],
        policy: &mut [f32],
        values: &mut [f32],
    ) {
        let n = masks.len();
        let s = &mut self.scratch;
        let rows = n * CELLS;
        // [n, planes, CELLS] -> [n * CELLS, planes].
        s.input.resize(rows * self.planes, 0.0);
        for (pos, out) in features
            .chunks_exact(self.planes * CELLS)
            .zip(s.input.chunks_exact_mut(self.planes * CELLS))
        {
            for (plane, column) in pos.chunks_exact(CELLS).enumerate() {
                for (cell, &x) in column.iter().enumerate() {
                    out[cell * self.planes + plane] = x;
                }
            }
        }
        conv(&self.stem, &s.input, &mut s.columns, &mut s.trunk, n);
        relu(&mut s.trunk);
        for (first, second) in &self.blocks {
            conv(first, &s.trunk, &mut s.columns, &mut s.inner, n);
            relu(&mut s.inner);
            conv(second, &s.inner, &mut s.columns, &mut s.block_out, n);
            for (y, &x) in s.block_out.iter_mut().zip(&s.trunk) {
                *y = (*y + x).max(0.0);
            }
            std::mem::swap(&mut s.trunk, &mut s.block_out);
        }
        conv(
            &self.policy_conv,
            &s.trunk,
            &mut s.columns,
            &mut s.policy_features,
            n,
        );
        relu(&mut s.policy_features);
        s.logits.resize(n * ACTIONS, 0.0);
        linear(&self.policy_fc, &s.policy_features, &mut s.logits, n);
        conv(
            &self.value_conv,
            &s.trunk,
            &mut s.columns,
            &mut s.value_features,
            n,
        );
        relu(&mut s.value_features);
        s.value_hidden.resize(n * self.value_fc1.outputs, 0.0);
        linear(&self.value_fc1, &s.value_features, &mut s.value_hidden, n);
        relu(&mut s.value_hidden);
        linear(&self.value_fc2, &s.value_hidden, values, n);
        outputs(&s.logits, masks, policy, values);
    }
}

fn relu(x: &mut [f32]) {
    x.iter_mut().for_each(|v| *v = v.max(0.0));
}

/// The network's outputs from its heads' last layers, as every pass returns them: `values`
/// (pre-activation) through tanh in place, and each position's policy `logits` as a softmax
/// over its legal moves (`masks`) into `policy`.
fn outputs(logits: &[f32], masks: &[u64], policy: &mut [f32], values: &mut [f32]) {
    values.iter_mut().for_each(|v| *v = v.tanh());
    for ((logits, p), &mask) in logits
        .chunks_exact(ACTIONS)
        .zip(policy.chunks_exact_mut(ACTIONS))
        .zip(masks)
    {
        masked_softmax(logits, mask, p);
    }
}

/// `out = input x layer + bias` for `n` positions' `[n * CELLS, c_in]` activations (a 3x3
/// convolution goes through `columns`, its im2col with zero padding at the board's edges).
fn conv(layer: &Conv, input: &[f32], columns: &mut Vec<f32>, out: &mut Vec<f32>, n: usize) {
    let rows = n * CELLS;
    debug_assert_eq!(input.len(), rows * layer.c_in);
    let a: &[f32] = if layer.kernel == 1 {
        input
    } else {
        let (taps, c) = (layer.kernel * layer.kernel, layer.c_in);
        let r = (layer.kernel / 2) as isize;
        columns.resize(rows * taps * c, 0.0);
        for (row, dst) in columns.chunks_exact_mut(taps * c).enumerate() {
            let (pos, cell) = (row / CELLS, row % CELLS);
            let (y, x) = ((cell / COLS) as isize, (cell % COLS) as isize);
            for (t, tap) in dst.chunks_exact_mut(c).enumerate() {
                let (yy, xx) = (y + t as isize / 3 - r, x + t as isize % 3 - r);
                if (0..ROWS as isize).contains(&yy) && (0..COLS as isize).contains(&xx) {
                    let from = (pos * CELLS + yy as usize * COLS + xx as usize) * c;
                    tap.copy_from_slice(&input[from..from + c]);
                } else {
                    tap.fill(0.0);
                }
            }
        }
        columns
    };
    out.resize(rows * layer.c_out, 0.0);
    matmul_bias(
        a,
        &layer.weight,
        &layer.bias,
        out,
        rows,
        a.len() / rows,
        layer.c_out,
    );
}

/// `out = input x layer + bias` for `n` rows.
fn linear(layer: &Linear, input: &[f32], out: &mut [f32], n: usize) {
    matmul_bias(
        input,
        &layer.weight,
        &layer.bias,
        out,
        n,
        layer.inputs,
        layer.outputs,
    );
}

/// `out[m, n] = a[m, k] x b[k, n] + bias[n]`, all row-major, on this thread.
fn matmul_bias(a: &[f32], b: &[f32], bias: &[f32], out: &mut [f32], m: usize, k: usize, n: usize) {
    assert!(a.len() == m * k && b.len() == k * n && bias.len() == n && out.len() == m * n);
    for row in out.chunks_exact_mut(n) {
        row.copy_from_slice(bias);
    }
    // SAFETY: the assert above bounds every matrix by its slice: `out` is m x n with column
    // stride 1 and row stride n, `a` m x k with strides (1, k), `b` k x n with strides (1, n);
    // `out` is borrowed mutably, so it aliases neither input.
    unsafe {
        gemm::gemm(
            m,
            n,
            k,
            out.as_mut_ptr(),
            1,
            n as isize,
            true,
            a.as_ptr(),
            1,
            k as isize,
            b.as_ptr(),
            1,
            n as isize,
            1.0,
            1.0,
            false,
            false,
            false,
            gemm::Parallelism::None,
        );
    }
}

/// Softmax of `logits` over the actions in `mask`; 0 for the others, and everywhere when the
/// mask is empty (as [`Network::infer`]).
fn masked_softmax(logits: &[f32], mask: u64, out: &mut [f32]) {
    out.fill(0.0);
    if mask == 0 {
        return;
    }
    let legal = || (0..ACTIONS).filter(move |a| mask >> a & 1 == 1);
    let max = legal().map(|a| logits[a]).fold(f32::NEG_INFINITY, f32::max);
    let mut sum = 0.0;
    for a in legal() {
        out[a] = (logits[a] - max).exp();
        sum += out[a];
    }
    legal().for_each(|a| out[a] /= sum);
}
