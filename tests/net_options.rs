//! The network options of the training recipe: auxiliary heads (the seed-margin and reply
//! targets self-play records, how they travel through shards, the heads that learn them) and
//! move features (a network that reads them, end to end).

use bao::dataio::records::read_records;
use bao::dataio::shard::{decode_shard, encode_shard, list_shards, read_shard, Sample};
use bao::game::random_games::random_walk_with;
use bao::game::{After, Position, Side, Variant, ACTIONS, TOTAL_SEEDS};
use bao::neuralnet::{AuxTargets, Backend, Learner, NetConfig, Network, OptimizerConfig};
use bao::search::UniformEvaluator;
use bao::training::selfplay::{run_selfplay, SelfplayRunConfig};
use rand::rngs::SmallRng;
use rand::SeedableRng;

/// Positions of random games of `variant` (every position of each game).
fn random_positions(variant: Variant, games: usize, seed: u64) -> Vec<Position> {
    let mut rng = SmallRng::seed_from_u64(seed);
    let mut out = Vec::new();
    for _ in 0..games {
        random_walk_with(variant, 200, &mut rng, |p| out.push(*p));
    }
    out
}

/// R1, R5: seeds change sides only by capture, so a move's margin after it is the margin
/// before plus twice what it captured, and the two sides' seeds always add up to 64.
#[test]
fn r1_r5_margin_after_a_move_is_the_margin_before_plus_twice_the_capture() {
    for variant in Variant::ALL {
        assert_eq!(Position::start(variant).seed_margin(Side::South), 0);
        let mut checked = 0;
        let mut captures = 0;
        for pos in random_positions(variant, 20, 5) {
            let me = pos.to_move();
            assert_eq!(
                pos.seeds_owned(me) + pos.seeds_owned(me.opponent()),
                TOTAL_SEEDS
            );
            assert_eq!(pos.seed_margin(me), -pos.seed_margin(me.opponent()));
            for lm in pos.legal_moves().iter() {
                if let After::Position(p) = lm.after {
                    assert_eq!(
                        p.seed_margin(me),
                        lm.margin_after(&pos),
                        "{variant:?} {pos:?} {lm:?}"
                    );
                    checked += 1;
                    captures += (lm.captured > 0) as usize;
                }
            }
        }
        assert!(
            checked > 1000 && captures > 100,
            "{variant:?}: {checked} moves, {captures} captures"
        );
    }
}

fn sample(reply: Option<u8>, margin: Option<f32>) -> Sample {
    let pos = Position::start(Variant::Kujifunza);
    Sample {
        position: pos.to_bytes(),
        legal: pos.legal_moves().mask(),
        policy: [1.0 / ACTIONS as f32; ACTIONS],
        z: 1.0,
        q: 0.5,
        game_id: 3,
        ply: 0,
        full_search: true,
        reply,
        margin,
    }
}

#[test]
fn aux_targets_round_trip_through_shards_and_older_shards_read_without_them() {
    let samples = vec![
        sample(Some(0), Some(-1.0)),
        sample(Some(63), Some(1.0)),
        sample(None, Some(0.25)),
        sample(Some(17), None),
        sample(None, None),
    ];
    let bytes = encode_shard(Variant::Kujifunza, 2, "m", &samples);
    assert_eq!(decode_shard(&bytes, "t").unwrap().samples, samples);

    // A sample without them is byte for byte a format-1 record (flags bits 1 and 2 clear,
    // zero where format 1 wrote zeros), so shards written before them read as `None`.
    let plain = encode_shard(Variant::Kujifunza, 2, "m", &[sample(None, None)]);
    let record = &plain[plain.len() - 4 - 332..plain.len() - 4];
    assert_eq!(record[38], 1);
    assert_eq!(record[39], 0);
    assert!(record[324..].iter().all(|&b| b == 0));

    // Out-of-range targets are refused by name (the checksum re-sealed so only they differ).
    let reseal = |mut b: Vec<u8>| {
        let body = b.len() - 4;
        let crc = crc32fast::hash(&b[..body]);
        b[body..].copy_from_slice(&crc.to_le_bytes());
        b
    };
    let one = encode_shard(Variant::Kujifunza, 2, "m", &[sample(Some(5), Some(0.5))]);
    let at = one.len() - 4 - 332;
    let mut bad_reply = one.clone();
    bad_reply[at + 39] = ACTIONS as u8;
    let e = format!("{:#}", decode_shard(&reseal(bad_reply), "x").unwrap_err());
    assert!(e.contains("reply action 64"), "{e}");
    let mut bad_margin = one;
    bad_margin[at + 324..at + 328].copy_from_slice(&1.5f32.to_le_bytes());
    let e = format!("{:#}", decode_shard(&reseal(bad_margin), "x").unwrap_err());
    assert!(e.contains("seed margin 1.5"), "{e}");
}

