//! `bao label --teacher`: the games of a fixed player, labelled with its moves and
//! the games' results. The labels of each game are replayed with the move generator, so a
//! policy target that is not the move played, or a value that is not the game's result for the
//! side to move (R10: a side without a legal move, or whose front row is empty, has lost),
//! cannot pass.

mod common;

use std::collections::{BTreeMap, HashSet};

use bao::dataio::shard::Sample;
use bao::game::{After, Side, Variant, ACTIONS};
use bao::training::label::read_labels;
use bao::training::label::teacher::{label_teacher_games, TeacherConfig};
use bao::training::selfplay::OpeningPlies;
use common::run_bao;

/// `games` games of alpha-beta at depth 2 (fast, and strong enough to finish games).
fn config(variant: Variant, plies: (u32, u32), games: usize, seed: u64) -> TeacherConfig {
    TeacherConfig {
        variant,
        teacher: "alphabeta:depth=2".parse().unwrap(),
        games,
        plies: OpeningPlies::range(plies.0, plies.1).unwrap(),
        ply_cap: 400,
        threads: 2,
        seed,
        exclude_eval_seeds: Vec::new(),
    }
}

/// The one action a label's policy names (it must be one-hot on a legal move).
fn teacher_action(s: &Sample) -> usize {
    let hot: Vec<usize> = (0..ACTIONS).filter(|&a| s.policy[a] > 0.0).collect();
    assert_eq!(hot.len(), 1, "one-hot policy");
    assert_eq!(s.policy[hot[0]], 1.0);
    assert_eq!(s.legal >> hot[0] & 1, 1, "the teacher's move is legal");
    hot[0]
}

#[test]
fn teacher_labels_replay_as_the_games_played_with_their_results() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("labels");
    let config = config(Variant::Kiswahili, (2, 6), 6, 5);
    let stats = label_teacher_games(&config, &dir, false).unwrap();
    assert_eq!(stats.games, 6);
    assert_eq!(stats.south_wins + stats.north_wins + stats.unfinished, 6);
    assert!(stats.unfinished < 6, "alpha-beta finishes games: {stats:?}");
    let labels = read_labels(&dir, Variant::Kiswahili).unwrap();
    assert_eq!(labels.len(), stats.positions);
    let distinct: HashSet<_> = labels.iter().map(|s| s.position).collect();
    assert_eq!(
        distinct.len(),
        labels.len(),
        "no position is labelled twice"
    );

    let mut games: BTreeMap<u64, Vec<&Sample>> = BTreeMap::new();
    for s in &labels {
        games.entry(s.game_id).or_default().push(s);
    }
    assert_eq!(games.len(), 6);
    let mut finished_checked = 0;
    for samples in games.values_mut() {
        samples.sort_by_key(|s| s.ply);
        assert!(samples[0].ply >= 2, "the random opening is not labelled");
        // One result per game: South's view of it is the same at every labelled position.
        let south_view = |s: &Sample| {
            let pos = s.position().unwrap();
            assert!(
                [-1.0, 0.0, 1.0].contains(&s.z) && s.q == s.z,
                "{} {}",
                s.z,
                s.q
            );
            if pos.to_move() == Side::South {
                s.z
            } else {
                -s.z
            }
        };
        let result = south_view(samples[0]);
        for s in samples.iter() {
            assert_eq!(south_view(s), result, "game {} ply {}", s.game_id, s.ply);
        }
        // Each label's move leads to the next label's position (a game, replayed).
        for w in samples.windows(2) {
            if w[1].ply != w[0].ply + 1 {
                continue; // a position met before was not written again
            }
            let pos = w[0].position().unwrap();
            let a = teacher_action(w[0]);
            let lm = *pos
                .legal_moves()
                .iter()
                .find(|lm| lm.mv.action() == a)
                .unwrap();
            match lm.after {
                After::Position(next) => assert_eq!(next.to_bytes(), w[1].position),
                After::Won(_) => panic!("a game went on after a winning move"),
            }
        }
        // The last move of a finished game ended it, and the mover is the labelled winner.
        let last = samples.last().unwrap();
        let pos = last.position().unwrap();
        let a = teacher_action(last);
        let lm = *pos
            .legal_moves()
            .iter()
            .find(|lm| lm.mv.action() == a)
            .unwrap();
        let ended = match lm.after {
            After::Won(o) => Some(o.winner),
            After::Position(next) if next.legal_moves().is_empty() => Some(pos.to_move()),
            After::Position(_) => None,
        };
        if let Some(winner) = ended {
            assert_eq!(winner, pos.to_move());
            assert_eq!(last.z, 1.0, "the winning move's position is labelled won");
            finished_checked += 1;
        }
    }
    assert!(
        finished_checked > 0,
        "some game's last label was its last move"
    );

    // A rerun adds games, never a position already labelled, and records both runs.
    let more = label_teacher_games(
        &TeacherConfig {
            seed: 6,
            ..config.clone()
        },
        &dir,
        false,
    )
    .unwrap();
    let all = read_labels(&dir, Variant::Kiswahili).unwrap();
    assert_eq!(all.len(), labels.len() + more.positions);
    let distinct: HashSet<_> = all.iter().map(|s| s.position).collect();
    assert_eq!(distinct.len(), all.len(), "no position is labelled twice");
    let runs = common::label_runs(&dir);
    assert_eq!(runs.len(), 2);
    assert_eq!(runs[1]["teacher"], "alphabeta:depth=2");
    assert_eq!(runs[1]["seed"], 6);
    assert_eq!(runs[1]["positions"], more.positions);
}

