//! Rules tests, one or more per section of docs/RULES.md (cited as R1..R13).

use bao::game::{facing, After, Dir, Hole, MoveKind, Position, Side, Variant, WinReason};
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

/// Builds a position from rows as docs/RULES.md writes them (hole 1 first, from each owner's left).
#[allow(clippy::too_many_arguments)]
fn state(
    variant: &str,
    to_move: &str,
    s: ([u8; 8], [u8; 8], u8, bool),
    n: ([u8; 8], [u8; 8], u8, bool),
    takasia: Option<&str>,
) -> Position {
    let side = |x: ([u8; 8], [u8; 8], u8, bool)| {
        format!(
            r#"{{"front":{:?},"back":{:?},"hand":{},"nyumba":{}}}"#,
            x.0, x.1, x.2, x.3
        )
    };
    let tk = takasia.map_or("null".to_string(), |t| format!("\"{t}\""));
    let json = format!(
        r#"{{"variant":"{variant}","to_move":"{to_move}","S":{},"N":{},"takasia":{tk}}}"#,
        side(s),
        side(n)
    );
    Position::from_json(&json).unwrap_or_else(|e| panic!("{e}: {json}"))
}

fn moves(p: &Position) -> Vec<String> {
    let mut v = p.legal_notations();
    v.sort();
    v
}

fn after(p: &Position, m: &str) -> After {
    p.parse_move(m).unwrap_or_else(|e| panic!("{m}: {e}")).after
}

fn next(p: &Position, m: &str) -> Position {
    match after(p, m) {
        After::Position(q) => q,
        other => panic!("{m} ended the game: {other:?}"),
    }
}

#[test]
fn r1_hole_names_rings_and_facing() {
    assert_eq!(Hole::front(1).unwrap().name(Side::South), "A1");
    assert_eq!(Hole::back(3).unwrap().name(Side::North), "b3");
    // An faces a(9-n): A1 faces a8, A5 faces a4.
    assert_eq!(
        facing(Hole::front(1).unwrap().ring()),
        Hole::front(8).unwrap().ring()
    );
    assert_eq!(
        facing(Hole::front(5).unwrap().ring()),
        Hole::front(4).unwrap().ring()
    );
    // Clockwise: A8 is followed by B8, and B1 by A1.
    assert_eq!(
        Hole::front(8).unwrap().ring() + 1,
        Hole::back(8).unwrap().ring()
    );
    assert_eq!(
        (Hole::back(1).unwrap().ring() + 1) % 16,
        Hole::front(1).unwrap().ring()
    );
}

#[test]
fn r2_start_positions() {
    let k = Position::start(Variant::Kujifunza);
    assert_eq!(k.front(Side::South), [2; 8]);
    assert_eq!(k.back(Side::North), [2; 8]);
    assert_eq!(
        (k.hand(Side::South), k.nyumba_owned(Side::North)),
        (0, false)
    );
    let s = Position::start(Variant::Kiswahili);
    for side in Side::BOTH {
        assert_eq!(s.front(side), [0, 0, 0, 0, 6, 2, 2, 0]);
        assert_eq!(s.back(side), [0; 8]);
        assert_eq!(s.hand(side), 22);
        assert!(s.nyumba_owned(side));
    }
    assert_eq!(s.to_move(), Side::South);
    assert_eq!((k.total_seeds(), s.total_seeds()), (64, 64));
}

#[test]
fn r3_r6_sixteen_seeds_go_round_into_their_own_hole_and_lone_kichwa() {
    // A1 holds 16 and is the only occupied front hole: no capture (R6: 16+ never captures),
    // it may not sow toward the back row (lone kichwa), and its 16th seed falls into A1
    // itself, empty since the lift, so the move ends (R3).
    let p = state(
        "kujifunza",
        "S",
        ([16, 0, 0, 0, 0, 0, 0, 0], [0; 8], 0, false),
        ([6; 8], [0; 8], 0, false),
        None,
    );
    assert_eq!(moves(&p), ["A1R"]);
    let q = next(&p, "A1R");
    assert_eq!(q.front(Side::South), [1; 8]);
    assert_eq!(q.back(Side::South), [1; 8]);
    assert_eq!(q.to_move(), Side::North);
}

#[test]
fn r4_r6_capturing_is_compulsory() {
    // From the kujifunza start every first lap that ends in the front row captures.
    let p = Position::start(Variant::Kujifunza);
    let list = p.legal_moves();
    assert_eq!(list.len(), 16);
    assert!(list.iter().all(|m| m.kind == MoveKind::MtajiCapture));
}

