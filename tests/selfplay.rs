//! Self-play driver: output readable and legal, reproducible, equal to single-game search.

use std::collections::BTreeMap;

use bao::dataio::records::read_records;
use bao::dataio::shard::{list_shards, read_shard, Sample};
use bao::game::{Position, Variant};
use bao::search::{Mcts, UniformEvaluator};
use bao::training::selfplay::{run_selfplay, OpeningPlies, SelfplayRunConfig};
use bao::util::seeds::derive as game_seed;

fn config(variant: Variant) -> SelfplayRunConfig {
    let mut c = SelfplayRunConfig::new(variant);
    c.selfplay.games_in_flight = 3;
    c.selfplay.sims = 24;
    c.selfplay.cheap_sims = 8;
    c.selfplay.max_plies = 40;
    c.selfplay.shard_size = 50;
    c.selfplay.seed = 17;
    c
}

/// The game records a run wrote, by game id.
fn records_by_id(
    stats: &bao::training::selfplay::SelfplayStats,
) -> BTreeMap<u64, bao::dataio::records::GameRecord> {
    stats
        .record_files
        .iter()
        .flat_map(|p| read_records(p).unwrap())
        .map(|r| (r.id.unwrap(), r))
        .collect()
}

fn samples(dir: &std::path::Path) -> Vec<Sample> {
    list_shards(dir)
        .unwrap()
        .iter()
        .flat_map(|p| read_shard(p).unwrap().samples)
        .collect()
}

#[test]
fn selfplay_with_the_tiny_network_writes_readable_shards() {
    use bao::neuralnet::{NetConfig, NetEvaluator, Network};
    let variant = Variant::Kujifunza;
    let dir = tempfile::tempdir().unwrap();
    let net = Network::new(
        &NetConfig::preset("tiny").unwrap(),
        variant,
        tch::Device::Cpu,
    )
    .unwrap();
    let mut ev = NetEvaluator::new(net);
    let stats = run_selfplay(&config(variant), &mut ev, 3, dir.path(), false).unwrap();
    assert_eq!(stats.games, 3);
    let samples = samples(dir.path());
    assert_eq!(samples.len() as u64, stats.positions);
    for s in &samples {
        assert_eq!(s.position().unwrap().legal_moves().mask(), s.legal);
    }
    for r in stats
        .record_files
        .iter()
        .flat_map(|p| read_records(p).unwrap())
    {
        r.verify().unwrap();
    }
}

#[test]
fn selfplay_writes_readable_shards_and_legal_records() {
    for variant in Variant::ALL {
        let dir = tempfile::tempdir().unwrap();
        let mut cfg = config(variant);
        cfg.selfplay.full_search_fraction = 0.5;
        let stats = run_selfplay(&cfg, &mut UniformEvaluator, 5, dir.path(), false).unwrap();
        assert_eq!(stats.games, 5);
        let records: Vec<_> = stats
            .record_files
            .iter()
            .flat_map(|p| read_records(p).unwrap())
            .collect();
        assert_eq!(records.len(), 5);
        let mut ids: Vec<u64> = records.iter().map(|r| r.id.unwrap()).collect();
        ids.sort();
        assert_eq!(ids, vec![0, 1, 2, 3, 4]);
        for r in &records {
            r.verify().unwrap();
            // Unfinished exactly when the ply cap stopped it, and then at the cap.
            let unfinished = r.result == bao::dataio::records::GameResult::Unfinished;
            assert_eq!(unfinished, r.reason == "ply-cap", "{r:?}");
            assert!(
                if unfinished {
                    r.plies == 40
                } else {
                    r.plies <= 40
                },
                "{r:?}"
            );
        }
        let samples = samples(dir.path());
        assert_eq!(samples.len() as u64, stats.positions);
        let total_plies: u32 = records.iter().map(|r| r.plies).sum();
        assert!(
            !samples.is_empty() && samples.len() < total_plies as usize,
            "playout cap records only full searches"
        );
        let by_id: BTreeMap<u64, &bao::dataio::records::GameRecord> =
            records.iter().map(|r| (r.id.unwrap(), r)).collect();
        for s in &samples {
            let pos = s.position().unwrap();
            assert_eq!(pos.legal_moves().mask(), s.legal);
            assert!(s.full_search);
            let sum: f32 = s.policy.iter().sum();
            assert!((sum - 1.0).abs() < 1e-4);
            // The sample's position is the record's position at that ply.
            let rec = by_id[&s.game_id];
            let (positions, _) = rec.replay().unwrap();
            assert_eq!(positions[s.ply as usize], pos);
            let expect = rec.result.value_for(pos.to_move());
            assert_eq!(s.z, expect);
        }
    }
}

