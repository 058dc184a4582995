//! The Rust forward pass's trunk in 8-bit integers on AVX-512 VNNI (`VPDPBUSD`).
//!
//! Why: the trunk's 3x3 convolutions are nearly all of a player's forward pass (see
//! [`super::bf16`]), and `VPDPBUSD` does four 8-bit multiply-adds per 32-bit lane and
//! instruction, where `VDPBF16PS` does two and an f32 FMA one. The convolutions are direct, as
//! in the bf16 pass (16 lanes are 16 cells of the board, a tap is the same vector loaded at an
//! offset with the lanes that leave the board masked to zero); here each 32-bit lane holds four
//! input channels of one cell, one byte each, which `VPDPBUSD` multiplies with four weights
//! broadcast from memory.
//!
//! The numbers (each choice was judged by the accuracy gates of `neuralnet::agreement` on
//! the shipped models, `tests/native_lowp.rs`):
//! - Weights: batch norm is folded into each convolution first (the f32 pass's [`Conv`]), then
//!   each output channel's weights are scaled to signed bytes in `[-127, 127]` by their largest
//!   magnitude (symmetric, per output channel). The checkpoint stays f32; this happens at load.
//!   The stem's weights get 16 bits, as two bytes and two `VPDPBUSD` (see [`ConvI8::new`]).
//! - Activations: every quantised layer input (the input planes, and the trunk and each block's
//!   inner activation) is non-negative (the planes are 0/1 flags and counts scaled to small
//!   non-negative values, the others come out of a ReLU), so it is stored as unsigned bytes,
//!   `x ≈ scale[c] * q` with `q` in `[0, 255]`: the operand `VPDPBUSD` takes unsigned. The
//!   scales are calibrated at load on a sample of positions ([`CALIBRATION_POSITIONS`]
//!   random-walk positions of the network's own variant, judged by the f32 pass): the input
//!   planes' so that the values the encodings write are exact ([`input_scales`]), the hidden
//!   activations' from each channel's and the layer's largest value ([`hidden_scales`]).
//!   Scales per channel cost nothing at run time: an input channel's scale multiplies the
//!   weights that read it before they are quantised, so the integer sum needs one f32
//!   multiply per output channel to come back.
//! - Bias: rounding shifts each output channel's mean; the shift measured on the calibration
//!   sample is taken back through the f32 bias ([`bias_corrected`]).
//! - Sums: `VPDPBUSD` multiplies each unsigned byte of a lane with the signed byte beside it,
//!   adds the four 16-bit products as full integers and adds that to the i32 accumulator,
//!   wrapping and never saturating (`VPDPBUSDS` is the saturating form). Unlike the older
//!   `VPMADDUBSW` there is no intermediate pair sum in i16 that could saturate (255 x 127 x 2
//!   overflows i16), so the only bound to respect is the i32 sum: a product is at most
//!   255 x 127 < 2^15, and a convolution sums 9 x channels of them, at most 2^16 times 2^15 for
//!   any trunk below 7,000 channels, far inside i32. (The stem's high bytes count 256 each,
//!   so their sum is scaled in f32, never in i32.)
//! - Back to f32: `sum x weight scale + bias` (batch norm folded), the skip connection added
//!   and ReLU applied in f32; the residual stream is kept in f32 (`[channel][CELLS]`), and the
//!   heads read it in f32 ([`super::heads`]), as in the bf16 pass.
//!
//! Layout of a position's quantised activations ("quads"): `[channel quad][PAD_CELLS]` of
//! `u32`, lane `cell + PAD_BEFORE` holding channels `4q .. 4q + 4` in its bytes (lowest byte
//! first); the lanes before and after the board stay zero. Channel counts are padded to a
//! multiple of four with channels whose weights, bias and activations are zero.

use std::arch::x86_64::*;

use rand::SeedableRng;

use super::heads::Heads;
use super::lanes::{column_mask, PAD_BEFORE, PAD_CELLS};
use super::Conv;
use crate::game::features::{CELLS, COLS};

/// Positions the activation scales are calibrated on (see the module docs): random walks of
/// 0 to 120 plies of the network's variant from a fixed seed, another seed than the gates'
/// held-out sample (`neuralnet::agreement::gate_positions`). 512 positions are 16,384 cells a
/// channel, judged by the f32 pass in about 30 ms at the shipped size.
pub const CALIBRATION_POSITIONS: usize = 512;
const CALIBRATION_SEED: u64 = 0x1a78_ca11;

