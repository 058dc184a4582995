//! TorchScript export: a trained player for Python or C++ without this crate.
//!
//! The file is a traced module with
//! `forward(features: float32 [N, planes, 4, 8], legal: bool [N, 64]) -> out: float32 [N, 65]`
//! (`planes`: 15, or 21 with move features):
//! `out[:, :64]` = policy probabilities (zero on illegal actions, all zero for a row with no
//! legal action), `out[:, 64]` = value in `[-1, 1]` for the side to move. (One tensor, not a
//! tuple: libtorch cannot save a traced method with several outputs.) Features are
//! [`crate::game::features`] of the checkpoint's encoding version; evaluation mode (batch norm
//! on running statistics). `N` is free: the trace contains no fixed batch size.
//! In Python: `out = torch.jit.load("net.pt")(x, legal); policy, value = out[:, :64], out[:, 64]`.

use std::path::Path;

use anyhow::Context;
use tch::{CModule, Device, Kind, Tensor};

use super::network::Network;
use crate::dataio::atomic::write_with;
use crate::game::features::{COLS, ROWS};
use crate::game::ACTIONS;

/// Traces `net` and writes the TorchScript module to `path` (atomically).
pub fn export_torchscript(net: &Network, path: &Path) -> anyhow::Result<()> {
    // Trace on the CPU so the file loads anywhere (`torch.jit.load(..., map_location=...)`
    // moves it to a GPU).
    // Frozen: the tracer stores weights as constants, which must not require gradients.
    let mut cpu = net.duplicate(Device::Cpu)?;
    cpu.freeze();
    let batch = 3;
    let x = Tensor::rand(
        [
            batch,
            net.encoding().planes() as i64,
            ROWS as i64,
            COLS as i64,
        ],
        (Kind::Float, Device::Cpu),
    );
    let legal = Tensor::ones([batch, ACTIONS as i64], (Kind::Bool, Device::Cpu));
    let module = tch::no_grad(|| {
        CModule::create_by_tracing("BaoNet", "forward", &[x, legal], &mut |inputs| {
            let (log_policy, value) = cpu.forward_t(&inputs[0], &inputs[1], false);
            let any = inputs[1].any_dim(1, true).to_kind(Kind::Float);
            vec![Tensor::cat(
                &[log_policy.exp() * any, value.unsqueeze(1)],
                1,
            )]
        })
    })
    .context("cannot trace the network")?;
    write_with(path, |tmp| module.save(tmp).map_err(anyhow::Error::from))
}