#[test]
fn r6_fifteen_seeds_capture_sixteen_do_not() {
    // A1 with 15 sown anticlockwise ends in A2 (occupied), facing a7 (occupied): a capture.
    let p15 = state(
        "kujifunza",
        "S",
        ([15, 1, 0, 0, 0, 0, 0, 0], [0; 8], 0, false),
        ([6; 8], [0; 8], 0, false),
        None,
    );
    assert_eq!(moves(&p15), ["A1L"]);
    assert_eq!(p15.parse_move("A1L").unwrap().kind, MoveKind::MtajiCapture);
    // With 16 the same start is only a takasa, in either direction.
    let p16 = state(
        "kujifunza",
        "S",
        ([16, 1, 0, 0, 0, 0, 0, 0], [0; 8], 0, false),
        ([6, 6, 6, 6, 6, 6, 5, 6], [0; 8], 0, false),
        None,
    );
    assert_eq!(moves(&p16), ["A1L", "A1R"]);
    assert!(p16
        .legal_moves()
        .iter()
        .all(|m| m.kind == MoveKind::MtajiTakasa));
}

#[test]
fn r6_takasa_from_back_row_when_front_holds_no_pair() {
    let p = state(
        "kujifunza",
        "S",
        ([1, 0, 0, 0, 0, 0, 0, 1], [0, 3, 0, 0, 0, 0, 0, 0], 0, false),
        ([7; 8], [0, 0, 0, 0, 0, 0, 0, 3], 0, false),
        None,
    );
    // No capture (B2's 3 seeds end in B5 or A1? B2 anticlockwise: B3.. no: R on a back hole
    // is anticlockwise, toward B3..B5); the only hole with 2+ is in the back row.
    let m = moves(&p);
    assert!(m.iter().all(|x| x.starts_with("B2")), "{m:?}");
}

/// A3 sows into A4, A5; A5 was occupied and faces a4, North's only occupied front hole: A3R
/// captures its 3 seeds and wins mid-move (R5, R10).
fn front_emptying_capture() -> Position {
    state(
        "kujifunza",
        "S",
        ([0, 0, 2, 0, 1, 0, 0, 0], [4; 8], 0, false),
        ([0, 0, 0, 3, 0, 0, 0, 0], [4, 4, 4, 4, 4, 4, 1, 1], 0, false),
        None,
    )
}

#[test]
fn r5_r10_capture_that_empties_the_front_row_wins_mid_move() {
    let p = front_emptying_capture();
    let lm = p.parse_move("A3R").unwrap();
    assert_eq!(lm.kind, MoveKind::MtajiCapture);
    match lm.after {
        After::Won(o) => assert_eq!((o.winner, o.reason), (Side::South, WinReason::FrontEmpty)),
        other => panic!("expected a win, got {other:?}"),
    }
}

#[test]
fn r12_r7_r5_opening_a7l_a5r() {
    let p = Position::start(Variant::Kiswahili);
    let lm = p.parse_move("A7L").unwrap();
    assert_eq!(lm.kind, MoveKind::NamuaTakasa);
    let q = next(&p, "A7L");
    assert_eq!(q.front(Side::South), [0, 0, 0, 1, 7, 3, 0, 0]);
    assert_eq!(q.hand(Side::South), 21);
    // a5 faces A4: the only capture; at a middle hole the namua player chooses the kichwa.
    assert_eq!(moves(&q), ["a5L", "a5R"]);
    let r = next(&q, "a5R");
    assert_eq!(r.front(Side::North), [0, 0, 0, 0, 7, 2, 2, 1]);
    assert_eq!(r.front(Side::South), [0, 0, 0, 0, 7, 3, 0, 0]);
    assert_eq!(r.hand(Side::North), 21);
    assert!(
        r.nyumba_owned(Side::North),
        "a namua capture into the nyumba keeps it owned"
    );
    let l = next(&q, "a5L");
    assert_eq!(l.front(Side::North), [1, 0, 0, 0, 7, 2, 2, 0]);
}

#[test]
fn r5_kimbi_captures_enter_at_their_own_kichwa() {
    // South namua: A2 faces a7 and A7 faces a2; kimbi captures have a forced kichwa, still written.
    let p = state(
        "kiswahili",
        "S",
        (
            [0, 1, 0, 0, 0, 0, 1, 0],
            [3, 3, 3, 3, 2, 2, 2, 2],
            10,
            false,
        ),
        ([0, 3, 0, 0, 0, 0, 3, 0], [2; 8], 10, false),
        None,
    );
    assert_eq!(moves(&p), ["A2L", "A7R"]);
    // A2 gets the seed and captures a7's 3, sown from A1: A1, A2, A3 (empty): the move ends.
    let q = next(&p, "A2L");
    assert_eq!(q.front(Side::South), [1, 3, 1, 0, 0, 0, 1, 0]);
    assert_eq!(q.front(Side::North), [0, 3, 0, 0, 0, 0, 0, 0]);
    assert_eq!(q.hand(Side::South), 9);
    // A7 captures a2's 3, sown from A8 toward the centre: A8, A7, A6.
    let r = next(&p, "A7R");
    assert_eq!(r.front(Side::South), [0, 1, 0, 0, 0, 1, 3, 1]);
}