/// True when this CPU runs the int8 trunk (AVX-512 F, BW and VNNI, detected at run time).
pub fn supported() -> bool {
    is_x86_feature_detected!("avx512f")
        && is_x86_feature_detected!("avx512bw")
        && is_x86_feature_detected!("avx512vnni")
}

/// `n.div_ceil(4) * 4`: a channel count padded to whole quads.
fn padded(n: usize) -> usize {
    n.div_ceil(4) * 4
}

/// A 3x3 convolution (batch norm folded in) with i8 weights, reading u8 activations.
#[derive(Clone, Debug)]
struct ConvI8 {
    /// Input channel quads.
    quads_in: usize,
    /// Output channels, padded to a multiple of 4.
    c_out: usize,
    /// `[quad in][tap][c_out]`: the signed byte weights of input channels `4q .. 4q + 4`
    /// (for a wide layer, the high bytes of the 16-bit weights).
    weight: Vec<u32>,
    /// A wide layer's low bytes (see [`ConvI8::new`]), laid out as `weight`.
    weight_lo: Option<Vec<u32>>,
    /// Per output channel: f32 value of one unit of the i32 sum (the weight scale; the input
    /// activations' scales are folded into the weights). A wide layer's high sum counts 256
    /// units.
    scale: Vec<f32>,
    bias: Vec<f32>,
    /// Per output channel, 1 / the activation scale of the layer that reads this one's output
    /// (0 for padding channels); `None` where only the f32 output is read.
    requant: Option<Vec<f32>>,
}

impl ConvI8 {
    /// `conv` with its input channels at scales `in_scales` (one per input channel) and its
    /// output quantised at `out_scales` (one per output channel), if something reads it so.
    ///
    /// `wide`: 16-bit weights as two signed bytes, `w = 256 hi + lo`, two `VPDPBUSD` a quad
    /// where a narrow layer has one. Why: the stem's weights do not survive 8 bits (with
    /// every weight rounded to 8 bits and f32 activations, the shipped Kiswahili model's values
    /// moved by 0.011 on average and its top move changed in 2.7% of the gate positions; with
    /// the stem's weights left in f32, 0.0056 and 0.8%); its inputs are flags and counts that
    /// are exact in a byte, so with 16-bit weights the stem is all but exact, for a fifth of
    /// the shipped 2x24 trunk's multiply-adds.
    fn new(conv: &Conv, in_scales: &[f32], out_scales: Option<&[f32]>, wide: bool) -> ConvI8 {
        assert_eq!(conv.kernel, 3, "the int8 trunk has 3x3 convolutions only");
        let (c_in, c_out) = (conv.c_in, conv.c_out);
        assert_eq!(in_scales.len(), c_in);
        let (quads_in, c_pad) = (c_in.div_ceil(4), padded(c_out));
        // The weights that read quantised activations: w x scale of its input channel.
        let w =
            |t: usize, i: usize, o: usize| conv.weight[(t * c_in + i) * c_out + o] * in_scales[i];
        // The largest integer weight: 127, or 127 x 256 as two bytes.
        let top = if wide { 127.0 * 256.0 } else { 127.0 };
        let mut scale = vec![1.0f32; c_pad];
        for (o, s) in scale.iter_mut().enumerate().take(c_out) {
            let max = (0..9)
                .flat_map(|t| (0..c_in).map(move |i| (t, i)))
                .map(|(t, i)| w(t, i, o).abs())
                .fold(0.0f32, f32::max);
            if max > 0.0 {
                *s = max / top;
            }
        }
        // The integer weight and its (high, low) bytes: for a narrow layer (w, 0); for a wide
        // one hi = floor((w + 128) / 256) in [-127, 127] and lo = w - 256 hi in [-128, 127].
        let q = |t: usize, i: usize, o: usize| -> (u32, u32) {
            if i >= c_in || o >= c_out {
                return (0, 0);
            }
            let v = (w(t, i, o) / scale[o]).round().clamp(-top, top) as i32;
            let (hi, lo) = if wide {
                let hi = (v + 128).div_euclid(256);
                (hi, v - 256 * hi)
            } else {
                (v, 0)
            };
            (hi as i8 as u8 as u32, lo as i8 as u8 as u32)
        };
        let mut weight = vec![0u32; quads_in * 9 * c_pad];
        let mut weight_lo = vec![0u32; if wide { weight.len() } else { 0 }];
        for p in 0..quads_in {
            for t in 0..9 {
                for o in 0..c_pad {
                    let at = (p * 9 + t) * c_pad + o;
                    for k in 0..4 {
                        let (hi, lo) = q(t, 4 * p + k, o);
                        weight[at] |= hi << (8 * k);
                        if wide {
                            weight_lo[at] |= lo << (8 * k);
                        }
                    }
                }
            }
        }
        let mut bias = conv.bias.clone();
        bias.resize(c_pad, 0.0);
        let requant = out_scales.map(|s| {
            assert_eq!(s.len(), c_out);
            let mut inv: Vec<f32> = s.iter().map(|&s| 1.0 / s).collect();
            inv.resize(c_pad, 0.0);
            inv
        });
        ConvI8 {
            quads_in,
            c_out: c_pad,
            weight,
            weight_lo: wide.then_some(weight_lo),
            scale,
            bias,
            requant,
        }
    }
}

