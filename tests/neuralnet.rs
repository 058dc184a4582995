//! The policy/value network: shapes, masking, learning, checkpoints, export, cache.

mod common;

use std::path::{Path, PathBuf};

use bao::game::features::{self, FEATURES};
use bao::game::{Position, Variant, ACTIONS};
use bao::neuralnet::{
    native, Backend, CachedEvaluator, CheckpointMeta, DeviceChoice, Learner, Lineage, NetConfig,
    NetEvaluator, Network, OptimizerConfig, OptimizerKind, Precision,
};
use bao::search::{Evaluator, UniformEvaluator};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use tch::Device;

struct Batch {
    /// Real positions (from random games); `features` are their encodings.
    positions: Vec<Position>,
    features: Vec<f32>,
    masks: Vec<u64>,
    policy: Vec<f32>,
    values: Vec<f32>,
}

/// A position `plies` random moves into a Kiswahili game (fewer if the game ends).
fn random_position(rng: &mut StdRng, plies: usize) -> Position {
    bao::game::random_games::random_walk(Variant::Kiswahili, plies, rng)
}

/// `n` samples of real positions; row 0 is the start position. The masks are synthetic, to
/// exercise masking: they include bit 63, a single-bit mask and (when `with_empty`) an empty
/// mask.
fn batch(n: usize, seed: u64, with_empty: bool) -> Batch {
    let mut rng = StdRng::seed_from_u64(seed);
    let positions: Vec<Position> = (0..n).map(|i| random_position(&mut rng, 3 * i)).collect();
    let mut features = vec![0f32; n * FEATURES];
    for (pos, f) in positions.iter().zip(features.chunks_mut(FEATURES)) {
        features::encode(pos, f);
    }
    let mut masks: Vec<u64> = (0..n).map(|_| rng.random::<u64>() | 1 << 63).collect();
    masks[1] = 1 << 17;
    if with_empty {
        masks[2] = 0;
    }
    let mut policy = vec![0f32; n * ACTIONS];
    for (p, &m) in policy.chunks_mut(ACTIONS).zip(&masks) {
        if m == 0 {
            continue;
        }
        // A peaked legal target: most mass on the lowest legal action.
        let k = m.count_ones() as f32;
        for (a, x) in p.iter_mut().enumerate() {
            if m >> a & 1 == 1 {
                *x = 0.2 / k;
            }
        }
        p[m.trailing_zeros() as usize] += 0.8;
    }
    let values = (0..n)
        .map(|i| if i % 3 == 0 { -1.0 } else { 1.0 })
        .collect();
    Batch {
        positions,
        features,
        masks,
        policy,
        values,
    }
}

fn tiny(variant: Variant, seed: i64) -> Network {
    let tiny = NetConfig::preset("tiny").unwrap();
    Network::new_seeded(&tiny, variant, Device::Cpu, seed as u64).unwrap()
}

fn evaluate(e: &mut impl Evaluator, b: &Batch) -> (Vec<f32>, Vec<f32>) {
    let n = b.masks.len();
    let mut policy = vec![f32::NAN; n * ACTIONS];
    let mut values = vec![f32::NAN; n];
    e.evaluate(&b.positions, &b.masks, &mut policy, &mut values)
        .unwrap();
    (policy, values)
}

fn err_text(r: anyhow::Result<impl std::fmt::Debug>) -> String {
    format!("{:#}", r.expect_err("expected an error"))
}

#[test]
fn presets_and_toml_configs() {
    for name in bao::neuralnet::PRESETS {
        NetConfig::preset(name).unwrap().validate().unwrap();
    }
    assert!(err_text(NetConfig::preset("huge")).contains("unknown network preset `huge`"));
    let small = NetConfig::preset("small").unwrap();
    let from_file: NetConfig =
        bao::config::load_toml(Path::new("configs/network/small.toml")).unwrap();
    assert_eq!(from_file, small);
    let refined: NetConfig = bao::config::parse_toml("preset = \"small\"\nblocks = 2").unwrap();
    assert_eq!(
        refined,
        NetConfig {
            blocks: 2,
            ..small.clone()
        }
    );
    assert!(err_text(bao::config::parse_toml::<NetConfig>(
        "preset = \"small\"\nlayers = 2"
    ))
    .contains("layers"));
    assert!(err_text(bao::config::parse_toml::<NetConfig>("blocks = 2"))
        .contains("`channels` is missing"));
    assert!(err_text(bao::config::parse_toml::<NetConfig>(
        "preset = \"tiny\"\nchannels = 0"
    ))
    .contains("`channels` = 0"));
    assert_eq!("cuda".parse::<DeviceChoice>(), Ok(DeviceChoice::Cuda));
    assert_eq!(
        "auto".parse::<DeviceChoice>().unwrap().device(),
        tch::Device::cuda_if_available()
    );
    assert!("gpu"
        .parse::<DeviceChoice>()
        .unwrap_err()
        .contains("unknown device `gpu`"));
}

