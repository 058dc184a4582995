//! Equal-time play: hard time limits, proven moves, leaf batching.

mod common;

use std::time::Duration;

use bao::eval::movecost::MoveCosts;
use bao::eval::tournament::{opening, play_game};
use bao::game::{After, Position, Variant, ACTIONS};
use bao::neuralnet::{DeviceChoice, NetEvaluator};
use bao::play::players::{self, Limits};
use bao::search::alphabeta::leaf_ab::{LeafAlphaBeta, LeafAlphaBetaEvaluator};
use bao::search::clock::overshoot_margin;
use bao::search::{Algorithm, Clock, ClockKind, Evaluator, Mcts, SearchParams, UniformEvaluator};

const T_MS: u64 = 30;

/// Plays `spec` against `greedy` from seeded openings until it has made at least 100 moves;
/// returns its move costs, timed on this thread's CPU clock.
fn costs_of(spec: &str, variant: Variant) -> MoveCosts {
    let mut timed = players::build_str(spec, variant, 1).unwrap();
    let mut other = players::build_str("greedy", variant, 2).unwrap();
    let limits = Limits {
        clock: ClockKind::Cpu,
        ..Limits::default()
    };
    let mut total = MoveCosts::default();
    for game in 0u32.. {
        if total.moves() >= 100 {
            break;
        }
        let (start, moves) = opening(variant, 4, 7, game);
        timed.new_game(game as u64);
        other.new_game(game as u64);
        let mut costs = [MoveCosts::default(), MoveCosts::default()];
        let side = (game % 2) as usize;
        let (south, north) = if side == 0 {
            (&mut *timed, &mut *other)
        } else {
            (&mut *other, &mut *timed)
        };
        play_game(
            south,
            north,
            start,
            moves.len() as u32,
            200,
            &limits,
            |pos, chosen, time| costs[pos.to_move().index()].record(time, &chosen.analysis),
        );
        total.merge(&costs[side]);
    }
    total
}

/// A player with `ms=T` never thinks longer than T plus the stated margin, over 100 moves of
/// each kind of searching player (thread CPU time, so other load on the machine cannot
/// lengthen it).
#[test]
fn a_timed_player_never_exceeds_its_time_plus_the_margin() {
    let margin = overshoot_margin(Duration::from_millis(T_MS));
    let limit = Duration::from_millis(T_MS) + margin;
    let cases = [
        (format!("alphabeta:ms={T_MS}"), Variant::Kiswahili),
        (format!("mcts:ms={T_MS}"), Variant::Kiswahili),
        (
            format!("net:models/kiswahili.safetensors:ms={T_MS}"),
            Variant::Kiswahili,
        ),
        (
            format!("net:models/kujifunza.safetensors:ms={T_MS}"),
            Variant::Kujifunza,
        ),
        (
            format!("net:models/kiswahili.safetensors:ms={T_MS}:algorithm=gumbel"),
            Variant::Kiswahili,
        ),
        // The alpha-beta at each leaf runs inside the evaluator call, between clock readings.
        (
            format!("net:models/kiswahili.safetensors:ms={T_MS}:leaf_ab=6"),
            Variant::Kiswahili,
        ),
        // Three searches a move: the root alpha-beta, the network's, the guard's check.
        (
            format!("net:models/kiswahili.safetensors:ms={T_MS}:prove=0.3:guard=100"),
            Variant::Kiswahili,
        ),
    ];
    for (spec, variant) in cases {
        let report = costs_of(&spec, variant).report(&spec, ClockKind::Cpu);
        assert!(report.moves >= 100, "{spec}: {} moves", report.moves);
        let max = report.max_ms.unwrap();
        assert!(
            max <= limit.as_secs_f64() * 1e3,
            "{spec}: a move took {max:.2} ms of CPU time, over {T_MS} ms + {margin:?}"
        );
        // And it used its time: a search that stops far too early is not at equal time either
        // (alpha-beta and the network stop sooner on proven positions, so the mean is lower).
        assert!(
            report.mean_ms.unwrap() > 0.2 * T_MS as f64,
            "{spec}: {report:?}"
        );
    }
}

fn after_positions(pos: &Position) -> Vec<(usize, Option<Position>)> {
    pos.legal_moves()
        .iter()
        .map(|lm| match lm.after {
            After::Won(_) => (lm.mv.action(), None),
            After::Position(p) => (lm.mv.action(), Some(p)),
        })
        .collect()
}

