//! `Position::trace`: a move told lap by lap must reach exactly what the move generator
//! computed, for every legal move of many random games of both variants.

use bao::game::trace::{EndReason, Step};
use bao::game::{After, Position, Side, Variant, TOTAL_SEEDS};
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

#[test]
fn every_trace_reaches_the_generators_result() {
    let mut rng = SmallRng::seed_from_u64(9);
    let mut checked = [0usize; 2];
    let mut seen_steps = std::collections::HashSet::new();
    for variant in Variant::ALL {
        for _game in 0..200 {
            let mut pos = Position::start(variant);
            for _ply in 0..300 {
                let moves = pos.legal_moves();
                if moves.is_empty() {
                    break;
                }
                for lm in &moves {
                    let t = pos.trace(lm.mv).expect("a legal move traces");
                    assert_eq!(t.mover, pos.to_move());
                    let last = t.steps.last().expect("at least one step");
                    for s in &t.steps {
                        assert_eq!(
                            s.board.total_seeds(),
                            TOTAL_SEEDS,
                            "seeds conserved at {:?} of {}",
                            s.step,
                            pos.to_json()
                        );
                        seen_steps.insert(kind(&s.step));
                    }
                    assert_eq!(
                        t.steps
                            .iter()
                            .filter(|s| matches!(s.step, Step::End(_)))
                            .count(),
                        1
                    );
                    assert_eq!(t.sown(), lm.sown as u32, "{}", pos.to_json());
                    assert_eq!(t.captured().min(255), lm.captured as u32);
                    match lm.after {
                        After::Position(next) => {
                            assert!(!matches!(last.step, Step::End(EndReason::Won)));
                            assert_eq!(last.board.carried, 0);
                            for side in Side::BOTH {
                                assert_eq!(
                                    &last.board.holes[side.index()],
                                    next.ring(side),
                                    "{}",
                                    pos.to_json()
                                );
                                assert_eq!(last.board.hand[side.index()], next.hand(side));
                                assert_eq!(
                                    last.board.nyumba[side.index()],
                                    next.nyumba_owned(side)
                                );
                            }
                        }
                        After::Won(o) => {
                            assert_eq!(last.step, Step::End(EndReason::Won));
                            assert_eq!(o.winner, pos.to_move());
                            assert_eq!(last.board.front(pos.to_move().opponent()), [0; 8]);
                        }
                    }
                    checked[variant as usize] += 1;
                }
                let pick = moves.as_slice()[rng.random_range(0..moves.len())];
                match pick.after {
                    After::Position(p) => pos = p,
                    After::Won(_) => break,
                }
            }
        }
    }
    assert!(
        checked.iter().all(|&n| n > 1000),
        "checked {checked:?} moves"
    );
    println!("traced {checked:?} moves (kiswahili, kujifunza); saw {seen_steps:?}");
    // Every kind of step and every way of ending came up (the test saw real moves).
    for k in [
        "HandSeed",
        "Lap",
        "Capture",
        "Safari",
        "End(EmptyHole)",
        "End(Won)",
        "End(NyumbaStop)",
        "End(TakasiaStop)",
    ] {
        assert!(seen_steps.contains(k), "never saw {k}: {seen_steps:?}");
    }
}

fn kind(step: &Step) -> String {
    match step {
        Step::End(r) => format!("End({r:?})"),
        other => format!("{other:?}")
            .split([' ', '{'])
            .next()
            .unwrap_or_default()
            .to_string(),
    }
}

#[test]
fn the_opening_told_step_by_step() {
    let start = Position::start(Variant::Kiswahili);
    let a7l = start.parse_move("A7L").unwrap();
    let t = start.trace(a7l.mv).unwrap();
    let text: Vec<String> = t
        .steps
        .iter()
        .map(|s| s.step.describe(Side::South))
        .collect();
    assert_eq!(
        text,
        [
            "a seed from the hand goes into A7",
            "3 seeds lifted from A7 and sown anticlockwise, A6 to A4",
            "the last seed fell into an empty hole: the move ends",
        ]
    );
    assert_eq!(
        t.steps[0].board.front(Side::South),
        [0, 0, 0, 0, 6, 2, 3, 0]
    );
    assert_eq!(t.steps[0].board.hand, [21, 22]);
    assert_eq!(
        t.steps[1].board.front(Side::South),
        [0, 0, 0, 1, 7, 3, 0, 0]
    );

    let After::Position(p) = a7l.after else {
        panic!("A7L ends the game?")
    };
    let a5r = p.parse_move("a5R").unwrap();
    let t = p.trace(a5r.mv).unwrap();
    let text: Vec<String> = t
        .steps
        .iter()
        .map(|s| s.step.describe(Side::North))
        .collect();
    assert_eq!(
        text,
        [
            "a seed from the hand goes into a5",
            "captures 1 from A4; they enter at the kichwa a8",
            "the 1 captured seed is sown from the kichwa, a8",
            "the last seed fell into an empty hole: the move ends",
        ]
    );
    assert_eq!(t.steps[1].board.carried, 1);
    assert_eq!(
        t.steps[1].board.front(Side::South),
        [0, 0, 0, 0, 7, 3, 0, 0]
    );
    // An illegal move is refused, not traced.
    assert!(p.trace(a7l.mv).is_err());
}