#[test]
fn outputs_have_no_probability_on_illegal_actions_and_values_in_range() {
    let b = batch(9, 1, true);
    let mut e = NetEvaluator::new(tiny(Variant::Kiswahili, 1));
    let (policy, values) = evaluate(&mut e, &b);
    for (i, (p, &m)) in policy.chunks(ACTIONS).zip(&b.masks).enumerate() {
        for (a, &x) in p.iter().enumerate() {
            if m >> a & 1 == 0 {
                assert_eq!(x, 0.0, "row {i} action {a} is illegal");
            } else {
                assert!(
                    x > 0.0,
                    "row {i} action {a} is legal but has no probability"
                );
            }
        }
        let sum: f32 = p.iter().sum();
        let expected = if m == 0 { 0.0 } else { 1.0 };
        assert!((sum - expected).abs() < 1e-5, "row {i} sums to {sum}");
    }
    assert_eq!(
        policy[ACTIONS + 17],
        1.0,
        "the only legal action gets everything"
    );
    assert!(
        values.iter().all(|v| (-1.0..=1.0).contains(v)),
        "{values:?}"
    );
    // Wrong buffer sizes are errors, not panics.
    let mut p = vec![0.0; 8 * ACTIONS];
    let mut v = vec![0.0; 8];
    assert!(e
        .evaluate(&b.positions, &b.masks[..8], &mut p, &mut v)
        .is_err());
}

#[test]
fn training_steps_reduce_the_loss_on_a_fixed_batch() {
    let b = batch(32, 3, false);
    for kind in [
        OptimizerKind::Adam,
        OptimizerKind::AdamW,
        OptimizerKind::Sgd,
    ] {
        let lr = if kind == OptimizerKind::Sgd {
            3e-2
        } else {
            3e-3
        };
        let cfg = OptimizerConfig {
            kind,
            learning_rate: lr,
            ..Default::default()
        };
        let mut learner = Learner::new(tiny(Variant::Kujifunza, 3), cfg).unwrap();
        let first = learner
            .train_step(&b.features, &b.masks, &b.policy, &b.values)
            .unwrap();
        let mut last = first;
        for _ in 0..30 {
            last = learner
                .train_step(&b.features, &b.masks, &b.policy, &b.values)
                .unwrap();
        }
        assert!(
            last.total < 0.7 * first.total,
            "{kind:?}: {first:?} -> {last:?}"
        );
        assert!(
            last.value < first.value && last.policy < first.policy,
            "{kind:?}: {first:?} -> {last:?}"
        );
        assert!(last.value_accuracy > 0.9, "{kind:?}: {last:?}");
        assert!(last.policy_entropy > 0.0 && last.policy_entropy < first.policy_entropy);
        assert_eq!(learner.step(), 31);
    }
}

/// AdamW's decay bypasses Adam's scaling. Without decay it is Adam exactly; with
/// decay it shrinks the weights further than L2 through Adam does, here by far (Adam divides
/// an L2 gradient by its own scale, AdamW removes `lr * decay` of every weight each step).
#[test]
fn adamw_decays_apart_from_the_adam_step() {
    let b = batch(32, 5, false);
    // One initial network for all (torch's generator is shared by the tests running beside).
    let start = tiny(Variant::Kujifunza, 4);
    let weights_after = |kind, weight_decay| {
        let cfg = OptimizerConfig {
            kind,
            weight_decay,
            learning_rate: 1e-3,
            ..Default::default()
        };
        let net = start.duplicate(Device::Cpu).unwrap();
        let mut learner = Learner::new(net, cfg).unwrap();
        for _ in 0..5 {
            learner
                .train_step(&b.features, &b.masks, &b.policy, &b.values)
                .unwrap();
        }
        let mut named: Vec<(String, tch::Tensor)> = learner
            .network()
            .var_store()
            .variables()
            .into_iter()
            .collect();
        named.sort_by(|a, b| a.0.cmp(&b.0));
        named
            .into_iter()
            .map(|(_, t)| Vec::<f32>::try_from(t.flatten(0, -1)).unwrap())
            .collect::<Vec<_>>()
    };
    assert_eq!(
        weights_after(OptimizerKind::Adam, 0.0),
        weights_after(OptimizerKind::AdamW, 0.0)
    );
    let norm = |w: &[Vec<f32>]| w.iter().flatten().map(|x| (x * x) as f64).sum::<f64>();
    let (l2, decoupled) = (
        norm(&weights_after(OptimizerKind::Adam, 50.0)),
        norm(&weights_after(OptimizerKind::AdamW, 50.0)),
    );
    assert!(decoupled < l2, "AdamW {decoupled} vs Adam with L2 {l2}");
}

#[test]
fn training_refuses_bad_batches() {
    let b = batch(4, 4, false);
    let mut learner =
        Learner::new(tiny(Variant::Kujifunza, 4), OptimizerConfig::default()).unwrap();
    let mut stray = b.policy.clone();
    let illegal = (0..ACTIONS).find(|a| b.masks[1] >> a & 1 == 0).unwrap();
    stray[ACTIONS + illegal] = 0.5;
    let e = err_text(learner.train_step(&b.features, &b.masks, &stray, &b.values));
    assert!(e.contains("illegal actions"), "{e}");
    let e = err_text(learner.train_step(&b.features, &b.masks, &b.policy, &b.values[..3]));
    assert!(e.contains("3 value targets"), "{e}");
    assert_eq!(learner.step(), 0, "refused batches take no step");
}

