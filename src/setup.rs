//! The one place that builds what every command shares: a network evaluator from a checkpoint
//! (variant check, device, precision, backend, libtorch's threads), a network to train on, and
//! a TOML config with its command-line overrides.
//!
//! Why one place: a choice made here (how many threads libtorch may use beside a CPU clock,
//! which forward pass judges a batch, which variant a checkpoint must be for) is then made the
//! same way by `bao eval`, `bao train`, `bao selfplay`, the engine and the web server. KataGo
//! keeps its `program/setup.cpp` for the same reason.

use std::path::Path;

use anyhow::Context;
use serde::de::DeserializeOwned;
use serde::Serialize;

use crate::game::Variant;
use crate::neuralnet::{Backend, DeviceChoice, NetEvaluator, Network, Precision};

/// How a checkpoint is to be run: the options a player spec (`net:...:device=...`) or a
/// command's flags choose. The defaults are what a search on this machine wants.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct NetChoice {
    pub device: DeviceChoice,
    pub precision: Precision,
    pub backend: Backend,
    /// libtorch's intra-op threads; `None`: `$BAO_TORCH_THREADS`, else 1 (see
    /// [`torch_threads`]).
    pub threads: Option<usize>,
}

/// Sets libtorch's thread pools for this process (`None`: `$BAO_TORCH_THREADS`, else 1).
///
/// One thread by default: a player times itself on its own thread's CPU clock, so its network
/// must not borrow other cores behind the clock's back, and games or self-play workers running
/// in parallel must not fight over the cores (measurements in
/// [`crate::neuralnet::configure_threads`]).
pub fn torch_threads(intra_op: Option<usize>) {
    crate::neuralnet::configure_threads(intra_op);
}

/// The evaluator of the checkpoint at `path` (`.safetensors` with its JSON sidecar), run as
/// `choice` says. With `variant`, a checkpoint trained for another variant is refused.
pub fn evaluator(
    path: &Path,
    variant: Option<Variant>,
    choice: &NetChoice,
) -> anyhow::Result<NetEvaluator> {
    torch_threads(choice.threads);
    let net = match variant {
        Some(v) => NetEvaluator::load_for(path, v, choice.device)?,
        None => NetEvaluator::load(path, choice.device)?,
    }
    .with_precision(choice.precision)?;
    match choice.backend {
        // `NetEvaluator::load` already chose the pass per call.
        Backend::Auto => Ok(net),
        backend => net.with_backend(backend),
    }
}

/// The network of the checkpoint at `path` on `device`, to train on or to teach from. With
/// `variant`, a checkpoint trained for another variant is refused.
pub fn network(
    path: &Path,
    variant: Option<Variant>,
    device: tch::Device,
) -> anyhow::Result<Network> {
    torch_threads(None);
    match variant {
        Some(v) => Network::load_for(path, v, device),
        None => Network::load(path, device),
    }
}

/// Reads the TOML config at `path` and applies command-line overrides `SECTION.KEY=VALUE`
/// ([`with_overrides`]).
pub fn load_config<T: DeserializeOwned + Serialize>(
    path: &Path,
    overrides: &[String],
) -> anyhow::Result<T> {
    let config: T = crate::config::load_toml(path)?;
    with_overrides(config, &path.display().to_string(), overrides)
}

/// `config` (read from `what`) with command-line overrides `SECTION.KEY=VALUE` applied (see
/// [`crate::config::apply_overrides`]), parsed again so that every override is checked like a
/// key of the file (unknown keys and bad values named).
///
/// The file is parsed as written first, so that its errors cite its own lines; the overrides
/// are applied afterwards, and an error only then names the override.
pub fn with_overrides<T: DeserializeOwned + Serialize>(
    config: T,
    what: &str,
    overrides: &[String],
) -> anyhow::Result<T> {
    if overrides.is_empty() {
        return Ok(config);
    }
    let mut table = toml::Table::try_from(&config).context("cannot re-serialize config")?;
    crate::config::apply_overrides(&mut table, overrides)?;
    let text = toml::to_string(&table).context("cannot re-serialize config")?;
    crate::config::parse_toml::<T>(&text)
        .with_context(|| format!("invalid --set override of {what}"))
}
