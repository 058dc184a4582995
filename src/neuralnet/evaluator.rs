//! The network as a search [`Evaluator`], and a position cache in front of any evaluator.

use std::path::Path;

use super::native::NativeNet;
use super::network::Network;
use super::{DeviceChoice, Precision};
use crate::game::{Position, Variant, ACTIONS};
use crate::search::Evaluator;
use crate::util::profile::{self, Phase};

/// Which code runs a [`NetEvaluator`]'s forward pass. The two agree to f32 rounding
/// (`tests/neuralnet.rs`); they differ in speed.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Backend {
    /// Per call, the one that is faster for it: the Rust pass on the CPU when the call's work
    /// is at most [`AUTO_NATIVE_MAX_FLOPS`] (in bf16 or int8 [`AUTO_NATIVE_MAX_FLOPS_BF16`],
    /// where the CPU has AVX-512 BF16 or VNNI, in bf16 only where its instruction is fast:
    /// [`auto_native_max_flops`]), libtorch otherwise (on a GPU, in bf16 without
    /// AVX-512 BF16, and for large batches of large networks, where its kernels overtake
    /// Rust's; an int8 request's libtorch calls judge in f32).
    #[default]
    Auto,
    /// libtorch (`tch`), on any device and precision.
    Torch,
    /// The Rust pass of [`super::native`] for every call: CPU only, in f32, or in bf16 (int8)
    /// where the CPU has AVX-512 BF16 (VNNI); elsewhere a bf16 (int8) request's Rust pass
    /// computes in f32.
    Native,
}

/// The most work (FLOPs, as [`super::flops_per_position`] counts them, times the batch) that
/// [`Backend::Auto`] gives the Rust pass in one call. The Rust pass's speed is flat in the
/// batch size while libtorch's grows with it, so the crossover batch shrinks as the network
/// grows; measured with `bao bench net` (one thread, AVX-512): 6x64 about 10 positions, 4x48
/// between 8 and 64, 2x32 about 128, 2x24 and smaller past 256, i.e. near 3e8 FLOPs a call.
/// A single game's search (8 leaves a call) runs the Rust pass for every network up to 6x64.
pub const AUTO_NATIVE_MAX_FLOPS: f64 = 3e8;

/// [`AUTO_NATIVE_MAX_FLOPS`] for the Rust pass in bf16 or int8 where its instruction is fast
/// (see [`auto_native_max_flops`]). The Rust bf16 pass runs at 76-87% of its instruction's
/// peak at every batch size while libtorch's bf16 (oneDNN, with AMX here) needs large
/// batches: measured with `bao bench net --precision bf16 --backends torch,native` (one
/// thread, 2026-12-07, `VDPBF16PS` at twice the f32 FMA's rate), the Rust pass was the faster
/// up to 256 positions for the 2x24, the 4x48 (2.9e9 FLOPs) and 6x64 (7.4e9, by 5%), and
/// libtorch from between 8 and 64 positions of the 12x128 (1.8e9 and 1.5e10 FLOPs). The int8
/// pass takes the same bound: it judges at least as fast as the bf16 pass
/// (docs/measurements.md), and an int8 request's libtorch calls run in f32, slower than
/// libtorch's bf16, so the crossover is no lower.
pub const AUTO_NATIVE_MAX_FLOPS_BF16: f64 = 3e9;

/// How much faster than the f32 FMA the bf16 dot-product instruction must run (in FLOPs, on
/// registers) for [`Backend::Auto`] to give the Rust bf16 pass [`AUTO_NATIVE_MAX_FLOPS_BF16`].
pub const AUTO_BF16_MIN_SPEEDUP: f64 = 1.5;