/// Positions from the conformance vectors, both variants, with a move to make.
fn vector_positions() -> Vec<Position> {
    common::vector_positions()
        .into_iter()
        .filter(|p| !p.legal_moves().is_empty())
        .collect()
}

fn params(algorithm: Algorithm, leaves: usize) -> SearchParams {
    SearchParams {
        algorithm,
        leaves_per_step: leaves,
        ..SearchParams::default()
    }
}

/// A move that wins at once is always played, whatever the budget and algorithm; a child
/// proven lost is never chosen while another move exists (R10: the game ends when a side cannot
/// move).
#[test]
fn a_proven_win_is_always_played_and_a_proven_loss_never_chosen() {
    let (mut wins_checked, mut losses_checked) = (0, 0);
    for pos in vector_positions() {
        let afters = after_positions(&pos);
        let winning: Vec<usize> = afters
            .iter()
            .filter(|(_, p)| p.is_none())
            .map(|(a, _)| *a)
            .collect();
        for algorithm in [Algorithm::Puct, Algorithm::Gumbel] {
            for sims in [1usize, 2, 8, 64] {
                let mut mcts = Mcts::new(params(algorithm, 8), 3);
                let r = mcts.search(&pos, sims, &mut UniformEvaluator).unwrap();
                let best = r.best_move.unwrap().action();
                if !winning.is_empty() {
                    assert!(
                        winning.contains(&best),
                        "{algorithm:?} {sims} sims missed a win\n{pos}"
                    );
                    assert_eq!(r.root_proven_win, Some(true));
                    wins_checked += 1;
                    continue;
                }
                let lost: Vec<usize> = r
                    .children
                    .iter()
                    .filter(|c| c.proven_win == Some(false))
                    .map(|c| c.action)
                    .collect();
                if !lost.is_empty() && lost.len() < r.children.len() {
                    assert!(
                        !lost.contains(&best),
                        "{algorithm:?} {sims} sims chose a proven loss\n{pos}"
                    );
                    losses_checked += 1;
                }
            }
        }
        // Timed, as a player searches: the win is played and the search ends early.
        if !winning.is_empty() {
            let mut mcts = Mcts::new(params(Algorithm::Puct, 16), 3);
            let clock = Clock::start(ClockKind::Cpu, Some(Duration::from_secs(5)), None);
            let r = mcts
                .search_until(&pos, 10_000_000, &clock, &mut UniformEvaluator)
                .unwrap();
            assert!(winning.contains(&r.best_move.unwrap().action()));
            assert!(
                clock.elapsed() < Duration::from_secs(1),
                "a proven root ends the search"
            );
        }
    }
    assert!(
        wins_checked >= 20 && losses_checked >= 20,
        "{wins_checked} wins, {losses_checked} losses"
    );
}

/// Deterministic priors and values that depend on the position alone (not uniform, so that
/// the search's choices depend on them).
struct Hashed {
    calls: Vec<usize>,
}

impl Evaluator for Hashed {
    fn evaluate(
        &mut self,
        positions: &[Position],
        masks: &[u64],
        policy: &mut [f32],
        values: &mut [f32],
    ) -> anyhow::Result<()> {
        self.calls.push(positions.len());
        for (k, (pos, &m)) in positions.iter().zip(masks).enumerate() {
            let h = pos.hash64();
            let p = &mut policy[k * ACTIONS..(k + 1) * ACTIONS];
            let mut sum = 0.0;
            for (a, x) in p.iter_mut().enumerate() {
                *x = if m >> a & 1 == 1 {
                    1.0 + ((h >> (a % 60)) & 7) as f32
                } else {
                    0.0
                };
                sum += *x;
            }
            p.iter_mut().for_each(|x| *x /= sum.max(1e-9));
            values[k] = ((h % 2001) as f32 / 1000.0 - 1.0) * 0.9;
        }
        Ok(())
    }
    fn name(&self) -> String {
        "hashed".into()
    }
}