impl ConvI8 {
    /// The f32 convolution this one computes on activations that are exact at `in_scales`:
    /// `conv` (for its shape and bias) with its weights replaced by the rounded ones.
    fn dequantized(&self, conv: &Conv, in_scales: &[f32]) -> Conv {
        let mut out = conv.clone();
        let (c_in, c_out) = (conv.c_in, conv.c_out);
        for t in 0..9 {
            for (i, &in_scale) in in_scales.iter().enumerate().take(c_in) {
                for o in 0..c_out {
                    let at = ((i / 4) * 9 + t) * self.c_out + o;
                    let byte = |w: &[u32]| (w[at] >> (8 * (i % 4))) as u8 as i8 as f32;
                    let q = match &self.weight_lo {
                        Some(lo) => 256.0 * byte(&self.weight) + byte(lo),
                        None => byte(&self.weight),
                    };
                    out.weight[(t * c_in + i) * c_out + o] = q * self.scale[o] / in_scale;
                }
            }
        }
        out
    }
}

/// Per-channel scales of each quantised layer input (see the module docs), and the f32
/// activations they were taken from.
struct Scales {
    /// The input planes.
    input: Vec<f32>,
    /// The trunk entering block `i` (the stem's output for block 0).
    trunk: Vec<Vec<f32>>,
    /// Block `i`'s inner activation.
    inner: Vec<Vec<f32>>,
    /// The f32 pass's activations on the calibration sample, `[rows, channels]`: the input
    /// planes, then each block's trunk and inner activation.
    activations: Vec<Vec<f32>>,
    positions: usize,
}

/// Each channel's largest value over rows `[rows, c]`.
fn channel_max(x: &[f32], c: usize) -> Vec<f32> {
    let mut max = vec![0.0f32; c];
    for row in x.chunks_exact(c) {
        for (m, &v) in max.iter_mut().zip(row) {
            *m = m.max(v);
        }
    }
    max
}

/// The byte scales of a hidden activation `x` (`[rows, c]`, after a ReLU): channel `i`'s
/// range is `max^(1 - alpha) x max_i^alpha` (its own largest value `max_i`, the layer's
/// `max`), its scale that range / 255. No range clips what the sample saw; larger values at
/// run time saturate at 255.
///
/// Why between the two: an activation's scale is folded into the weights that read it
/// (module docs), so per-channel ranges (`alpha = 1`) spread a weight column's values and
/// cost the weights bits, while one range for the layer (`alpha = 0`) spends few levels on
/// its small channels. Which balance is best depends on the network, so
/// [`Int8Net::calibrated`] tries several.
fn hidden_scales(x: &[f32], c: usize, alpha: f32) -> Vec<f32> {
    let max = channel_max(x, c);
    let layer = max.iter().copied().fold(0.0f32, f32::max);
    max.iter()
        .map(|&m| {
            let range = layer.powf(1.0 - alpha) * m.powf(alpha);
            if range > 0.0 {
                range / 255.0
            } else if layer > 0.0 {
                layer / 255.0
            } else {
                1.0
            }
        })
        .collect()
}