/// Every sample carries its game's final margin (for its side to move) and the move the
/// opponent replied with, as the game's record shows them.
#[test]
fn selfplay_records_the_final_margin_and_the_reply() {
    for variant in Variant::ALL {
        let dir = tempfile::tempdir().unwrap();
        let mut cfg = SelfplayRunConfig::new(variant);
        cfg.selfplay.games_in_flight = 3;
        cfg.selfplay.sims = 16;
        cfg.selfplay.cheap_sims = 4;
        cfg.selfplay.full_search_fraction = 0.5;
        cfg.selfplay.max_plies = 60;
        cfg.selfplay.seed = 9;
        let stats = run_selfplay(&cfg, &mut UniformEvaluator, 6, dir.path(), false).unwrap();
        let records: std::collections::BTreeMap<u64, _> = stats
            .record_files
            .iter()
            .flat_map(|p| read_records(p).unwrap())
            .map(|r| (r.id.unwrap(), r))
            .collect();
        let samples: Vec<Sample> = list_shards(dir.path())
            .unwrap()
            .iter()
            .flat_map(|p| read_shard(p).unwrap().samples)
            .collect();
        assert!(samples.len() > 20);
        let (mut replies, mut nonzero) = (0, 0);
        for s in &samples {
            let rec = &records[&s.game_id];
            let (positions, _) = rec.replay().unwrap();
            let pos = s.position().unwrap();
            // The final margin: the last move's margin_after, for South, turned to the side
            // to move at the sample.
            let last = positions[rec.moves.len() - 1];
            let lm = last.parse_move(rec.moves.last().unwrap()).unwrap();
            let mover_margin = lm.margin_after(&last);
            let south = if last.to_move() == Side::South {
                mover_margin
            } else {
                -mover_margin
            };
            let mine = if pos.to_move() == Side::South {
                south
            } else {
                -south
            };
            assert_eq!(
                s.margin,
                Some(mine as f32 / 64.0),
                "game {} ply {}",
                s.game_id,
                s.ply
            );
            nonzero += (mine != 0) as usize;
            // The reply: the next move of the record, as an action of the opponent.
            let next = s.ply as usize + 1;
            match rec.moves.get(next) {
                Some(text) => {
                    let reply = positions[next].parse_move(text).unwrap().mv.action();
                    assert_eq!(
                        s.reply,
                        Some(reply as u8),
                        "game {} ply {}",
                        s.game_id,
                        s.ply
                    );
                    replies += 1;
                }
                None => assert_eq!(s.reply, None, "the game ended with this sample's move"),
            }
        }
        assert!(
            replies > 10 && nonzero > 10,
            "{variant:?}: {replies} replies, {nonzero} nonzero margins"
        );
    }
}

fn aux_net(aux_heads: bool) -> Network {
    let config = NetConfig {
        aux_heads,
        ..NetConfig::preset("tiny").unwrap()
    };
    Network::new_seeded(&config, Variant::Kujifunza, tch::Device::Cpu, 4).unwrap()
}

/// A fixed batch of real positions with made-up auxiliary targets the heads can learn.
struct Batch {
    features: Vec<f32>,
    masks: Vec<u64>,
    policy: Vec<f32>,
    value: Vec<f32>,
    margin: Vec<f32>,
    reply: Vec<i64>,
}