fn ckpt(dir: &Path, name: &str) -> PathBuf {
    dir.join(format!("{name}.safetensors"))
}

#[test]
fn save_and_load_give_bit_identical_outputs_and_metadata() {
    let dir = tempfile::tempdir().unwrap();
    let b = batch(6, 5, true);
    let mut learner =
        Learner::new(tiny(Variant::Kiswahili, 5), OptimizerConfig::default()).unwrap();
    learner
        .train_step(&b.features, &b.masks, &b.policy, &b.values)
        .unwrap(); // moves BN stats
    learner.set_lineage(4, Some("gen3.safetensors".into()));
    let path = ckpt(dir.path(), "gen4");
    learner.save(&path).unwrap();
    let expected = evaluate(&mut NetEvaluator::new(learner.into_network()), &b);

    let meta = CheckpointMeta::read(&path).unwrap();
    assert_eq!(meta.variant, Variant::Kiswahili);
    assert_eq!(meta.encoding_version, features::ENCODING_VERSION);
    assert_eq!(meta.config, NetConfig::preset("tiny").unwrap());
    assert_eq!(
        meta.lineage(),
        Lineage {
            step: 1,
            generation: 4,
            parent: Some("gen3.safetensors".into())
        }
    );

    let mut loaded = NetEvaluator::load(&path, DeviceChoice::Cpu).unwrap();
    assert_eq!(loaded.network().lineage().step, 1);
    let got = evaluate(&mut loaded, &b);
    assert!(expected
        .0
        .iter()
        .zip(&got.0)
        .all(|(a, b)| a.to_bits() == b.to_bits()));
    assert!(expected
        .1
        .iter()
        .zip(&got.1)
        .all(|(a, b)| a.to_bits() == b.to_bits()));
    assert!(!dir.path().join("gen4.safetensors.tmp").exists());
}

#[test]
fn resumed_training_continues_exactly() {
    let dir = tempfile::tempdir().unwrap();
    let b = batch(8, 6, false);
    let c = batch(8, 7, false);
    let cfg = OptimizerConfig {
        weight_decay: 1e-3,
        ..Default::default()
    };
    let mut a = Learner::new(tiny(Variant::Kujifunza, 6), cfg.clone()).unwrap();
    a.set_learning_rate(2e-3).unwrap();
    for _ in 0..3 {
        a.train_step(&b.features, &b.masks, &b.policy, &b.values)
            .unwrap();
    }
    let path = ckpt(dir.path(), "mid");
    a.save(&path).unwrap();
    let mut r = Learner::resume(&path, Device::Cpu, cfg.clone()).unwrap();
    assert_eq!((r.step(), r.learning_rate()), (3, 2e-3));
    for learner in [&mut a, &mut r] {
        for _ in 0..2 {
            learner
                .train_step(&c.features, &c.masks, &c.policy, &c.values)
                .unwrap();
        }
    }
    let va = a.network().var_store().variables();
    let vr = r.network().var_store().variables();
    assert_eq!(va.len(), vr.len());
    for (name, t) in &va {
        assert!(t.equal(&vr[name]), "tensor {name} differs after resuming");
    }
    let sgd = OptimizerConfig {
        kind: OptimizerKind::Sgd,
        ..cfg
    };
    assert!(err_text(Learner::resume(&path, Device::Cpu, sgd)).contains("Adam"));
}

#[test]
fn wrong_variant_old_encoding_and_corrupt_files_give_clear_errors() {
    let dir = tempfile::tempdir().unwrap();
    let path = ckpt(dir.path(), "net");
    tiny(Variant::Kujifunza, 8)
        .save(&path, &Lineage::default())
        .unwrap();
    Network::load_for(&path, Variant::Kujifunza, Device::Cpu).unwrap();
    let e = err_text(Network::load_for(&path, Variant::Kiswahili, Device::Cpu));
    assert!(
        e.contains("trained for bao la kujifunza but bao la kiswahili"),
        "{e}"
    );

    let sidecar = dir.path().join("net.json");
    let good = std::fs::read_to_string(&sidecar).unwrap();
    let copy = |name: &str, sidecar_text: &str, weights: &[u8]| {
        let p = ckpt(dir.path(), name);
        std::fs::write(&p, weights).unwrap();
        std::fs::write(p.with_extension("json"), sidecar_text).unwrap();
        p
    };
    let weights = std::fs::read(&path).unwrap();
    let old = good.replace(
        &format!("\"encoding_version\": {}", features::ENCODING_VERSION),
        "\"encoding_version\": 0",
    );
    assert_ne!(old, good);
    let e = err_text(Network::load(&copy("old", &old, &weights), Device::Cpu));
    assert!(e.contains("feature encoding version 0"), "{e}");

    let e = err_text(Network::load(
        &copy("cut", &good, &weights[..weights.len() / 2]),
        Device::Cpu,
    ));
    assert!(e.contains("do not belong to their sidecar"), "{e}");
    // Without a recorded digest, the safetensors reader still refuses the torn file.
    let undigested = serde_json::Value::Object({
        let mut m: serde_json::Map<String, serde_json::Value> =
            serde_json::from_str(&good).unwrap();
        m.remove("weights_sha256").expect("save records the digest");
        m
    })
    .to_string();
    let e = err_text(Network::load(
        &copy("cut-undigested", &undigested, &weights[..weights.len() / 2]),
        Device::Cpu,
    ));
    assert!(e.contains("unreadable or corrupt"), "{e}");
    let e = err_text(Network::load(
        &copy("junk", "{ not json", &weights),
        Device::Cpu,
    ));
    assert!(e.contains("malformed"), "{e}");
    let wide = good.replace("\"channels\": 16", "\"channels\": 32");
    assert_ne!(wide, good);
    let e = err_text(Network::load(&copy("wide", &wide, &weights), Device::Cpu));
    assert!(
        e.contains("tensor `") && e.contains("the architecture needs"),
        "{e}"
    );
    let e = err_text(Network::load(
        &dir.path().join("missing.safetensors"),
        Device::Cpu,
    ));
    assert!(e.contains("missing.json"), "{e}");
    let e = err_text(Network::load(&dir.path().join("net.pt"), Device::Cpu));
    assert!(e.contains("must end in `.safetensors`"), "{e}");
}

