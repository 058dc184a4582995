//! The Rust forward pass's trunk in bf16 on AVX-512 BF16 (`VDPBF16PS`).
//!
//! Why: a player's search spends nearly all its time in the trunk's 3x3 convolutions (the
//! phase profile of `bao bench search --player-ms 200 --profile`), and `VDPBF16PS` does two
//! multiply-adds per f32 lane and instruction where an f32 FMA does one. The weights are
//! rounded to bf16 once at load, the activations as each layer writes them; products are exact
//! and sums are f32, so the outputs stay within about 1e-2 of the f32 pass (the gates in
//! `tests/native_lowp.rs`). The heads (about 2% of the multiply-adds) stay f32.
//!
//! Why a direct convolution and not im2col: the f32 pass spends a sixth of its time copying
//! the im2col matrix. Here each output-channel tile reads its input straight from the layer
//! below: the 16 f32 lanes of a vector are 16 cells of the 4x8 board (half a position), and a
//! 3x3 tap is the same vector loaded at an offset of `8 * dy + dx` cells, with the lanes that
//! would wrap around a row masked to zero and the rows above and below the board read from
//! zero padding. Each 32-bit lane holds two input channels' bf16 values of one cell, the pair
//! `VDPBF16PS` multiplies with a pair of weights broadcast from memory.
//!
//! Layout of a position's activations ("pairs"): `[channel pair][PAD_CELLS]` of `u32`, lane
//! `cell + PAD_BEFORE` holding channel `2p` in its low half and `2p + 1` in its high half; the
//! lanes before and after the board stay zero. The residual stream is also kept in f32
//! (`[channel][CELLS]`), which the blocks' skip connections and the heads read.

use std::arch::x86_64::*;

use super::heads::Heads;
use super::lanes::{column_mask, PAD_BEFORE, PAD_CELLS};
use super::{Conv, Linear};
use crate::game::features::{CELLS, COLS};

/// True when this CPU runs the bf16 trunk (AVX-512 F and BF16, detected at run time).
pub fn supported() -> bool {
    is_x86_feature_detected!("avx512f") && is_x86_feature_detected!("avx512bf16")
}

/// `x` rounded to bf16 (nearest, ties to even; the values here are finite), its 16 bits.
fn bf16_bits(x: f32) -> u32 {
    let u = x.to_bits();
    (u + 0x7fff + ((u >> 16) & 1)) >> 16
}

/// A 3x3 convolution (batch norm folded in) with bf16 weights.
#[derive(Clone, Debug)]
struct ConvBf16 {
    /// Input channel pairs (an odd channel count is padded with a zero channel).
    pairs_in: usize,
    c_out: usize,
    /// `[pair in][tap][c_out]`: the weights of input channels `2p` (low half) and `2p + 1`.
    weight: Vec<u32>,
    bias: Vec<f32>,
}

impl ConvBf16 {
    fn new(conv: &Conv) -> ConvBf16 {
        assert_eq!(conv.kernel, 3, "the bf16 trunk has 3x3 convolutions only");
        assert!(
            conv.c_out.is_multiple_of(2),
            "an even number of output channels"
        );
        let (c_in, c_out) = (conv.c_in, conv.c_out);
        let pairs_in = c_in.div_ceil(2);
        let mut weight = vec![0u32; pairs_in * 9 * c_out];
        let w = |t: usize, i: usize, o: usize| -> u32 {
            if i < c_in {
                bf16_bits(conv.weight[(t * c_in + i) * c_out + o])
            } else {
                0
            }
        };
        for p in 0..pairs_in {
            for t in 0..9 {
                for o in 0..c_out {
                    weight[(p * 9 + t) * c_out + o] = w(t, 2 * p, o) | (w(t, 2 * p + 1, o) << 16);
                }
            }
        }
        ConvBf16 {
            pairs_in,
            c_out,
            weight,
            bias: conv.bias.clone(),
        }
    }
}

/// Buffers of one forward pass, kept between calls.
#[derive(Clone, Debug, Default)]
struct Scratch {
    /// A position's input planes as pairs.
    input: Vec<u32>,
    /// A position's trunk as pairs.
    pairs: Vec<u32>,
    /// A block's inner activation, as pairs.
    inner: Vec<u32>,
    /// The trunk's f32 activations of every position of the call, `[n][c][CELLS]`.
    trunk: Vec<f32>,
}

/// The network with a bf16 trunk (see the module docs).
#[derive(Clone, Debug)]
pub struct Bf16Net {
    planes: usize,
    channels: usize,
    stem: ConvBf16,
    blocks: Vec<(ConvBf16, ConvBf16)>,
    heads: Heads,
    scratch: Scratch,
}

