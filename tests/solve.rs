//! `bao solve` and its proofs: the shipped proof that South wins Bao la Kujifunza from the
//! start checks with the reference generator; a proof with one move changed or one position
//! removed is refused, naming that position; short forced wins and losses found in play are
//! solved by the command line and their proofs pass `bao solve --check`.
//!
//! Rules relied on: a capture that empties the opponent's front row wins mid-move (R5), a
//! player without a legal move loses (R10), infinite moves are not legal (R11), moves are
//! written as R12 says and positions as R13 says.

mod common;

use bao::game::{After, Position, Side, Variant};
use bao::search::alphabeta::{AlphaBeta, Proof};
use bao::search::Clock;
use bao::solve::check::{check, CheckError};
use common::run_bao as bao;
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

const START_PROOF: &str = "docs/solving/kujifunza-start.jsonl";

fn shipped_proof() -> String {
    let path = format!("{}/{START_PROOF}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(&path).expect("the start proof is shipped")
}

fn line_state(text: &str, line: usize) -> Position {
    let v: serde_json::Value =
        serde_json::from_str(text.lines().nth(line - 1).expect("line exists")).expect("JSON");
    Position::from_json(&v["state"].to_string()).expect("R13 state")
}

fn with_line(text: &str, line: usize, replace: Option<String>) -> String {
    let mut out = String::new();
    for (i, l) in text.lines().enumerate() {
        match (&replace, i + 1 == line) {
            (_, false) => out += l,
            (Some(r), true) => out += r,
            (None, true) => continue,
        }
        out.push('\n');
    }
    out
}

/// R5, R10, R11: South, to move first, wins Bao la Kujifunza by force; the proof replays with
/// the seed-by-seed reference generator.
#[test]
fn the_shipped_start_proof_shows_south_wins_kujifunza() {
    let v = check(&shipped_proof()).expect("the shipped proof checks");
    assert_eq!(v.root, Position::start(Variant::Kujifunza));
    assert_eq!(v.winner, Side::South);
    assert!(v.positions > 100, "{} positions", v.positions);
    assert!(
        (3..=64).contains(&v.longest_line),
        "{} plies",
        v.longest_line
    );
}

/// Every first move's value as docs/solving.md's table states it, each with its proof.
#[test]
fn every_first_move_proof_checks_with_the_stated_value() {
    // (move, winner, longest line from the start, positions)
    const TABLE: [(&str, Side, u32, usize); 16] = [
        ("A1R", Side::North, 12, 10),
        ("A2R", Side::North, 6, 3),
        ("A3R", Side::South, 21, 870),
        ("A3L", Side::South, 31, 1485),
        ("A4R", Side::North, 24, 465),
        ("A4L", Side::North, 14, 23),
        ("A5R", Side::North, 14, 23),
        ("A5L", Side::North, 24, 465),
        ("A6R", Side::South, 31, 2038),
        ("A6L", Side::South, 21, 876),
        ("A7L", Side::North, 6, 3),
        ("A8L", Side::North, 12, 10),
        ("B8R", Side::North, 4, 2),
        ("B7R", Side::North, 20, 993),
        ("B2L", Side::North, 20, 1014),
        ("B1L", Side::North, 4, 2),
    ];
    let start = Position::start(Variant::Kujifunza);
    assert_eq!(start.legal_notations().len(), TABLE.len());
    for (mv, winner, longest, positions) in TABLE {
        let path = format!(
            "{}/docs/solving/first-moves/{mv}.jsonl",
            env!("CARGO_MANIFEST_DIR")
        );
        let text = std::fs::read_to_string(&path).expect("every first move's proof is shipped");
        let v = check(&text).unwrap_or_else(|e| panic!("{mv}: {e}"));
        let After::Position(after) = start.parse_move(mv).unwrap().after else {
            panic!("{mv} does not end the game")
        };
        assert_eq!(
            v.root, after,
            "{mv}: the proof is of the position after the move"
        );
        assert_eq!(v.winner, winner, "{mv}");
        assert_eq!(v.longest_line + 1, longest, "{mv}");
        assert_eq!(v.positions, positions, "{mv}");
    }
}

/// R12: a listed move changed to another legal move fails at that line.
#[test]
fn a_changed_move_fails_naming_its_position() {
    let text = shipped_proof();
    let lines: Vec<&str> = text.lines().collect();
    // The root's move and one deep in the file, each changed to the first other legal move.
    for line in [1, lines.len() / 2] {
        let pos = line_state(&text, line);
        let v: serde_json::Value = serde_json::from_str(lines[line - 1]).unwrap();
        let listed = v["move"].as_str().unwrap().to_string();
        let other = pos
            .legal_notations()
            .into_iter()
            .find(|m| *m != listed)
            .expect("another legal move");
        let changed = lines[line - 1].replace(&format!("\"{listed}\""), &format!("\"{other}\""));
        let err = check(&with_line(&text, line, Some(changed))).unwrap_err();
        assert_eq!(err.line(), Some(line), "{err}");
        assert!(err.to_string().contains(&pos.to_json()), "{err}");
    }
    // A move that is not legal there at all.
    let bad = lines[0].replace("\"move\":\"", "\"move\":\"b1");
    let err = check(&with_line(&text, 1, Some(bad))).unwrap_err();
    assert!(
        matches!(err, CheckError::IllegalMove { line: 1, .. }),
        "{err}"
    );
}

/// A listed position removed: the check names it as the position reached but not listed.
#[test]
fn a_removed_position_fails_naming_it() {
    let text = shipped_proof();
    let n = text.lines().count();
    for line in [2, n / 3, n] {
        let removed = line_state(&text, line);
        let err = check(&with_line(&text, line, None)).unwrap_err();
        match &err {
            CheckError::Unlisted { missing, .. } => {
                assert_eq!(Position::from_json(missing).unwrap(), removed, "{err}")
            }
            other => panic!("expected the removed position named, got: {other}"),
        }
    }
}

#[test]
fn duplicated_unreachable_and_malformed_lines_are_refused() {
    let text = shipped_proof();
    let last = text.lines().count();
    let first = text.lines().next().unwrap().to_string();
    let err = check(&format!("{text}{first}\n")).unwrap_err();
    assert!(
        matches!(err, CheckError::Duplicate { first: 1, .. }),
        "{err}"
    );
    // A sound line of South's (a win at once) that the root never reaches.
    let win = (1..)
        .map(|seed| forced_win_in(1, seed))
        .find(|p| p.to_move() == Side::South)
        .unwrap();
    let mv = win
        .legal_moves()
        .iter()
        .find(|lm| matches!(lm.after, After::Won(_)))
        .unwrap()
        .notation(Side::South);
    let extra = serde_json::json!({"state": win.to_state_json(), "move": mv});
    let err = check(&format!("{text}{extra}\n")).unwrap_err();
    assert!(
        matches!(err, CheckError::Unreachable { line, .. } if line == last + 1),
        "{err}"
    );
    let err = check(&format!("{text}not json\n")).unwrap_err();
    assert!(
        matches!(err, CheckError::Malformed { line, .. } if line == last + 1),
        "{err}"
    );
    assert!(matches!(check("").unwrap_err(), CheckError::Empty));
}

/// Positions of random Kujifunza games where the side to move wins in exactly `plies` plies
/// (a shallow search proves it; one ply less does not).
fn forced_win_in(plies: u32, seed: u64) -> Position {
    let mut rng = SmallRng::seed_from_u64(seed);
    let mut ab = AlphaBeta::new(4);
    for _ in 0..500 {
        let mut p = Position::start(Variant::Kujifunza);
        for _ in 0..300 {
            let r = ab.search(&p, plies + 1, &Clock::unlimited());
            let Ok(r) = r else { break };
            if r.proof() == Proof::Win && r.plies_to_end() == Some(plies) {
                return p;
            }
            let moves = p.legal_moves();
            match moves.as_slice()[rng.random_range(0..moves.len())].after {
                After::Position(q) if !q.legal_moves().is_empty() => p = q,
                _ => break,
            }
        }
    }
    panic!("no forced win in {plies} plies met in 500 random games");
}

fn solve_and_check(pos: &Position, expect_value: &str, expect_plies: u64) {
    let dir = tempfile::tempdir().unwrap();
    let proof = dir.path().join("proof.jsonl");
    let json = pos.to_json();
    let (ok, out, err) = bao(&[
        "solve",
        "--position",
        &json,
        "--ms",
        "20000",
        "--tt-mb",
        "16",
        "--proof",
        proof.to_str().unwrap(),
        "--json",
    ]);
    assert!(ok, "{err}");
    let v: serde_json::Value = serde_json::from_str(out.trim()).expect("one JSON object");
    assert_eq!(v["value"], expect_value, "{out}");
    assert_eq!(v["longest_line"], expect_plies, "{out}");
    assert_eq!(v["checked"], true, "{out}");
    let (ok, out, err) = bao(&["solve", "--check", proof.to_str().unwrap(), "--json"]);
    assert!(ok, "{err}");
    let c: serde_json::Value = serde_json::from_str(out.trim()).unwrap();
    let winner = match expect_value {
        "win" => pos.to_move(),
        _ => pos.to_move().opponent(),
    };
    assert_eq!(c["winner"], winner.letter(), "{out}");
    assert_eq!(c["longest_line"], expect_plies, "{out}");
    assert_eq!(c["positions"], v["proof_positions"], "{out}");
}

/// R5, R10: one and three plies from a forced win, `bao solve` finds it and its proof checks.
#[test]
fn solve_proves_wins_one_and_three_plies_away() {
    solve_and_check(&forced_win_in(1, 1), "win", 1);
    solve_and_check(&forced_win_in(3, 2), "win", 3);
}

/// A lost root: every move of the side to move loses; the proof's first line has no move.
#[test]
fn solve_proves_a_loss_two_plies_away() {
    // One ply after a forced win in 3, the opponent is lost in 2 whatever it plays.
    let p = forced_win_in(3, 3);
    let mut ab = AlphaBeta::new(4);
    let best = ab.search(&p, 4, &Clock::unlimited()).unwrap().best;
    let After::Position(lost) = best.after else {
        panic!("a win in 3 does not win at once")
    };
    solve_and_check(&lost, "loss", 2);
}

#[test]
fn bad_input_gets_a_clear_error() {
    let (ok, _, err) = bao(&["solve", "--position", "{\"variant\":\"kujifunza\"}"]);
    assert!(!ok && err.contains("--position"), "{err}");
    let (ok, _, err) = bao(&["solve", "--variant", "kujifunza", "--moves", "A3R zz"]);
    assert!(!ok && err.contains("--moves"), "{err}");
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("p.jsonl");
    std::fs::write(&f, "{\"state\": 1}\n").unwrap();
    let (ok, _, err) = bao(&["solve", "--check", f.to_str().unwrap()]);
    assert!(!ok && err.contains("line 1"), "{err}");
    let (ok, _, err) = bao(&["solve", "--check", "/nonexistent/proof.jsonl"]);
    assert!(!ok && err.contains("cannot read proof"), "{err}");
}

/// Puzzles (`bao solve --make-puzzles`, `bao eval --puzzles`): positions of the shipped proofs
/// where some moves keep the win and some lose it. A player that proves them keeps every win;
/// a random mover does not; a malformed puzzle file is refused naming its line.
#[test]
fn puzzles_from_proofs_separate_a_prover_from_a_random_mover() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("puzzles.jsonl");
    let from: Vec<String> = ["A4L", "A1R", "A5R", "A8L"]
        .iter()
        .map(|m| {
            format!(
                "{}/docs/solving/first-moves/{m}.jsonl",
                env!("CARGO_MANIFEST_DIR")
            )
        })
        .collect();
    let (ok, out, err) = bao(&[
        "solve",
        "--make-puzzles",
        file.to_str().unwrap(),
        "--from",
        &from.join(","),
        "--ms",
        "200",
        "--tt-mb",
        "16",
    ]);
    assert!(ok, "{err}");
    let puzzles = bao::eval::puzzles::read_puzzles(&file).expect("readable puzzles");
    assert!(!puzzles.is_empty(), "{out}");
    for (pos, p) in &puzzles {
        // Every keep move leaves the opponent lost, every lose move gives it a win.
        let mut ab = AlphaBeta::new(16);
        for (moves, expect) in [(&p.keep, Proof::Loss), (&p.lose, Proof::Win)] {
            for m in moves {
                let After::Position(q) = pos.parse_move(m).unwrap().after else {
                    assert_eq!(expect, Proof::Loss, "{m} wins at once");
                    continue;
                };
                let r = ab.search(&q, 30, &Clock::unlimited()).unwrap();
                assert_eq!(r.proof(), expect, "{m} in {}", pos.to_json());
            }
        }
    }
    let score = |spec: &str| {
        let spec: bao::play::players::PlayerSpec = spec.parse().unwrap();
        bao::eval::puzzles::score(&spec, Variant::Kujifunza, &puzzles, 1).unwrap()
    };
    let prover = score("alphabeta:depth=30");
    assert_eq!(prover.kept, prover.puzzles, "{prover:?}");
    assert_eq!(prover.accuracy, 1.0);
    let random = score("random");
    assert!(
        random.kept < random.puzzles || random.puzzles < 3,
        "{random:?}"
    );
    // The command line: a table and puzzles.json.
    let (ok, out, err) = bao(&[
        "eval",
        "--variant",
        "kujifunza",
        "--puzzles",
        file.to_str().unwrap(),
        "--players",
        "alphabeta:depth=30,random",
        "--out",
        dir.path().to_str().unwrap(),
    ]);
    assert!(ok, "{err}");
    assert!(out.contains("100.0%"), "{out}");
    let j: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("puzzles.json")).unwrap())
            .unwrap();
    assert_eq!(j["scores"][0]["kept"], j["scores"][0]["puzzles"]);
    // A puzzle whose move is not legal there.
    let text = std::fs::read_to_string(&file).unwrap();
    let first = text.lines().next().unwrap();
    let keep = &puzzles[0].1.keep[0];
    let bad = first.replace(&format!("\"{keep}\""), "\"b9L\"");
    std::fs::write(&file, format!("{bad}\n")).unwrap();
    let e = bao::eval::puzzles::read_puzzles(&file).unwrap_err();
    assert!(format!("{e:#}").contains("line 1"), "{e:#}");
}

