//! `bao bench net`: how fast the network evaluates batches, against what the machine can do.
//!
//! For each architecture and batch size it runs the search path (`NetEvaluator::evaluate`:
//! host buffers in, probabilities and values out) and prints positions/s and the achieved
//! GFLOP/s (convolution and linear multiply-adds, see `neuralnet::flops_per_position`). The
//! reference is the measured throughput of a large f32 matmul on the same device with the same
//! thread settings: the fraction of it a forward pass reaches says how much is left to gain.
//! `--precision f32,bf16,int8` measures each in those number formats (see
//! `neuralnet::Precision`; the % of the f32 peak can pass 100 in bf16); `--backends
//! torch,native` each forward pass (see `neuralnet::Backend`; the native one on the CPU, in
//! bf16 where the CPU has AVX-512 BF16, in int8 where it has VNNI; int8 has no libtorch pass;
//! other pairs are skipped). The Rust pass's rows are measured against the peak of its own
//! instruction (f32 FMA, `VDPBF16PS`, or `VPDPBUSD`) on registers alone, libtorch's against
//! the matmul. For int8 the GFLOP/s column counts integer operations (GOP/s), 2 a
//! multiply-add as for floats.
//! `--gate N` checks the low-precision passes against f32 on the shipped models, or on the
//! checkpoints `--gate-models` names (a run's students, before they are played in int8).

use std::path::PathBuf;
use std::time::{Duration, Instant};

use anyhow::Context;
use tch::{Device, Kind, Tensor};

use crate::game::{Variant, ACTIONS};
use crate::neuralnet::{self, Backend, DeviceChoice, NetConfig, NetEvaluator, Network, Precision};
use crate::search::Evaluator;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Presets to measure (comma-separated).
    #[arg(long, value_delimiter = ',', default_value = "tiny,small,large")]
    pub presets: Vec<String>,
    /// Also measure the architecture in this TOML file (see configs/network/).
    #[arg(long)]
    pub config: Option<PathBuf>,
    /// Batch sizes (comma-separated).
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "1,2,4,8,16,32,64,128,256,512,1024"
    )]
    pub batches: Vec<usize>,
    /// Number formats to measure each network in (comma-separated: f32, bf16, int8).
    #[arg(long, value_delimiter = ',', default_value = "f32")]
    pub precision: Vec<Precision>,
    /// Forward passes to measure (comma-separated: torch, native).
    #[arg(long, value_delimiter = ',', default_value = "torch,native")]
    pub backends: Vec<Backend>,
    /// Device: cpu, cuda or auto.
    #[arg(long, default_value = "auto")]
    pub device: DeviceChoice,
    /// Intra-op threads (default: as `neuralnet::configure_threads`, i.e. $BAO_TORCH_THREADS or 1).
    #[arg(long)]
    pub threads: Option<usize>,
    /// Inter-op threads (default 1, as `neuralnet::configure_threads`).
    #[arg(long, default_value_t = 1)]
    pub interop: usize,
    /// Seconds of timed work per measurement, split in 3 windows of which the fastest counts.
    #[arg(long, default_value_t = 0.3)]
    pub seconds: f64,
    /// Also check every precision other than f32 against f32 on the shipped models
    /// (models/kiswahili.safetensors, models/kujifunza.safetensors, on the backends asked
    /// for) with the accuracy gates of `neuralnet::agreement`, on this many held-out
    /// positions of each variant; 0 leaves it out.
    #[arg(long, default_value_t = 0)]
    pub gate: usize,
    /// The checkpoints `--gate` checks (comma-separated), each on positions of its own variant.
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "models/kiswahili.safetensors,models/kujifunza.safetensors"
    )]
    pub gate_models: Vec<PathBuf>,
}