impl Bf16Net {
    /// From the f32 pass's layers; the linear layers' inputs in torch's channel-major order.
    /// `None` where the CPU lacks AVX-512 BF16 or the trunk has an odd channel count.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn new(
        planes: usize,
        stem: &Conv,
        blocks: &[(Conv, Conv)],
        policy_conv: &Conv,
        policy_fc: Linear,
        value_conv: &Conv,
        value_fc1: Linear,
        value_fc2: Linear,
    ) -> Option<Bf16Net> {
        if !supported() || !stem.c_out.is_multiple_of(2) {
            return None;
        }
        Some(Bf16Net {
            planes,
            channels: stem.c_out,
            stem: ConvBf16::new(stem),
            blocks: blocks
                .iter()
                .map(|(a, b)| (ConvBf16::new(a), ConvBf16::new(b)))
                .collect(),
            heads: Heads::new(policy_conv, policy_fc, value_conv, value_fc1, value_fc2),
            scratch: Scratch::default(),
        })
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
        s.input.resize(self.planes.div_ceil(2) * PAD_CELLS, 0);
        s.pairs.resize(c / 2 * PAD_CELLS, 0);
        s.inner.resize(c / 2 * PAD_CELLS, 0);
        s.trunk.resize(n * c * CELLS, 0.0);
        for (pos, trunk) in features
            .chunks_exact(self.planes * CELLS)
            .zip(s.trunk.chunks_exact_mut(c * CELLS))
        {
            input_pairs(pos, self.planes, &mut s.input);
            // SAFETY: `supported()` was true when this net was built (`Bf16Net::new`), so
            // the CPU has AVX-512 F and BF16, `conv3x3`'s one requirement beyond the buffer
            // sizes it asserts.
            unsafe {
                conv3x3(&self.stem, &s.input, Out::Trunk(trunk, &mut s.pairs));
                for (a, b) in &self.blocks {
                    conv3x3(a, &s.pairs, Out::Inner(&mut s.inner));
                    conv3x3(b, &s.inner, Out::Residual(trunk, &mut s.pairs));
                }
            }
        }
        // Heads, f32, as the f32 pass computes them.
        self.heads.forward(&s.trunk, c, masks, policy, values);
    }
}

/// One position's input planes (`[planes][CELLS]` f32) as pairs in `out`.
fn input_pairs(planes: &[f32], count: usize, out: &mut [u32]) {
    for p in 0..count.div_ceil(2) {
        let lo = &planes[2 * p * CELLS..(2 * p + 1) * CELLS];
        let hi = planes.get((2 * p + 1) * CELLS..(2 * p + 2) * CELLS);
        let dst = &mut out[p * PAD_CELLS + PAD_BEFORE..p * PAD_CELLS + PAD_BEFORE + CELLS];
        for (cell, d) in dst.iter_mut().enumerate() {
            let h = hi.map_or(0, |h| bf16_bits(h[cell]));
            *d = bf16_bits(lo[cell]) | (h << 16);
        }
    }
}

/// Where a convolution's ReLU'd output goes.
enum Out<'a> {
    /// The stem: the trunk in f32 (`[c][CELLS]`) and as pairs.
    Trunk(&'a mut [f32], &'a mut [u32]),
    /// A block's first convolution: pairs only.
    Inner(&'a mut [u32]),
    /// A block's second convolution: adds the f32 trunk (the skip), then writes it back in
    /// f32 and as pairs.
    Residual(&'a mut [f32], &'a mut [u32]),
}

/// One position's 3x3 convolution `layer` of `input` (pairs), bias, ReLU (after the skip for
/// [`Out::Residual`]), into `out`.
///
/// # Safety
/// The CPU must have AVX-512 F and BF16. `input` must hold `layer.pairs_in * PAD_CELLS` lanes
/// whose padding lanes are zero; `out`'s pair buffer `layer.c_out / 2 * PAD_CELLS` lanes and its
/// f32 buffer `layer.c_out * CELLS` floats. (Reads are bounds-checked by slicing; the
/// requirement on the CPU is the one the caller must meet.)
#[target_feature(enable = "avx512f,avx512bf16")]
unsafe fn conv3x3(layer: &ConvBf16, input: &[u32], mut out: Out<'_>) {
    let c_out = layer.c_out;
    assert!(input.len() >= layer.pairs_in * PAD_CELLS);
    assert!(layer.weight.len() == layer.pairs_in * 9 * c_out && layer.bias.len() == c_out);
    match &out {
        Out::Trunk(f, p) | Out::Residual(f, p) => {
            assert!(f.len() >= c_out * CELLS && p.len() >= c_out / 2 * PAD_CELLS)
        }
        Out::Inner(p) => assert!(p.len() >= c_out / 2 * PAD_CELLS),
    }
    let mut start = 0;
    while start < c_out {
        let left = c_out - start;
        // SAFETY (each arm): the asserts above bound every access `tile` makes, and the
        // CPU features are this function's own precondition.
        if left >= 12 && left != 16 {
            tile::<12>(layer, input, &mut out, start);
            start += 12;
        } else if left >= 8 {
            tile::<8>(layer, input, &mut out, start);
            start += 8;
        } else if left >= 4 {
            tile::<4>(layer, input, &mut out, start);
            start += 4;
        } else {
            tile::<2>(layer, input, &mut out, start);
            start += 2;
        }
    }
}