#[test]
fn torchscript_export_loads_back_with_the_same_outputs() {
    let dir = tempfile::tempdir().unwrap();
    let net = tiny(Variant::Kiswahili, 9);
    let out = dir.path().join("net.pt");
    bao::neuralnet::export_torchscript(&net, &out).unwrap();
    let b = batch(5, 9, true); // a batch size other than the trace's
    let (policy, values) = evaluate(&mut NetEvaluator::new(net), &b);

    let module = tch::CModule::load(&out).unwrap();
    let x = tch::Tensor::from_slice(&b.features).view([5, 15, 4, 8]);
    let legal = bao::neuralnet::legal_tensor(&b.masks, Device::Cpu);
    let out = module.forward_ts(&[x, legal]).unwrap();
    assert_eq!(out.size(), vec![5, ACTIONS as i64 + 1]);
    let p: Vec<f32> = Vec::try_from(out.narrow(1, 0, ACTIONS as i64).flatten(0, -1)).unwrap();
    let v: Vec<f32> = Vec::try_from(out.select(1, ACTIONS as i64)).unwrap();
    let close = |a: &[f32], b: &[f32]| a.iter().zip(b).all(|(x, y)| (x - y).abs() <= 1e-6);
    assert!(close(&p, &policy) && close(&v, &values));
}

/// Counts the positions it is asked about; values depend on the position alone.
struct Counting(usize);

impl Evaluator for Counting {
    fn evaluate(
        &mut self,
        positions: &[Position],
        m: &[u64],
        p: &mut [f32],
        v: &mut [f32],
    ) -> anyhow::Result<()> {
        self.0 += m.len();
        UniformEvaluator.evaluate(positions, m, p, v)?;
        v.iter_mut()
            .zip(positions)
            .for_each(|(v, pos)| *v = (pos.hash64() % 1000) as f32 / 1000.0 - 0.5);
        Ok(())
    }
    fn name(&self) -> String {
        "counting".into()
    }
}

/// A batch of `positions` with their real legal masks.
fn real_batch(positions: Vec<Position>) -> Batch {
    let n = positions.len();
    Batch {
        masks: positions.iter().map(|p| p.legal_moves().mask()).collect(),
        features: Vec::new(),
        policy: vec![0.0; n * ACTIONS],
        values: vec![0.0; n],
        positions,
    }
}

#[test]
fn cache_answers_repeated_positions_without_the_inner_evaluator() {
    let mut rng = StdRng::seed_from_u64(10);
    let distinct: Vec<Position> = (0..10)
        .map(|i| random_position(&mut rng, 2 * i + 1))
        .collect();
    let b = real_batch(distinct.clone());
    let mut direct = Counting(0);
    let expected = evaluate(&mut direct, &b);
    let mut cached = CachedEvaluator::new(Counting(0), 1 << 12);
    assert_eq!(evaluate(&mut cached, &b), expected);
    assert_eq!(cached.inner().0, 10);
    assert_eq!(evaluate(&mut cached, &b), expected);
    assert_eq!(cached.inner().0, 10, "second batch came from the cache");
    // Half old, half new positions: only the new ones reach the inner evaluator, and the
    // answers equal the uncached ones.
    let mut mixed = distinct[..5].to_vec();
    mixed.extend((0..5).map(|i| random_position(&mut rng, 2 * i + 30)));
    let mixed = real_batch(mixed);
    assert_eq!(
        evaluate(&mut cached, &mixed),
        evaluate(&mut Counting(0), &mixed)
    );
    assert_eq!(cached.inner().0, 15);
    assert!((cached.hit_rate() - 15.0 / 30.0).abs() < 1e-9);
}