/// The most work a call of a `precision` request gives the Rust pass under [`Backend::Auto`],
/// on a core whose instruction peaks are `f32_peak` (FMA) and `bf16_peak` (`VDPBF16PS`), in
/// GFLOP/s (`None`: not measured, no AVX-512).
///
/// Why the bf16 bound depends on the core: the Rust bf16 pass is fast where `VDPBF16PS`
/// issues at twice the FMA's FLOP rate, and that is not every AVX-512 BF16 core. On the
/// machine of 2026-12-08 it ran at half the FMA's (121 against 243 GFLOP/s, where the
/// 2026-12-07 machine measured 236 against 118): the 4x48 with move and threat features
/// judged 8,529 positions a second in the Rust bf16 pass at 128 a call against libtorch
/// bf16's 20,700 (oneDNN with AMX), so the 3e9 bound made self-play about 1.7 times dearer
/// a position. Such a core gets the f32 bound, near which libtorch overtakes there too.
pub fn auto_native_max_flops(
    precision: Precision,
    f32_peak: Option<f64>,
    bf16_peak: Option<f64>,
) -> f64 {
    match precision {
        Precision::F32 => AUTO_NATIVE_MAX_FLOPS,
        Precision::Int8 => AUTO_NATIVE_MAX_FLOPS_BF16,
        Precision::Bf16 => match (f32_peak, bf16_peak) {
            (Some(f), Some(b)) if b < AUTO_BF16_MIN_SPEEDUP * f => AUTO_NATIVE_MAX_FLOPS,
            _ => AUTO_NATIVE_MAX_FLOPS_BF16,
        },
    }
}

/// [`auto_native_max_flops`] on this core, its instruction peaks measured once a process
/// (20 ms each: the best of many bursts, so that a burst preempted by other work does not
/// tip the ratio): the bound [`Backend::Auto`] uses in this process.
pub fn auto_native_max_flops_here(precision: Precision) -> f64 {
    static PEAKS: std::sync::OnceLock<(Option<f64>, Option<f64>)> = std::sync::OnceLock::new();
    if precision != Precision::Bf16 {
        return auto_native_max_flops(precision, None, None);
    }
    let (f, b) = *PEAKS.get_or_init(|| {
        (
            super::native::instruction_peak_gflops(Precision::F32, 0.02),
            super::native::instruction_peak_gflops(Precision::Bf16, 0.02),
        )
    });
    auto_native_max_flops(precision, f, b)
}

impl std::str::FromStr for Backend {
    type Err = String;
    fn from_str(s: &str) -> Result<Backend, String> {
        match s {
            "auto" => Ok(Backend::Auto),
            "torch" => Ok(Backend::Torch),
            "native" => Ok(Backend::Native),
            _ => Err(format!(
                "unknown backend `{s}` (expected `auto`, `torch` or `native`)"
            )),
        }
    }
}

impl std::fmt::Display for Backend {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Backend::Auto => "auto",
            Backend::Torch => "torch",
            Backend::Native => "native",
        })
    }
}

/// A [`Network`] judging batches for search: evaluation mode (batch norm on running
/// statistics), no gradients, one forward pass per batch. It encodes each batch into one reused
/// input buffer; the pass runs in libtorch or in Rust ([`Backend`]).
#[derive(Debug)]
pub struct NetEvaluator {
    net: Network,
    /// The precision asked for ([`Self::with_precision`]): the network's own, except for int8,
    /// which only the Rust pass runs (the network stays f32 for libtorch's calls).
    precision: Precision,
    features: Vec<f32>,
    /// The Rust pass, where it may run (a copy of `net`'s weights: `net` is never changed
    /// behind it, as this type gives out no mutable access to it).
    native: Option<NativeNet>,
    /// The largest batch the Rust pass judges; libtorch judges larger ones.
    native_max_batch: usize,
    /// The Rust pass built from the f32 weights before the network was converted to another
    /// precision ([`Self::with_precision`]): in that precision where the CPU runs it, else in
    /// f32 (the fallback [`Backend::Native`] takes).
    lowp_native: Option<NativeNet>,
}

impl NetEvaluator {
    /// `net` judging on the [`Backend::Auto`] backend.
    pub fn new(net: Network) -> NetEvaluator {
        let mut evaluator = NetEvaluator {
            precision: net.precision(),
            net,
            features: Vec::new(),
            native: None,
            native_max_batch: 0,
            lowp_native: None,
        };
        evaluator.set_auto();
        evaluator
    }

