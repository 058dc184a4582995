//! The policy/value network on libtorch (`tch`).
//!
//! - [`NetConfig`]: architecture (presets `tiny`, `small`, `large`, or explicit fields);
//! - [`Network`]: model + weights for one variant; checkpoints `NAME.safetensors` + `NAME.json`
//!   ([`CheckpointMeta`], readable alone);
//! - [`NetEvaluator`]: the network behind [`crate::search::Evaluator`], in f32 or bf16
//!   ([`Precision`]), its forward pass in libtorch or in Rust ([`Backend`], [`native`]);
//!   [`CachedEvaluator`] puts a position cache in front of any evaluator;
//! - [`Learner`]: network + optimizer, one `train_step` per batch, exact resume;
//! - [`export_torchscript`]: a traced TorchScript file for Python / C++.
//!
//! Commands call [`configure_threads`] before using torch.

pub mod agreement;
pub mod checkpoint;
pub mod config;
pub mod cuda;
pub mod evaluator;
pub mod export;
pub mod learner;
pub mod model;
pub mod native;
pub mod network;
pub mod precision;

use std::str::FromStr;

pub use checkpoint::{CheckpointMeta, Lineage};
pub use config::{NetConfig, PRESETS};
pub use evaluator::{
    auto_native_max_flops, auto_native_max_flops_here, Backend, CachedEvaluator, NetEvaluator,
};
pub use export::export_torchscript;
pub use learner::{AuxTargets, Learner, Losses, OptimizerConfig, OptimizerKind};
pub use model::flops_per_position;
pub use network::{legal_tensor, Network};
pub use precision::Precision;

/// Where the network runs. `auto` = the first CUDA GPU when there is one, else the CPU.
/// Written as text everywhere (configs, specs, flags): `cpu`, `cuda`, `cuda:N`, `auto`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(try_from = "String", into = "String")]
pub enum DeviceChoice {
    Cpu,
    /// The first CUDA GPU (`cuda`).
    Cuda,
    /// CUDA GPU number N (`cuda:N`), as libtorch numbers the visible devices.
    CudaIndex(usize),
    #[default]
    Auto,
}

impl DeviceChoice {
    /// The torch device, without checking that CUDA exists (see [`Self::resolve`]).
    /// Choosing a GPU (or `auto`) is the one place the CUDA backend gets loaded: a command
    /// that runs on the CPU never pays for it (see [`cuda`]).
    pub fn device(self) -> tch::Device {
        if self != DeviceChoice::Cpu {
            cuda::load_backend();
        }
        match self {
            DeviceChoice::Cpu => tch::Device::Cpu,
            DeviceChoice::Cuda => tch::Device::Cuda(0),
            DeviceChoice::CudaIndex(n) => tch::Device::Cuda(n),
            DeviceChoice::Auto => tch::Device::cuda_if_available(),
        }
    }

    /// The torch device; `cuda` and `cuda:N` fail with a clear message on a machine or build
    /// without that GPU.
    pub fn resolve(self) -> anyhow::Result<tch::Device> {
        let wanted = match self {
            DeviceChoice::Cuda => Some(0),
            DeviceChoice::CudaIndex(n) => Some(n),
            DeviceChoice::Cpu | DeviceChoice::Auto => None,
        };
        if let Some(n) = wanted {
            cuda::load_backend(); // before asking whether CUDA exists
            anyhow::ensure!(
                tch::Cuda::is_available(),
                "device `{self}` was asked for but libtorch sees no CUDA GPU (this libtorch may be \
                 a CPU build; `bao doctor` tells); use `cpu` or `auto`"
            );
            let count = tch::Cuda::device_count().max(0) as usize;
            anyhow::ensure!(n < count, "device `{self}` was asked for but libtorch sees {count} CUDA GPU(s), numbered from 0");
        }
        Ok(self.device())
    }
}