#[test]
fn cached_network_evaluator_returns_the_uncached_values() {
    let mut rng = StdRng::seed_from_u64(12);
    let mut positions: Vec<Position> = (0..12).map(|i| random_position(&mut rng, i)).collect();
    positions.extend_from_slice(&positions.clone()[..4]); // repeats inside one batch
    let b = real_batch(positions);
    // One network, duplicated: `tiny` reseeds torch's global generator, which tests running in
    // parallel share, so two `tiny` calls need not give the same weights.
    let net = tiny(Variant::Kiswahili, 12);
    let copy = net.duplicate(Device::Cpu).unwrap();
    let expected = evaluate(&mut NetEvaluator::new(net), &b);
    let mut cached = CachedEvaluator::new(NetEvaluator::new(copy), 64);
    for round in 0..3 {
        let (p, v) = evaluate(&mut cached, &b);
        let close = |a: &[f32], b: &[f32]| a.iter().zip(b).all(|(x, y)| (x - y).abs() <= 1e-6);
        assert!(
            close(&p, &expected.0) && close(&v, &expected.1),
            "round {round}"
        );
    }
}

#[test]
fn real_positions_get_policy_only_on_their_legal_moves() {
    for variant in Variant::ALL {
        let pos = Position::start(variant);
        let mask = pos.legal_moves().mask();
        assert_ne!(mask, 0);
        let mut e = NetEvaluator::new(tiny(variant, 11));
        let (mut policy, mut values) = (vec![0f32; ACTIONS], vec![0f32; 1]);
        e.evaluate(&[pos], &[mask], &mut policy, &mut values)
            .unwrap();
        for (a, p) in policy.iter().enumerate() {
            assert_eq!(*p > 0.0, mask >> a & 1 == 1, "{variant} action {a}: {p}");
        }
    }
}

/// A checkpoint whose weights hold a NaN or an infinity loads as a player whose outputs are
/// all NaN (played as a uniform prior); loading refuses it and names the tensor.
#[test]
fn non_finite_weights_are_refused_naming_the_tensor() {
    // A diverged run saves its NaNs with a matching digest: the values themselves are checked.
    let dir = tempfile::tempdir().unwrap();
    for bad in [f64::NAN, f64::INFINITY] {
        let net = tiny(Variant::Kiswahili, 9);
        let mut named: Vec<(String, tch::Tensor)> =
            net.var_store().variables().into_iter().collect();
        named.sort_by(|a, b| a.0.cmp(&b.0));
        let victim = named[0].0.clone();
        tch::no_grad(|| {
            let _ = named[0].1.view(-1).get(0).fill_(bad);
        });
        let path = ckpt(dir.path(), "poisoned");
        net.save(&path, &Lineage::default()).unwrap();
        let e = err_text(Network::load(&path, Device::Cpu));
        assert!(
            e.contains(&format!("tensor `{victim}` holds 1 non-finite value")),
            "{bad}: {e}"
        );
    }
}

#[test]
fn weights_of_another_checkpoint_behind_a_sidecar_are_refused() {
    // Both variants' networks have identical tensor shapes, so only the digest the sidecar
    // records can tell Kiswahili weights behind a Kujifunza sidecar.
    let dir = tempfile::tempdir().unwrap();
    let kujifunza = ckpt(dir.path(), "kujifunza");
    let kiswahili = ckpt(dir.path(), "kiswahili");
    tiny(Variant::Kujifunza, 1)
        .save(&kujifunza, &Lineage::default())
        .unwrap();
    tiny(Variant::Kiswahili, 2)
        .save(&kiswahili, &Lineage::default())
        .unwrap();
    Network::load_for(&kujifunza, Variant::Kujifunza, Device::Cpu).unwrap();
    std::fs::copy(&kiswahili, &kujifunza).unwrap();
    let e = err_text(Network::load_for(
        &kujifunza,
        Variant::Kujifunza,
        Device::Cpu,
    ));
    assert!(
        e.contains("do not belong to their sidecar") && e.contains("kujifunza.json"),
        "{e}"
    );
    // A sidecar written before digests were recorded still loads its weights.
    let sidecar = kujifunza.with_extension("json");
    let mut meta: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&sidecar).unwrap()).unwrap();
    assert!(meta["weights_sha256"].is_string());
    meta.as_object_mut().unwrap().remove("weights_sha256");
    std::fs::write(&sidecar, meta.to_string()).unwrap();
    Network::load_for(&kujifunza, Variant::Kujifunza, Device::Cpu).unwrap();
}