    /// [`Backend::Auto`]: the Rust pass for calls up to [`AUTO_NATIVE_MAX_FLOPS`] of work,
    /// where the network is on the CPU and the Rust pass computes in the precision asked for
    /// (f32, bf16 on a CPU with AVX-512 BF16, int8 with VNNI; an int8 request on a CPU without
    /// VNNI judges in f32 like an f32 one).
    fn set_auto(&mut self) {
        let net = &self.net;
        self.native = None;
        if net.device() != tch::Device::Cpu {
            return;
        }
        if self.precision != Precision::F32 {
            if let Some(native) = self
                .lowp_native
                .as_ref()
                .filter(|n| n.precision() == self.precision)
            {
                let flops = super::flops_per_position(net.config());
                let max = auto_native_max_flops_here(native.precision());
                self.native_max_batch = ((max / flops) as usize).max(1);
                self.native = Some(native.clone());
                return;
            }
            if net.precision() != Precision::F32 {
                return;
            }
        }
        match NativeNet::new(net) {
            Ok(native) => {
                let flops = super::flops_per_position(net.config());
                self.native_max_batch = ((AUTO_NATIVE_MAX_FLOPS / flops) as usize).max(1);
                self.native = Some(native);
            }
            Err(e) => tracing::warn!("libtorch judges instead of the Rust pass: {e:#}"),
        }
    }

    /// This evaluator on `backend`; [`Backend::Native`] fails for a network on a GPU or in
    /// another precision than f32.
    pub fn with_backend(mut self, backend: Backend) -> anyhow::Result<NetEvaluator> {
        match backend {
            Backend::Auto => self.set_auto(),
            Backend::Torch => {
                anyhow::ensure!(
                    self.precision != Precision::Int8,
                    "libtorch has no int8 forward pass: precision int8 needs the native or auto \
                     backend"
                );
                self.native = None
            }
            Backend::Native => {
                anyhow::ensure!(
                    self.net.device() == tch::Device::Cpu,
                    "the native backend runs on the CPU; this network is on {:?}",
                    self.net.device()
                );
                let native = match &self.lowp_native {
                    Some(native) if self.precision != Precision::F32 => {
                        if native.precision() != self.precision {
                            tracing::warn!(
                                "this CPU has no Rust pass in {}; the Rust pass judges in {}",
                                self.precision,
                                native.precision()
                            );
                        }
                        native.clone()
                    }
                    _ => NativeNet::new(&self.net)?,
                };
                self.native = Some(native);
                self.native_max_batch = usize::MAX;
            }
        }
        Ok(self)
    }

    /// The backend this evaluator was set to, as it resolved: [`Backend::Torch`] where only
    /// libtorch runs (a GPU, bf16, or asked for), [`Backend::Native`] where only Rust does.
    pub fn backend(&self) -> Backend {
        match (&self.native, self.native_max_batch) {
            (None, _) => Backend::Torch,
            (Some(_), usize::MAX) => Backend::Native,
            (Some(_), _) => Backend::Auto,
        }
    }

    /// The pass that judges a batch of `n` positions: [`Backend::Torch`] or [`Backend::Native`].
    pub fn backend_for(&self, n: usize) -> Backend {
        if self.native.is_some() && n <= self.native_max_batch {
            Backend::Native
        } else {
            Backend::Torch
        }
    }

    /// Loads a checkpoint (see [`Network::load`]) onto the chosen device.
    pub fn load(path: &Path, device: DeviceChoice) -> anyhow::Result<NetEvaluator> {
        Ok(NetEvaluator::new(Network::load(path, device.resolve()?)?))
    }

    /// [`Self::load`], refusing a checkpoint trained for another variant.
    pub fn load_for(
        path: &Path,
        variant: Variant,
        device: DeviceChoice,
    ) -> anyhow::Result<NetEvaluator> {
        Ok(NetEvaluator::new(Network::load_for(
            path,
            variant,
            device.resolve()?,
        )?))
    }

