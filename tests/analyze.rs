//! `bao analyze`: a forced win shows on top; bad input is refused clearly.

mod common;

use bao::game::{After, Position};

const MODEL: &str = "models/kujifunza.safetensors";

/// `bao analyze ARGS...`: whether it succeeded, its stdout and its stderr.
fn analyze(args: &[&str]) -> (bool, String, String) {
    common::run_bao(&[&["analyze"], args].concat())
}

/// The moves of `pos` that win at once (or leave the opponent without a move).
fn winning_moves(pos: &Position) -> Vec<String> {
    pos.legal_moves()
        .iter()
        .filter(|lm| match lm.after {
            After::Won(_) => true,
            After::Position(p) => p.legal_moves().is_empty(),
        })
        .map(|lm| lm.notation(pos.to_move()))
        .collect()
}

/// A Kujifunza position from the conformance sample with exactly one winning move among several.
fn one_forced_win() -> (Position, String) {
    let text =
        std::fs::read_to_string("tests/vectors/kujifunza-sample.jsonl").expect("vectors present");
    text.lines()
        .filter_map(|line| {
            let v: serde_json::Value = serde_json::from_str(line).expect("vector line is JSON");
            let pos = Position::from_json(&v["state"].to_string()).expect("vector state valid");
            let wins = winning_moves(&pos);
            (wins.len() == 1 && pos.legal_moves().len() >= 3).then(|| (pos, wins[0].clone()))
        })
        .next()
        .expect("the sample holds a position with exactly one winning move")
}

#[test]
fn the_one_forced_win_is_on_top_and_proven() {
    let (pos, win) = one_forced_win();
    let (ok, stdout, stderr) = analyze(&[
        "--position",
        &pos.to_json(),
        "--model",
        MODEL,
        "--sims",
        "64",
        "--json",
    ]);
    assert!(ok, "{stderr}");
    let v: serde_json::Value = serde_json::from_str(&stdout).expect("one JSON object");
    let a = &v["analysis"];
    assert_eq!(a["moves"][0]["notation"], win.as_str(), "{a}");
    assert_eq!(a["moves"][0]["proven_win"], true);
    assert_eq!(a["proven_win"], true);
    assert_eq!(
        a["moves"].as_array().unwrap().len(),
        pos.legal_moves().len()
    );
    assert_eq!(a["pv"][0], win.as_str());

    // The text form lists it first too, with the verdict.
    let (ok, text, stderr) = analyze(&[
        "--position",
        &pos.to_json(),
        "--model",
        MODEL,
        "--sims",
        "64",
    ]);
    assert!(ok, "{stderr}");
    assert!(text.contains("forced win"), "{text}");
    let first = text
        .lines()
        .skip_while(|l| !l.starts_with("move "))
        .nth(1)
        .expect("a move line");
    assert!(first.starts_with(&win) && first.contains("win"), "{text}");
}

#[test]
fn moves_from_the_start_and_search_overrides() {
    let start = Position::start(bao::game::Variant::Kujifunza);
    let first = start.legal_notations()[0].clone();
    let (ok, stdout, stderr) = analyze(&[
        "--variant",
        "kujifunza",
        "--moves",
        &first,
        "--model",
        MODEL,
        "--sims",
        "50",
        "--set",
        "c_puct=2.0",
        "--json",
    ]);
    assert!(ok, "{stderr}");
    let v: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    let After::Position(after) = start.parse_move(&first).unwrap().after else {
        panic!("the first move cannot win")
    };
    assert_eq!(
        v["state"],
        serde_json::from_str::<serde_json::Value>(&after.to_json()).unwrap()
    );
    let visits: u64 = v["analysis"]["moves"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["visits"].as_u64().unwrap())
        .sum();
    assert_eq!(visits, v["analysis"]["simulations"].as_u64().unwrap());
    assert_eq!(v["analysis"]["simulations"], 50);
}

#[test]
fn bad_input_is_named() {
    let cases: [(&[&str], &str); 5] = [
        (
            &[
                "--position",
                "{\"variant\":\"kujifunza\"}",
                "--model",
                MODEL,
            ],
            "--position",
        ),
        (
            &["--variant", "kujifunza", "--moves", "Z9L", "--model", MODEL],
            "move 1 `Z9L`",
        ),
        (&["--variant", "kiswahili", "--model", MODEL], "kujifunza"),
        (
            &[
                "--variant",
                "kujifunza",
                "--model",
                "no/such/model.safetensors",
            ],
            "no/such/model.safetensors",
        ),
        (
            &[
                "--variant",
                "kujifunza",
                "--model",
                MODEL,
                "--set",
                "c_pucd=2",
            ],
            "c_pucd",
        ),
    ];
    for (args, needle) in cases {
        let (ok, _, stderr) = analyze(args);
        let err = stderr;
        assert!(!ok, "{args:?} should fail");
        assert!(
            err.contains(needle),
            "{args:?}: error should name `{needle}`:\n{err}"
        );
    }
}

/// `--set` values are validated as a config's `[search]` is, not just parsed.
#[test]
fn set_overrides_are_validated_like_configs() {
    for (set, needle) in [
        ("c_puct=nan", "c_puct"),
        ("c_puct=-1", "c_puct"),
        ("fpu_reduction=nan", "fpu_reduction"),
        ("leaves_per_step=0", "leaves_per_step"),
        ("search.c_puct=inf", "c_puct"),
    ] {
        let (ok, _, stderr) = analyze(&[
            "--variant",
            "kujifunza",
            "--model",
            MODEL,
            "--sims",
            "8",
            "--set",
            set,
        ]);
        let err = stderr;
        assert!(!ok, "--set {set} should fail");
        assert!(
            err.contains(needle),
            "--set {set}: error should name `{needle}`:\n{err}"
        );
    }
    // The `search.` prefix of `bao selfplay --set` works here too.
    let (ok, _, stderr) = analyze(&[
        "--variant",
        "kujifunza",
        "--model",
        MODEL,
        "--sims",
        "8",
        "--set",
        "search.c_puct=2.5",
    ]);
    assert!(ok, "{stderr}");
}
