//! Search-parameter experiments end to end: `bao eval --sweep` (Elo per value from opening
//! pairs, per colour, and its files), `bao tune` (bad input refused before any game, an SPSA
//! run that stops, resumes and gates), and pentanomial counts in every tournament.

mod common;

use bao::eval::tune::{self, parse_params, TuneConfig};
use bao::game::Variant;
use common::run_bao;

const MODEL: &str = "models/kujifunza.safetensors";

#[test]
fn a_sweep_reports_elo_per_value_from_opening_pairs() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("sweep");
    let player = format!("net:{MODEL}:sims=8");
    let (ok, stdout, stderr) = run_bao(&[
        "eval",
        "--variant",
        "kujifunza",
        "--games",
        "4",
        "--players",
        &format!("{player},random"),
        "--sweep",
        "c_puct=1,2.5",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(ok, "{stderr}");
    assert!(stdout.contains("pairs 0-0.5-1-1.5-2"), "{stdout}");
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("sweep.json")).unwrap()).unwrap();
    let points = json["points"].as_array().unwrap();
    assert_eq!(points.len(), 2);
    for (p, value) in points.iter().zip(["1", "2.5"]) {
        assert_eq!(p["value"], value);
        assert!(p["player"]
            .as_str()
            .unwrap()
            .ends_with(&format!("c_puct={value}")));
        let counts: Vec<u64> = p["pentanomial"]["counts"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c.as_u64().unwrap())
            .collect();
        assert_eq!(counts.iter().sum::<u64>(), 2, "two opening pairs: {p}");
        let colours = p["as_south"][0].as_u64().unwrap()
            + p["as_south"][1].as_u64().unwrap()
            + p["as_north"][0].as_u64().unwrap()
            + p["as_north"][1].as_u64().unwrap();
        assert_eq!(colours, 4, "every game counted once by colour: {p}");
    }
    let csv = std::fs::read_to_string(out.join("sweep.csv")).unwrap();
    assert_eq!(csv.lines().count(), 3, "{csv}");
    assert!(std::fs::read_to_string(out.join("sweep.svg"))
        .unwrap()
        .contains("<svg"));
    // The tournament's own results carry the pair figures too.
    let results: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("results.json")).unwrap()).unwrap();
    assert_eq!(results["pairs"].as_array().unwrap().len(), 2);
    assert!(results["pairs"][0]["paired"]["elo_ci95"].is_array());

    // Refused before any game, naming what is wrong.
    for (players, sweep, says) in [
        (format!("{player},random"), "c_pucct=1,2", "c_pucct"),
        (format!("{player},random"), "c_puct=1,-2", "c_puct"),
        (format!("{player},random"), "c_puct=1,1", "repeated"),
        (
            "random,greedy".to_string(),
            "c_puct=1,2",
            "no parameter `c_puct`",
        ),
        (
            format!("{player},random,greedy"),
            "c_puct=1,2",
            "one reference",
        ),
    ] {
        let bad = dir.path().join("bad");
        let (ok, _, stderr) = run_bao(&[
            "eval",
            "--variant",
            "kujifunza",
            "--games",
            "2",
            "--players",
            &players,
            "--sweep",
            sweep,
            "--out",
            bad.to_str().unwrap(),
        ]);
        assert!(!ok && stderr.contains(says), "--sweep {sweep}: {stderr}");
        assert!(!bad.exists(), "--sweep {sweep} wrote results");
    }
}

#[test]
fn tune_refuses_bad_parameters_before_any_game() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("tune");
    for (player, params, says) in [
        (
            format!("net:{MODEL}"),
            "c_pucct:1..2",
            "no search parameter `c_pucct`",
        ),
        (format!("net:{MODEL}"), "c_puct:2..1", "empty or inverted"),
        (format!("net:{MODEL}"), "c_puct:1..1", "empty or inverted"),
        (
            format!("net:{MODEL}"),
            "algorithm:0..1",
            "not a numeric parameter",
        ),
        (format!("net:{MODEL}"), "c_puct:-1..2", "c_puct"),
        ("alphabeta".to_string(), "c_puct:1..2", "network player"),
    ] {
        let (ok, _, stderr) = run_bao(&[
            "tune",
            "--variant",
            "kujifunza",
            "--player",
            &player,
            "--params",
            params,
            "--pairs",
            "2",
            "--out",
            out.to_str().unwrap(),
        ]);
        assert!(!ok && stderr.contains(says), "{player} {params}: {stderr}");
        assert!(!out.exists(), "{params}: wrote {}", out.display());
    }
}

