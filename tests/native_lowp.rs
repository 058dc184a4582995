//! The Rust pass in bf16 against the Rust pass in f32, on the shipped models and held-out
//! positions of both variants: the accuracy gates a low-precision pass must pass
//! (`neuralnet::agreement`). On a CPU without AVX-512 BF16 a bf16 request falls back to the f32
//! pass; this test then checks that fallback (the pass says f32 and gives f32's outputs
//! exactly) instead of skipping.

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
    let has_bf16 = native::supports(Precision::Bf16);
    for (variant, model) in [
        (Variant::Kiswahili, "models/kiswahili.safetensors"),
        (Variant::Kujifunza, "models/kujifunza.safetensors"),
    ] {
        let model = Path::new(env!("CARGO_MANIFEST_DIR")).join(model);
        let mut f32_pass = pass(&model, Precision::F32);
        let mut lowp = pass(&model, Precision::Bf16);
        assert_eq!(f32_pass.precision_for(8), Precision::F32);
        let expected = if has_bf16 {
            Precision::Bf16
        } else {
            Precision::F32
        };
        assert_eq!(
            lowp.precision_for(8),
            expected,
            "{variant}: the pass that runs"
        );
        let positions = gate_positions(variant, 2000);
        let a = agreement(&mut f32_pass, &mut lowp, &positions, 8).unwrap();
        println!("{variant}, the Rust pass in {expected} against f32: {a}");
        if has_bf16 {
            assert!(a.top1 >= MIN_TOP1, "{variant}: {a}");
            assert!(a.mean_value_diff <= MAX_MEAN_VALUE_DIFF, "{variant}: {a}");
            // Rounding, not a broken kernel: the outputs differ, but little.
            assert!(
                a.max_value_diff > 0.0 && a.max_value_diff < 0.1,
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