/// Leaf batching with one leaf a call is the unbatched search exactly: every call holds one
/// position, and the result (visits, values, chosen move) equals that of a search whose
/// evaluator answers from a cache (which changes when positions are evaluated, not what).
#[test]
fn one_leaf_per_call_is_the_unbatched_search() {
    let positions = vector_positions();
    for pos in positions.iter().step_by(7).take(40) {
        for algorithm in [Algorithm::Puct, Algorithm::Gumbel] {
            let mut one = Hashed { calls: Vec::new() };
            let a = Mcts::new(params(algorithm, 1), 5)
                .search(pos, 100, &mut one)
                .unwrap();
            assert!(
                one.calls.iter().all(|&n| n == 1),
                "one leaf a call: {:?}",
                one.calls
            );
            let mut cached =
                bao::neuralnet::CachedEvaluator::new(Hashed { calls: Vec::new() }, 1 << 10);
            let b = Mcts::new(params(algorithm, 1), 5)
                .search(pos, 100, &mut cached)
                .unwrap();
            assert_eq!(a.best_move, b.best_move);
            assert_eq!(a.simulations, b.simulations);
            let va: Vec<(usize, u32)> = a.children.iter().map(|c| (c.action, c.visits)).collect();
            let vb: Vec<(usize, u32)> = b.children.iter().map(|c| (c.action, c.visits)).collect();
            assert_eq!(va, vb, "{algorithm:?}\n{pos}");
            assert_eq!(a.root_value.to_bits(), b.root_value.to_bits());
            // Batched: fewer calls, the same number of simulations, mostly full batches.
            let mut many = Hashed { calls: Vec::new() };
            let c = Mcts::new(params(algorithm, 16), 5)
                .search(pos, 100, &mut many)
                .unwrap();
            assert_eq!(c.simulations, a.simulations);
            assert!(many.calls.len() < one.calls.len() || a.root_proven_win.is_some());
        }
    }
}

/// `leaf_ab=D`: the spec keeps the depth and weight in its canonical text, refuses depths and
/// weights out of range (and a weight without a depth, or a raw-policy player that would read
/// no value); with the real network the evaluator's value is the stated blend of the network's
/// and a D-ply alpha-beta's, its policy the network's; and the player searches with it.
#[test]
fn a_network_player_with_alpha_beta_at_its_leaves() {
    let model = "models/kiswahili.safetensors";
    let spec: players::PlayerSpec = format!("net:{model}:sims=64:leaf_ab=3:leaf_ab_weight=0.5")
        .parse()
        .unwrap();
    assert!(
        spec.to_string().ends_with(":leaf_ab=3:leaf_ab_weight=0.5"),
        "{spec}"
    );
    let reparsed: players::PlayerSpec = spec.to_string().parse().unwrap();
    assert_eq!(reparsed, spec);
    for (bad, says) in [
        ("leaf_ab=0", "expected 1 to 8 plies"),
        ("leaf_ab=9", "expected 1 to 8 plies"),
        ("leaf_ab=three", "leaf_ab"),
        ("leaf_ab=4:leaf_ab_weight=1.5", "share of the value"),
        ("leaf_ab=4:leaf_ab_weight=0", "share of the value"),
        ("leaf_ab_weight=0.5", "needs `leaf_ab=D`"),
    ] {
        common::assert_spec_refused(&format!("net:{model}:{bad}"), says);
    }
    let raw = players::build_str(
        &format!("net:{model}:sims=0:leaf_ab=4"),
        Variant::Kiswahili,
        1,
    );
    let e = format!(
        "{:#}",
        raw.err().expect("a raw policy with leaf_ab is refused")
    );
    assert!(e.contains("raw policy"), "{e}");

    // The evaluator the player searches with: its value is the stated mix, half the network's,
    // half the 4-ply alpha-beta's (positions a few plies into games, where the two disagree);
    // its policy is the network's.
    let positions: Vec<Position> = (0..6u32)
        .map(|g| opening(Variant::Kiswahili, 8, 3, g).0)
        .filter(|p| !p.legal_moves().is_empty())
        .collect();
    assert!(positions.len() >= 4);
    let masks: Vec<u64> = positions.iter().map(|p| p.legal_moves().mask()).collect();
    let n = positions.len();
    let load = || {
        NetEvaluator::load_for(
            std::path::Path::new(model),
            Variant::Kiswahili,
            DeviceChoice::Cpu,
        )
        .unwrap()
    };
    let judge = |e: &mut dyn Evaluator| {
        let (mut policy, mut values) = (vec![0.0; n * ACTIONS], vec![0.0; n]);
        e.evaluate(&positions, &masks, &mut policy, &mut values)
            .unwrap();
        (policy, values)
    };
    let (policy, alone) = judge(&mut load());
    let leaf = LeafAlphaBeta {
        depth: 4,
        weight: 0.5,
    };
    let (mixed_policy, mixed) = judge(&mut LeafAlphaBetaEvaluator::new(load(), leaf));
    assert_eq!(mixed_policy, policy);
    let mut differ = 0;
    for (i, pos) in positions.iter().enumerate() {
        let ab = players::build_str("alphabeta:depth=4", Variant::Kiswahili, 1)
            .unwrap()
            .choose(pos, &Limits::default())
            .unwrap()
            .analysis
            .value
            .unwrap();
        let want = 0.5 * alone[i] + 0.5 * ab;
        assert!(
            (mixed[i] - want).abs() < 1e-4,
            "network {}, alpha-beta {ab}, mixed {}\n{pos}",
            alone[i],
            mixed[i]
        );
        differ += ((alone[i] - ab).abs() > 0.05) as usize;
    }
    assert!(
        differ > 0,
        "the network and the alpha-beta agree everywhere: no test"
    );

    // And the player searches with it: its values are not the network-alone player's.
    let root_value = |spec: &str, pos: &Position| {
        let mut p = players::build_str(spec, Variant::Kiswahili, 1).unwrap();
        let c = players::choose_legal(p.as_mut(), pos, &Limits::default()).unwrap();
        c.analysis.value.unwrap()
    };
    let changed = positions
        .iter()
        .filter(|pos| {
            let alone = root_value(&format!("net:{model}:sims=32"), pos);
            let mixed = root_value(&format!("net:{model}:sims=32:leaf_ab=4"), pos);
            (alone - mixed).abs() > 1e-3
        })
        .count();
    assert!(changed > 0, "leaf_ab changed no search's value");
}