/// The byte scales of the input planes `x` (`[rows, c]`): where a plane's values on the
/// sample are all multiples of `1 / m` for an integer `m` with `max x m <= 255` (flags:
/// `m = 1`; seed counts / 16: 16; a hand / 22: 22), the smallest such `m` gives scale
/// `1 / m`, which holds them exactly with the most room above the sample's largest; others
/// get `max / 255`.
fn input_scales(x: &[f32], c: usize) -> Vec<f32> {
    let max = channel_max(x, c);
    (0..c)
        .map(|ch| {
            if max[ch] <= 0.0 {
                return 1.0;
            }
            let top = (255.0 / max[ch]).floor() as usize;
            (1..=top)
                .find(|&m| {
                    x.chunks_exact(c).all(|r| {
                        let v = r[ch] * m as f32;
                        (v - v.round()).abs() < 1e-3
                    })
                })
                .map_or(max[ch] / 255.0, |m| 1.0 / m as f32)
        })
        .collect()
}

/// The activation scales of the trunk `stem`, `blocks` from the f32 pass over `features`
/// (`[n][planes][CELLS]`, the encoding's layout), hidden ones with balance `alpha` (see
/// [`hidden_scales`]).
fn calibrate(
    planes: usize,
    stem: &Conv,
    blocks: &[(Conv, Conv)],
    features: &[f32],
    alpha: f32,
) -> Scales {
    let n = features.len() / (planes * CELLS);
    let rows = n * CELLS;
    let mut input = vec![0.0; rows * planes];
    for (pos, out) in features
        .chunks_exact(planes * CELLS)
        .zip(input.chunks_exact_mut(planes * CELLS))
    {
        for (plane, column) in pos.chunks_exact(CELLS).enumerate() {
            for (cell, &x) in column.iter().enumerate() {
                out[cell * planes + plane] = x;
            }
        }
    }
    let relu = |x: &mut Vec<f32>| x.iter_mut().for_each(|v| *v = v.max(0.0));
    let (mut columns, mut trunk, mut inner, mut out) = (vec![], vec![], vec![], vec![]);
    let mut scales = Scales {
        input: input_scales(&input, planes),
        trunk: Vec::new(),
        inner: Vec::new(),
        activations: Vec::new(),
        positions: n,
    };
    super::conv(stem, &input, &mut columns, &mut trunk, n);
    relu(&mut trunk);
    scales.activations.push(input);
    for (a, b) in blocks {
        scales.trunk.push(hidden_scales(&trunk, a.c_in, alpha));
        super::conv(a, &trunk, &mut columns, &mut inner, n);
        relu(&mut inner);
        scales.inner.push(hidden_scales(&inner, b.c_in, alpha));
        scales.activations.push(trunk.clone());
        scales.activations.push(inner.clone());
        super::conv(b, &inner, &mut columns, &mut out, n);
        for (y, &x) in out.iter_mut().zip(&trunk) {
            *y = (*y + x).max(0.0);
        }
        std::mem::swap(&mut trunk, &mut out);
    }
    scales
}

/// `layer` (the int8 form of `conv`, reading `x` at `in_scales`) with its bias corrected by
/// the mean difference, per output channel, between `conv` of the f32 activations `x` and
/// the int8 layer's own result (`x` rounded to its bytes, the rounded weights), over the
/// calibration sample: rounding a channel's weights shifts its output by the same amount at
/// every cell on average (the activations it multiplies are non-negative, so their errors do
/// not cancel), which the f32 bias takes back.
fn bias_corrected(
    mut layer: ConvI8,
    conv: &Conv,
    x: &[f32],
    in_scales: &[f32],
    n: usize,
) -> ConvI8 {
    let c = conv.c_in;
    let xq: Vec<f32> = x
        .iter()
        .enumerate()
        .map(|(k, &v)| {
            let s = in_scales[k % c];
            (v / s).round().clamp(0.0, 255.0) * s
        })
        .collect();
    let deq = layer.dequantized(conv, in_scales);
    let (mut columns, mut reference, mut rounded) = (vec![], vec![], vec![]);
    super::conv(conv, x, &mut columns, &mut reference, n);
    super::conv(&deq, &xq, &mut columns, &mut rounded, n);
    let rows = (n * CELLS) as f64;
    for o in 0..conv.c_out {
        let diff: f64 = reference
            .iter()
            .zip(&rounded)
            .skip(o)
            .step_by(conv.c_out)
            .map(|(&r, &q)| (r - q) as f64)
            .sum();
        layer.bias[o] += (diff / rows) as f32;
    }
    layer
}

