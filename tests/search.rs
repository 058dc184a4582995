//! Search: forced wins, visit accounting, value signs, tree reuse, Gumbel root.

mod common;

use bao::game::features::{encode, FEATURES};
use bao::game::random_games::sample_positions;
use bao::game::{After, Position, Variant, ACTIONS};
use bao::search::{Algorithm, Evaluator, Mcts, SearchParams, UniformEvaluator};
use rand::{Rng, SeedableRng};

/// Positions from random games (both variants), seeded.
fn random_positions(n: usize, seed: u64) -> Vec<Position> {
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
    let mut out = Vec::new();
    while out.len() < n {
        let variant = if rng.random::<bool>() {
            Variant::Kujifunza
        } else {
            Variant::Kiswahili
        };
        out.extend(sample_positions(variant, 1, 0..80, &mut rng));
    }
    out
}

fn wins_at_once(pos: &Position) -> Vec<usize> {
    pos.legal_moves()
        .iter()
        .filter(|lm| match lm.after {
            After::Won(_) => true,
            After::Position(p) => p.legal_moves().is_empty(),
        })
        .map(|lm| lm.mv.action())
        .collect()
}

/// Positions from the conformance vectors where some moves win at once and some do not.
fn win_in_one_positions() -> Vec<Position> {
    common::vector_positions()
        .into_iter()
        .filter(|pos| {
            let wins = wins_at_once(pos);
            !wins.is_empty() && wins.len() < pos.legal_moves().len()
        })
        .collect()
}

#[test]
fn finds_and_proves_an_immediate_win() {
    let positions = win_in_one_positions();
    assert!(
        positions.len() >= 3,
        "vectors hold positions with a winning capture"
    );
    for algorithm in [Algorithm::Puct, Algorithm::Gumbel] {
        for pos in &positions {
            let params = SearchParams {
                algorithm,
                ..SearchParams::default()
            };
            let mut mcts = Mcts::new(params, 3);
            let r = mcts.search(pos, 64, &mut UniformEvaluator).unwrap();
            let best = r.best_move.expect("has moves").action();
            assert!(
                wins_at_once(pos).contains(&best),
                "{algorithm:?}: best move must win at once in {}",
                pos.to_json()
            );
            assert_eq!(r.root_proven_win, Some(true));
            assert_eq!(r.root_value, 1.0);
            assert_eq!(r.pv[0].action(), best);
        }
    }
}

/// A position where the mover has a non-immediate forced win: a move after which every reply
/// lets the mover win at once (and no move wins at once).
fn win_in_three(pos: &Position) -> Option<usize> {
    if !wins_at_once(pos).is_empty() {
        return None;
    }
    pos.legal_moves().iter().find_map(|lm| {
        let After::Position(p) = lm.after else {
            return None;
        };
        let replies = p.legal_moves();
        let forced = !replies.is_empty()
            && replies.iter().all(|r| match r.after {
                After::Won(_) => false,
                After::Position(q) => !q.legal_moves().is_empty() && !wins_at_once(&q).is_empty(),
            });
        forced.then(|| lm.mv.action())
    })
}

#[test]
fn finds_a_forced_win_in_three_plies() {
    let found: Vec<(Position, usize)> = random_positions(3000, 11)
        .into_iter()
        .filter_map(|p| win_in_three(&p).map(|a| (p, a)))
        .take(4)
        .collect();
    assert!(
        !found.is_empty(),
        "random games contain a forced win in three plies"
    );
    for (pos, _) in &found {
        let mut mcts = Mcts::new(SearchParams::default(), 5);
        let r = mcts.search(pos, 3000, &mut UniformEvaluator).unwrap();
        let best = r.best_move.unwrap().action();
        let After::Position(p) = pos.legal_moves().by_action(best).unwrap().after else {
            panic!("not a win in one")
        };
        // The chosen move must be one of the forcing moves.
        let replies = p.legal_moves();
        assert!(
            replies
                .iter()
                .all(|r| matches!(r.after, After::Position(q) if !wins_at_once(&q).is_empty())),
            "best move {best} does not force the win in {}",
            pos.to_json()
        );
        assert_eq!(r.root_proven_win, Some(true), "the win is proven");
    }
}