/// `--exclude-eval-seeds`: no excluded match opening is played, and no position of one, nor
/// one move after one, is labelled.
#[test]
fn teacher_games_leave_out_the_openings_of_excluded_eval_seeds() {
    let tmp = tempfile::tempdir().unwrap();
    let config = TeacherConfig {
        exclude_eval_seeds: vec![2],
        ..config(Variant::Kujifunza, (4, 4), 40, 1)
    };
    let stats = label_teacher_games(&config, tmp.path(), false).unwrap();
    assert!(
        stats.excluded > 0,
        "the draws met excluded openings: {stats:?}"
    );
    common::assert_eval_openings_left_out(tmp.path(), Variant::Kujifunza, 2);
}

/// The command line: a bad teacher is named before anything is written, and a good run
/// reports its games.
#[test]
fn bao_label_teacher_names_bad_input_and_reports_its_games() {
    let run = |args: &[&str]| run_bao(&[&["label", "--variant", "kiswahili"][..], args].concat());
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("t");
    let d = dir.to_str().unwrap();
    let (ok, _, err) = run(&["--out", d, "--teacher", "wizard"]);
    assert!(!ok && err.contains("wizard"), "{err}");
    let missing = tmp.path().join("missing.safetensors");
    let spec = format!("net:{}", missing.display());
    let (ok, _, err) = run(&["--out", d, "--teacher", &spec]);
    assert!(
        !ok && err.contains("cannot build the teacher") && err.contains("missing.safetensors"),
        "{err}"
    );
    assert!(
        !dir.exists(),
        "nothing written for a teacher that cannot play"
    );
    let (ok, _, err) = run(&["--out", d, "--teacher", "alphabeta:depth=1", "--games", "0"]);
    assert!(!ok && err.contains("--games must be at least 1"), "{err}");
    let (ok, _, err) = run(&["--out", d, "--games", "3"]);
    assert!(
        !ok && err.contains("--teacher"),
        "--games needs a teacher: {err}"
    );
    let (ok, out, err) = run(&[
        "--out",
        d,
        "--teacher",
        "alphabeta:depth=1",
        "--games",
        "3",
        "--json",
    ]);
    assert!(ok, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).expect("JSON summary");
    assert_eq!(v["games"], 3, "{out}");
    assert!(v["positions"].as_u64().unwrap() > 0, "{out}");
}