#[test]
fn seeded_runs_are_reproducible() {
    let run = |seed| {
        let dir = tempfile::tempdir().unwrap();
        let mut cfg = config(Variant::Kujifunza);
        cfg.selfplay.seed = seed;
        run_selfplay(&cfg, &mut UniformEvaluator, 4, dir.path(), false).unwrap();
        samples(dir.path())
    };
    let a = run(5);
    assert_eq!(a, run(5));
    assert_ne!(a, run(6));
}

#[test]
fn batched_driver_matches_single_game_search() {
    for algorithm in [bao::search::Algorithm::Puct, bao::search::Algorithm::Gumbel] {
        let dir = tempfile::tempdir().unwrap();
        let mut cfg = config(Variant::Kiswahili);
        cfg.search.algorithm = algorithm;
        cfg.selfplay.games_in_flight = 4;
        cfg.selfplay.max_plies = 2;
        let stats = run_selfplay(&cfg, &mut UniformEvaluator, 6, dir.path(), false).unwrap();
        let records = records_by_id(&stats);
        let first: BTreeMap<u64, Sample> = samples(dir.path())
            .into_iter()
            .filter(|s| s.ply == 0)
            .map(|s| (s.game_id, s))
            .collect();
        assert_eq!(first.len(), 6);
        let start = Position::start(Variant::Kiswahili);
        for (id, s) in &first {
            let mut mcts = Mcts::new(cfg.search.clone(), game_seed(cfg.selfplay.seed, *id));
            mcts.set_noise(true);
            let r = mcts
                .search(&start, cfg.selfplay.sims, &mut UniformEvaluator)
                .unwrap();
            assert_eq!(r.policy, s.policy, "{algorithm:?} game {id}");
            assert_eq!(r.root_value, s.q);
            if algorithm == bao::search::Algorithm::Gumbel {
                // The Gumbel move is the sequential-halving winner: no further randomness.
                let lm = start
                    .legal_moves()
                    .get(r.best_move.unwrap())
                    .copied()
                    .unwrap();
                assert_eq!(records[id].moves[0], lm.notation(start.to_move()));
            }
        }
        if algorithm == bao::search::Algorithm::Puct {
            assert_ne!(
                first[&0].policy, first[&1].policy,
                "games get their own noise"
            );
        } else {
            let firsts: std::collections::BTreeSet<&String> =
                records.values().map(|r| &r.moves[0]).collect();
            assert!(firsts.len() > 1, "games get their own Gumbel samples");
        }
    }
}

/// Every shipped run config serves `bao selfplay --config` as it is (its
/// `[optimizer]`, `[train]`, ... sections are ignored, not refused).
#[test]
fn every_shipped_config_loads_for_selfplay() {
    let mut seen = 0;
    for dir in ["configs", "configs/experiments"] {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.extension().and_then(|e| e.to_str()) != Some("toml") {
                continue;
            }
            bao::command::selfplay::load_config(Some(&path), &[])
                .unwrap_or_else(|e| panic!("{}: {e:#}", path.display()));
            seen += 1;
        }
    }
    assert_eq!(seen, 23, "the 3 user configs and 20 experiment configs");
}

/// An error in `[selfplay]` names the real file and its line, not a line of a
/// re-serialised table.
#[test]
fn selfplay_config_errors_cite_the_file_and_line() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("run.toml");
    let text = "variant = \"kujifunza\"\n\n[optimizer]\nkind = \"adam\"\n\n[selfplay]\nsims = 8\nbogus = 1\n";
    std::fs::write(&path, text).unwrap();
    let err = format!(
        "{:#}",
        bao::command::selfplay::load_config(Some(&path), &[]).unwrap_err()
    );
    assert!(err.contains(&path.display().to_string()), "{err}");
    assert!(err.contains("line 8"), "{err}");
    assert!(err.contains("bogus"), "{err}");
}

/// `--set` overrides still apply on top of a full run config.
#[test]
fn selfplay_config_overrides_apply_to_a_shipped_config() {
    let sets = ["selfplay.sims=7".to_string()];
    let c = bao::command::selfplay::load_config(
        Some(std::path::Path::new("configs/kujifunza-quick.toml")),
        &sets,
    )
    .unwrap();
    assert_eq!(c.selfplay.sims, 7);
    assert_eq!(c.variant(), Variant::Kujifunza);
}