impl FromStr for DeviceChoice {
    type Err = String;
    fn from_str(s: &str) -> Result<DeviceChoice, String> {
        match s {
            "cpu" => Ok(DeviceChoice::Cpu),
            "cuda" => Ok(DeviceChoice::Cuda),
            "auto" => Ok(DeviceChoice::Auto),
            _ => match s.strip_prefix("cuda:").map(str::parse::<usize>) {
                Some(Ok(n)) => Ok(DeviceChoice::CudaIndex(n)),
                _ => Err(format!(
                    "unknown device `{s}` (expected `cpu`, `cuda`, `cuda:N` or `auto`)"
                )),
            },
        }
    }
}

impl TryFrom<String> for DeviceChoice {
    type Error = String;
    fn try_from(s: String) -> Result<DeviceChoice, String> {
        s.parse()
    }
}

impl From<DeviceChoice> for String {
    fn from(d: DeviceChoice) -> String {
        d.to_string()
    }
}

impl std::fmt::Display for DeviceChoice {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            DeviceChoice::Cpu => f.write_str("cpu"),
            DeviceChoice::Cuda => f.write_str("cuda"),
            DeviceChoice::CudaIndex(n) => write!(f, "cuda:{n}"),
            DeviceChoice::Auto => f.write_str("auto"),
        }
    }
}

/// Sets torch's CPU thread pools; commands call it before any torch work.
///
/// `intra_op`: threads inside one operator (a convolution, a matmul). `None` = the
/// `BAO_TORCH_THREADS` environment variable if set, else **1**. Measured with `bao bench net`
/// (small preset, batch 256, on the 2-core development machine): one thread reached 87% of its
/// matmul peak while other jobs ran, two threads 42% (OpenMP workers spin at barriers and
/// collapse 3-100x as soon as another process takes a core; batch 1 of `tiny` fell from
/// 4600/s to 5/s). On an idle machine two threads are ~1.3x faster, so a lone evaluator on a
/// dedicated box may pass `Some(cores)`; parallel self-play workers should keep 1 each and let
/// the workers use the cores.
/// Inter-op threads (parallel *independent* operators, only used by TorchScript graphs) are
/// set to 1: our forward pass is a chain, so more would only compete for cores. libtorch
/// accepts the inter-op setting once per process, before any parallel work; later calls
/// change only the intra-op count.
pub fn configure_threads(intra_op: Option<usize>) {
    configure_thread_pools(intra_op, 1);
}

/// Makes the calling thread's float unit treat subnormal numbers as zero (x86 FTZ and DAZ).
///
/// Why: trained networks produce subnormal activations, and x86 CPUs handle them in microcode
/// at a cost of a hundred cycles or more each. On the shipped Kiswahili model this made batched
/// inference several times slower than batch 1 (`bao bench search`: 16 leaves a call gave
/// 1,635 simulations/s without it, 11,596 with it; one leaf 3,044 and 4,558), and it slows
/// training alike. Values that small carry no information for a network; PyTorch offers the
/// same switch as `torch.set_flush_denormal`. The setting is per thread, so every thread that
/// runs the network calls this (it costs two instructions); elsewhere it does nothing.
#[inline]
pub fn flush_denormals() {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: reads and writes the calling thread's MXCSR, setting only the flush-to-zero
    // (bit 15) and denormals-are-zero (bit 6) flags, which every x86-64 CPU supports.
    #[allow(deprecated)] // `_mm_setcsr` is deprecated for inline asm; it remains correct
    unsafe {
        use std::arch::x86_64::{_mm_getcsr, _mm_setcsr};
        _mm_setcsr(_mm_getcsr() | 0x8040);
    }
}

/// [`configure_threads`] with an explicit inter-op pool size (for `bao bench net --interop`).
pub fn configure_thread_pools(intra_op: Option<usize>, inter_op: usize) {
    static INTEROP: std::sync::Once = std::sync::Once::new();
    INTEROP.call_once(|| {
        // libtorch refuses (tch panics) when parallel work already ran; keep its default.
        let n = inter_op.max(1) as i32;
        let _ = std::panic::catch_unwind(|| tch::set_num_interop_threads(n));
    });
    let from_env = || {
        std::env::var("BAO_TORCH_THREADS")
            .ok()
            .and_then(|v| v.trim().parse().ok())
    };
    let n: usize = intra_op.or_else(from_env).unwrap_or(1).max(1);
    tch::set_num_threads(n as i32);
}