/// A bf16 inference copy (`Precision::Bf16`) of a trained network judges real positions as the
/// f32 network does, to bf16's resolution, and is not taken for the network itself: saving,
/// copying, growing or training it is refused, and it does not return to f32.
#[test]
fn bf16_inference_agrees_with_f32_and_the_copy_stays_inference_only() {
    let model = Path::new("models/kiswahili.safetensors");
    let mut rng = StdRng::seed_from_u64(21);
    let b = real_batch((0..32).map(|i| random_position(&mut rng, i)).collect());
    let (p32, v32) = evaluate(
        &mut NetEvaluator::load(model, DeviceChoice::Cpu).unwrap(),
        &b,
    );
    let mut bf16 = NetEvaluator::load(model, DeviceChoice::Cpu)
        .unwrap()
        .with_precision(Precision::Bf16)
        .unwrap();
    assert_eq!(bf16.network().precision(), Precision::Bf16);
    assert!(bf16.name().contains("bf16"), "{}", bf16.name());
    let (p16, v16) = evaluate(&mut bf16, &b);
    let max_diff = |a: &[f32], b: &[f32]| {
        a.iter()
            .zip(b)
            .map(|(x, y)| (x - y).abs())
            .fold(0f32, f32::max)
    };
    // Really computed in bf16 (not a silent f32 pass), yet close: bf16 keeps 8 mantissa bits.
    assert!(max_diff(&v32, &v16) > 0.0, "values bit-identical to f32");
    assert!(max_diff(&v32, &v16) < 0.08, "values: {v32:?} {v16:?}");
    assert!(max_diff(&p32, &p16) < 0.08);
    for (row, (a, c)) in p16.chunks(ACTIONS).zip(p32.chunks(ACTIONS)).enumerate() {
        let sum: f32 = a.iter().sum();
        assert!((sum - 1.0).abs() < 1e-4, "row {row} sums to {sum}");
        for (k, (x, y)) in a.iter().zip(c).enumerate() {
            assert_eq!(*x > 0.0, *y > 0.0, "row {row} action {k}: legal moves only");
        }
    }

    let net = bf16.network();
    let dir = tempfile::tempdir().unwrap();
    let path = ckpt(dir.path(), "rounded");
    assert!(err_text(net.save(&path, net.lineage())).contains("bf16"));
    assert!(!path.exists(), "nothing written");
    assert!(err_text(net.duplicate(Device::Cpu)).contains("cannot be copied"));
    assert!(err_text(net.grown_to(net.config())).contains("cannot be grown"));
    let mut copy = Network::load(model, Device::Cpu).unwrap();
    copy.set_inference_precision(Precision::Bf16).unwrap();
    assert!(err_text(copy.set_inference_precision(Precision::F32)).contains("load the checkpoint"));
    let err = err_text(Learner::new(copy, OptimizerConfig::default()));
    assert!(err.contains("cannot be trained"), "{err}");
}

/// The largest absolute difference between two equally long slices.
fn max_diff(a: &[f32], b: &[f32]) -> f32 {
    assert_eq!(a.len(), b.len());
    a.iter()
        .zip(b)
        .map(|(x, y)| (x - y).abs())
        .fold(0f32, f32::max)
}

/// The Rust forward pass (`Backend::Native`, what a CPU search runs by default) is libtorch's
/// inference pass: the same probabilities and values to f32 rounding, for every shape a config
/// can give (blocks, channels, head sizes, each input encoding, auxiliary heads, which
/// inference skips), with batch-norm statistics far from their initial identity (so folding
/// them into the convolutions is checked), on real positions of both variants, with
/// synthetic masks (an empty one included) as well. The shipped Kiswahili model is held to
/// the same on real positions.
#[test]
fn native_forward_pass_matches_libtorch() {
    let shapes = [
        "preset = \"tiny\"\nblocks = 1\nchannels = 8",
        "blocks = 2\nchannels = 24\npolicy_channels = 4\nvalue_channels = 2\nvalue_hidden = 48\nmove_features = true\nthreat_features = true",
        "blocks = 3\nchannels = 5\npolicy_channels = 3\nvalue_channels = 1\nvalue_hidden = 7\nmove_features = true\naux_heads = true",
        "preset = \"tiny\"\nblocks = 0\nchannels = 16",
    ];
    let mut rng = StdRng::seed_from_u64(31);
    for (i, shape) in shapes.iter().enumerate() {
        let cfg: NetConfig = toml::from_str(shape).unwrap_or_else(|e| panic!("{shape}: {e}"));
        for variant in Variant::ALL {
            let net = Network::new_seeded(&cfg, variant, Device::Cpu, 40 + i as u64).unwrap();
            common::randomize_batch_norm(&net);
            let copy = net.duplicate(Device::Cpu).unwrap();
            let mut torch = NetEvaluator::new(net).with_backend(Backend::Torch).unwrap();
            let mut native = NetEvaluator::new(copy)
                .with_backend(Backend::Native)
                .unwrap();
            assert_eq!(
                (torch.backend(), native.backend()),
                (Backend::Torch, Backend::Native)
            );
            let mut positions = vec![Position::start(variant)];
            let mut pos = positions[0];
            while positions.len() < 24 {
                let moves = pos.legal_moves();
                match moves
                    .as_slice()
                    .get(rng.random_range(0..moves.len().max(1)))
                {
                    Some(m) => match m.after {
                        bao::game::After::Position(p) => pos = p,
                        bao::game::After::Won(_) => pos = Position::start(variant),
                    },
                    None => pos = Position::start(variant),
                }
                positions.push(pos);
            }
            let mut b = real_batch(positions);
            let (p_torch, v_torch) = evaluate(&mut torch, &b);
            let (p_native, v_native) = evaluate(&mut native, &b);
            let what = format!("{shape:?} {variant}");
            assert!(
                max_diff(&v_torch, &v_native) < 1e-5,
                "{what}: {v_torch:?} {v_native:?}"
            );
            assert!(max_diff(&p_torch, &p_native) < 1e-5, "{what}");
            assert!(
                v_native.iter().any(|v| v.abs() > 0.01),
                "{what}: values all near 0"
            );
            b.masks[1] = 0;
            b.masks[2] = 1 << 63 | 1;
            let (p_torch, _) = evaluate(&mut torch, &b);
            let (p_native, _) = evaluate(&mut native, &b);
            assert!(
                max_diff(&p_torch, &p_native) < 1e-5,
                "{what}, synthetic masks"
            );
            assert!(p_native[ACTIONS..2 * ACTIONS].iter().all(|&p| p == 0.0));
            // One position alone judges as it does inside the batch.
            let one = real_batch(b.positions[5..6].to_vec());
            let (p_one, v_one) = evaluate(&mut native, &one);
            assert!(
                max_diff(&v_one, &v_native[5..6]) < 1e-6,
                "{what}: batch of one"
            );
            assert!(max_diff(&p_one, &p_torch[5 * ACTIONS..6 * ACTIONS]) < 1e-5);
        }
    }

    let model = Path::new("models/kiswahili.safetensors");
    let b = real_batch((0..32).map(|i| random_position(&mut rng, 2 * i)).collect());
    let torch = NetEvaluator::load(model, DeviceChoice::Cpu).unwrap();
    let torch = torch.with_backend(Backend::Torch).unwrap();
    let (p_torch, v_torch) = evaluate(&mut { torch }, &b);
    let mut native = NetEvaluator::load(model, DeviceChoice::Cpu).unwrap();
    // By default the Rust pass judges a search's batches, libtorch the largest ones.
    assert_eq!(native.backend(), Backend::Auto);
    assert_eq!(native.backend_for(b.masks.len()), Backend::Native);
    assert_eq!(native.backend_for(1 << 20), Backend::Torch);
    assert!(native.name().contains("native"), "{}", native.name());
    let (p_native, v_native) = evaluate(&mut native, &b);
    assert!(max_diff(&v_torch, &v_native) < 1e-5);
    assert!(max_diff(&p_torch, &p_native) < 1e-5);
}