#[test]
fn visit_counts_sum_to_simulations() {
    let start = Position::start(Variant::Kiswahili);
    for (algorithm, leaves) in [
        (Algorithm::Puct, 1),
        (Algorithm::Puct, 8),
        (Algorithm::Gumbel, 1),
        (Algorithm::Gumbel, 4),
    ] {
        let params = SearchParams {
            algorithm,
            leaves_per_step: leaves,
            ..SearchParams::default()
        };
        let mut mcts = Mcts::new(params, 1);
        mcts.set_noise(true);
        let r = mcts.search(&start, 300, &mut UniformEvaluator).unwrap();
        assert_eq!(r.simulations, 300);
        assert_eq!(
            r.children.iter().map(|c| c.visits).sum::<u32>(),
            300,
            "{algorithm:?} x{leaves}"
        );
        assert_eq!(r.child_visits, 300);
        let total: f32 = r.policy.iter().sum();
        assert!(
            (total - 1.0).abs() < 1e-4,
            "policy sums to one, got {total}"
        );
        assert!(r
            .policy
            .iter()
            .enumerate()
            .filter(|(_, p)| **p > 0.0)
            .all(|(a, _)| r.legal_mask() >> a & 1 == 1));
    }
}

/// Value = own seeds minus opponent's seeds on the board, / 64, read from the features (which
/// are from the side to move's point of view); priors uniform.
struct Material;

fn material(features: &[f32]) -> f32 {
    let plane0 = &features[..32];
    let opp: f32 = plane0[..16].iter().sum();
    let own: f32 = plane0[16..].iter().sum();
    (own - opp) * 16.0 / 64.0
}

impl Evaluator for Material {
    fn evaluate(
        &mut self,
        positions: &[Position],
        m: &[u64],
        p: &mut [f32],
        v: &mut [f32],
    ) -> anyhow::Result<()> {
        UniformEvaluator.evaluate(positions, m, p, v)?;
        for (x, pos) in v.iter_mut().zip(positions) {
            *x = material_of(pos);
        }
        Ok(())
    }
    fn name(&self) -> String {
        "material".into()
    }
}

fn material_of(pos: &Position) -> f32 {
    let mut f = vec![0.0; FEATURES];
    encode(pos, &mut f);
    material(&f)
}

#[test]
fn values_flip_sign_between_plies() {
    let mut checked = 0;
    for pos in random_positions(100, 2) {
        let mut mcts = Mcts::new(
            SearchParams {
                fpu_reduction_root: 0.0,
                ..SearchParams::default()
            },
            0,
        );
        let r = mcts.search(&pos, 1, &mut Material).unwrap();
        let child = r
            .children
            .iter()
            .find(|c| c.visits == 1)
            .expect("one child visited");
        let lm = pos.legal_moves().by_action(child.action).copied().unwrap();
        let After::Position(after) = lm.after else {
            continue;
        };
        if after.legal_moves().is_empty() {
            continue;
        }
        if after
            .legal_moves()
            .iter()
            .any(|lm| matches!(lm.after, After::Won(_)))
        {
            // The reply wins at once: proven at expansion, no evaluation, exact value.
            assert_eq!(child.q, Some(-1.0), "a child whose reply wins is lost");
            continue;
        }
        let v_root = material_of(&pos);
        let v_child = material_of(&after);
        // The child's value is stored for the root's side to move: the negated leaf value.
        assert!(
            (child.q.unwrap() + v_child).abs() < 1e-5,
            "child q {:?} vs leaf {v_child}",
            child.q
        );
        // Root value: mean of its own evaluation and the child's, both for the side to move.
        assert!((r.root_value - (v_root - v_child) / 2.0).abs() < 1e-5);
        checked += 1;
    }
    assert!(checked >= 20, "checked {checked}");
}

#[test]
fn tree_reuse_keeps_the_subtree() {
    let start = Position::start(Variant::Kujifunza);
    let mut mcts = Mcts::new(SearchParams::default(), 9);
    let r = mcts.search(&start, 400, &mut UniformEvaluator).unwrap();
    let mv = r.best_move.unwrap();
    let kept = r.children.iter().find(|c| c.mv == mv).unwrap().visits;
    let After::Position(next) = start.play(mv).unwrap() else {
        panic!("opening move ends the game")
    };
    mcts.advance(mv);
    let r2 = mcts.search(&next, 100, &mut UniformEvaluator).unwrap();
    assert_eq!(r2.simulations, 100);
    // The kept child had `kept` visits: one for its own evaluation, the rest in its children.
    assert_eq!(r2.child_visits, kept - 1 + 100);

    // Without reuse the same search starts from nothing.
    let mut fresh = Mcts::new(
        SearchParams {
            reuse_tree: false,
            ..SearchParams::default()
        },
        9,
    );
    fresh.search(&start, 400, &mut UniformEvaluator).unwrap();
    fresh.advance(mv);
    assert_eq!(
        fresh
            .search(&next, 100, &mut UniformEvaluator)
            .unwrap()
            .child_visits,
        100
    );
}

