//! The `bao rules` and `bao doctor` commands, run as a user would.

use std::io::Write;
use std::process::{Command, Stdio};

fn bao(args: &[&str], stdin: &str) -> (bool, String, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_bao"))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("bao runs");
    child
        .stdin
        .take()
        .unwrap()
        .write_all(stdin.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into(),
        String::from_utf8_lossy(&out.stderr).into(),
    )
}

#[test]
fn rules_moves_reproduces_the_sample_lines() {
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/vectors/kujifunza-sample.jsonl"
    ))
    .unwrap();
    let lines: Vec<serde_json::Value> = text
        .lines()
        .take(40)
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let input: String = lines.iter().map(|v| format!("{}\n", v["state"])).collect();
    let (ok, out, err) = bao(&["rules", "moves", "--variant", "kujifunza"], &input);
    assert!(ok, "{err}");
    let answers: Vec<serde_json::Value> = out
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(answers.len(), lines.len());
    for (a, want) in answers.iter().zip(&lines) {
        assert_eq!(a["winner"], want["winner"]);
        let (ours, theirs) = (
            a["moves"].as_object().unwrap(),
            want["moves"].as_object().unwrap(),
        );
        assert_eq!(
            ours.keys().collect::<Vec<_>>(),
            theirs.keys().collect::<Vec<_>>()
        );
        for (k, v) in ours {
            if v.get("winner").is_none() {
                assert_eq!(v, &theirs[k], "move {k}");
            } else {
                assert_eq!(v["winner"], theirs[k]["winner"], "move {k}");
            }
        }
    }
}

#[test]
fn rules_moves_names_the_bad_line() {
    let good = bao::game::Position::start(bao::game::Variant::Kujifunza).to_json();
    let (ok, _, err) = bao(
        &["rules", "moves", "--variant", "kujifunza"],
        &format!("{good}\n{{\"variant\":\"kujifunza\"}}\n"),
    );
    assert!(!ok);
    assert!(err.contains("line 2"), "{err}");
    let (ok, _, err) = bao(
        &["rules", "moves", "--variant", "kiswahili"],
        &format!("{good}\n"),
    );
    assert!(!ok && err.contains("--variant"), "{err}");
}

#[test]
fn rules_apply_prints_board_and_json_and_refuses_illegal_moves() {
    let (ok, out, err) = bao(
        &["rules", "apply", "--variant", "kiswahili", "A7L", "a5R"],
        "",
    );
    assert!(ok, "{err}");
    assert!(out.contains("b8  b7") && out.contains("A1  A2"), "{out}");
    let (ok, out, _) = bao(
        &[
            "rules",
            "apply",
            "--variant",
            "kiswahili",
            "--json",
            "A7L",
            "a5R",
        ],
        "",
    );
    assert!(ok);
    let v: serde_json::Value = serde_json::from_str(out.trim()).unwrap();
    assert_eq!(v["N"]["front"], serde_json::json!([0, 0, 0, 0, 7, 2, 2, 1]));
    assert_eq!(v["to_move"], "S");
    let (ok, _, err) = bao(
        &["rules", "apply", "--variant", "kiswahili", "A7L", "A1L"],
        "",
    );
    assert!(
        !ok && err.contains("move 2") && err.contains("A1L"),
        "{err}"
    );
}

#[test]
fn rules_random_prints_statistics() {
    let (ok, out, err) = bao(
        &[
            "rules",
            "random",
            "--variant",
            "kujifunza",
            "--games",
            "50",
            "--seed",
            "3",
        ],
        "",
    );
    assert!(ok, "{err}");
    assert!(
        out.contains("50 random games") && out.contains("South wins"),
        "{out}"
    );
    let (_, again, _) = bao(
        &[
            "rules",
            "random",
            "--variant",
            "kujifunza",
            "--games",
            "50",
            "--seed",
            "3",
        ],
        "",
    );
    assert_eq!(out, again, "seeded runs repeat");
}

#[test]
fn doctor_reports_libtorch_2_13() {
    let (ok, out, err) = bao(&["doctor", "--check"], "");
    assert!(ok, "{err}");
    assert!(out.contains("libtorch        2.13.0"), "{out}");
    assert!(out.contains("libtorch check  ok"), "{out}");
}

/// `bao rules apply --json` after a move that ends the game: the position the winning move was
/// played from is labelled as such (`before`, with the `move`), never as the resulting `state`.
#[test]
fn rules_apply_json_after_a_winning_move_labels_the_position_before_it() {
    use bao::game::{After, Position, Variant};
    // Greedy-ish: play the first capture, else the first move, until a move wins.
    let mut pos = Position::start(Variant::Kujifunza);
    let mut line = Vec::new();
    let (before, last) = 'game: loop {
        let moves = pos.legal_moves();
        for lm in moves.iter() {
            if let After::Won(_) = lm.after {
                line.push(lm.notation(pos.to_move()));
                break 'game (pos, lm.notation(pos.to_move()));
            }
        }
        let lm = moves.iter().next().expect("a move");
        line.push(lm.notation(pos.to_move()));
        pos = match lm.after {
            After::Position(p) => p,
            After::Won(_) => unreachable!(),
        };
        assert!(line.len() < 2000, "no win found");
    };
    let mut args = vec!["rules", "apply", "--variant", "kujifunza", "--json"];
    args.extend(line.iter().map(String::as_str));
    let (ok, out, err) = bao(&args, "");
    assert!(ok, "{err}");
    let v: serde_json::Value = serde_json::from_str(out.trim()).unwrap();
    assert!(v["winner"].is_string(), "{v}");
    assert!(
        v.get("state").is_none(),
        "no `state`: the game has none after the move: {v}"
    );
    assert_eq!(v["move"], last.as_str(), "{v}");
    assert_eq!(
        Position::from_json(&v["before"].to_string()).unwrap(),
        before,
        "{v}"
    );
}
