//! `bao label`: solver-labelled training positions. Every label is checked by a
//! fresh solve whose strategy the reference move generator confirms (R10: a side without a
//! legal move, or whose front row is empty, has lost), so a wrong target cannot pass.

mod common;

use std::collections::HashSet;
use std::time::Duration;

use bao::game::{After, Variant, ACTIONS};
use bao::solve::check::check;
use bao::solve::{Solver, Value};
use bao::training::label::{label_positions, read_labels, LabelConfig};
use bao::training::selfplay::OpeningPlies;
use common::run_bao;

/// Proves `pos` with a fresh solver and returns the side the checked strategy makes win.
fn checked_winner(pos: &bao::game::Position) -> bao::game::Side {
    let sol = Solver::new(Duration::from_secs(20), 16).solve(pos);
    let strategy = sol
        .strategy
        .unwrap_or_else(|| panic!("not proven again: {}", pos.to_json()));
    check(&strategy.to_jsonl())
        .expect("the strategy checks")
        .winner
}

/// A Kujifunza label run of `positions` after `plies` random plies, `ms` a position.
fn config(plies: (u32, u32), positions: usize, ms: u64, seed: u64) -> LabelConfig {
    LabelConfig {
        variant: Variant::Kujifunza,
        plies: OpeningPlies::range(plies.0, plies.1).unwrap(),
        positions,
        budget: Duration::from_millis(ms),
        tt_mb: 8,
        threads: 2,
        seed,
        exclude_eval_seeds: Vec::new(),
    }
}

#[test]
fn labels_hold_checked_values_and_winning_moves_and_no_position_twice() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("labels");
    let config = LabelConfig {
        exclude_eval_seeds: vec![1],
        ..config((6, 10), 24, 500, 3)
    };
    let stats = label_positions(&config, &dir, false).unwrap();
    assert_eq!(stats.positions, 24);
    assert_eq!(stats.won + stats.lost + stats.unknown, 24);
    let labels = read_labels(&dir, Variant::Kujifunza).unwrap();
    assert_eq!(
        labels.len(),
        stats.won + stats.lost,
        "unproven positions are dropped"
    );
    assert!(stats.won > 0 && stats.lost > 0, "{stats:?}");
    for s in &labels {
        let pos = s.position().unwrap();
        assert!((6..=10).contains(&s.ply), "ply {}", s.ply);
        assert_eq!(s.q, s.z, "the search value is the proven value");
        assert_eq!(s.legal, pos.legal_moves().mask());
        let me = pos.to_move();
        if s.z == 1.0 {
            // A win: the policy target is one move, and after it the opponent is lost.
            let targets: Vec<usize> = (0..ACTIONS).filter(|&a| s.policy[a] > 0.0).collect();
            assert_eq!(targets.len(), 1, "{:?}", &s.policy[..]);
            assert_eq!(s.policy[targets[0]], 1.0);
            let lm = pos.legal_moves();
            let lm = lm.by_action(targets[0]).expect("the target move is legal");
            if let After::Position(next) = lm.after {
                assert_eq!(checked_winner(&next), me, "{}", pos.to_json());
            }
        } else {
            // A loss: no policy target (every move loses), and the opponent's win checks.
            assert_eq!(s.z, -1.0);
            assert!(s.policy.iter().all(|&p| p == 0.0));
            assert_eq!(checked_winner(&pos), me.opponent(), "{}", pos.to_json());
        }
    }
    // The same seed again draws the same positions first: the labelled ones are skipped (the
    // unproven ones are not kept, so they are tried again, perhaps with more time).
    let more = label_positions(
        &LabelConfig {
            positions: 6,
            ..config.clone()
        },
        &dir,
        false,
    )
    .unwrap();
    assert_eq!(more.repeats, stats.repeats + labels.len());
    assert_eq!(more.positions, 6);
    let all = read_labels(&dir, Variant::Kujifunza).unwrap();
    assert_eq!(all.len(), labels.len() + more.won + more.lost);
    let distinct: HashSet<_> = all.iter().map(|s| s.position).collect();
    assert_eq!(distinct.len(), all.len(), "no position is labelled twice");
    // Each run left its settings and counts beside the labels.
    let runs = common::label_runs(&dir);
    assert_eq!(runs.len(), 2);
    assert_eq!(runs[0]["plies"], serde_json::json!([6, 10]));
    assert_eq!(runs[0]["ms"], 500);
    assert_eq!(runs[0]["exclude_eval_seeds"], serde_json::json!([1]));
    assert_eq!(runs[0]["won"], stats.won);
    assert_eq!(runs[1]["positions"], 6);
    // Labels of one variant are refused as another's.
    let err = format!("{:#}", read_labels(&dir, Variant::Kiswahili).unwrap_err());
    assert!(
        err.contains("kujifunza") && err.contains("not kiswahili"),
        "{err}"
    );
}