    /// This evaluator judging in `precision` (see [`Precision`]; its network becomes an
    /// inference-only copy). In bf16 on a CPU with AVX-512 BF16 the Rust pass judges the calls
    /// it would judge in f32 (its weights rounded from the f32 ones here), libtorch the rest.
    /// int8 is the Rust pass's alone: it needs the CPU device (libtorch refuses it), and
    /// libtorch's calls (large ones, or all with `backend=torch`) then judge in f32.
    pub fn with_precision(mut self, precision: Precision) -> anyhow::Result<NetEvaluator> {
        if precision == Precision::Int8 {
            anyhow::ensure!(
                self.net.device() == tch::Device::Cpu && self.net.precision() == Precision::F32,
                "precision int8 runs in the Rust pass on the CPU only, from f32 weights; this \
                 network is {} on {:?}",
                self.net.precision(),
                self.net.device()
            );
        }
        if precision != Precision::F32
            && self.net.precision() == Precision::F32
            && self.net.device() == tch::Device::Cpu
        {
            self.lowp_native = Some(NativeNet::with_precision(&self.net, precision)?);
        }
        if precision == Precision::Int8 {
            self.net.freeze();
        } else {
            self.net.set_inference_precision(precision)?;
        }
        self.precision = precision;
        if precision != Precision::F32 {
            self.set_auto();
        }
        Ok(self)
    }

    /// The number format the pass judging a batch of `n` positions computes in.
    pub fn precision_for(&self, n: usize) -> Precision {
        match &self.native {
            Some(native) if n <= self.native_max_batch => native.precision(),
            _ => self.net.precision(),
        }
    }

    pub fn network(&self) -> &Network {
        &self.net
    }
}

impl Evaluator for NetEvaluator {
    fn evaluate(
        &mut self,
        positions: &[Position],
        masks: &[u64],
        policy: &mut [f32],
        values: &mut [f32],
    ) -> anyhow::Result<()> {
        let n = crate::search::evaluator::batch_size(positions, masks, policy, values)?;
        let encode = profile::scope(Phase::Encode);
        let encoding = self.net.encoding();
        self.features.resize(n * encoding.features(), 0.0);
        for (pos, f) in positions
            .iter()
            .zip(self.features.chunks_exact_mut(encoding.features()))
        {
            encoding.encode(pos, f);
        }
        drop(encode);
        let _forward = profile::scope(Phase::Forward);
        super::flush_denormals();
        if let Some(native) = self.native.as_mut().filter(|_| n <= self.native_max_batch) {
            return native.forward(&self.features, masks, policy, values);
        }
        let out = self.net.infer(&self.features, masks)?;
        for ((row, p), v) in out
            .chunks_exact(ACTIONS + 1)
            .zip(policy.chunks_exact_mut(ACTIONS))
            .zip(values)
        {
            p.copy_from_slice(&row[..ACTIONS]);
            *v = row[ACTIONS];
        }
        Ok(())
    }

    fn name(&self) -> String {
        let l = self.net.lineage();
        // The precision that judges a player's batches (the Rust pass's, where it runs).
        let precision = match self.precision_for(1) {
            Precision::F32 => String::new(),
            p => format!(" {p}"),
        };
        // The backend before the step: records and tests read the name's end as the step.
        let backend = match self.backend() {
            Backend::Native => " native".to_string(),
            Backend::Auto => format!(" native<={}", self.native_max_batch),
            Backend::Torch => String::new(),
        };
        format!(
            "net {} {}{precision}{backend} step {}",
            self.net.variant(),
            self.net.config().short_name(),
            l.step
        )
    }
}

/// One slot of the cache table.
#[derive(Clone)]
struct Entry {
    key: u64,
    value: f32,
    policy: [f32; ACTIONS],
}