fn batch() -> Batch {
    let positions: Vec<Position> = random_positions(Variant::Kujifunza, 4, 11)
        .into_iter()
        .filter(|p| !p.legal_moves().is_empty())
        .take(32)
        .collect();
    let n = positions.len();
    let mut b = Batch {
        features: vec![0.0; n * bao::game::features::FEATURES],
        masks: Vec::new(),
        policy: vec![0.0; n * ACTIONS],
        value: Vec::new(),
        margin: Vec::new(),
        reply: Vec::new(),
    };
    for (i, p) in positions.iter().enumerate() {
        let f = bao::game::features::FEATURES;
        bao::game::features::encode(p, &mut b.features[i * f..(i + 1) * f]);
        let moves = p.legal_moves();
        b.masks.push(moves.mask());
        for lm in moves.iter() {
            b.policy[i * ACTIONS + lm.mv.action()] = 1.0 / moves.len() as f32;
        }
        b.value.push(if i % 2 == 0 { 1.0 } else { -1.0 });
        // Every third sample has no margin, every fourth no reply.
        b.margin.push(if i % 3 == 0 {
            f32::NAN
        } else {
            p.seed_margin(p.to_move()) as f32 / 64.0
        });
        b.reply.push(if i % 4 == 0 {
            -1
        } else {
            (i * 5 % ACTIONS) as i64
        });
    }
    b
}

#[test]
fn aux_heads_learn_their_targets_and_round_trip_through_checkpoints() {
    let b = batch();
    let aux = AuxTargets {
        margin: &b.margin,
        reply: &b.reply,
    };
    let mut learner = Learner::new(aux_net(true), OptimizerConfig::default()).unwrap();
    let first = learner
        .train_step_aux(&b.features, &b.masks, &b.policy, &b.value, Some(aux))
        .unwrap();
    assert!(first.margin > 0.0 && first.reply > 0.0, "{first:?}");
    let expected_total = first.policy + first.value + 0.5 * first.margin + 0.15 * first.reply;
    assert!((first.total - expected_total).abs() < 1e-4, "{first:?}");
    let mut last = first;
    for _ in 0..150 {
        last = learner
            .train_step_aux(&b.features, &b.masks, &b.policy, &b.value, Some(aux))
            .unwrap();
    }
    assert!(last.margin < 0.5 * first.margin, "{first:?} -> {last:?}");
    assert!(last.reply < 0.5 * first.reply, "{first:?} -> {last:?}");

    // Saved and loaded with its heads; the search's forward pass does not change with them.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("aux.safetensors");
    learner.save(&path).unwrap();
    let loaded = Network::load(&path, tch::Device::Cpu).unwrap();
    assert!(loaded.config().aux_heads);
    let masks = &b.masks[..4];
    let features = &b.features[..4 * bao::game::features::FEATURES];
    assert_eq!(
        loaded.infer(features, masks).unwrap(),
        learner.network().infer(features, masks).unwrap()
    );

    // A network without the heads ignores the targets: zero auxiliary losses.
    let mut plain = Learner::new(aux_net(false), OptimizerConfig::default()).unwrap();
    let l = plain
        .train_step_aux(&b.features, &b.masks, &b.policy, &b.value, Some(aux))
        .unwrap();
    assert_eq!((l.margin, l.reply), (0.0, 0.0));
    assert!((l.total - (l.policy + l.value)).abs() < 1e-5);

    // Targets of the wrong length or out of range are refused.
    let short = AuxTargets {
        margin: &b.margin[1..],
        reply: &b.reply,
    };
    let e = learner
        .train_step_aux(&b.features, &b.masks, &b.policy, &b.value, Some(short))
        .unwrap_err();
    assert!(format!("{e:#}").contains("margin"), "{e:#}");
    let mut wild = b.reply.clone();
    wild[1] = ACTIONS as i64;
    let bad = AuxTargets {
        margin: &b.margin,
        reply: &wild,
    };
    let e = learner
        .train_step_aux(&b.features, &b.masks, &b.policy, &b.value, Some(bad))
        .unwrap_err();
    assert!(format!("{e:#}").contains("reply targets"), "{e:#}");
}

/// Checkpoints written before the heads existed (the first shipped Kujifunza model) load
/// without them, and a config turns them on by name.
#[test]
fn shipped_checkpoints_load_without_aux_heads_and_configs_turn_them_on() {
    let net = Network::load(
        std::path::Path::new("models/kujifunza-original.safetensors"),
        tch::Device::Cpu,
    )
    .unwrap();
    assert!(!net.config().aux_heads);
    let on: NetConfig = bao::config::parse_toml("preset = \"tiny\"\naux_heads = true").unwrap();
    assert!(on.aux_heads);
    assert_eq!(on.short_name(), "1x16+aux");
    let json = serde_json::to_string(&NetConfig::preset("tiny").unwrap()).unwrap();
    assert!(
        !json.contains("aux_heads"),
        "sidecars of plain networks are unchanged: {json}"
    );
}