#[test]
fn tune_stops_resumes_keeps_bounds_and_gates() {
    let dir = tempfile::tempdir().unwrap();
    let player = format!("net:{MODEL}").parse().unwrap();
    let params = parse_params("c_puct:0.5..4,leaves_per_step:1..16").unwrap();
    let config = TuneConfig::new(Variant::Kujifunza, &player, &params, 2, 3, 7, 0.2, 2.0).unwrap();
    assert!(config.params[1].integer && !config.params[0].integer);
    // It starts where the player plays: the checkpoint's c_puct, and the leaves a network
    // player batches (its checkpoint records self-play's single leaf).
    assert_eq!(config.start, [1.25, 8.0]);
    let out = dir.path().join("tune");
    let first = tune::run(&config, &out, Some(2), false).unwrap();
    assert!(!first.finished);
    assert_eq!(first.iterations.len(), 2);
    // A kill after the log line but before the state: the line is replayed, not doubled.
    let log = out.join("iterations.jsonl");
    let mut text = std::fs::read_to_string(&log).unwrap();
    let stray = text.lines().last().unwrap().to_string();
    text.push_str(&stray);
    text.push('\n');
    std::fs::write(&log, text).unwrap();
    let done = tune::run(&config, &out, None, false).unwrap();
    assert!(done.finished);
    assert_eq!(done.iterations.len(), 3);
    assert_eq!(done.iterations[..2], first.iterations[..]);
    assert_eq!(std::fs::read_to_string(&log).unwrap().lines().count(), 3);
    for it in &done.iterations {
        assert!((-2..=2).contains(&it.result));
        for v in it.plus.iter().chain(&it.minus).chain(&it.theta) {
            assert!(v.is_finite());
        }
        assert!((0.5..=4.0).contains(&it.theta[0]) && (0.5..=4.0).contains(&it.plus[0]));
        for v in [it.plus[1], it.minus[1], it.theta[1]] {
            assert!((1.0..=16.0).contains(&v) && v.fract() == 0.0, "{v}");
        }
    }
    for f in [
        "tune.json",
        "trajectory.csv",
        "trajectory-c_puct.svg",
        "trajectory-leaves_per_step.svg",
    ] {
        assert!(out.join(f).exists(), "{f}");
    }
    // Other settings in the same folder are refused.
    let other = TuneConfig::new(Variant::Kujifunza, &player, &params, 2, 4, 7, 0.2, 2.0).unwrap();
    let err = format!("{:#}", tune::run(&other, &out, None, false).unwrap_err());
    assert!(err.contains("other settings"), "{err}");
    // The gate plays openings the tuning never played, and says how to play it again.
    let sprt = bao::eval::sprt::Sprt::new(0.0, 20.0).unwrap();
    let gate = tune::gate(&config, &done.tuned, sprt, 2, &out, false).unwrap();
    assert!(
        gate.verify.contains(&format!("--seed {}", gate.seed)),
        "{}",
        gate.verify
    );
    assert!(gate.result.games.len() <= 4);
    let played: Vec<String> = std::fs::read_to_string(out.join(tune::PLAYED_OPENINGS_FILE))
        .unwrap()
        .lines()
        .map(str::to_string)
        .collect();
    assert_eq!(played.len(), 3, "one opening per iteration");
    for g in &gate.result.games {
        assert!(
            !played.contains(&g.opening_moves.join(" ")),
            "the gate replayed a tuning opening: {:?}",
            g.opening_moves
        );
    }
    assert!(gate.verify.contains("--avoid-openings"), "{}", gate.verify);
}