#[test]
fn r7_r8_owned_nyumba_alone_is_taxed() {
    // Only the owned nyumba (6 seeds) is occupied and nothing can be captured: tax.
    let p = state(
        "kiswahili",
        "S",
        ([0, 0, 0, 0, 6, 0, 0, 0], [0; 8], 10, true),
        ([2, 2, 2, 0, 2, 2, 2, 2], [3; 8], 10, true),
        None,
    );
    assert_eq!(moves(&p), ["A5L", "A5R"]);
    assert_eq!(p.parse_move("A5R").unwrap().kind, MoveKind::NamuaTax);
    // 6 + 1 seeds, only 2 lifted: A6, A7 (empty) and the move ends; the nyumba stays owned.
    let q = next(&p, "A5R");
    assert_eq!(q.front(Side::South), [0, 0, 0, 0, 5, 1, 1, 0]);
    assert!(q.nyumba_owned(Side::South));
    assert_eq!(q.hand(Side::South), 9);
}

#[test]
fn r7_owned_big_nyumba_is_not_played_while_other_holes_are() {
    let p = state(
        "kiswahili",
        "S",
        ([0, 0, 1, 0, 6, 0, 0, 0], [0; 8], 10, true),
        ([2, 2, 2, 0, 2, 0, 2, 2], [3, 3, 3, 3, 3, 3, 3, 4], 10, true),
        None,
    );
    // A single seed may be played while the nyumba is owned.
    assert_eq!(moves(&p), ["A3L", "A3R"]);
}

#[test]
fn r7_unowned_nyumba_means_play_a_hole_of_two_or_more() {
    let p = state(
        "kiswahili",
        "S",
        ([1, 0, 3, 0, 0, 0, 0, 1], [0; 8], 10, false),
        (
            [0, 2, 2, 2, 2, 0, 2, 0],
            [4, 4, 4, 4, 4, 4, 4, 1],
            10,
            false,
        ),
        None,
    );
    assert_eq!(moves(&p), ["A3L", "A3R"]);
}

/// Positions of the conformance sample with a tag.
fn tagged(tag: &str) -> Vec<(Position, serde_json::Value)> {
    let mut out = Vec::new();
    for f in ["kiswahili-sample.jsonl", "kujifunza-sample.jsonl"] {
        let text =
            std::fs::read_to_string(format!("{}/tests/vectors/{f}", env!("CARGO_MANIFEST_DIR")))
                .unwrap();
        for line in text.lines() {
            let v: serde_json::Value = serde_json::from_str(line).unwrap();
            if v["tags"].as_array().unwrap().iter().any(|t| t == tag) {
                out.push((Position::from_json(&v["state"].to_string()).unwrap(), v));
            }
        }
    }
    assert!(!out.is_empty(), "no sample position tagged {tag}");
    out
}

#[test]
fn r8_safari_versus_stop() {
    for (p, _) in tagged("safari") {
        let list = p.legal_moves();
        let safaris: Vec<_> = list.iter().filter(|m| m.mv.safari).collect();
        assert!(!safaris.is_empty());
        for s in safaris {
            // Each safari move has a stopping twin; the safari gives up the nyumba.
            let stop = list
                .get(bao::game::Move {
                    safari: false,
                    ..s.mv
                })
                .expect("stop twin");
            assert_ne!(stop.after, s.after);
            if let (After::Position(a), After::Position(b)) = (stop.after, s.after) {
                assert!(a.nyumba_owned(p.to_move()));
                assert!(!b.nyumba_owned(p.to_move()));
            }
            assert!(s.notation(p.to_move()).ends_with('+'));
        }
    }
}

#[test]
fn r8_nyumba_stops_a_namua_takasa() {
    for (p, _) in tagged("nyumba_stop_takasa") {
        let me = p.to_move();
        let stopped = p.legal_moves().iter().any(|m| match m.after {
            After::Position(q) => q.nyumba_owned(me) && q.seeds(me, Hole::front(5).unwrap()) >= 6,
            _ => false,
        });
        assert!(stopped, "{}", p.to_json());
    }
}