/// The calibration sample of `variant` (see [`CALIBRATION_POSITIONS`]): its positions encoded
/// by `encode` (`features` floats a position) and their legal moves.
pub(super) fn calibration_sample(
    variant: crate::game::Variant,
    features: usize,
    encode: impl Fn(&crate::game::Position, &mut [f32]),
) -> (Vec<f32>, Vec<u64>) {
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(CALIBRATION_SEED);
    let positions = crate::game::random_games::sample_positions(
        variant,
        CALIBRATION_POSITIONS,
        0..120,
        &mut rng,
    );
    let mut out = vec![0.0; positions.len() * features];
    for (p, f) in positions.iter().zip(out.chunks_exact_mut(features)) {
        encode(p, f);
    }
    let masks = positions.iter().map(|p| p.legal_moves().mask()).collect();
    (out, masks)
}

/// The balances of [`hidden_scales`] that [`Int8Net::calibrated`] tries.
const ALPHAS: [f32; 5] = [0.0, 0.25, 0.5, 0.75, 1.0];

/// Buffers of one forward pass, kept between calls.
#[derive(Clone, Debug, Default)]
struct Scratch {
    /// A position's input planes as quads.
    input: Vec<u32>,
    /// A position's trunk as quads.
    quads: Vec<u32>,
    /// A block's inner activation, as quads.
    inner: Vec<u32>,
    /// The trunk's f32 activations of every position of the call, `[n][padded c][CELLS]`.
    trunk: Vec<f32>,
}

/// The network with an int8 trunk (see the module docs).
#[derive(Clone, Debug)]
pub struct Int8Net {
    planes: usize,
    /// 1 / the input planes' scales.
    input_inv: Vec<f32>,
    /// Trunk channels padded to a multiple of 4.
    channels: usize,
    stem: ConvI8,
    blocks: Vec<(ConvI8, ConvI8)>,
    heads: Heads,
    scratch: Scratch,
}