/// The solver's value of a labelled position agrees with `solve_value`, the call the rest of
/// the project uses: one search, two entry points.
#[test]
fn solve_with_move_agrees_with_solve_value() {
    let pos = bao::game::Position::start(Variant::Kujifunza);
    // The solver stops when it has a proof (a few seconds here); the generous limit only keeps
    // a loaded machine from turning a slow proof into "unknown".
    let limit = Duration::from_secs(300);
    let mut solver = Solver::new(limit, 16);
    let (value, mv) = solver.solve_with_move(&pos);
    assert_eq!(
        value,
        Value::Win,
        "the start is a first-player win (docs/solving.md)"
    );
    assert_eq!(Solver::new(limit, 16).solve_value(&pos), value);
    let mv = mv.expect("a win comes with its move");
    let After::Position(next) = mv.after else {
        panic!("no first move wins at once")
    };
    assert_eq!(checked_winner(&next), pos.to_move());
}

/// `--exclude-eval-seeds`: no label is a position of an excluded match's openings, or one
/// move after one, so that match tests what the network learned, not what it was told.
#[test]
fn labels_leave_out_the_openings_of_excluded_eval_seeds() {
    let tmp = tempfile::tempdir().unwrap();
    let config = LabelConfig {
        exclude_eval_seeds: vec![2],
        ..config((4, 5), 60, 20, 1)
    };
    let stats = label_positions(&config, tmp.path(), false).unwrap();
    assert!(
        stats.excluded > 0,
        "the draws met the excluded openings: {stats:?}"
    );
    common::assert_eval_openings_left_out(tmp.path(), Variant::Kujifunza, 2);
}

/// The command line: a bad ply range is named, labels of another variant in the directory
/// are refused (nothing is written into it), and a good run prints what it did.
#[test]
fn bao_label_names_bad_input_and_reports_its_labels() {
    let run = |args: &[&str]| run_bao(&[&["label"][..], args].concat());
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("l");
    let d = dir.to_str().unwrap();
    let (ok, _, err) = run(&["--variant", "kujifunza", "--out", d, "--plies", "8-3"]);
    assert!(
        !ok && err.contains("--plies \"8-3\": the range must not run backwards"),
        "{err}"
    );
    let (ok, _, err) = run(&["--variant", "kujifunza", "--out", d, "--plies", "x"]);
    assert!(!ok && err.contains("\"x\" is not a ply count"), "{err}");
    let common = [
        "--out",
        d,
        "--plies",
        "6-8",
        "--positions",
        "4",
        "--ms",
        "200",
    ];
    let (ok, out, err) = run(&[&["--variant", "kujifunza"][..], &common, &["--json"]].concat());
    assert!(ok, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).expect("JSON summary");
    assert_eq!(v["positions"], 4, "{out}");
    let shards = std::fs::read_dir(&dir).unwrap().count();
    let (ok, _, err) = run(&[&["--variant", "kiswahili"][..], &common].concat());
    assert!(!ok && err.contains("not kiswahili"), "{err}");
    assert_eq!(
        std::fs::read_dir(&dir).unwrap().count(),
        shards,
        "nothing written"
    );
}

/// `bao label --score`: an evaluator that answers with the labels themselves scores every
/// value and every winning move; one that knows nothing (value 0, uniform policy) gets only
/// the losses' sign "right" (0 is not above 0).
#[test]
fn scoring_counts_values_and_winning_moves_the_network_gets_right() {
    use bao::dataio::shard::Sample;
    use bao::game::Position;
    use bao::search::{Evaluator, UniformEvaluator};
    use bao::training::label::score_labels;
    struct Oracle(Vec<Sample>);
    impl Evaluator for Oracle {
        fn evaluate(
            &mut self,
            positions: &[Position],
            _masks: &[u64],
            policy: &mut [f32],
            values: &mut [f32],
        ) -> anyhow::Result<()> {
            for (i, pos) in positions.iter().enumerate() {
                let s = self
                    .0
                    .iter()
                    .find(|s| s.position == pos.to_bytes())
                    .unwrap();
                values[i] = s.z;
                policy[i * ACTIONS..(i + 1) * ACTIONS].copy_from_slice(&s.policy);
            }
            Ok(())
        }
        fn name(&self) -> String {
            "oracle".into()
        }
    }
    let tmp = tempfile::tempdir().unwrap();
    let config = config((7, 9), 30, 100, 5);
    let stats = label_positions(&config, tmp.path(), false).unwrap();
    let labels = read_labels(tmp.path(), Variant::Kujifunza).unwrap();
    let total = |rows: &[bao::training::label::LabelScore]| {
        rows.iter().fold([0; 4], |t, r| {
            [
                t[0] + r.labels,
                t[1] + r.value_right,
                t[2] + r.with_move,
                t[3] + r.move_right,
            ]
        })
    };
    let sq_error = |rows: &[bao::training::label::LabelScore]| {
        rows.iter().map(|r| r.value_sq_error).sum::<f64>()
    };
    let oracle_rows = score_labels(&labels, &mut Oracle(labels.clone())).unwrap();
    assert_eq!(
        total(&oracle_rows),
        [labels.len(), labels.len(), stats.won, stats.won]
    );
    assert_eq!(
        sq_error(&oracle_rows),
        0.0,
        "the oracle's values are the labels'"
    );
    let blind_rows = score_labels(&labels, &mut UniformEvaluator).unwrap();
    assert_eq!(
        total(&blind_rows)[..3],
        [labels.len(), stats.lost, stats.won]
    );
    // Value 0 against proven results of +-1: an error of 1 a label.
    assert!((sq_error(&blind_rows) - labels.len() as f64).abs() < 1e-6);
}