/// Opening diversity by design: without noise or temperature every game is the
/// same; `opening_plies` random plies make them differ, and those plies are never samples.
/// A range draws each game's count: every game's first sample lies inside it, and the games
/// do not all draw the same count.
#[test]
fn random_opening_plies_make_games_differ_and_are_never_samples() {
    let play = |opening_plies: OpeningPlies, games| {
        let dir = tempfile::tempdir().unwrap();
        let mut cfg = config(Variant::Kujifunza);
        cfg.search.dirichlet_fraction = 0.0;
        cfg.selfplay.temperature = vec![(0, 0.0)];
        cfg.selfplay.opening_plies = opening_plies;
        let stats = run_selfplay(&cfg, &mut UniformEvaluator, games, dir.path(), false).unwrap();
        let records: Vec<_> = stats
            .record_files
            .iter()
            .flat_map(|p| read_records(p).unwrap())
            .collect();
        for r in &records {
            r.verify().unwrap();
        }
        (stats, samples(dir.path()), records)
    };
    let (same, _, _) = play(0.into(), 6);
    assert_eq!((same.distinct_games(), same.distinct_openings()), (1, 1));
    let (varied, samples, records) = play(4.into(), 6);
    assert!(
        varied.distinct_openings() > 1,
        "{}",
        varied.distinct_openings()
    );
    assert!(varied.distinct_games() > 1);
    assert!(!samples.is_empty());
    assert!(
        samples.iter().all(|s| s.ply >= 4),
        "an opening ply was recorded"
    );
    assert!(records
        .iter()
        .all(|r| r.moves.len() >= 4 || r.result.winner().is_some()));

    let (_, samples, _) = play(OpeningPlies::range(1, 3).unwrap(), 16);
    let mut first_sample = std::collections::BTreeMap::new();
    for s in &samples {
        let ply = first_sample.entry(s.game_id).or_insert(s.ply);
        *ply = (*ply).min(s.ply);
    }
    let counts: std::collections::BTreeSet<u32> = first_sample.values().copied().collect();
    assert!(
        counts.iter().all(|c| (1..=3).contains(c)),
        "first samples at plies {counts:?}"
    );
    assert!(counts.len() > 1, "every game drew {counts:?}");
}

/// Temperature only for the first plies: from ply k on, the move played is the
/// most visited one (the PUCT policy target is the visit distribution).
#[test]
fn after_the_temperature_plies_the_most_visited_move_is_played() {
    const K: u32 = 3;
    let dir = tempfile::tempdir().unwrap();
    let mut cfg = config(Variant::Kiswahili);
    cfg.selfplay.temperature = vec![(0, 1.0), (K, 0.0)];
    let stats = run_selfplay(&cfg, &mut UniformEvaluator, 4, dir.path(), false).unwrap();
    let records = records_by_id(&stats);
    let mut checked = 0;
    for s in samples(dir.path()).iter().filter(|s| s.ply >= K) {
        let pos = s.position().unwrap();
        let played = &records[&s.game_id].moves[s.ply as usize];
        let lm = pos.parse_move(played).unwrap();
        let most = s.policy.iter().copied().fold(0.0f32, f32::max);
        assert_eq!(
            s.policy[lm.mv.action()],
            most,
            "game {} ply {}: {played} was sampled, not the most visited",
            s.game_id,
            s.ply
        );
        checked += 1;
    }
    assert!(checked > 20, "only {checked} moves after ply {K}");
}

/// Cheap searches played greedily: their temperature is 0 whatever the schedule.
#[test]
fn cheap_searches_can_be_played_greedily() {
    let mut cfg = config(Variant::Kiswahili).selfplay;
    cfg.temperature = vec![(0, 1.0)];
    assert_eq!(cfg.move_temperature(5, false), 1.0);
    cfg.cheap_greedy = true;
    assert_eq!(cfg.move_temperature(5, false), 0.0);
    assert_eq!(cfg.move_temperature(5, true), 1.0);
}

/// Exact value targets: with `solver_depth`, every sample whose position the
/// solver proves within that depth carries the proven value as both its game result and its
/// root value (so any q-mix of the two is exact), the rest keep the game's result, and the
/// run stays reproducible (a depth, not a time limit).
#[test]
fn solver_depth_gives_proven_samples_exact_targets() {
    use bao::search::alphabeta::{AlphaBeta, Proof};
    const DEPTH: u32 = 5;
    let play = |depth| {
        let dir = tempfile::tempdir().unwrap();
        let mut cfg = config(Variant::Kujifunza);
        cfg.selfplay.max_plies = 200;
        cfg.selfplay.solver_depth = depth;
        let stats = run_selfplay(&cfg, &mut UniformEvaluator, 6, dir.path(), false).unwrap();
        (stats, samples(dir.path()))
    };
    let (plain, plain_samples) = play(0);
    let (solved, solved_samples) = play(DEPTH);
    assert_eq!(plain.solver_proven, 0);
    assert_eq!(
        plain_samples.len(),
        solved_samples.len(),
        "same games either way"
    );
    let (mut proven, mut corrected) = (0, 0);
    for (a, b) in plain_samples.iter().zip(&solved_samples) {
        assert_eq!(
            (a.game_id, a.ply, a.position),
            (b.game_id, b.ply, b.position)
        );
        // What the solver is documented to do: a fresh 1 MiB alpha-beta to the depth.
        let r = AlphaBeta::new(1)
            .search(
                &b.position().unwrap(),
                DEPTH,
                &bao::search::Clock::unlimited(),
            )
            .unwrap();
        let exact = match r.proof() {
            Proof::Win => 1.0,
            Proof::Loss => -1.0,
            Proof::Unknown => {
                assert_eq!((b.z, b.q), (a.z, a.q), "unproven samples are untouched");
                continue;
            }
        };
        assert_eq!(
            (b.z, b.q),
            (exact, exact),
            "game {} ply {}",
            b.game_id,
            b.ply
        );
        proven += 1;
        corrected += (a.z != exact) as u64;
    }
    assert!(proven > 20, "only {proven} samples proven");
    assert_eq!(solved.solver_proven, proven);
    assert_eq!(solved.solver_corrected, corrected);
    let (again, again_samples) = play(DEPTH);
    assert_eq!(again.solver_proven, solved.solver_proven);
    assert_eq!(again_samples, solved_samples, "reproducible");
}