#[test]
fn r9_takasia_creation_block_and_stop() {
    let mut created = 0;
    for (p, _) in tagged("takasia_creation") {
        for m in p.legal_moves().iter() {
            if let After::Position(q) = m.after {
                if let Some(t) = q.takasia() {
                    created += 1;
                    assert_eq!(
                        m.kind,
                        MoveKind::MtajiTakasa,
                        "only a mtaji takasa creates takasia"
                    );
                    assert!(t.is_front());
                    assert!(q.seeds(q.to_move(), t) >= 2);
                    assert!(
                        !(t.ring() == 4 && q.nyumba_owned(q.to_move())),
                        "never the owned nyumba"
                    );
                }
            }
        }
    }
    assert!(created > 0);
    for (p, _) in tagged("takasia_active") {
        let t = p.takasia().expect("takasia set");
        // The takasia'd hole may not start a move, and the mark is gone afterwards.
        for m in p.legal_moves().iter() {
            assert_ne!(m.mv.hole, t);
            if let After::Position(q) = m.after {
                assert!(q.takasia().is_none() || q.to_move() != p.to_move());
            }
        }
    }
    // Dropping the mark changes what the position allows (block or stop).
    for (p, _) in tagged("takasia_stop") {
        let mut free = p;
        free = Position::from_json(&free.to_json().replace(
            &format!("\"{}\"", p.takasia().unwrap().name(p.to_move())),
            "null",
        ))
        .unwrap();
        assert_ne!(p.legal_moves().as_slice(), free.legal_moves().as_slice());
    }
}

#[test]
fn r10_no_move_loses() {
    // South has no hole with 2 or more seeds.
    let p = state(
        "kujifunza",
        "S",
        ([1, 1, 1, 1, 1, 1, 1, 1], [1, 0, 0, 0, 0, 0, 0, 0], 0, false),
        ([5; 8], [6, 6, 3, 0, 0, 0, 0, 0], 0, false),
        None,
    );
    assert!(p.legal_moves().is_empty());
    let o = p.outcome().expect("game over");
    assert_eq!((o.winner, o.reason), (Side::North, WinReason::NoMove));
    for (p, v) in tagged("no_move_loss") {
        assert_eq!(p.outcome().map(|o| o.winner.letter()), v["winner"].as_str());
    }
}

#[test]
fn r11_the_known_never_ending_move_is_illegal() {
    let p = state(
        "kiswahili",
        "S",
        (
            [1, 6, 3, 1, 0, 5, 4, 0],
            [2, 1, 0, 5, 0, 3, 0, 1],
            11,
            false,
        ),
        ([1, 0, 0, 9, 0, 0, 0, 0], [0; 8], 11, false),
        None,
    );
    let m = moves(&p);
    assert!(!m.contains(&"A3L".to_string()), "{m:?}");
    assert!(!m.is_empty(), "other moves stay legal");
    assert!(matches!(
        p.parse_move("A3L"),
        Err(bao::game::notation::NotationError::Illegal { .. })
    ));
    for (p, v) in tagged("infinite_move") {
        assert_eq!(p.legal_moves().len(), v["moves"].as_object().unwrap().len());
    }
}

#[test]
fn r12_notation_errors() {
    use bao::game::notation::NotationError as E;
    let p = Position::start(Variant::Kiswahili);
    assert!(matches!(p.parse_move("A7"), Err(E::Malformed(_))));
    assert!(matches!(p.parse_move("A7X"), Err(E::Malformed(_))));
    assert!(matches!(p.parse_move("C7L"), Err(E::NoSuchHole(_))));
    assert!(matches!(p.parse_move("A9L"), Err(E::NoSuchHole(_))));
    assert!(matches!(p.parse_move("a7L"), Err(E::WrongSide { .. })));
    assert!(matches!(p.parse_move("A1L"), Err(E::Illegal { .. })));
    assert!(matches!(p.parse_move("A7L+"), Err(E::Illegal { .. })));
    assert_eq!(
        p.parse_move(" A7L ").unwrap().mv.hole,
        Hole::front(7).unwrap()
    );
}

#[test]
fn r13_bad_states_are_refused_with_reasons() {
    let good = Position::start(Variant::Kiswahili).to_json();
    let cases = [
        (good.replace("kiswahili", "bao"), "unknown variant"),
        (
            good.replacen("[0,0,0,0,6,2,2,0]", "[0,0,0,6,2,2,0]", 1),
            "has 7 holes",
        ),
        (
            good.replacen("[0,0,0,0,6,2,2,0]", "[0,0,0,-1,7,2,2,0]", 1),
            "= -1",
        ),
        (good.replacen("\"hand\":22", "\"hand\":21", 1), "63 seeds"),
        (
            good.replace("\"takasia\":null", "\"takasia\":\"a3\""),
            "not a front hole of the side to move",
        ),
        (
            good.replace("\"takasia\":null", "\"takasia\":\"Z3\""),
            "no hole",
        ),
        (
            good.replace("\"to_move\":\"S\"", "\"to_move\":\"X\""),
            "to_move",
        ),
        ("{\"variant\":1}".to_string(), "not an R13 state"),
    ];
    for (json, want) in cases {
        let e = Position::from_json(&json).expect_err(&json).to_string();
        assert!(e.contains(want), "{e} should say {want}");
    }
    assert_eq!(
        Position::from_json(&good).unwrap(),
        Position::start(Variant::Kiswahili)
    );
}