/// The Rust pass runs in bf16 where the CPU has AVX-512 BF16: converting an evaluator to bf16
/// keeps the Rust pass for a search's batches there (in bf16) and hands them back to libtorch
/// elsewhere, where asking for the native backend gets the f32 pass instead (the fallback).
#[test]
fn native_backend_in_bf16_where_the_cpu_runs_it() {
    let bf16 = NetEvaluator::new(tiny(Variant::Kujifunza, 3))
        .with_precision(Precision::Bf16)
        .unwrap();
    let has_bf16 = native::supports(Precision::Bf16);
    if has_bf16 {
        assert_eq!(bf16.backend(), Backend::Auto);
        assert_eq!(bf16.backend_for(8), Backend::Native);
        assert_eq!(bf16.precision_for(8), Precision::Bf16);
    } else {
        assert_eq!(bf16.backend(), Backend::Torch);
        assert_eq!(bf16.precision_for(8), Precision::Bf16, "libtorch's bf16");
    }
    let forced = bf16.with_backend(Backend::Native).unwrap();
    assert_eq!(forced.backend(), Backend::Native);
    let expected = if has_bf16 {
        Precision::Bf16
    } else {
        Precision::F32
    };
    assert_eq!(forced.precision_for(8), expected);
    assert_eq!("native".parse::<Backend>(), Ok(Backend::Native));
    assert!("onnx".parse::<Backend>().unwrap_err().contains("`torch`"));
}

/// The auto backend's bound on the Rust bf16 pass follows the core's instruction peaks: where
/// `VDPBF16PS` runs at twice the FMA's rate the bf16 pass takes calls ten times larger than the
/// f32 one; where it runs at half (the 2026-12-08 machine: 121 against 243 GFLOP/s) it takes
/// the f32 bound, since libtorch's bf16 overtook it there at 64 positions of a 4x48.
#[test]
fn auto_bounds_the_bf16_pass_by_the_cores_instruction_peaks() {
    use bao::neuralnet::auto_native_max_flops as bound;
    let f32_bound = bound(Precision::F32, None, None);
    let fast = bound(Precision::Bf16, Some(118.2), Some(236.4));
    let slow = bound(Precision::Bf16, Some(242.7), Some(121.3));
    assert_eq!(slow, f32_bound);
    assert_eq!(fast, 10.0 * f32_bound);
    // Unmeasured (no AVX-512): the bf16 pass does not run, the bound is the documented one.
    assert_eq!(bound(Precision::Bf16, None, None), fast);
    // int8's libtorch calls run in f32, so its bound stays high whatever the bf16 unit.
    assert_eq!(bound(Precision::Int8, Some(242.7), Some(121.3)), fast);
}

/// Saves a tiny Kujifunza network with search settings recorded at `dir/NAME.safetensors`.
fn saved_tiny(dir: &Path, name: &str, variant: Variant, seed: i64) -> PathBuf {
    let path = ckpt(dir, name);
    let mut net = tiny(variant, seed);
    net.set_search_params(Some(bao::search::SearchParams::default()));
    net.save(&path, &Lineage::default()).unwrap();
    path
}

fn edit_sidecar(path: &Path, edit: impl FnOnce(&mut serde_json::Value)) {
    let sidecar = path.with_extension("json");
    let mut meta: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&sidecar).unwrap()).unwrap();
    edit(&mut meta);
    std::fs::write(&sidecar, meta.to_string()).unwrap();
}

