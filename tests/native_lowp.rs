//! The Rust pass in bf16 and in int8 against the Rust pass in f32, on the shipped models and
//! held-out positions of both variants: the accuracy gates a low-precision pass must pass
//! (`neuralnet::agreement`). On a CPU without AVX-512 BF16 (VNNI) a bf16 (int8) request falls
//! back to the f32 pass; these tests then check that fallback (the pass says f32 and gives
//! f32's outputs exactly) instead of skipping.

mod common;

use std::path::Path;

use bao::game::Variant;
use bao::neuralnet::agreement::{agreement, gate_positions, MAX_MEAN_VALUE_DIFF, MIN_TOP1};
use bao::neuralnet::{native, Backend, DeviceChoice, NetEvaluator, Precision};

fn pass(model: &Path, precision: Precision) -> NetEvaluator {
    NetEvaluator::load(model, DeviceChoice::Cpu)
        .unwrap()
        .with_precision(precision)
        .unwrap()
        .with_backend(Backend::Native)
        .unwrap()
}

#[test]
fn bf16_rust_pass_keeps_the_f32_pass_policy_and_value() {
    keeps_the_f32_pass_policy_and_value(Precision::Bf16);
}

#[test]
fn int8_rust_pass_keeps_the_f32_pass_policy_and_value() {
    keeps_the_f32_pass_policy_and_value(Precision::Int8);
}

/// The gates for the pass in `precision`, or its fallback where the CPU lacks the instructions.
fn keeps_the_f32_pass_policy_and_value(precision: Precision) {
    let has_lowp = native::supports(precision);
    for (variant, model) in [
        (Variant::Kiswahili, "models/kiswahili.safetensors"),
        (Variant::Kujifunza, "models/kujifunza.safetensors"),
    ] {
        let model = Path::new(env!("CARGO_MANIFEST_DIR")).join(model);
        let mut f32_pass = pass(&model, Precision::F32);
        let mut lowp = pass(&model, precision);
        assert_eq!(f32_pass.precision_for(8), Precision::F32);
        let expected = if has_lowp { precision } else { Precision::F32 };
        assert_eq!(
            lowp.precision_for(8),
            expected,
            "{variant}: the pass that runs"
        );
        let positions = gate_positions(variant, 2000);
        let a = agreement(&mut f32_pass, &mut lowp, &positions, 8).unwrap();
        println!("{variant}, the Rust pass in {expected} against f32: {a}");
        if has_lowp {
            assert!(a.top1 >= MIN_TOP1, "{variant}: {a}");
            assert!(a.mean_value_diff <= MAX_MEAN_VALUE_DIFF, "{variant}: {a}");
            // Rounding, not a broken kernel: the outputs differ, but little (int8's steps are
            // coarser: on the shipped models a value moved by at most 0.03 in bf16, 0.1 in int8).
            let bound = if precision == Precision::Int8 {
                0.2
            } else {
                0.1
            };
            assert!(
                a.max_value_diff > 0.0 && a.max_value_diff < bound,
                "{variant}: {a}"
            );
        } else {
            assert_eq!(
                (a.top1, a.max_value_diff, a.max_policy_diff),
                (1.0, 0.0, 0.0),
                "{variant}: the fallback is the f32 pass itself: {a}"
            );
        }
    }
}

/// Every output-channel tile width of the bf16 kernel (12, 8, 4 and 2 channels), odd input
/// plane counts, trunks without blocks: the bf16 pass follows the f32 pass on randomly
/// initialised networks (batch norm statistics randomised too, so that activations are not
/// trivial), with probabilities on legal moves only; an odd channel count, which the kernel
/// does not take, gets the f32 pass.
#[test]
fn bf16_rust_pass_follows_f32_for_every_tile_width() {
    follows_f32_for_every_tile_width(Precision::Bf16);
}

/// As [`bf16_rust_pass_follows_f32_for_every_tile_width`] for the int8 kernel: tiles of 12, 8
/// and 4 channels, the stem's 16-bit tiles, channel and plane counts that are no multiple of
/// 4 (padded; the int8 pass takes every channel count).
#[test]
fn int8_rust_pass_follows_f32_for_every_tile_width() {
    follows_f32_for_every_tile_width(Precision::Int8);
}