/// Output channels `start..start + NT` of [`conv3x3`]: 2 x NT accumulators (both halves of the
/// board) stay in registers over all input pairs and taps.
///
/// # Safety
/// As [`conv3x3`], whose asserts it relies on for the pointer reads and writes, and `start +
/// NT <= layer.c_out` with `start` and `NT` even.
#[inline]
#[target_feature(enable = "avx512f,avx512bf16")]
unsafe fn tile<const NT: usize>(layer: &ConvBf16, input: &[u32], out: &mut Out<'_>, start: usize) {
    let c_out = layer.c_out;
    let mut acc0 = [_mm512_setzero_ps(); NT];
    let mut acc1 = [_mm512_setzero_ps(); NT];
    for j in 0..NT {
        acc0[j] = _mm512_set1_ps(layer.bias[start + j]);
        acc1[j] = acc0[j];
    }
    let masks = [column_mask(-1), column_mask(0), column_mask(1)];
    let w = layer.weight.as_ptr();
    let x = input.as_ptr();
    for p in 0..layer.pairs_in {
        let base = x.add(p * PAD_CELLS + PAD_BEFORE);
        for t in 0..9 {
            let (dy, dx) = (t as isize / 3 - 1, t as isize % 3 - 1);
            let at = base.offset(dy * COLS as isize + dx);
            let m = masks[(dx + 1) as usize];
            // SAFETY: `at` is at most PAD_BEFORE - 9 lanes before the pair's board and its 32
            // lanes end at most 9 past it, inside the pair's PAD_CELLS lanes.
            let a0: __m512bh = std::mem::transmute(_mm512_maskz_loadu_epi32(m, at as *const i32));
            let a1: __m512bh =
                std::mem::transmute(_mm512_maskz_loadu_epi32(m, at.add(16) as *const i32));
            let row = w.add((p * 9 + t) * c_out + start);
            for j in 0..NT {
                let b: __m512bh = std::mem::transmute(_mm512_set1_epi32(*row.add(j) as i32));
                acc0[j] = _mm512_dpbf16_ps(acc0[j], a0, b);
                acc1[j] = _mm512_dpbf16_ps(acc1[j], a1, b);
            }
        }
    }
    let zero = _mm512_setzero_ps();
    let (f32_out, pairs_out, residual) = match out {
        Out::Trunk(f, p) => (Some(f.as_mut_ptr()), p.as_mut_ptr(), false),
        Out::Inner(p) => (None, p.as_mut_ptr(), false),
        Out::Residual(f, p) => (Some(f.as_mut_ptr()), p.as_mut_ptr(), true),
    };
    for j in 0..NT {
        let ch = start + j;
        if let Some(f) = f32_out {
            let row = f.add(ch * CELLS);
            if residual {
                acc0[j] = _mm512_add_ps(acc0[j], _mm512_loadu_ps(row));
                acc1[j] = _mm512_add_ps(acc1[j], _mm512_loadu_ps(row.add(16)));
            }
            acc0[j] = _mm512_max_ps(acc0[j], zero);
            acc1[j] = _mm512_max_ps(acc1[j], zero);
            _mm512_storeu_ps(row, acc0[j]);
            _mm512_storeu_ps(row.add(16), acc1[j]);
        } else {
            acc0[j] = _mm512_max_ps(acc0[j], zero);
            acc1[j] = _mm512_max_ps(acc1[j], zero);
        }
    }
    for j in (0..NT).step_by(2) {
        let dst = pairs_out.add((start + j) / 2 * PAD_CELLS + PAD_BEFORE);
        for (half, (lo, hi)) in [(acc0[j], acc0[j + 1]), (acc1[j], acc1[j + 1])]
            .into_iter()
            .enumerate()
        {
            let lo = _mm512_cvtepu16_epi32(std::mem::transmute::<__m256bh, __m256i>(
                _mm512_cvtneps_pbh(lo),
            ));
            let hi = _mm512_cvtepu16_epi32(std::mem::transmute::<__m256bh, __m256i>(
                _mm512_cvtneps_pbh(hi),
            ));
            let both = _mm512_or_si512(lo, _mm512_slli_epi32::<16>(hi));
            _mm512_storeu_si512(dst.add(16 * half) as *mut __m512i, both);
        }
    }
}