pub fn run(args: Args) -> anyhow::Result<()> {
    neuralnet::configure_thread_pools(args.threads, args.interop);
    let device = args.device.resolve()?;
    // Each checkpoint to gate, with its variant: read before any timing, so a bad one is
    // refused before the work.
    let gated: Vec<(&PathBuf, Variant)> = if args.gate > 0 {
        args.gate_models
            .iter()
            .map(|path| {
                anyhow::ensure!(
                    path.is_file(),
                    "--gate-models: {} is not a file",
                    path.display()
                );
                let net = Network::load(path, Device::Cpu)
                    .with_context(|| format!("--gate-models: cannot load {}", path.display()))?;
                Ok((path, net.variant()))
            })
            .collect::<anyhow::Result<_>>()?
    } else {
        Vec::new()
    };
    anyhow::ensure!(
        args.seconds > 0.0 && args.seconds.is_finite(),
        "--seconds must be > 0"
    );
    anyhow::ensure!(
        args.batches.iter().all(|&b| b > 0),
        "batch sizes must be > 0"
    );
    let mut nets: Vec<(String, NetConfig)> = Vec::new();
    for name in &args.presets {
        nets.push((name.clone(), NetConfig::preset(name)?));
    }
    if let Some(path) = &args.config {
        nets.push((path.display().to_string(), crate::config::load_toml(path)?));
    }
    let budget = Duration::from_secs_f64(args.seconds);

    println!(
        "device {device:?}, torch threads {} intra-op / {} inter-op",
        tch::get_num_threads(),
        tch::get_num_interop_threads()
    );
    let peak = matmul_peak(device, budget)?;
    println!("matmul peak (f32 1024x1024 mm, same threads): {peak:.1} GFLOP/s");
    // The Rust pass's own reference: its instruction's peak on one core, per precision.
    let mut instruction_peaks = Vec::new();
    for &p in &args.precision {
        if let Some(g) = neuralnet::native::instruction_peak_gflops(p, args.seconds) {
            let (what, unit) = match p {
                Precision::F32 => ("VFMADD231PS zmm", "GFLOP/s"),
                Precision::Bf16 => ("VDPBF16PS zmm", "GFLOP/s"),
                Precision::Int8 => ("VPDPBUSD zmm", "GOP/s"),
            };
            println!("instruction peak {p} ({what}, registers only, one core): {g:.1} {unit}");
            instruction_peaks.push((p, g));
        }
    }
    if args.precision.contains(&Precision::Bf16) {
        // The bound `Backend::Auto` chose in this process from its own measure of the peaks.
        let bound = neuralnet::auto_native_max_flops_here(Precision::Bf16);
        println!("auto backend: the Rust bf16 pass takes calls of up to {bound:.0e} FLOPs here");
    }
    println!(
        "(% peak: a Rust pass against its precision's instruction peak, libtorch against the \
         matmul peak)\n"
    );
    println!(
        "{:<10} {:>7} {:>5} {:>7} {:>9} {:>6} {:>12} {:>10} {:>9} {:>7}",
        "net",
        "size",
        "prec",
        "backend",
        "MFLOP/pos",
        "batch",
        "positions/s",
        "ms/batch",
        "GFLOP/s",
        "% peak"
    );

    let steps =
        (nets.len() * args.precision.len() * args.backends.len() * args.batches.len()) as u64;
    let bar = crate::util::progress::bar(steps, "runs", true);
    for (name, cfg) in &nets {
        let flops = neuralnet::flops_per_position(cfg);
        for (precision, backend) in super::pass_variants(&args.precision, &args.backends) {
            let net = Network::new_seeded(cfg, Variant::Kiswahili, device, 0)?;
            let eval = NetEvaluator::new(net).with_precision(precision);
            let mut eval = match eval.and_then(|e| e.with_backend(backend)) {
                Ok(eval) => eval,
                Err(e) => {
                    bar.suspend(|| println!("{name} {precision} {backend}: skipped ({e:#})"));
                    bar.inc(args.batches.len() as u64);
                    continue;
                }
            };
            for &batch in &args.batches {
                bar.set_message(format!("{name} {precision} {backend} batch {batch}"));
                let (rate, per_batch) = measure(&mut eval, batch, budget)?;
                let gflops = rate * flops / 1e9;
                let pass_precision = eval.precision_for(batch);
                let reference = match eval.backend_for(batch) {
                    Backend::Native => instruction_peaks
                        .iter()
                        .find(|(p, _)| *p == pass_precision)
                        .map_or(peak, |&(_, g)| g),
                    _ => peak,
                };
                // `suspend`, not `println`: the rows must reach stdout even when it is no
                // terminal.
                bar.suspend(|| {
                    println!(
                        "{:<10} {:>7} {:>5} {:>7} {:>9.2} {:>6} {:>12.0} {:>10.3} {:>9.1} {:>6.1}%",
                        name,
                        cfg.short_name(),
                        pass_precision,
                        eval.backend_for(batch),
                        flops / 1e6,
                        batch,
                        rate,
                        per_batch * 1e3,
                        gflops,
                        100.0 * gflops / reference
                    )
                });
                bar.inc(1);
            }
        }
    }
    bar.finish_and_clear();
    if args.gate > 0 {
        gate(&args, &gated)?;
    }
    Ok(())
}