/// Errors name the line of the file, blank lines counted (a reader opens the file there).
#[test]
fn error_lines_are_lines_of_the_file() {
    let text = shipped_proof();
    let lines: Vec<&str> = text.lines().collect();
    let bad = lines[1].replace("\"move\":\"", "\"move\":\"b1");
    let with_blank = format!("{}\n\n{bad}\n{}\n", lines[0], lines[2..].join("\n"));
    let err = check(&with_blank).unwrap_err();
    assert!(
        matches!(err, CheckError::IllegalMove { line: 3, .. }),
        "{err}"
    );
}

/// `net:...:prove=F`: a timed network player that tries an alpha-beta proof with a share of
/// its time first keeps every proven win its raw policy gives away (the shipped puzzles the
/// policy alone fails), and the option refuses shares outside (0, 1).
#[test]
fn network_player_with_a_proof_first_keeps_the_wins_its_policy_misses() {
    let file = format!(
        "{}/docs/solving/kujifunza-puzzles.jsonl",
        env!("CARGO_MANIFEST_DIR")
    );
    let model = format!(
        // The model shipped before the student, whose raw policy misses some puzzles.
        "{}/models/kujifunza-original.safetensors",
        env!("CARGO_MANIFEST_DIR")
    );
    let puzzles = bao::eval::puzzles::read_puzzles(std::path::Path::new(&file)).unwrap();
    let spec = |s: String| -> bao::play::players::PlayerSpec { s.parse().unwrap() };
    let policy = spec(format!("net:{model}:sims=0"));
    let missed: Vec<_> = puzzles
        .iter()
        .filter(|p| {
            let s =
                bao::eval::puzzles::score(&policy, Variant::Kujifunza, std::slice::from_ref(p), 1);
            s.unwrap().kept == 0
        })
        .cloned()
        .collect();
    assert!(
        !missed.is_empty(),
        "the raw policy keeps all {} wins",
        puzzles.len()
    );
    // One simulation: without the proof this is the raw policy again.
    let alone = spec(format!("net:{model}:sims=1:ms=1000"));
    let alone = bao::eval::puzzles::score(&alone, Variant::Kujifunza, &missed, 1).unwrap();
    assert!(alone.kept < alone.puzzles, "{alone:?}");
    let proving = spec(format!("net:{model}:sims=1:ms=1000:prove=0.9"));
    assert!(proving.to_string().ends_with(":prove=0.9"), "{proving}");
    let s = bao::eval::puzzles::score(&proving, Variant::Kujifunza, &missed, 1).unwrap();
    assert_eq!(s.kept, s.puzzles, "{s:?}");

    for bad in ["0", "1", "1.5", "-0.2", "half"] {
        common::assert_spec_refused(&format!("net:{model}:prove={bad}"), "share of the time");
    }
}