impl Int8Net {
    /// From the f32 pass's layers (the linear layers' inputs in torch's channel-major order),
    /// calibrated on the sample `features` (encoded positions, `[n][planes][CELLS]`) and
    /// `masks` of [`calibration_sample`], whose probabilities and values by the f32 pass are
    /// `policy` and `values`: of the balances [`ALPHAS`] of the activation scales, the one
    /// whose outputs on the sample stay closest to the f32 pass's (mean absolute value
    /// difference plus mean total variation distance of the policies). `None` where the CPU
    /// lacks AVX-512 VNNI.
    ///
    /// Why choose per network, and on the calibration sample: on the gate positions the top-1
    /// agreement of the shipped models favoured different balances (Kiswahili 0, Kujifunza
    /// 0.5; docs/measurements.md), and a choice made on the positions the gates judge would
    /// flatter the gates. (On the calibration sample both shipped models choose 0.5.) The
    /// five trials cost about 0.3 s at load for the shipped 2x24 size.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn calibrated(
        planes: usize,
        stem: &Conv,
        blocks: &[(Conv, Conv)],
        heads: Heads,
        features: &[f32],
        masks: &[u64],
        policy: &[f32],
        values: &[f32],
    ) -> Option<Int8Net> {
        if !supported() {
            return None;
        }
        let n = masks.len();
        let (mut p, mut v) = (vec![0.0; policy.len()], vec![0.0; n]);
        let mut best: Option<(f64, Int8Net)> = None;
        for alpha in ALPHAS {
            let mut net = Int8Net::new(planes, stem, blocks, heads.clone(), features, alpha);
            net.forward(features, masks, &mut p, &mut v);
            let value: f64 = v
                .iter()
                .zip(values)
                .map(|(a, b)| (a - b).abs() as f64)
                .sum();
            let tv: f64 = p
                .iter()
                .zip(policy)
                .map(|(a, b)| (a - b).abs() as f64)
                .sum();
            let distance = (value + tv / 2.0) / n.max(1) as f64;
            tracing::debug!("int8 calibration: alpha {alpha}: distance {distance:.5}");
            if best.as_ref().is_none_or(|(d, _)| distance < *d) {
                best = Some((distance, net));
            }
        }
        best.map(|(_, net)| net)
    }

    /// [`Self::calibrated`] at balance `alpha`.
    fn new(
        planes: usize,
        stem: &Conv,
        blocks: &[(Conv, Conv)],
        heads: Heads,
        calibration: &[f32],
        alpha: f32,
    ) -> Int8Net {
        let scales = calibrate(planes, stem, blocks, calibration, alpha);
        let n = scales.positions;
        let acts = &scales.activations;
        let stem_i8 = ConvI8::new(
            stem,
            &scales.input,
            scales.trunk.first().map(|s| &s[..]),
            true,
        );
        let stem_i8 = bias_corrected(stem_i8, stem, &acts[0], &scales.input, n);
        let blocks_i8 = blocks
            .iter()
            .enumerate()
            .map(|(i, (a, b))| {
                let qa = ConvI8::new(a, &scales.trunk[i], Some(&scales.inner[i]), false);
                let qb = ConvI8::new(
                    b,
                    &scales.inner[i],
                    scales.trunk.get(i + 1).map(|s| &s[..]),
                    false,
                );
                (
                    bias_corrected(qa, a, &acts[1 + 2 * i], &scales.trunk[i], n),
                    bias_corrected(qb, b, &acts[2 + 2 * i], &scales.inner[i], n),
                )
            })
            .collect();
        Int8Net {
            planes,
            input_inv: scales.input.iter().map(|&s| 1.0 / s).collect(),
            channels: padded(stem.c_out),
            stem: stem_i8,
            blocks: blocks_i8,
            heads,
            scratch: Scratch::default(),
        }
    }

    /// As [`super::NativeNet::forward`], on buffers of matching sizes.
    pub(super) fn forward(
        &mut self,
        features: &[f32],
        masks: &[u64],
        policy: &mut [f32],
        values: &mut [f32],
    ) {
        let n = masks.len();
        let c = self.channels;
        let s = &mut self.scratch;
        // Padding lanes are never written: resizing only grows these with zeros.
        s.input.resize(self.planes.div_ceil(4) * PAD_CELLS, 0);
        s.quads.resize(c / 4 * PAD_CELLS, 0);
        s.inner.resize(c / 4 * PAD_CELLS, 0);
        s.trunk.resize(n * c * CELLS, 0.0);
        for (pos, trunk) in features
            .chunks_exact(self.planes * CELLS)
            .zip(s.trunk.chunks_exact_mut(c * CELLS))
        {
            // SAFETY: `supported()` was true when this net was built (`Int8Net::new`), so
            // the CPU has AVX-512 F, BW and VNNI, `input_quads`' and `conv3x3`'s one
            // requirement beyond the buffer sizes they assert.
            unsafe {
                input_quads(pos, &self.input_inv, &mut s.input);
                conv3x3(&self.stem, &s.input, Out::Trunk(trunk), &mut s.quads);
                for (a, b) in &self.blocks {
                    conv3x3(a, &s.quads, Out::Inner, &mut s.inner);
                    conv3x3(b, &s.inner, Out::Residual(trunk), &mut s.quads);
                }
            }
        }
        self.heads.forward(&s.trunk, c, masks, policy, values);
    }
}

/// One position's input planes (`[planes][CELLS]` f32, `inv.len()` of them) as quads in
/// `out`: each value times its plane's 1 / scale `inv`, rounded to nearest (even), clamped to
/// `[0, 255]` (values past the calibrated range saturate; the encodings write no negative
/// ones).
///
/// # Safety
/// The CPU must have AVX-512 F. (Buffer sizes are asserted here.)
#[target_feature(enable = "avx512f")]
unsafe fn input_quads(planes: &[f32], inv: &[f32], out: &mut [u32]) {
    let count = inv.len();
    assert!(planes.len() >= count * CELLS && out.len() >= count.div_ceil(4) * PAD_CELLS);
    let (zero, top) = (_mm512_setzero_ps(), _mm512_set1_ps(255.0));
    for q in 0..count.div_ceil(4) {
        let mut packed = [_mm512_setzero_si512(); 2];
        for k in 0..4.min(count - 4 * q) {
            let plane = 4 * q + k;
            let scale = _mm512_set1_ps(inv[plane]);
            for (half, p) in packed.iter_mut().enumerate() {
                // SAFETY: plane < count and the 16 floats end at most at its CELLS = 32
                // (asserted above).
                let x = _mm512_loadu_ps(planes.as_ptr().add(plane * CELLS + 16 * half));
                let x = _mm512_min_ps(_mm512_max_ps(_mm512_mul_ps(x, scale), zero), top);
                let b = _mm512_cvtps_epi32(x);
                *p = _mm512_or_si512(*p, _mm512_sllv_epi32(b, _mm512_set1_epi32(8 * k as i32)));
            }
        }
        for (half, p) in packed.into_iter().enumerate() {
            // SAFETY: the quad's board lanes, inside `out` (asserted above).
            let at = out.as_mut_ptr().add(q * PAD_CELLS + PAD_BEFORE + 16 * half);
            _mm512_storeu_si512(at as *mut __m512i, p);
        }
    }
}