/// Plays `games` random games, calling `check` on every position and legal move.
fn random_games(
    variant: Variant,
    games: usize,
    seed: u64,
    mut check: impl FnMut(&Position, &bao::game::LegalMove),
) {
    let mut rng = SmallRng::seed_from_u64(seed);
    for _ in 0..games {
        let mut p = Position::start(variant);
        for _ in 0..300 {
            let list = p.legal_moves();
            if list.is_empty() {
                break;
            }
            for m in list.iter() {
                check(&p, m);
            }
            match list.as_slice()[rng.random_range(0..list.len())].after {
                After::Position(q) => p = q,
                After::Won(_) => break,
            }
        }
    }
}

#[test]
fn properties_over_random_games() {
    for variant in Variant::ALL {
        let mut n = 0;
        random_games(variant, 200, 7, |p, m| {
            n += 1;
            assert_eq!(
                p.total_seeds(),
                64,
                "R1: 64 seeds in every game in progress"
            );
            // The action index round-trips and names this move.
            assert_eq!(bao::game::Move::from_action(m.mv.action()), Some(m.mv));
            assert_eq!(
                p.legal_moves().by_action(m.mv.action()).map(|x| x.mv),
                Some(m.mv)
            );
            // Notation round-trips (R12) and every legal move applies.
            let text = m.notation(p.to_move());
            assert_eq!(p.parse_move(&text).unwrap(), *m);
            assert_eq!(p.play(m.mv).unwrap(), m.after);
            if let After::Position(q) = m.after {
                assert_eq!(q.total_seeds(), 64);
                assert_eq!(q.to_move(), p.to_move().opponent());
                assert_eq!(
                    Position::from_json(&q.to_json()).unwrap(),
                    q,
                    "R13 round trip"
                );
                assert_eq!(Position::from_bytes(&q.to_bytes()), Some(q));
                // R10: a move never leaves the mover's own front row empty.
                assert!(q.front(p.to_move()).iter().any(|&c| c > 0));
            }
        });
        assert!(n > 10_000, "{variant}: only {n} moves checked");
    }
}

#[test]
fn kujifunza_rules_are_left_right_symmetric() {
    random_games(Variant::Kujifunza, 40, 11, |p, m| {
        let mirror = p.mirrored();
        let lm = mirror.legal_moves();
        let twin = lm
            .get(m.mv.mirrored())
            .expect("mirrored move is legal in the mirrored position");
        match (m.after, twin.after) {
            (After::Position(a), After::Position(b)) => assert_eq!(a.mirrored(), b),
            (After::Won(a), After::Won(b)) => assert_eq!(a, b),
            other => panic!("{other:?}"),
        }
        assert_eq!(p.legal_moves().len(), lm.len());
    });
}

#[test]
fn batched_stepping_equals_one_at_a_time() {
    use bao::game::batch::{GameBatch, Step};
    use bao::game::features::Encoding;
    // With the move planes: the batch's cached moves give what a fresh move generation gives.
    let encoding = Encoding::BoardAndMoves;
    let per = encoding.features();
    for variant in Variant::ALL {
        let n = 100;
        let mut batch = GameBatch::new(variant, n).with_max_plies(200);
        let mut singles: Vec<Position> = vec![Position::start(variant); n];
        let mut rng = SmallRng::seed_from_u64(3);
        let mut feats = vec![0.0; n * per];
        let mut masks = vec![0u64; n];
        let mut finished = 0;
        for _ in 0..400 {
            batch.encode(encoding, &mut feats, &mut masks);
            let mut actions = Vec::new();
            for (i, p) in singles.iter().enumerate() {
                let list = p.legal_moves();
                assert_eq!(list.mask(), masks[i]);
                let mut f = vec![0.0; per];
                encoding.encode(p, &mut f);
                assert_eq!(&feats[i * per..(i + 1) * per], &f[..]);
                actions.push(list.as_slice()[rng.random_range(0..list.len())].mv.action());
            }
            let steps = batch.step(&actions);
            for (i, s) in steps.iter().enumerate() {
                let lm = *singles[i].legal_moves().by_action(actions[i]).unwrap();
                match (s, lm.after) {
                    (Step::Continues, After::Position(q)) => singles[i] = q,
                    (Step::Finished { .. }, _) => {
                        finished += 1;
                        singles[i] = Position::start(variant);
                    }
                    other => panic!("{other:?}"),
                }
                assert_eq!(batch.games()[i].position, singles[i]);
            }
        }
        assert!(finished > 0);
    }
}