/// A move made without the search (a player's proof): `follow` takes the kept tree from our
/// last move's position through the opponent's reply to that move, keeping its subtree; a
/// position the tree does not know drops it.
#[test]
fn follow_keeps_the_subtree_through_a_reply_and_a_move_not_searched() {
    let start = Position::start(Variant::Kujifunza);
    let mut mcts = Mcts::new(SearchParams::default(), 9);
    let r = mcts.search(&start, 2000, &mut UniformEvaluator).unwrap();
    // Our move, the opponent's reply and our next move: the principal variation, so the tree
    // holds all three.
    assert!(r.pv.len() >= 3, "{:?}", r.pv);
    let (ours, reply, next) = (r.pv[0], r.pv[1], r.pv[2]);
    mcts.advance(ours);
    let step = |p: &Position, mv| match p.play(mv).unwrap() {
        After::Position(q) => q,
        After::Won(_) => panic!("the line ends the game"),
    };
    let replied = step(&step(&start, ours), reply);
    let after_next = step(&replied, next);
    mcts.follow(&replied, next);
    let kept = mcts.tree_size();
    assert!(kept > 0, "the subtree under the reply and our move is kept");
    let r2 = mcts.search(&after_next, 50, &mut UniformEvaluator).unwrap();
    assert!(r2.child_visits >= 50, "{}", r2.child_visits);
    assert!(mcts.last_stats().reused);

    mcts.follow(&start, ours);
    assert_eq!(
        mcts.tree_size(),
        0,
        "a position the tree does not hold drops it"
    );
}

#[test]
fn seeded_noise_is_reproducible_and_seed_dependent() {
    let start = Position::start(Variant::Kiswahili);
    let run = |seed| {
        let mut m = Mcts::new(SearchParams::default(), seed);
        m.set_noise(true);
        m.search(&start, 200, &mut UniformEvaluator).unwrap().policy
    };
    assert_eq!(run(1), run(1));
    assert_ne!(run(1), run(2));
    // Without noise the uniform search does not depend on the seed at all.
    let quiet = |seed| {
        Mcts::new(SearchParams::default(), seed)
            .search(&start, 200, &mut UniformEvaluator)
            .unwrap()
            .policy
    };
    assert_eq!(quiet(1), quiet(2));
}

#[test]
fn gumbel_policy_target_is_a_distribution_over_legal_moves() {
    let params = SearchParams {
        algorithm: Algorithm::Gumbel,
        gumbel_m: 8,
        ..SearchParams::default()
    };
    for pos in random_positions(10, 4) {
        let mut mcts = Mcts::new(params.clone(), 1);
        mcts.set_noise(true);
        let r = mcts.search(&pos, 16, &mut Material).unwrap();
        let mask = pos.legal_moves().mask();
        let sum: f32 = r.policy.iter().sum();
        assert!((sum - 1.0).abs() < 1e-4);
        for a in 0..ACTIONS {
            if mask >> a & 1 == 0 {
                assert_eq!(r.policy[a], 0.0);
            }
        }
        assert!(mask >> r.best_move.unwrap().action() & 1 == 1);
        assert_eq!(r.children.iter().map(|c| c.visits).sum::<u32>(), 16);
    }
}

/// A timed Gumbel search sizes its sequential halving from the measured speed. Without a
/// measurement its first search guesses low (500 simulations a second) and ends early, which
/// in a tournament is the first decision after the opening; `calibrate` measures the speed
/// before it, forgets its tree, and a new game keeps the speed.
#[test]
fn a_calibrated_gumbel_search_spends_its_first_timed_move() {
    use bao::search::{Clock, ClockKind};
    use std::time::Duration;
    let params = SearchParams {
        algorithm: Algorithm::Gumbel,
        ..SearchParams::default()
    };
    let start = Position::start(Variant::Kujifunza);
    let budget = Duration::from_millis(100);
    let first_timed_search = |mcts: &mut Mcts| {
        let clock = Clock::start(ClockKind::Cpu, Some(budget), None);
        mcts.search_until(&start, 10_000_000, &clock, &mut UniformEvaluator)
            .unwrap()
            .simulations
    };

    let mut guessing = Mcts::new(params.clone(), 5);
    assert_eq!(guessing.sims_per_sec(), None);
    let guessed = first_timed_search(&mut guessing);
    assert!(guessed <= 50, "the first guess gave {guessed} simulations");

    let mut calibrated = Mcts::new(params, 5);
    calibrated
        .calibrate(&start, 256, &mut UniformEvaluator)
        .unwrap();
    let rate = calibrated.sims_per_sec().expect("a measured speed");
    assert!(rate > 0.0);
    assert_eq!(
        calibrated.tree_size(),
        0,
        "the calibration's tree is dropped"
    );
    calibrated.new_game(6);
    assert_eq!(
        calibrated.sims_per_sec(),
        Some(rate),
        "a new game keeps the speed"
    );
    let spent = first_timed_search(&mut calibrated);
    assert!(
        spent > 4 * guessed.max(1),
        "calibrated: {spent} simulations, guessed: {guessed}"
    );
}