/// A game can end before its search needs the network: inside its random opening plies, or
/// with the first searched move when the opening leaves a win at once (the search proves it at
/// expansion). Such a game is still one of the games asked for: counted, its record written,
/// another started in its place. (A replacement game that ended so was once dropped unseen:
/// 256 games asked of `configs/kujifunza-quick.toml` gave 237-244.)
#[test]
fn games_that_end_before_any_evaluation_are_counted_and_recorded() {
    let mut cfg = config(Variant::Kujifunza);
    cfg.selfplay.games_in_flight = 2;
    cfg.selfplay.opening_plies = 2.into();
    cfg.selfplay.sims = 4;
    cfg.selfplay.cheap_sims = 2;
    let dir = tempfile::tempdir().unwrap();
    let games = 200;
    let stats = run_selfplay(&cfg, &mut UniformEvaluator, games, dir.path(), false).unwrap();
    assert_eq!(stats.games, games as u64);
    let records = records_by_id(&stats);
    assert_eq!(
        records.keys().copied().collect::<Vec<_>>(),
        (0..games as u64).collect::<Vec<_>>()
    );
    let early = records.values().filter(|r| r.plies <= 3).count();
    assert!(
        early > 0,
        "no game ended by its first searched move: the case is not exercised"
    );
    for r in records.values() {
        r.verify().unwrap();
    }
}

/// `leaf_ab`: self-play searches read values mixed with a shallow alpha-beta. With a uniform
/// evaluator (value 0 everywhere) the root values of the first samples, whose searches seldom
/// reach a game's end, are nearly all 0 without it and carry the alpha-beta's scores with it; the
/// shards name the mixed evaluator, and a depth out of range is refused by name.
#[test]
fn leaf_ab_gives_self_play_searches_the_alpha_betas_values() {
    let play = |leaf_ab| {
        let dir = tempfile::tempdir().unwrap();
        let mut cfg = config(Variant::Kiswahili);
        cfg.selfplay.leaf_ab = leaf_ab;
        cfg.selfplay.leaf_ab_weight = 0.9;
        run_selfplay(&cfg, &mut UniformEvaluator, 3, dir.path(), false).unwrap();
        let first = read_shard(&list_shards(dir.path()).unwrap()[0]).unwrap();
        (first.header.model, samples(dir.path()))
    };
    let early = |samples: &[Sample]| -> Vec<f32> {
        samples.iter().filter(|s| s.ply < 6).map(|s| s.q).collect()
    };
    let (plain_name, plain) = play(0);
    let (mixed_name, mixed) = play(3);
    assert!(!plain_name.contains("alpha-beta"), "{plain_name}");
    assert!(mixed_name.contains("alpha-beta 3 plies"), "{mixed_name}");
    let (plain_q, mixed_q) = (early(&plain), early(&mixed));
    assert!(plain_q.len() >= 6 && mixed_q.len() >= 6);
    let valued = |q: &[f32]| q.iter().filter(|q| q.abs() > 0.01).count();
    // (A search that reaches a won or lost position gives a few plain ones a value too.)
    assert!(valued(&plain_q) * 4 <= plain_q.len(), "{plain_q:?}");
    assert!(valued(&mixed_q) * 2 > mixed_q.len(), "{mixed_q:?}");

    let mut cfg = config(Variant::Kiswahili);
    cfg.selfplay.leaf_ab = 12;
    let dir = tempfile::tempdir().unwrap();
    let e = run_selfplay(&cfg, &mut UniformEvaluator, 1, dir.path(), false).unwrap_err();
    assert!(format!("{e:#}").contains("selfplay.leaf_ab"), "{e:#}");
}
