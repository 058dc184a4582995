//! The conformance sample of `docs/RULES.md` (tests/vectors, from an independent implementation):
//! every legal move of every position, with its result, must be reproduced exactly.
//! Covers R3..R11 as the sample's tags list them (kichwa choice, tax, safari, takasia, 16+
//! starts, lone kichwa, mid-move wins, no-move losses, infinite moves).

use std::collections::BTreeSet;

use bao::game::{After, Position, Side};
use serde_json::Value;

fn side(v: &Value) -> Side {
    Side::from_letter(v.as_str().expect("side letter")).expect("S or N")
}

fn check_file(name: &str) -> usize {
    let path = format!("{}/tests/vectors/{name}", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&path).expect("vector file");
    let mut failures = Vec::new();
    let mut count = 0;
    for (line_no, line) in text.lines().enumerate() {
        let entry: Value = serde_json::from_str(line).expect("vector line is JSON");
        let state = entry["state"].to_string();
        let pos =
            Position::from_json(&state).unwrap_or_else(|e| panic!("line {}: {e}", line_no + 1));
        assert_eq!(
            Position::from_json(&pos.to_json()).unwrap(),
            pos,
            "R13 round trip"
        );
        let moves = pos.legal_moves();
        let mine: BTreeSet<String> = moves.iter().map(|m| m.notation(pos.to_move())).collect();
        let expected = entry["moves"].as_object().expect("moves object");
        let theirs: BTreeSet<String> = expected.keys().cloned().collect();
        let tags = &entry["tags"];
        if mine != theirs {
            failures.push(format!(
                "line {} {tags}: moves differ\n  state {state}\n  ours   {mine:?}\n  theirs {theirs:?}",
                line_no + 1
            ));
            continue;
        }
        match entry["winner"].as_str() {
            Some(w) => assert_eq!(
                pos.outcome().map(|o| o.winner.letter()),
                Some(w),
                "line {}",
                line_no + 1
            ),
            None => assert!(pos.outcome().is_none(), "line {}", line_no + 1),
        }
        for lm in moves.iter() {
            let text = lm.notation(pos.to_move());
            let want = &expected[&text];
            let ok = match (lm.after, want.get("winner")) {
                (After::Won(o), Some(w)) => o.winner == side(w) && want["reason"] == "front-empty",
                (After::Position(next), Some(w)) => {
                    want["reason"] == "no-move"
                        && next.outcome().map(|o| o.winner) == Some(side(w))
                        && want
                            .get("state")
                            .is_none_or(|s| Position::from_json(&s.to_string()).ok() == Some(next))
                }
                (After::Position(next), None) => {
                    Position::from_json(&want.to_string()).ok() == Some(next)
                }
                (After::Won(_), None) => false,
            };
            if !ok {
                let got = match lm.after {
                    After::Won(o) => format!("won by {:?}", o),
                    After::Position(p) => p.to_json(),
                };
                failures.push(format!(
                    "line {} {tags}: move {text} differs\n  state  {state}\n  ours   {got}\n  theirs {want}",
                    line_no + 1
                ));
            }
        }
        count += 1;
    }
    if !failures.is_empty() {
        panic!(
            "{} of {count} positions fail:\n{}",
            failures.len(),
            failures[..failures.len().min(8)].join("\n")
        );
    }
    count
}

#[test]
fn kujifunza_sample_is_reproduced() {
    assert!(check_file("kujifunza-sample.jsonl") >= 200);
}

#[test]
fn kiswahili_sample_is_reproduced() {
    assert!(check_file("kiswahili-sample.jsonl") >= 200);
}