/// Where a convolution's f32 output goes (its quantised output, where the layer has
/// [`ConvI8::requant`], goes to the quads buffer beside).
enum Out<'a> {
    /// The stem: the trunk in f32 (`[c][CELLS]`).
    Trunk(&'a mut [f32]),
    /// A block's first convolution: no f32 output.
    Inner,
    /// A block's second convolution: adds the f32 trunk (the skip), then writes it back.
    Residual(&'a mut [f32]),
}

/// One position's 3x3 convolution `layer` of `input` (quads): dequantised, bias, ReLU (after
/// the skip for [`Out::Residual`]) into `out`, and quantised into `quads` where the layer has
/// [`ConvI8::requant`].
///
/// # Safety
/// The CPU must have AVX-512 F, BW and VNNI. (Buffer sizes are asserted here.)
#[target_feature(enable = "avx512f,avx512bw,avx512vnni")]
unsafe fn conv3x3(layer: &ConvI8, input: &[u32], mut out: Out<'_>, quads: &mut [u32]) {
    let c_out = layer.c_out;
    assert!(c_out.is_multiple_of(4));
    assert!(input.len() >= layer.quads_in * PAD_CELLS);
    assert!(
        layer.weight.len() == layer.quads_in * 9 * c_out
            && layer
                .weight_lo
                .as_ref()
                .is_none_or(|l| l.len() == layer.weight.len())
            && layer.bias.len() == c_out
            && layer.scale.len() == c_out
            && layer.requant.as_ref().is_none_or(|r| r.len() == c_out)
    );
    assert!(quads.len() >= c_out / 4 * PAD_CELLS);
    if let Out::Trunk(f) | Out::Residual(f) = &out {
        assert!(f.len() >= c_out * CELLS);
    }
    let mut start = 0;
    while start < c_out {
        let left = c_out - start;
        // SAFETY (each arm): the asserts above bound every access `tile` makes, `start` and
        // the tile width are multiples of 4 that end at most at `c_out`, and the CPU features
        // are this function's own precondition.
        if layer.weight_lo.is_some() {
            // Two accumulators an output channel and half: 16 registers.
            tile::<4, true>(layer, input, &mut out, quads, start);
            start += 4;
        } else if left >= 12 && left != 16 {
            tile::<12, false>(layer, input, &mut out, quads, start);
            start += 12;
        } else if left >= 8 {
            tile::<8, false>(layer, input, &mut out, quads, start);
            start += 8;
        } else {
            tile::<4, false>(layer, input, &mut out, quads, start);
            start += 4;
        }
    }
}

/// Output channels `start..start + NT` of [`conv3x3`]: 2 x NT i32 accumulators (both halves
/// of the board; twice that for a `WIDE` layer, high and low bytes) stay in registers over
/// all input quads and taps.
///
/// # Safety
/// As [`conv3x3`], whose asserts it relies on for the pointer reads and writes, and `start +
/// NT <= layer.c_out` with `start` and `NT` multiples of 4, and `WIDE` only for a layer with
/// [`ConvI8::weight_lo`].
#[inline]
#[target_feature(enable = "avx512f,avx512bw,avx512vnni")]
unsafe fn tile<const NT: usize, const WIDE: bool>(
    layer: &ConvI8,
    input: &[u32],
    out: &mut Out<'_>,
    quads: &mut [u32],
    start: usize,
) {
    let c_out = layer.c_out;
    let mut acc0 = [_mm512_setzero_si512(); NT];
    let mut acc1 = [_mm512_setzero_si512(); NT];
    let mut lo0 = [_mm512_setzero_si512(); NT];
    let mut lo1 = [_mm512_setzero_si512(); NT];
    let masks = [column_mask(-1), column_mask(0), column_mask(1)];
    let w = layer.weight.as_ptr();
    let w_lo = layer.weight_lo.as_ref().map_or(w, |l| l.as_ptr());
    let x = input.as_ptr();
    for p in 0..layer.quads_in {
        let base = x.add(p * PAD_CELLS + PAD_BEFORE);
        for t in 0..9 {
            let (dy, dx) = (t as isize / 3 - 1, t as isize % 3 - 1);
            let at = base.offset(dy * COLS as isize + dx);
            let m = masks[(dx + 1) as usize];
            // SAFETY: `at` is at most PAD_BEFORE - 9 lanes before the quad's board and its 32
            // lanes end at most 9 past it, inside the quad's PAD_CELLS lanes of `input`.
            let a0 = _mm512_maskz_loadu_epi32(m, at as *const i32);
            let a1 = _mm512_maskz_loadu_epi32(m, at.add(16) as *const i32);
            let row = w.add((p * 9 + t) * c_out + start);
            let row_lo = w_lo.add((p * 9 + t) * c_out + start);
            for j in 0..NT {
                let b = _mm512_set1_epi32(*row.add(j) as i32);
                acc0[j] = _mm512_dpbusd_epi32(acc0[j], a0, b);
                acc1[j] = _mm512_dpbusd_epi32(acc1[j], a1, b);
                if WIDE {
                    let b = _mm512_set1_epi32(*row_lo.add(j) as i32);
                    lo0[j] = _mm512_dpbusd_epi32(lo0[j], a0, b);
                    lo1[j] = _mm512_dpbusd_epi32(lo1[j], a1, b);
                }
            }
        }
    }
    let zero = _mm512_setzero_ps();
    let (f32_out, residual) = match out {
        Out::Trunk(f) => (Some(f.as_mut_ptr()), false),
        Out::Inner => (None, false),
        Out::Residual(f) => (Some(f.as_mut_ptr()), true),
    };
    let mut y0 = [zero; NT];
    let mut y1 = [zero; NT];
    for j in 0..NT {
        let ch = start + j;
        let (scale, bias) = (
            _mm512_set1_ps(layer.scale[ch]),
            _mm512_set1_ps(layer.bias[ch]),
        );
        if WIDE {
            // 256 hi + lo, in f32: 256 hi alone can pass i32's range (see the module docs).
            let (high, bias0, bias1) = (
                _mm512_set1_ps(256.0 * layer.scale[ch]),
                _mm512_fmadd_ps(_mm512_cvtepi32_ps(lo0[j]), scale, bias),
                _mm512_fmadd_ps(_mm512_cvtepi32_ps(lo1[j]), scale, bias),
            );
            y0[j] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(acc0[j]), high, bias0);
            y1[j] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(acc1[j]), high, bias1);
        } else {
            y0[j] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(acc0[j]), scale, bias);
            y1[j] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(acc1[j]), scale, bias);
        }
        if let Some(f) = f32_out {
            let row = f.add(ch * CELLS);
            if residual {
                y0[j] = _mm512_add_ps(y0[j], _mm512_loadu_ps(row));
                y1[j] = _mm512_add_ps(y1[j], _mm512_loadu_ps(row.add(16)));
            }
            y0[j] = _mm512_max_ps(y0[j], zero);
            y1[j] = _mm512_max_ps(y1[j], zero);
            _mm512_storeu_ps(row, y0[j]);
            _mm512_storeu_ps(row.add(16), y1[j]);
        } else {
            y0[j] = _mm512_max_ps(y0[j], zero);
            y1[j] = _mm512_max_ps(y1[j], zero);
        }
    }
    let Some(requant) = &layer.requant else {
        return;
    };
    let top = _mm512_set1_ps(255.0);
    let dst = quads.as_mut_ptr();
    for j in (0..NT).step_by(4) {
        let quad = dst.add((start + j) / 4 * PAD_CELLS + PAD_BEFORE);
        for (half, y) in [&y0, &y1].into_iter().enumerate() {
            let mut packed = _mm512_setzero_si512();
            for k in 0..4 {
                let inv = _mm512_set1_ps(requant[start + j + k]);
                // y >= 0 (after the ReLU), so the byte is in [0, 255]; rounds to nearest (the
                // default MXCSR mode).
                let q = _mm512_cvtps_epi32(_mm512_min_ps(_mm512_mul_ps(y[j + k], inv), top));
                packed = _mm512_or_si512(
                    packed,
                    _mm512_sllv_epi32(q, _mm512_set1_epi32(8 * k as i32)),
                );
            }
            _mm512_storeu_si512(quad.add(16 * half) as *mut __m512i, packed);
        }
    }
}
