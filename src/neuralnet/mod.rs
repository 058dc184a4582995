//! The policy/value network on libtorch (`tch`).
//!
//! - [`NetConfig`]: architecture (presets `tiny`, `small`, `large`, or explicit fields);
//! - [`Network`]: model + weights for one variant; checkpoints `NAME.safetensors` + `NAME.json`
//!   ([`CheckpointMeta`], readable alone);
//! - [`NetEvaluator`]: the network behind [`crate::search::Evaluator`]; [`CachedEvaluator`]
//!   puts a position cache in front of any evaluator;
//! - [`Learner`]: network + optimizer, one `train_step` per batch, exact resume;
//! - [`export_torchscript`]: a traced TorchScript file for Python / C++.
//!
//! Commands call [`configure_threads`] before using torch.

pub mod checkpoint;
pub mod config;
pub mod evaluator;
pub mod export;
pub mod learner;
pub mod model;
pub mod network;

use std::str::FromStr;

pub use checkpoint::{CheckpointMeta, Lineage};
pub use config::{NetConfig, PRESETS};
pub use evaluator::{CachedEvaluator, NetEvaluator};
pub use export::export_torchscript;
pub use learner::{Learner, Losses, OptimizerConfig, OptimizerKind};
pub use model::flops_per_position;
pub use network::{legal_tensor, Network};

/// Where the network runs. `auto` = the first CUDA GPU when there is one, else the CPU.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum DeviceChoice {
    Cpu,
    Cuda,
    #[default]
    Auto,
}

impl DeviceChoice {
    /// The torch device, without checking that CUDA exists (see [`Self::resolve`]).
    pub fn device(self) -> tch::Device {
        match self {
            DeviceChoice::Cpu => tch::Device::Cpu,
            DeviceChoice::Cuda => tch::Device::Cuda(0),
            DeviceChoice::Auto => tch::Device::cuda_if_available(),
        }
    }

    /// The torch device; `cuda` fails with a clear message on a machine or build without it.
    pub fn resolve(self) -> anyhow::Result<tch::Device> {
        if self == DeviceChoice::Cuda {
            anyhow::ensure!(
                tch::Cuda::is_available(),
                "device `cuda` was asked for but libtorch sees no CUDA GPU (this libtorch may be \
                 a CPU build; `bao doctor` tells); use `cpu` or `auto`"
            );
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
            _ => Err(format!("unknown device `{s}` (expected `cpu`, `cuda` or `auto`)")),
        }
    }
}

impl std::fmt::Display for DeviceChoice {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            DeviceChoice::Cpu => "cpu",
            DeviceChoice::Cuda => "cuda",
            DeviceChoice::Auto => "auto",
        })
    }
}

/// Sets torch's CPU thread pools. `intra_op`: threads inside one operator (a matmul,
/// a convolution); `None` = one per available core, which `bao bench net` found fastest for a
/// single evaluating thread. Callers that evaluate from several threads at once (parallel
/// self-play workers) should pass `Some(1)` and let the workers use the cores instead.
/// Inter-op threads (parallel *independent* operators, only used by TorchScript graphs) are
/// set to 1: our forward pass is a chain, so more would only compete for cores. libtorch
/// accepts the inter-op setting once per process, before any parallel work; later calls
/// change only the intra-op count.
pub fn configure_threads(intra_op: Option<usize>) {
    static INTEROP: std::sync::Once = std::sync::Once::new();
    INTEROP.call_once(|| {
        // libtorch refuses (tch panics) when parallel work already ran; keep its default.
        let _ = std::panic::catch_unwind(|| tch::set_num_interop_threads(1));
    });
    let n = intra_op
        .unwrap_or_else(|| std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1))
        .max(1);
    tch::set_num_threads(n as i32);
}