#[test]
fn features_are_from_the_side_to_move() {
    use bao::game::features::{encode, CELLS, FEATURES};
    let p = Position::start(Variant::Kiswahili);
    let q = next(&p, "A7L");
    let (mut fp, mut fq) = (vec![0.0; FEATURES], vec![0.0; FEATURES]);
    encode(&p, &mut fp);
    encode(&q, &mut fq);
    // Own front row is row 2: South's A5 (col 4) holds 6 at the start, seen by South.
    assert_eq!(fp[2 * 8 + 4], 6.0 / 16.0);
    // After A7L North is to move: North's own a5 is at row 2 col 4; South's A5 (7 seeds)
    // faces a4 (North's column 3), so it appears at row 1, column 3.
    assert_eq!(fq[2 * 8 + 4], 6.0 / 16.0);
    assert_eq!(fq[8 + 3], 7.0 / 16.0);
    // Hand planes: own hand 22 (North), opponent 21.
    assert_eq!(fq[10 * CELLS], 1.0);
    assert_eq!(fq[11 * CELLS], 21.0 / 22.0);
    let _ = Dir::Clockwise;
}

/// Every distinct position of 20 random games of each variant (seeded by `seed`), once.
fn distinct_random_positions(seed: u64, mut f: impl FnMut(&Position)) {
    for variant in Variant::ALL {
        let mut seen = std::collections::HashSet::new();
        random_games(variant, 20, seed, |pos, _| {
            if seen.insert(pos.hash64()) {
                f(pos);
            }
        });
    }
}

/// The move planes of `moves` as the features module documents them, written out here from
/// the move list (at the mover's holes when `own`, else the opponent's), with the number of
/// capturing and of winning moves.
fn expected_move_planes(moves: &bao::game::MoveList, own: bool) -> (Vec<f32>, usize, usize) {
    use bao::game::features::{cell, CELLS, MOVE_PLANES};
    let mut planes = vec![0.0f32; MOVE_PLANES * CELLS];
    let (mut captures, mut wins) = (0, 0);
    for lm in moves.iter() {
        let at = cell(own, lm.mv.hole.ring());
        let d = lm.mv.dir as usize;
        planes[d * CELLS + at] = 1.0;
        let c = &mut planes[(2 + d) * CELLS + at];
        *c = c.max(lm.captured as f32 / 16.0);
        captures += (lm.captured > 0) as usize;
        if matches!(lm.after, After::Won(_)) {
            planes[(4 + d) * CELLS + at] = 1.0;
            wins += 1;
        }
    }
    (planes, captures, wins)
}

/// The move planes (the per-move inputs) say, at the hole each move starts from, that
/// it is legal, what it captures and whether it wins at once (R5, R10); nothing elsewhere.
#[test]
fn r5_move_feature_planes_show_each_moves_capture_and_win() {
    use bao::game::features::{cell, Encoding, CELLS, FEATURES};
    let encoding = Encoding::BoardAndMoves;
    // A3R wins mid-move, after capturing a4's 3 seeds.
    let p = front_emptying_capture();
    let mut f = vec![0.0; encoding.features()];
    encoding.encode(&p, &mut f);
    // South's front hole n (A n).
    let plane = |k: usize, front: u8| {
        let ring = Hole::front(front).unwrap().ring();
        f[FEATURES + k * CELLS + cell(true, ring)]
    };
    let a3r = p.parse_move("A3R").unwrap().mv;
    assert_eq!(a3r.hole, Hole::front(3).unwrap());
    let d = a3r.dir as usize;
    assert_eq!(plane(d, 3), 1.0);
    assert_eq!(plane(2 + d, 3), 3.0 / 16.0);
    assert_eq!(plane(4 + d, 3), 1.0);
    assert_eq!(plane(0, 1) + plane(1, 1), 0.0, "A1 is empty: no move");

    let (mut positions, mut wins) = (0, 0);
    distinct_random_positions(8, |pos| {
        positions += 1;
        let mut f = vec![0.0; encoding.features()];
        encoding.encode(pos, &mut f);
        let (expect, _, won) = expected_move_planes(&pos.legal_moves(), true);
        wins += won;
        assert_eq!(&f[FEATURES..], &expect[..], "{pos:?}");
        // The board planes are the board encoding's, unchanged.
        let mut board = vec![0.0; FEATURES];
        bao::game::features::encode(pos, &mut board);
        assert_eq!(&f[..FEATURES], &board[..]);
    });
    assert!(
        positions > 1000 && wins > 10,
        "{positions} positions, {wins} winning moves"
    );
}

