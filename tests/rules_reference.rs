//! The fast move generator against the plain reference (R3..R11).
//!
//! `src/game/movegen.rs` sows whole laps arithmetically, forks the R8 safari twin off the
//! stop move and prunes R11 cycles early. `bao::game::reference` keeps the straightforward
//! version it was optimised from (one seed at a time, every candidate replayed from its
//! start, the R11 limit as the only infinity test). This file checks that both give
//! identical move lists (moves, kinds, successors or wins, captured and sown counts) on every
//! position of many random games and on random positions far from play (big holes, laps of 16
//! and more, long and never-ending moves).

use bao::game::reference::{Board, Tally};
use bao::game::{After, Dir, Hole, Move, Position, Variant};
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

/// Compares the engine with the reference on one position; returns the engine's moves.
fn check(p: &Position, tally: &mut Tally) -> Vec<After> {
    let fast = p.legal_moves();
    let slow = Board::of(p).legal_moves_tallied(tally);
    assert_eq!(fast.as_slice(), slow.as_slice(), "position {}", p.to_json());
    fast.iter().map(|lm| lm.after).collect()
}

#[test]
fn fast_moves_equal_reference_in_random_games() {
    let mut rng = SmallRng::seed_from_u64(2024);
    for variant in Variant::ALL {
        let mut positions = 0;
        for _ in 0..500 {
            let mut p = Position::start(variant);
            for _ in 0..400 {
                positions += 1;
                let afters = check(&p, &mut Tally::default());
                if afters.is_empty() {
                    break;
                }
                match afters[rng.random_range(0..afters.len())] {
                    After::Position(q) => p = q,
                    After::Won(_) => break,
                }
            }
        }
        assert!(positions > 10_000, "{variant}: {positions}");
    }
}

/// A random position far from normal play: 64 seeds thrown into few holes (so laps of 16
/// and more, long relays and never-ending moves are common), random hands, nyumba flags
/// and takasia.
fn random_position(rng: &mut SmallRng) -> Position {
    let variant = if rng.random_bool(0.5) {
        Variant::Kiswahili
    } else {
        Variant::Kujifunza
    };
    let mut r = Board {
        variant,
        to_move: rng.random_range(0..2),
        holes: [[0; 16]; 2],
        hand: [0; 2],
        nyumba: [false; 2],
        takasia: None,
    };
    let mut left = 64u32;
    if variant == Variant::Kiswahili {
        for s in 0..2 {
            if rng.random_bool(0.4) {
                r.hand[s] = rng.random_range(1..12);
                left -= r.hand[s] as u32;
            }
            r.nyumba[s] = rng.random_bool(0.5);
        }
    }
    // Few heavy holes, seeds spread over the board, or most of them spread over the mover's
    // ring (long relays, where never-ending moves live).
    let me = r.to_move;
    match rng.random_range(0..4) {
        0 => {
            let spots = rng.random_range(2..8);
            while left > 0 {
                let k = (rng.random_range(0..spots) * 32 / spots + rng.random_range(0..2)) % 32;
                let n = rng.random_range(1..=left.min(20));
                r.holes[k / 16][k % 16] += n as u8;
                left -= n;
            }
        }
        1 => {
            for _ in 0..left {
                r.holes[rng.random_range(0..2)][rng.random_range(0..16)] += 1;
            }
        }
        2 => {
            // R11's known never-ending position with a few seeds moved: infinite moves abound.
            r = Board::of(&known_never_ending());
            for _ in 0..rng.random_range(0..4) {
                let (from, to) = (rng.random_range(0..16), rng.random_range(0..16));
                if r.holes[0][from] > 0 {
                    r.holes[0][from] -= 1;
                    r.holes[0][to] += 1;
                }
            }
        }
        _ => {
            for _ in 0..left {
                if rng.random_bool(0.9) {
                    r.holes[me][rng.random_range(0..16)] += 1;
                } else {
                    r.holes[1 - me][rng.random_range(0..16)] += 1;
                }
            }
        }
    }
    if variant == Variant::Kiswahili && r.hand[r.to_move] == 0 && rng.random_bool(0.3) {
        r.takasia = Some(rng.random_range(0..8));
    }
    r.position().expect("64 seeds, valid flags")
}

#[test]
fn fast_moves_equal_reference_on_random_positions() {
    let mut rng = SmallRng::seed_from_u64(99);
    let (mut moves, mut empty) = (0, 0);
    let mut tally = Tally::default();
    for _ in 0..40_000 {
        let p = random_position(&mut rng);
        let n = check(&p, &mut tally).len();
        moves += n;
        empty += (n == 0) as usize;
    }
    assert!(
        moves > 100_000 && empty > 100,
        "{moves} moves, {empty} positions without"
    );
    let (infinite, big) = (tally.infinite_moves, tally.big_laps);
    assert!(
        infinite > 100 && big > 1000,
        "{infinite} infinite moves, {big} laps of 16+"
    );
}

/// R11's known position: South's `A3L` never ends.
fn known_never_ending() -> Position {
    let json = r#"{"variant":"kiswahili","to_move":"S","S":{"front":[1,6,3,1,0,5,4,0],"back":[2,1,0,5,0,3,0,1],"hand":11,"nyumba":false},"N":{"front":[1,0,0,9,0,0,0,0],"back":[0,0,0,0,0,0,0,0],"hand":11,"nyumba":false},"takasia":null}"#;
    Position::from_json(json).unwrap()
}

#[test]
fn the_reference_finds_the_known_never_ending_move_illegal() {
    // Without this the reference could not stand for the rules.
    let p = known_never_ending();
    let a3l = Move {
        hole: Hole::front(3).unwrap(),
        dir: Dir::Anticlockwise,
        safari: false,
    };
    let refs = Board::of(&p).legal_moves();
    assert!(!refs.is_empty());
    assert!(refs.iter().all(|m| m.mv != a3l));
    check(&p, &mut Tally::default());
}