/// A network with move features (and with the opponent's threats too) trains, plays through
/// the evaluator (which encodes the move planes itself), saves and loads; a sidecar whose
/// encoding disagrees with its architecture is refused.
#[test]
fn move_features_network_trains_evaluates_and_round_trips() {
    use bao::game::features::Encoding;
    let moves = NetConfig {
        move_features: true,
        ..NetConfig::preset("tiny").unwrap()
    };
    let threats = NetConfig {
        threat_features: true,
        ..moves.clone()
    };
    trains_evaluates_and_round_trips(&moves, Encoding::BoardAndMoves, "1x16+moves");
    trains_evaluates_and_round_trips(
        &threats,
        Encoding::BoardMovesAndThreats,
        "1x16+moves+threats",
    );
    // Threats follow the move planes: without them the config is refused by name.
    let e = NetConfig {
        move_features: false,
        ..threats
    }
    .validate()
    .unwrap_err()
    .to_string();
    assert!(
        e.contains("threat_features") && e.contains("move_features"),
        "{e}"
    );
}

fn trains_evaluates_and_round_trips(
    config: &NetConfig,
    encoding: bao::game::features::Encoding,
    short_name: &str,
) {
    use bao::search::Evaluator;
    assert_eq!(config.encoding(), encoding);
    assert_eq!(config.short_name(), short_name);
    let net = Network::new_seeded(config, Variant::Kujifunza, tch::Device::Cpu, 2).unwrap();
    let positions: Vec<Position> = random_positions(Variant::Kujifunza, 2, 3)
        .into_iter()
        .filter(|p| !p.legal_moves().is_empty())
        .take(16)
        .collect();
    let n = positions.len();
    let per = encoding.features();
    let mut features = vec![0.0; n * per];
    for (p, f) in positions.iter().zip(features.chunks_exact_mut(per)) {
        encoding.encode(p, f);
    }
    let masks: Vec<u64> = positions.iter().map(|p| p.legal_moves().mask()).collect();
    let mut policy = vec![0.0; n * ACTIONS];
    for (i, p) in positions.iter().enumerate() {
        let moves = p.legal_moves();
        for lm in moves.iter() {
            policy[i * ACTIONS + lm.mv.action()] = 1.0 / moves.len() as f32;
        }
    }
    let values = vec![0.5; n];
    let mut learner = Learner::new(net, OptimizerConfig::default()).unwrap();
    learner
        .train_step(&features, &masks, &policy, &values)
        .unwrap();
    // Board-only features are the wrong size for it.
    let board = vec![0.0; n * bao::game::features::FEATURES];
    assert!(learner
        .train_step(&board, &masks, &policy, &values)
        .is_err());

    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("moves.safetensors");
    learner.save(&path).unwrap();
    let loaded = Network::load(&path, tch::Device::Cpu).unwrap();
    assert_eq!(loaded.encoding(), encoding);
    let direct = loaded.infer(&features, &masks).unwrap();
    // The evaluator encodes positions as the network reads them: libtorch's pass gives exactly
    // the direct inference, the Rust pass the same to f32 rounding.
    let mut ev = bao::neuralnet::NetEvaluator::new(loaded);
    for backend in [Backend::Torch, Backend::Native] {
        ev = ev.with_backend(backend).unwrap();
        let (mut p, mut v) = (vec![0.0; n * ACTIONS], vec![0.0; n]);
        ev.evaluate(&positions, &masks, &mut p, &mut v).unwrap();
        let tolerance = if backend == Backend::Torch { 0.0 } else { 1e-5 };
        for i in 0..n {
            let row = &direct[i * (ACTIONS + 1)..(i + 1) * (ACTIONS + 1)];
            for (a, (x, y)) in p[i * ACTIONS..(i + 1) * ACTIONS]
                .iter()
                .zip(row)
                .enumerate()
            {
                assert!(
                    (x - y).abs() <= tolerance,
                    "{backend} position {i} action {a}"
                );
            }
            assert!(
                (v[i] - row[ACTIONS]).abs() <= tolerance,
                "{backend} value {i}"
            );
        }
    }

    let sidecar = path.with_extension("json");
    let text = std::fs::read_to_string(&sidecar).unwrap();
    let version = format!("\"encoding_version\": {}", encoding.version());
    assert!(text.contains(&version), "{text}");
    std::fs::write(&sidecar, text.replace(&version, "\"encoding_version\": 1")).unwrap();
    let e = format!("{:#}", Network::load(&path, tch::Device::Cpu).unwrap_err());
    assert!(e.contains("does not match its architecture"), "{e}");
}