/// The threat planes (the per-move inputs, for the opponent) hold the move planes of
/// the opponent's moves as if it were to move, at the opponent's holes: built here through
/// the R13 state (side to move flipped, no takasia, R9) rather than the encoder's own flip.
#[test]
fn r5_r9_threat_planes_show_the_opponents_captures_and_wins() {
    use bao::game::features::{cell, Encoding, CELLS, FEATURES, MOVE_PLANES};
    let encoding = Encoding::BoardMovesAndThreats;
    let threats_at = FEATURES + MOVE_PLANES * CELLS;
    let flipped = |pos: &Position| {
        let mut state = pos.to_state_json();
        state.to_move = pos.to_move().opponent().letter().to_string();
        state.takasia = None;
        Position::from_state_json(&state).unwrap_or_else(|e| panic!("{e}: {}", pos.to_json()))
    };
    // North to move in the position where South's A3R captures a4's 3 seeds and wins at once
    // (R5, R10): North's threat planes show that move at South's A3, seen from North's seat.
    let mut state = front_emptying_capture().to_state_json();
    state.to_move = "N".to_string();
    let p = Position::from_state_json(&state).unwrap();
    let mut f = vec![0.0; encoding.features()];
    encoding.encode(&p, &mut f);
    let a3r = front_emptying_capture().parse_move("A3R").unwrap().mv;
    let (d, at) = (a3r.dir as usize, cell(false, a3r.hole.ring()));
    assert_eq!(f[threats_at + d * CELLS + at], 1.0);
    assert_eq!(f[threats_at + (2 + d) * CELLS + at], 3.0 / 16.0);
    assert_eq!(f[threats_at + (4 + d) * CELLS + at], 1.0);
    let a1 = cell(false, Hole::front(1).unwrap().ring());
    assert_eq!(
        f[threats_at + a1] + f[threats_at + CELLS + a1],
        0.0,
        "A1 is empty: no threat"
    );

    let (mut positions, mut captures, mut wins) = (0, 0, 0);
    distinct_random_positions(9, |pos| {
        positions += 1;
        let mut f = vec![0.0; encoding.features()];
        encoding.encode(pos, &mut f);
        let (expect, captured, won) = expected_move_planes(&flipped(pos).legal_moves(), false);
        captures += captured;
        wins += won;
        assert_eq!(&f[threats_at..], &expect[..], "{}", pos.to_json());
        // The board and move planes are the move encoding's, unchanged.
        let mut moves = vec![0.0; Encoding::BoardAndMoves.features()];
        Encoding::BoardAndMoves.encode(pos, &mut moves);
        assert_eq!(&f[..threats_at], &moves[..]);
    });
    assert!(
        positions > 1000 && captures > 100 && wins > 10,
        "{positions} positions, {captures} capturing threats, {wins} winning ones"
    );
}

/// States that cannot arise are refused with the rule that forbids them: an owned
/// but empty nyumba (R8), takasia in the namua stage or on a hole of fewer than 2 seeds (R9),
/// a side to move with an empty front row (R10).
#[test]
fn r8_r9_r10_states_that_cannot_arise_are_refused() {
    let start = Position::start(Variant::Kiswahili);
    let base: serde_json::Value = serde_json::from_str(&start.to_json()).unwrap();
    let refused = |edit: &dyn Fn(&mut serde_json::Value), needle: &str| {
        let mut v = base.clone();
        edit(&mut v);
        let e = Position::from_json(&v.to_string())
            .expect_err(needle)
            .to_string();
        assert!(e.contains(needle), "wanted `{needle}` in: {e}");
    };
    // Owned nyumba (South's front hole 5) emptied, its seeds moved next door (R8).
    refused(
        &|v| {
            let n = v["S"]["front"][4].as_i64().unwrap();
            v["S"]["front"][4] = 0.into();
            v["S"]["front"][3] = (v["S"]["front"][3].as_i64().unwrap() + n).into();
        },
        "R8",
    );
    // Takasia at the start: North has its hand, so this is the namua stage (R9).
    refused(&|v| v["takasia"] = "A5".into(), "namua stage");
    // South to move with nothing in front: all front seeds into the back row (R10).
    refused(
        &|v| {
            for k in 0..8 {
                let n = v["S"]["front"][k].as_i64().unwrap();
                v["S"]["front"][k] = 0.into();
                v["S"]["back"][k] = (v["S"]["back"][k].as_i64().unwrap() + n).into();
            }
            v["S"]["nyumba"] = false.into();
        },
        "R10",
    );
    // A mtaji-stage state (no hands) with takasia on an empty hole (R9); the same state
    // without the mark is fine.
    let mtaji = |takasia: Option<&str>| {
        let mut v = base.clone();
        for side in ["S", "N"] {
            let hand = v[side]["hand"].as_i64().unwrap();
            v[side]["hand"] = 0.into();
            v[side]["back"][0] = (v[side]["back"][0].as_i64().unwrap() + hand).into();
            v[side]["nyumba"] = false.into();
        }
        v["S"]["back"][1] =
            (v["S"]["back"][1].as_i64().unwrap() + v["S"]["front"][0].as_i64().unwrap()).into();
        v["S"]["front"][0] = 0.into();
        v["takasia"] = takasia.map_or(serde_json::Value::Null, Into::into);
        v.to_string()
    };
    Position::from_json(&mtaji(None)).expect("a mtaji state");
    let e = Position::from_json(&mtaji(Some("A1")))
        .unwrap_err()
        .to_string();
    assert!(e.contains("fewer than 2") && e.contains("R9"), "{e}");
}