/// `guard=M`: in positions where the network's own move loses by force within three plies and
/// the position itself is not (seen to be) lost, a guarded player (one simulation, so the network's move
/// is its policy's; the root alpha-beta with half of 200 ms) plays another move, where the
/// same player without the guard plays the losing one. The option needs `prove=F`, must be
/// positive, and keeps its place in the spec's text.
#[test]
fn a_guard_vetoes_a_network_move_that_loses_by_force() {
    use bao::search::alphabeta::{AlphaBeta, Proof};
    // The model shipped before the student: its raw policy blunders often enough to find four.
    let model = "models/kujifunza-original.safetensors";
    let variant = Variant::Kujifunza;
    let spec: players::PlayerSpec = format!("net:{model}:sims=1:ms=200:prove=0.5:guard=150")
        .parse()
        .unwrap();
    assert!(spec.to_string().ends_with(":prove=0.5:guard=150"), "{spec}");
    for (bad, says) in [
        ("guard=100", "give `prove` too"),
        ("prove=0.5:guard=0", "at least 1"),
        ("prove=0.5:guard=-3", "guard"),
    ] {
        common::assert_spec_refused(&format!("net:{model}:{bad}"), says);
    }

    // Positions a few to a dozen random plies in where the policy's move loses by force.
    let mut policy = players::build_str(&format!("net:{model}:sims=0"), variant, 1).unwrap();
    let mut ab = AlphaBeta::new(16);
    let unlimited = Clock::unlimited();
    let mut blunders = Vec::new();
    for k in 0..400u32 {
        if blunders.len() == 4 {
            break;
        }
        let (pos, _) = opening(variant, 4 + k % 10, 11, k);
        let chosen = policy.choose(&pos, &Limits::default()).unwrap().mv;
        let After::Position(child) = chosen.after else {
            continue;
        };
        if child.outcome().is_some() {
            continue;
        }
        ab.clear();
        let loses = ab.search(&child, 3, &unlimited).unwrap().proof() == Proof::Win;
        // Not lost as it stands, as far as three times the guard's own search time sees
        // (where every move loses, the guard has nothing better to offer).
        ab.clear();
        let deep = Clock::start(ClockKind::Cpu, Some(Duration::from_millis(300)), None);
        if loses && ab.search(&pos, 64, &deep).unwrap().proof() != Proof::Loss {
            blunders.push((pos, chosen.mv));
        }
    }
    assert!(
        !blunders.is_empty(),
        "no position where the policy blunders"
    );
    let limits = Limits {
        clock: ClockKind::Cpu,
        ..Limits::default()
    };
    let mut unguarded_blunders = 0;
    for (pos, blunder) in &blunders {
        let mut guarded = players::build(&spec, variant, 1).unwrap();
        let mv = guarded.choose(pos, &limits).unwrap().mv.mv;
        assert_ne!(
            mv, *blunder,
            "the guard let a forced loss through in {pos:?}"
        );
        let mut plain =
            players::build_str(&format!("net:{model}:ms=200:sims=1:prove=0.5"), variant, 1)
                .unwrap();
        unguarded_blunders += usize::from(plain.choose(pos, &limits).unwrap().mv.mv == *blunder);
    }
    assert!(
        unguarded_blunders > 0,
        "without the guard the player avoided all {} blunders itself",
        blunders.len()
    );
}
