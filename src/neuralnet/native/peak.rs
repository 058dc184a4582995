//! Instruction peaks: the operations a second one core's widest multiply-add of each
//! precision does on registers alone (`VFMADD231PS`, `VDPBF16PS`, `VPDPBUSD` on 512-bit
//! vectors). Each pass's throughput in `bao bench net` is reported as a share of its own
//! peak, so that "near the limit" means the same thing for every precision. Every
//! multiply-add counts 2 operations, the integer ones too.
//!
//! Sixteen independent accumulators hide the instructions' latency, so a burst is bound by
//! their throughput; the best of repeated bursts is kept, since a preempted burst only reads
//! low.

use std::arch::x86_64::*;
use std::hint::black_box;
use std::time::Instant;

/// Independent accumulators a burst keeps in flight.
const ACC: usize = 16;
/// Instructions a burst issues on each accumulator.
const ITERS: u64 = 1 << 16;

/// The best rate, in G operations a second, of `burst` (which does `ops_per_lane_op` x 16
/// lanes x [`ACC`] x [`ITERS`] operations) over `seconds` of repeated bursts.
fn best_rate(seconds: f64, ops_per_lane_op: u64, mut burst: impl FnMut()) -> f64 {
    let ops = (ITERS * ACC as u64 * 16 * ops_per_lane_op) as f64;
    let mut best = 0.0f64;
    let start = Instant::now();
    while start.elapsed().as_secs_f64() < seconds {
        let t = Instant::now();
        burst();
        best = best.max(ops / t.elapsed().as_secs_f64() / 1e9);
    }
    best
}

/// GFLOP/s of f32 FMA; `None` without AVX-512 F.
pub fn f32_gflops(seconds: f64) -> Option<f64> {
    if !is_x86_feature_detected!("avx512f") {
        return None;
    }
    // SAFETY: the CPU has AVX-512 F (checked just above).
    Some(best_rate(seconds, 2, || unsafe { fma_burst() }))
}

/// GFLOP/s of bf16 dot products (two products a lane); `None` without AVX-512 BF16.
pub fn bf16_gflops(seconds: f64) -> Option<f64> {
    if !super::bf16::supported() {
        return None;
    }
    // SAFETY: the CPU has AVX-512 F and BF16 (checked just above).
    Some(best_rate(seconds, 4, || unsafe { bf16_burst() }))
}

/// GOP/s of u8 x i8 dot products (four products a lane); `None` without AVX-512 VNNI.
pub fn int8_gops(seconds: f64) -> Option<f64> {
    if !super::int8::supported() {
        return None;
    }
    // SAFETY: the CPU has AVX-512 F, BW and VNNI (checked just above).
    Some(best_rate(seconds, 8, || unsafe { int8_burst() }))
}

#[target_feature(enable = "avx512f")]
unsafe fn fma_burst() {
    let a = _mm512_set1_ps(black_box(0.0));
    let b = _mm512_set1_ps(black_box(1.0));
    let mut acc = [_mm512_setzero_ps(); ACC];
    for _ in 0..ITERS {
        for v in acc.iter_mut() {
            *v = _mm512_fmadd_ps(a, b, *v);
        }
    }
    black_box(&acc);
}

#[target_feature(enable = "avx512f,avx512bf16")]
unsafe fn bf16_burst() {
    // SAFETY: a 512-bit integer vector and a bf16 one have the same size; any bits are a bf16
    // vector (these are 1.0 in the low or high half of each pair).
    let a: __m512bh = std::mem::transmute(_mm512_set1_epi32(black_box(0x3f80_0000)));
    let b: __m512bh = std::mem::transmute(_mm512_set1_epi32(black_box(0x0000_3f80)));
    let mut acc = [_mm512_setzero_ps(); ACC];
    for _ in 0..ITERS {
        for v in acc.iter_mut() {
            *v = _mm512_dpbf16_ps(*v, a, b);
        }
    }
    black_box(&acc);
}

#[target_feature(enable = "avx512f,avx512bw,avx512vnni")]
unsafe fn int8_burst() {
    let a = _mm512_set1_epi32(black_box(0x0101_0101));
    let b = _mm512_set1_epi32(black_box(0));
    let mut acc = [_mm512_setzero_si512(); ACC];
    for _ in 0..ITERS {
        for v in acc.iter_mut() {
            *v = _mm512_dpbusd_epi32(*v, a, b);
        }
    }
    black_box(&acc);
}
