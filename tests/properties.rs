//! Properties of the rules core over arbitrary games (proptest draws the move choices and
//! shrinks a failure to the shortest game that shows it).

use bao::game::{After, Position, Variant};
use proptest::prelude::*;

/// Plays the game that `choices` picks (choice `k` takes move `k mod n` of the `n` legal
/// moves); returns every position reached, the start first.
fn play(variant: Variant, choices: &[u16]) -> Vec<Position> {
    let mut pos = Position::start(variant);
    let mut seen = vec![pos];
    for &c in choices {
        let moves = pos.legal_moves();
        if moves.is_empty() {
            break;
        }
        match moves.as_slice()[c as usize % moves.len()].after {
            After::Position(p) => pos = p,
            After::Won(_) => break,
        }
        seen.push(pos);
    }
    seen
}

fn variant() -> impl Strategy<Value = Variant> {
    prop_oneof![Just(Variant::Kiswahili), Just(Variant::Kujifunza)]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// R1/R4: sowing, capturing and taxing move seeds; none appear or vanish.
    #[test]
    fn every_move_conserves_the_seeds(v in variant(), choices in prop::collection::vec(any::<u16>(), 0..120)) {
        let total = Position::start(v).total_seeds();
        for pos in play(v, &choices) {
            prop_assert_eq!(pos.total_seeds(), total);
        }
    }

    /// R12/R13: every reached position survives the JSON state format and the packed form
    /// the shards store, and every legal move survives its notation.
    #[test]
    fn positions_and_moves_round_trip(v in variant(), choices in prop::collection::vec(any::<u16>(), 0..120)) {
        for pos in play(v, &choices) {
            prop_assert_eq!(Position::from_json(&pos.to_json()).unwrap(), pos);
            prop_assert_eq!(Position::from_bytes(&pos.to_bytes()), Some(pos));
            for lm in pos.legal_moves().iter() {
                let text = lm.notation(pos.to_move());
                prop_assert_eq!(pos.parse_move(&text).unwrap(), *lm);
            }
        }
    }

    /// Kujifunza's rules are left-right symmetric (what training's mirroring relies on): the
    /// mirror of a position has the mirrored moves, reaching the mirrored positions.
    #[test]
    fn kujifunza_positions_mirror(choices in prop::collection::vec(any::<u16>(), 0..120)) {
        for pos in play(Variant::Kujifunza, &choices) {
            let m = pos.mirrored();
            prop_assert_eq!(m.mirrored(), pos);
            prop_assert_eq!(m.legal_moves().len(), pos.legal_moves().len());
            prop_assert_eq!(m.total_seeds(), pos.total_seeds());
        }
    }
}