/// A Kiswahili mtaji-stage state (no hands, no nyumba) with South to move, South's front row
/// `s_front` (the rest of South's 32 seeds in its back row) and North holding 2 in every hole.
fn mtaji_state(s_front: [i64; 8], takasia: Option<&str>) -> serde_json::Value {
    let in_front: i64 = s_front.iter().sum();
    let mut back = [0i64; 8];
    let mut left = 32 - in_front;
    for b in back.iter_mut() {
        *b = left.min(8);
        left -= *b;
    }
    assert_eq!(left, 0);
    let twos = [2i64; 8];
    serde_json::json!({
        "variant": "kiswahili", "to_move": "S",
        "S": {"front": s_front, "back": back, "hand": 0, "nyumba": false},
        "N": {"front": twos, "back": twos, "hand": 0, "nyumba": false},
        "takasia": takasia,
    })
}

/// R13 names exactly its keys, so a state without `takasia` is refused like one without any
/// other key; states that cannot arise are refused naming the rule: takasia on a hole one of
/// R9's exceptions spares, and a position whose side not to move has an empty front row (R10:
/// the game ended when it was emptied), the mirror of the refused empty row of the side to move.
#[test]
fn r9_r10_r13_more_states_that_cannot_arise_are_refused() {
    let refused = |json: String, needles: &[&str]| {
        let e = Position::from_json(&json).expect_err(&json).to_string();
        for needle in needles {
            assert!(e.contains(needle), "wanted `{needle}` in: {e}");
        }
    };
    // Every key is required, `takasia` too (null when there is none).
    let start = Position::start(Variant::Kujifunza).to_json();
    assert!(start.contains(",\"takasia\":null"));
    refused(start.replace(",\"takasia\":null", ""), &["takasia"]);
    let no_to_move = start.replace("\"to_move\":\"S\",", "");
    assert_ne!(no_to_move, start);
    refused(no_to_move, &["to_move"]);

    // The same boards without a mark are fine, so the mark is what is refused.
    let only_occupied = [0, 0, 4, 0, 0, 0, 0, 0];
    let only_two_or_more = [1, 1, 4, 1, 0, 0, 0, 1];
    let many = [0, 0, 4, 3, 0, 0, 0, 0];
    for front in [only_occupied, only_two_or_more, many] {
        Position::from_json(&mtaji_state(front, None).to_string()).expect("a mtaji state");
    }
    Position::from_json(&mtaji_state(many, Some("A3")).to_string())
        .expect("takasia on one of two holes of 2 or more");
    // The takasia'd hole is the only occupied hole of the front row: R9 marks nothing then.
    refused(
        mtaji_state(only_occupied, Some("A3")).to_string(),
        &["R9", "only"],
    );
    // ... or the only hole of the front row with 2 or more seeds.
    refused(
        mtaji_state(only_two_or_more, Some("A3")).to_string(),
        &["R9", "only"],
    );
    // ... or the owned nyumba.
    let mut owned = mtaji_state([0, 0, 0, 3, 6, 0, 0, 0], Some("A5"));
    owned["S"]["nyumba"] = true.into();
    let mut unmarked = owned.clone();
    unmarked["takasia"] = serde_json::Value::Null;
    Position::from_json(&unmarked.to_string()).expect("an owned nyumba in mtaji");
    refused(owned.to_string(), &["R9", "nyumba"]);

    // The side not to move has an empty front row: the game is over (R10), whichever side.
    for (mover, other) in [("S", "N"), ("N", "S")] {
        let mut v: serde_json::Value = serde_json::from_str(&start).unwrap();
        v["to_move"] = mover.into();
        v[other]["front"] = serde_json::json!([0i64; 8].to_vec());
        v[other]["back"] = serde_json::json!([4i64; 8].to_vec());
        refused(v.to_string(), &["R10"]);
    }
}

/// An error quotes at most a short prefix of what it got, whatever field holds a huge string.
#[test]
fn r13_errors_quote_long_input_short() {
    let huge = "x".repeat(10 << 20);
    let start = Position::start(Variant::Kiswahili).to_json();
    for json in [
        start.replace("\"kiswahili\"", &format!("\"{huge}\"")),
        start.replace("\"to_move\":\"S\"", &format!("\"to_move\":\"{huge}\"")),
        start.replace("\"takasia\":null", &format!("\"takasia\":\"{huge}\"")),
        start.replace("\"to_move\"", &format!("\"{huge}\":1,\"to_move\"")),
        start.replace("\"hand\":22", &format!("\"hand\":\"{huge}\"")),
    ] {
        let e = Position::from_json(&json).expect_err("refused").to_string();
        assert!(e.len() < 1000, "{} bytes: {}...", e.len(), &e[..200]);
        assert!(e.contains("xxxx"), "the input is quoted: {e}");
    }
    let e = Position::start(Variant::Kiswahili)
        .parse_move(&huge)
        .unwrap_err()
        .to_string();
    assert!(e.len() < 1000, "{} bytes", e.len());
}