/// A fixed-size cache of evaluations in front of any evaluator, keyed by
/// [`Position::hash64`]: the same position reached by another move order, again after tree
/// reuse, or in the next search of a game is judged once. Direct-mapped: a new result
/// overwrites the slot its key maps to, so memory is fixed (about 270 bytes x capacity) and old
/// entries age out by collision. Misses of a batch go to the inner evaluator as one smaller
/// batch. Two positions share a result only if their 64-bit keys collide (~1e-7 after 1e6
/// distinct positions). A deterministic inner evaluator gives exactly the uncached answers.
pub struct CachedEvaluator<E> {
    inner: E,
    table: Vec<Option<Entry>>,
    hits: u64,
    lookups: u64,
    // Scratch buffers for the misses, reused between batches.
    miss_positions: Vec<Position>,
    miss_masks: Vec<u64>,
    miss_policy: Vec<f32>,
    miss_values: Vec<f32>,
    misses: Vec<(usize, u64)>,
}

impl<E: Evaluator> CachedEvaluator<E> {
    /// `capacity` slots (at least 1).
    pub fn new(inner: E, capacity: usize) -> CachedEvaluator<E> {
        CachedEvaluator {
            inner,
            table: vec![None; capacity.max(1)],
            hits: 0,
            lookups: 0,
            miss_positions: Vec::new(),
            miss_masks: Vec::new(),
            miss_policy: Vec::new(),
            miss_values: Vec::new(),
            misses: Vec::new(),
        }
    }

    /// Fraction of lookups answered from the cache so far.
    pub fn hit_rate(&self) -> f64 {
        if self.lookups == 0 {
            0.0
        } else {
            self.hits as f64 / self.lookups as f64
        }
    }

    pub fn inner(&self) -> &E {
        &self.inner
    }

    /// Forgets all entries (e.g. after the inner network's weights changed).
    pub fn clear(&mut self) {
        self.table.iter_mut().for_each(|e| *e = None);
    }
}

impl<E: Evaluator> Evaluator for CachedEvaluator<E> {
    fn evaluate(
        &mut self,
        positions: &[Position],
        masks: &[u64],
        policy: &mut [f32],
        values: &mut [f32],
    ) -> anyhow::Result<()> {
        let n = crate::search::evaluator::batch_size(positions, masks, policy, values)?;
        let _cache = profile::scope(Phase::Cache);
        let slots = self.table.len() as u64;
        self.miss_positions.clear();
        self.miss_masks.clear();
        self.misses.clear();
        for i in 0..n {
            let key = positions[i].hash64();
            self.lookups += 1;
            match &self.table[(key % slots) as usize] {
                Some(e) if e.key == key => {
                    self.hits += 1;
                    policy[i * ACTIONS..(i + 1) * ACTIONS].copy_from_slice(&e.policy);
                    values[i] = e.value;
                }
                _ => {
                    self.miss_positions.push(positions[i]);
                    self.miss_masks.push(masks[i]);
                    self.misses.push((i, key));
                }
            }
        }
        if self.misses.is_empty() {
            return Ok(());
        }
        let m = self.misses.len();
        self.miss_policy.resize(m * ACTIONS, 0.0);
        self.miss_values.resize(m, 0.0);
        self.inner.evaluate(
            &self.miss_positions,
            &self.miss_masks,
            &mut self.miss_policy,
            &mut self.miss_values,
        )?;
        for (j, &(i, key)) in self.misses.iter().enumerate() {
            let p = &self.miss_policy[j * ACTIONS..(j + 1) * ACTIONS];
            policy[i * ACTIONS..(i + 1) * ACTIONS].copy_from_slice(p);
            values[i] = self.miss_values[j];
            let mut entry = Entry {
                key,
                value: values[i],
                policy: [0.0; ACTIONS],
            };
            entry.policy.copy_from_slice(p);
            self.table[(key % slots) as usize] = Some(entry);
        }
        Ok(())
    }

    fn name(&self) -> String {
        format!("{} (cached)", self.inner.name())
    }
}