/// A trained network grown into move features, auxiliary heads and more blocks (`bao train
/// --init` of an older model into a larger config) computes exactly what it did: the new input
/// planes start at zero weight and the new blocks pass their input through. Any other
/// difference (a width, fewer blocks, or turning a switch off) is refused by name.
#[test]
fn a_trained_network_grows_into_move_features_and_blocks_unchanged() {
    use bao::game::features::Encoding;
    use bao::neuralnet::NetEvaluator;
    use bao::search::Evaluator;
    let shipped = Network::load(
        std::path::Path::new("models/kujifunza-original.safetensors"),
        tch::Device::Cpu,
    )
    .unwrap();
    assert_eq!(shipped.encoding(), Encoding::Board);
    let config = NetConfig {
        move_features: true,
        threat_features: true,
        aux_heads: true,
        ..shipped.config().clone()
    };
    let deeper = NetConfig {
        blocks: config.blocks + 2,
        ..config.clone()
    };
    let grown = shipped.grown_to(&config).unwrap();
    assert_eq!(grown.encoding(), Encoding::BoardMovesAndThreats);
    assert_eq!(grown.lineage(), shipped.lineage());
    let grown_deeper = shipped.grown_to(&deeper).unwrap();
    assert_eq!(grown_deeper.config().blocks, shipped.config().blocks + 2);
    let positions: Vec<Position> = random_positions(Variant::Kujifunza, 4, 11)
        .into_iter()
        .filter(|p| !p.legal_moves().is_empty())
        .take(64)
        .collect();
    let n = positions.len();
    let masks: Vec<u64> = positions.iter().map(|p| p.legal_moves().mask()).collect();
    let evaluate = |net: Network| {
        let (mut p, mut v) = (vec![0.0; n * ACTIONS], vec![0.0; n]);
        NetEvaluator::new(net)
            .evaluate(&positions, &masks, &mut p, &mut v)
            .unwrap();
        (p, v)
    };
    let again = shipped.grown_to(shipped.config()).unwrap();
    let (p0, v0) = evaluate(shipped);
    assert!(
        v0.iter().any(|v| v.abs() > 0.05),
        "a trained value head: {v0:?}"
    );
    for (what, net) in [("grown", grown), ("grown deeper", grown_deeper)] {
        let (p1, v1) = evaluate(net);
        let worst = p0
            .iter()
            .zip(&p1)
            .chain(v0.iter().zip(&v1))
            .map(|(a, b)| (a - b).abs())
            .fold(0f32, f32::max);
        assert!(worst < 1e-5, "{what} network differs by {worst}");
    }

    // Widening, removing blocks and switching off are refused.
    for (what, bad) in [
        (
            "wider",
            NetConfig {
                channels: again.config().channels + 8,
                ..again.config().clone()
            },
        ),
        (
            "shallower",
            NetConfig {
                blocks: again.config().blocks - 1,
                ..again.config().clone()
            },
        ),
    ] {
        let e = format!("{:#}", again.grown_to(&bad).unwrap_err());
        assert!(e.contains("cannot grow"), "{what}: {e}");
    }
    let threats = Network::new(&config, Variant::Kujifunza, tch::Device::Cpu).unwrap();
    let moves_only = NetConfig {
        threat_features: false,
        ..config.clone()
    };
    let e = format!("{:#}", threats.grown_to(&moves_only).unwrap_err());
    assert!(e.contains("cannot grow"), "{e}");
    let moves = Network::new(&moves_only, Variant::Kujifunza, tch::Device::Cpu).unwrap();
    let plain = NetConfig {
        move_features: false,
        ..moves_only.clone()
    };
    let e = format!("{:#}", moves.grown_to(&plain).unwrap_err());
    assert!(e.contains("cannot grow"), "{e}");
}