/// A Kiswahili sidecar beside Kujifunza weights is the wrong sidecar, not a variant mismatch:
/// the weights' digest is checked first, so the message names the sidecar they do not belong to.
#[test]
fn a_sidecar_of_another_checkpoint_is_named_before_its_variant() {
    let dir = tempfile::tempdir().unwrap();
    let kujifunza = saved_tiny(dir.path(), "kujifunza", Variant::Kujifunza, 1);
    let kiswahili = saved_tiny(dir.path(), "kiswahili", Variant::Kiswahili, 2);
    std::fs::copy(
        kiswahili.with_extension("json"),
        kujifunza.with_extension("json"),
    )
    .unwrap();
    for e in [
        err_text(Network::load_for(
            &kujifunza,
            Variant::Kujifunza,
            Device::Cpu,
        )),
        err_text(Network::load(&kujifunza, Device::Cpu)),
    ] {
        assert!(
            e.contains("do not belong to their sidecar") && e.contains("kujifunza.json"),
            "{e}"
        );
        assert!(!e.contains("trained for bao la"), "{e}");
    }
}

/// Search settings a sidecar records are checked when it is read, and a bad one is blamed on
/// the sidecar, not on a `--set` nobody gave.
#[test]
fn a_bad_search_setting_in_a_sidecar_names_the_sidecar() {
    let dir = tempfile::tempdir().unwrap();
    let path = saved_tiny(dir.path(), "net", Variant::Kujifunza, 3);
    edit_sidecar(&path, |m| m["search"]["c_puct"] = (-1.0).into());
    let e = err_text(Network::load(&path, Device::Cpu));
    assert!(e.contains("net.json") && e.contains("c_puct"), "{e}");
    let e = err_text(bao::neuralnet::CheckpointMeta::read(&path));
    assert!(e.contains("net.json") && e.contains("c_puct"), "{e}");
    let (ok, _, err) = common::run_bao(&[
        "analyze",
        "--variant",
        "kujifunza",
        "--model",
        path.to_str().unwrap(),
        "--sims",
        "4",
        "--device",
        "cpu",
    ]);
    assert!(!ok);
    assert!(err.contains("net.json") && err.contains("c_puct"), "{err}");
    assert!(!err.contains("--set"), "no --set was given: {err}");
}

/// Batch-norm variances are never negative: weights holding one (a damaged file) are refused,
/// naming the tensor, like NaN weights.
#[test]
fn negative_batch_norm_variances_are_refused_naming_the_tensor() {
    let dir = tempfile::tempdir().unwrap();
    let net = tiny(Variant::Kujifunza, 4);
    let victim = "block0.a.bn.running_var";
    let vars = net.var_store().variables();
    tch::no_grad(|| {
        let _ = vars[victim].view(-1).get(3).fill_(-0.5);
    });
    let path = ckpt(dir.path(), "negative");
    net.save(&path, &Lineage::default()).unwrap();
    let e = err_text(Network::load(&path, Device::Cpu));
    assert!(
        e.contains(&format!("tensor `{victim}`")) && e.contains("negative"),
        "{e}"
    );
}

/// A sidecar that claims a far larger network than its weights file holds is refused from the
/// file's header, before the claimed network is allocated: the loading process never grows
/// by the claimed size (here about 900 MB of weights).
#[test]
fn a_sidecar_claiming_a_larger_network_is_refused_before_allocating() {
    let dir = tempfile::tempdir().unwrap();
    let path = saved_tiny(dir.path(), "claims", Variant::Kujifunza, 5);
    edit_sidecar(&path, |m| {
        m["config"]["channels"] = 1024.into();
        m["config"]["blocks"] = 12.into();
    });
    let e = err_text(Network::load(&path, Device::Cpu));
    assert!(
        e.contains("tensor `") && e.contains("the architecture") && e.contains("claims.json"),
        "{e}"
    );
    let (ok, _, err) = common::run_bao(&["engine", &format!("net:{}", path.display())]);
    assert!(!ok);
    assert!(err.contains("tensor `"), "{err}");
    // The largest child this test process waited for (this test binary starts no other).
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    assert_eq!(
        unsafe { libc::getrusage(libc::RUSAGE_CHILDREN, &mut usage) },
        0
    );
    let peak_mb = usage.ru_maxrss / 1024;
    assert!(
        peak_mb < 700,
        "the loader grew to {peak_mb} MB: the claimed network was allocated"
    );
}

/// A sidecar without a weights digest still loads (checkpoints written before digests were
/// recorded), but not silently: a warning says its weights go unchecked.
#[test]
fn a_sidecar_without_a_digest_loads_with_a_warning() {
    let dir = tempfile::tempdir().unwrap();
    let path = saved_tiny(dir.path(), "undigested", Variant::Kujifunza, 6);
    edit_sidecar(&path, |m| {
        m.as_object_mut().unwrap().remove("weights_sha256").unwrap();
    });
    let (ok, _, err) = common::run_bao(&["engine", &format!("net:{}:sims=2", path.display())]);
    assert!(ok, "{err}");
    assert!(
        err.contains("weights_sha256") && err.contains("undigested.json"),
        "a warning names the sidecar: {err}"
    );
}