fn follows_f32_for_every_tile_width(precision: Precision) {
    use bao::game::ACTIONS;
    use bao::neuralnet::{NetConfig, Network};
    use bao::search::Evaluator;
    let has_lowp = native::supports(precision);
    let shapes = [
        ("blocks = 1\nchannels = 8", true),
        ("blocks = 2\nchannels = 22\nmove_features = true", true),
        (
            "blocks = 1\nchannels = 28\nmove_features = true\nthreat_features = true",
            true,
        ),
        (
            "blocks = 1\nchannels = 64\npolicy_channels = 3\nvalue_hidden = 7",
            true,
        ),
        ("blocks = 0\nchannels = 16", true),
        ("blocks = 1\nchannels = 5", false),
        // 12 + 12 + 12 + 4 channels after padding.
        ("blocks = 1\nchannels = 39", false),
    ];
    for (i, (shape, even)) in shapes.into_iter().enumerate() {
        let cfg: NetConfig = toml::from_str(&format!("preset = \"tiny\"\n{shape}")).unwrap();
        let net =
            Network::new_seeded(&cfg, Variant::Kiswahili, tch::Device::Cpu, 7 + i as u64).unwrap();
        common::randomize_batch_norm(&net);
        let copy = net.duplicate(tch::Device::Cpu).unwrap();
        let mut f32_pass = NetEvaluator::new(net)
            .with_backend(Backend::Native)
            .unwrap();
        let mut lowp = NetEvaluator::new(copy)
            .with_precision(precision)
            .unwrap()
            .with_backend(Backend::Native)
            .unwrap();
        let runs_lowp = has_lowp && (even || precision == Precision::Int8);
        let expected = if runs_lowp { precision } else { Precision::F32 };
        assert_eq!(lowp.precision_for(8), expected, "{shape}");
        let positions = gate_positions(Variant::Kiswahili, 40);
        let masks: Vec<u64> = positions.iter().map(|p| p.legal_moves().mask()).collect();
        let n = positions.len();
        let judge = |e: &mut NetEvaluator| {
            let (mut p, mut v) = (vec![f32::NAN; n * ACTIONS], vec![f32::NAN; n]);
            e.evaluate(&positions, &masks, &mut p, &mut v).unwrap();
            (p, v)
        };
        let (p32, v32) = judge(&mut f32_pass);
        let (p16, v16) = judge(&mut lowp);
        let diff = |a: &[f32], b: &[f32]| {
            a.iter()
                .zip(b)
                .map(|(x, y)| (x - y).abs())
                .fold(0f32, f32::max)
        };
        let (dv, dp) = (diff(&v32, &v16), diff(&p32, &p16));
        if runs_lowp {
            assert!(dv > 0.0 || dp > 0.0, "{shape}: bit-identical to f32");
            assert!(dv < 0.05 && dp < 0.05, "{shape}: values {dv}, policy {dp}");
        } else {
            assert_eq!((dv, dp), (0.0, 0.0), "{shape}: the f32 pass itself");
        }
        assert!(
            v32.iter().any(|v| v.abs() > 0.01),
            "{shape}: values all near 0"
        );
        for (row, mask) in p16.chunks(ACTIONS).zip(&masks) {
            let sum: f32 = row.iter().sum();
            assert!((sum - 1.0).abs() < 1e-4, "{shape}: a row sums to {sum}");
            for (a, &x) in row.iter().enumerate() {
                assert_eq!(x > 0.0, mask >> a & 1 == 1, "{shape}: action {a}");
            }
        }
    }
}

/// int8 is the Rust pass's alone: libtorch refuses it by name, and the auto backend keeps the
/// network in f32 for the calls libtorch judges.
#[test]
fn int8_has_no_libtorch_pass() {
    let model = Path::new(env!("CARGO_MANIFEST_DIR")).join("models/kiswahili.safetensors");
    let load = || NetEvaluator::load(&model, DeviceChoice::Cpu).unwrap();
    let err = load()
        .with_precision(Precision::Int8)
        .unwrap()
        .with_backend(Backend::Torch)
        .unwrap_err();
    assert!(format!("{err:#}").contains("int8"), "{err:#}");
    let mut net = bao::neuralnet::Network::load(&model, tch::Device::Cpu).unwrap();
    let err = net.set_inference_precision(Precision::Int8).unwrap_err();
    assert!(format!("{err:#}").contains("int8"), "{err:#}");
    let auto = load().with_precision(Precision::Int8).unwrap();
    assert_eq!(auto.network().precision(), Precision::F32);
    let expected = if native::supports(Precision::Int8) {
        Precision::Int8
    } else {
        Precision::F32
    };
    assert_eq!(auto.precision_for(8), expected);
    assert_eq!(
        auto.precision_for(1 << 20),
        Precision::F32,
        "libtorch's calls"
    );
}

/// `bao bench net --gate N --gate-models M`: the agreement gate on the checkpoint a user names
/// (a run's student, before it is played in a low precision), on positions of its own variant
/// and on no other model; a missing checkpoint is refused before any timing.
#[test]
fn bench_net_gates_the_checkpoints_it_is_given() {
    let model = concat!(env!("CARGO_MANIFEST_DIR"), "/models/kujifunza.safetensors");
    let bench = |models: &str| {
        common::run_bao(&[
            "bench",
            "net",
            "--presets",
            "tiny",
            "--batches",
            "8",
            "--seconds",
            "0.01",
            "--backends",
            "native",
            "--precision",
            "f32,bf16",
            "--gate",
            "50",
            "--gate-models",
            models,
        ])
    };
    let (ok, out, err) = bench(model);
    assert!(ok, "{err}");
    assert!(
        out.contains(&format!("gate {model} (kujifunza) bf16 native")),
        "{out}"
    );
    assert!(!out.contains("kiswahili"), "only the model named: {out}");
    let (ok, out, err) = bench("models/no-such.safetensors");
    assert!(
        !ok && err.contains("--gate-models: models/no-such.safetensors"),
        "{err}"
    );
    assert!(!out.contains("tiny"), "refused before any timing: {out}");
    let not_a_model = concat!(env!("CARGO_MANIFEST_DIR"), "/Cargo.toml");
    let (ok, out, err) = bench(not_a_model);
    assert!(
        !ok && err.contains("--gate-models: cannot load") && err.contains("Cargo.toml"),
        "{err}"
    );
    assert!(!out.contains("tiny"), "refused before any timing: {out}");
}