/// `--gate`: each precision other than f32 against f32 on each checkpoint of `--gate-models`
/// (with its variant), on the backends asked for, in a player's batches of 8.
fn gate(args: &Args, gated: &[(&PathBuf, Variant)]) -> anyhow::Result<()> {
    use crate::neuralnet::agreement::{agreement, gate_positions};
    println!();
    for &(path, variant) in gated {
        let positions = gate_positions(variant, args.gate);
        for (precision, backend) in super::pass_variants(&args.precision, &args.backends) {
            if precision == Precision::F32 {
                continue;
            }
            let load = |p: Precision| -> anyhow::Result<NetEvaluator> {
                NetEvaluator::load_for(path, variant, DeviceChoice::Cpu)?
                    .with_precision(p)?
                    .with_backend(backend)
            };
            let (mut reference, mut other) = match (load(Precision::F32), load(precision)) {
                (Ok(r), Ok(o)) => (r, o),
                (Err(e), _) | (_, Err(e)) => {
                    println!(
                        "gate {} ({variant}) {precision} {backend}: skipped ({e:#})",
                        path.display()
                    );
                    continue;
                }
            };
            let a = agreement(&mut reference, &mut other, &positions, 8)?;
            println!(
                "gate {} ({variant}) {} {backend} against f32: {a}: {}",
                path.display(),
                other.precision_for(8),
                if a.passes() { "passes" } else { "FAILS" }
            );
        }
    }
    Ok(())
}

/// Timing windows per measurement; the fastest one is reported, which keeps figures stable
/// on a machine shared with other work (a slow window means someone else had the cores).
const WINDOWS: u32 = 3;

/// Runs `work` for `WINDOWS` windows of at least `budget / WINDOWS` and 1 call each; returns
/// the shortest seconds per call.
fn best_seconds_per_call(
    budget: Duration,
    mut work: impl FnMut() -> anyhow::Result<()>,
) -> anyhow::Result<f64> {
    work()?; // warm-up: allocator, kernel selection
    let window = budget / WINDOWS;
    let mut best = f64::INFINITY;
    for _ in 0..WINDOWS {
        let start = Instant::now();
        let mut calls = 0u32;
        while calls == 0 || start.elapsed() < window {
            work()?;
            calls += 1;
        }
        best = best.min(start.elapsed().as_secs_f64() / calls as f64);
    }
    Ok(best)
}

/// Positions per second and seconds per batch of `eval` at batch size `batch`.
fn measure(eval: &mut NetEvaluator, batch: usize, budget: Duration) -> anyhow::Result<(f64, f64)> {
    // Real positions (the evaluator encodes them, as in search), distinct ones: no cache here.
    let positions = super::players::sample_positions(Variant::Kiswahili, batch, batch as u64);
    let masks: Vec<u64> = positions.iter().map(|p| p.legal_moves().mask()).collect();
    let mut policy = vec![0f32; batch * ACTIONS];
    let mut values = vec![0f32; batch];
    let secs = best_seconds_per_call(budget, || {
        eval.evaluate(&positions, &masks, &mut policy, &mut values)
    })?;
    Ok((batch as f64 / secs, secs))
}

/// GFLOP/s of a 1024 x 1024 f32 matmul on `device`.
fn matmul_peak(device: Device, budget: Duration) -> anyhow::Result<f64> {
    let n = 1024i64;
    let a = Tensor::randn([n, n], (Kind::Float, device));
    let b = Tensor::randn([n, n], (Kind::Float, device));
    let sync = |t: &Tensor| -> anyhow::Result<()> {
        // Reading one value waits for queued GPU work; free on the CPU.
        f64::try_from(t.get(0).get(0))
            .map(|_| ())
            .map_err(anyhow::Error::from)
    };
    let secs = best_seconds_per_call(budget, || sync(&a.matmul(&b)))?;
    Ok(2.0 * (n * n * n) as f64 / secs / 1e9)
}
