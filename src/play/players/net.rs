//! Network players: PUCT search guided by a network, or its raw policy (`sims=0`).
//!
//! The raw-policy player is written against the [`Evaluator`] trait alone, so it plays with any
//! evaluator (tests use [`crate::search::UniformEvaluator`]). Loading a checkpoint and the
//! PUCT search come from `neuralnet` and `search`; [`load_evaluator`] and [`player_search_params`]
//! are the only places that touch them.

use std::time::Duration;

use anyhow::Context;

use super::spec::NetParams;
use super::{Analysis, ChosenMove, Limits, MoveScore, Player};
use crate::game::{After, LegalMove, Position, Variant, ACTIONS};
use crate::neuralnet::CachedEvaluator;
use crate::search::alphabeta::leaf_ab::LeafAlphaBetaEvaluator;
use crate::search::alphabeta::{AlphaBeta, AlphaBetaParams, Proof, SearchReport};
use crate::search::no_legal_move;
use crate::search::{Algorithm, Evaluator, Mcts, SearchParams};

/// Builds the `net:` player of a spec.
pub fn build(
    name: String,
    params: &NetParams,
    variant: Variant,
    seed: u64,
) -> anyhow::Result<Box<dyn Player>> {
    anyhow::ensure!(
        params.path.is_file(),
        "network checkpoint {} not found (net:PATH names a checkpoint file)",
        params.path.display()
    );
    let (mut evaluator, trained_with) = load_evaluator(params, variant)
        .with_context(|| format!("cannot load network {}", params.path.display()))?;
    if params.sims() == 0 {
        anyhow::ensure!(
            params.leaf_ab.is_none(),
            "`leaf_ab` mixes alpha-beta into the values a search reads; the raw policy (sims=0) reads none"
        );
        warm_up(evaluator.as_mut(), variant, 1)?;
        Ok(Box::new(RawPolicyPlayer::new(name, evaluator)))
    } else {
        let search = player_search_params(trained_with.as_ref(), params)?;
        if let Some(leaf) = params.leaf_alpha_beta().map_err(anyhow::Error::msg)? {
            evaluator = Box::new(LeafAlphaBetaEvaluator::new(evaluator, leaf));
        }
        warm_up(evaluator.as_mut(), variant, search.leaves_per_step)?;
        let player = SearchPlayer::new(name, params, search, evaluator, variant, seed)?;
        Ok(Box::new(player))
    }
}

/// A boxed evaluator that can move to a worker thread.
pub type SendEvaluator = Box<dyn Evaluator + Send>;

/// Evaluation cache slots of a searching network player: about 17 MB, several moves' worth of
/// positions at the speeds a CPU reaches, so transpositions and the subtree kept between moves
/// are judged once.
pub const CACHE_SLOTS: usize = 1 << 16;

/// Leaves a network player batches per evaluator call when neither its checkpoint's search
/// settings nor its spec say otherwise. Self-play batches across games and trains with one
/// leaf per tree; a single game can only batch within its tree, where virtual loss makes the
/// later leaves of a batch worse choices. Measured at equal visits (docs/equal-time.md, the
/// shipped Kiswahili model of the time, 200 simulations, 60 games each against one leaf a call):
/// 8 leaves -35 Elo (95% -123..53) for 1.5x the speed, 16 and 32 leaves -161 (-259..-64) for
/// 2.3x and 3.1x. 8 keeps nearly all the strength and most of the speed.
pub const PLAYER_LEAVES_PER_STEP: usize = 8;

/// The search settings of a network player: those the checkpoint was trained with (its
/// sidecar; the defaults for checkpoints that do not record them), with
/// [`PLAYER_LEAVES_PER_STEP`] and tree reuse for single-game play, then the spec's overrides.
pub fn player_search_params(
    trained_with: Option<&SearchParams>,
    params: &NetParams,
) -> anyhow::Result<SearchParams> {
    let mut search = trained_with.cloned().unwrap_or_default();
    if search.leaves_per_step == 1 {
        search.leaves_per_step = PLAYER_LEAVES_PER_STEP;
    }
    search.reuse_tree = true;
    search.with_overrides(params.search.iter().map(|(k, v)| (k.as_str(), v.as_str())))
}

/// Loads the checkpoint of `params` on its device, refusing one trained for another variant;
/// also returns the search settings recorded with it.
fn load_evaluator(
    params: &NetParams,
    variant: Variant,
) -> anyhow::Result<(SendEvaluator, Option<SearchParams>)> {
    // libtorch's threads are setup's default ($BAO_TORCH_THREADS, else 1): a player times
    // itself on its own thread's CPU clock.
    let device = params.device.unwrap_or_default();
    let backend = params.backend.unwrap_or_default();
    let precision = match params.precision {
        Some(p) => p,
        None => default_precision(device, backend)?,
    };
    let choice = crate::setup::NetChoice {
        device,
        precision,
        backend,
        threads: None,
    };
    let net = crate::setup::evaluator(&params.path, Some(variant), &choice)?;
    let search = net.network().search_params().cloned();
    Ok((Box::new(net), search))
}

/// The number format a `net:` player judges positions in when its spec names none: where the
/// Rust pass judges (the CPU device, a backend other than `torch`), int8 on a CPU with AVX-512
/// VNNI, else bf16 on one with AVX-512 BF16, else f32. Why: each step down in precision gave
/// the shipped Kiswahili model more simulations a move within the accuracy gates of
/// [`crate::neuralnet::agreement`], and won at equal time against the step above (bf16 against
/// f32 140-60, int8 against bf16 115-85; docs/measurements.md, "bf16 in the Rust pass" and
/// "int8 in the Rust pass"). libtorch's bf16 is slower than its f32 at a player's batches, so
/// libtorch always judges in f32 by default.
pub fn default_precision(
    device: crate::neuralnet::DeviceChoice,
    backend: crate::neuralnet::Backend,
) -> anyhow::Result<crate::neuralnet::Precision> {
    use crate::neuralnet::{native, Backend, Precision};
    if backend == Backend::Torch || device.resolve()? != tch::Device::Cpu {
        return Ok(Precision::F32);
    }
    Ok([Precision::Int8, Precision::Bf16]
        .into_iter()
        .find(|&p| native::supports(p))
        .unwrap_or(Precision::F32))
}

/// Evaluations of one position and of a full leaf batch (`leaves`) before the first move:
/// libtorch allocates and picks its kernels for each batch size on its first calls (tens to
/// hundreds of milliseconds, more in bf16), which would otherwise be charged to the first
/// timed move.
fn warm_up(net: &mut dyn Evaluator, variant: Variant, leaves: usize) -> anyhow::Result<()> {
    let start = Position::start(variant);
    for n in [1, leaves] {
        let positions = vec![start; n];
        let masks = vec![start.legal_moves().mask(); n];
        let (mut policy, mut values) = (vec![0.0; n * ACTIONS], vec![0.0; n]);
        net.evaluate(&positions, &masks, &mut policy, &mut values)
            .context("the network's first evaluation failed")?;
    }
    Ok(())
}

/// A network player that searches a number of simulations or a time a move, keeping its tree
/// between moves (the subtree under its move, entered again at the opponent's reply).
pub struct SearchPlayer {
    name: String,
    mcts: Mcts,
    sims: u32,
    ms: Option<u64>,
    evaluator: SendEvaluator,
    /// `prove=F[:guard=M]`: the alpha-beta searched at the root before the network.
    root_ab: Option<RootAlphaBeta>,
}

/// The alpha-beta a network player runs at the root of each timed move (`prove=F`): it plays a
/// proven win at once, and with `guard=M` it vetoes a network move it scores more than `M`
/// centi-seeds below its own. The idea of the veto: the network's search sees a few thousand
/// positions a move, the alpha-beta hundreds of thousands, so it should catch short tactics
/// the network's tree never reaches. Measured, it does not pay: at `guard=150` the Kiswahili
/// model lost 100 Elo against `alphabeta:ms=200`, and Kujifunza scored the same
/// (docs/equal-time.md, "A guard against tactics"); it stays an option for experiments.
struct RootAlphaBeta {
    search: AlphaBeta,
    /// The share of the move's time the root search gets.
    share: f32,
    /// The veto margin in centi-seeds (`guard=M`).
    guard: Option<i32>,
}

/// What the root alpha-beta left for the network's search.
enum RootVerdict {
    /// A proven win: play it.
    Proven(ChosenMove),
    /// No proof; its search, and the time it used.
    Searched(Option<SearchReport>, Duration),
}

/// The share of a guarded move's time kept back from the network's search for the check of
/// its move: the check searches one position one ply shallower than the root search did,
/// with the root's table warm, so it needs a fraction of the root search's time.
const GUARD_SHARE: f32 = 0.1;

/// True when the guard plays the alpha-beta's move: `net_score` (the network's move as the
/// alpha-beta scores it, one ply shallower from the position after it, for the side to move at
/// the root) is more than `margin` centi-seeds below the root search's best score.
fn vetoed(root_score: i32, net_score: i32, margin: i32) -> bool {
    net_score < root_score.saturating_sub(margin)
}

impl SearchPlayer {
    /// A player searching with `evaluator` behind an evaluation cache. A Gumbel player first
    /// measures its speed from the start position ([`Mcts::calibrate`]), on the evaluator
    /// alone so that no game starts with those positions already judged.
    pub fn new(
        name: String,
        params: &NetParams,
        search: SearchParams,
        mut evaluator: SendEvaluator,
        variant: Variant,
        seed: u64,
    ) -> anyhow::Result<SearchPlayer> {
        let seed = params.seed.unwrap_or(seed);
        let mut mcts = Mcts::new(search.clone(), seed);
        if search.algorithm == Algorithm::Gumbel {
            mcts.calibrate(
                &Position::start(variant),
                Self::CALIBRATION_SIMS,
                evaluator.as_mut(),
            )
            .context("the search's speed could not be measured")?;
            mcts.new_game(seed);
        }
        Ok(SearchPlayer {
            name,
            mcts,
            sims: params.sims(),
            ms: params.ms,
            evaluator: Box::new(CachedEvaluator::new(evaluator, CACHE_SLOTS)),
            root_ab: params.prove.map(|share| RootAlphaBeta {
                search: AlphaBeta::new(AlphaBetaParams::DEFAULT_TT_MB),
                share,
                guard: params.guard.map(|m| m.min(i32::MAX as u32) as i32),
            }),
        })
    }

    /// `prove=F`: an alpha-beta search within `share` of `time`. A proven win (the fastest
    /// it found) is the move to play; otherwise the report (kept for the guard) and the time
    /// it used.
    fn root_search(
        &mut self,
        pos: &Position,
        time: Duration,
        limits: &Limits,
    ) -> anyhow::Result<RootVerdict> {
        let Some(root) = self.root_ab.as_mut() else {
            return Ok(RootVerdict::Searched(None, Duration::ZERO));
        };
        let clock = limits.clock_for(Some(time.mul_f32(root.share)));
        let r = root
            .search
            .search(pos, AlphaBetaParams::MAX_DEPTH, &clock)?;
        let used = clock.elapsed();
        if r.proof() != Proof::Win {
            return Ok(RootVerdict::Searched(Some(r), used));
        }
        // Our tree follows the game (its root may still be our previous move's position).
        self.mcts.follow(pos, r.best.mv);
        Ok(RootVerdict::Proven(super::alphabeta::chosen_move(pos, &r)))
    }

    /// `guard=M`: scores the network's move `net` with the alpha-beta, one ply shallower from
    /// the position after it than the root search `root` went, within `time`; true (play the
    /// root search's move) when `net` scores more than M below it. The check gives way (no
    /// veto) when it cannot reach that depth in time, when the move ends the game (the
    /// network's tree sees that exactly) or when the root search saw only one ply.
    fn guard_veto(
        &mut self,
        net: &LegalMove,
        root: &SearchReport,
        time: Duration,
        limits: &Limits,
    ) -> anyhow::Result<bool> {
        let Some(RootAlphaBeta {
            search,
            guard: Some(margin),
            ..
        }) = self.root_ab.as_mut()
        else {
            return Ok(false);
        };
        if net.mv == root.best.mv || root.depth < 2 {
            return Ok(false);
        }
        let After::Position(child) = net.after else {
            return Ok(false);
        };
        if child.outcome().is_some() {
            return Ok(false);
        }
        let depth = root.depth - 1;
        let r = search.search(&child, depth, &limits.clock_for(Some(time)))?;
        let complete = r.depth == depth || r.proof() != Proof::Unknown;
        Ok(complete && vetoed(root.score, -r.score, *margin))
    }

    /// Simulations a Gumbel player's speed is measured with before its first move: enough
    /// evaluator steps that the rate is not one slow call's.
    const CALIBRATION_SIMS: usize = 256;

    /// The simulations and time of one move: explicit limits replace the spec's.
    fn budget(&self, limits: &Limits) -> (usize, Option<Duration>) {
        if limits.overrides() {
            let sims = match (limits.sims, limits.movetime) {
                (Some(n), _) => n,
                (None, Some(_)) => NetParams::MAX_TIMED_SIMS,
                (None, None) => self.sims,
            };
            (sims.max(1) as usize, limits.movetime)
        } else {
            (
                self.sims.max(1) as usize,
                self.ms.map(Duration::from_millis),
            )
        }
    }
}

impl Player for SearchPlayer {
    fn name(&self) -> String {
        self.name.clone()
    }

    fn new_game(&mut self, seed: u64) {
        self.mcts.new_game(seed);
        if let Some(root) = self.root_ab.as_mut() {
            root.search.clear();
        }
    }

    fn choose(&mut self, pos: &Position, limits: &Limits) -> anyhow::Result<ChosenMove> {
        let moves = pos.legal_moves();
        if moves.is_empty() {
            return Err(no_legal_move(pos));
        }
        let (sims, budget) = self.budget(limits);
        let (mut time, mut root, mut check_time) = (budget, None, Duration::ZERO);
        if let Some(t) = budget {
            match self.root_search(pos, t, limits)? {
                RootVerdict::Proven(chosen) => return Ok(chosen),
                RootVerdict::Searched(report, used) => {
                    let guarded = self.root_ab.as_ref().is_some_and(|r| r.guard.is_some());
                    check_time = if guarded {
                        t.mul_f32(GUARD_SHARE)
                    } else {
                        Duration::ZERO
                    };
                    time = Some(t.saturating_sub(used).saturating_sub(check_time));
                    root = report;
                }
            }
        }
        let clock = limits.clock_for(time);
        let result = self
            .mcts
            .search_until(pos, sims, &clock, &mut self.evaluator)?;
        let stats = self.mcts.last_stats();
        let best = result
            .best_move
            .context("search returned no move in a position with legal moves")?;
        let chosen = *moves.get(best).context("search chose an illegal move")?;
        if let Some(root) = root {
            // The check may also use what the network's search left of its time.
            let left = time.unwrap_or_default().saturating_sub(clock.elapsed());
            if self.guard_veto(&chosen, &root, check_time + left, limits)? {
                tracing::debug!(
                    "guard: alpha-beta's {} over the network's {}",
                    root.best.notation(pos.to_move()),
                    chosen.notation(pos.to_move())
                );
                let mut vetoed = super::alphabeta::chosen_move(pos, &root);
                // Cost tables count a network player's simulations a move, not the guard's
                // alpha-beta nodes (its depth would read as the player's, too).
                vetoed.analysis.nodes = Some(result.simulations as u64);
                vetoed.analysis.depth = None;
                return Ok(vetoed);
            }
        }
        // The tree stays whole until the next search, which keeps the subtree of our move and
        // the opponent's reply (`Mcts::search_until`): moving it now would copy most of the
        // tree after the search has spent its time, past the move's budget.
        let mover = pos.to_move();
        let mut children = result.children.clone();
        children.sort_by_key(|c| std::cmp::Reverse(c.visits));
        let top = children
            .iter()
            .take(5)
            .filter_map(|c| {
                let lm = moves.get(c.mv)?;
                let score = match c.proven_win {
                    Some(true) => Some(1.0),
                    Some(false) => Some(-1.0),
                    None => c.q,
                };
                Some(MoveScore {
                    notation: lm.notation(mover),
                    visits: Some(c.visits),
                    score,
                })
            })
            .collect();
        Ok(ChosenMove {
            mv: chosen,
            analysis: Analysis {
                value: Some(result.root_value.clamp(-1.0, 1.0)),
                top,
                pv: crate::search::analyze::line_notation(pos, &result.pv),
                nodes: Some(result.simulations as u64),
                depth: None,
                batch_fill: (stats.evaluator_calls > 0).then_some(stats.batch_fill),
            },
        })
    }
}

/// Plays the argmax of the evaluator's policy over the legal moves; no search.
pub struct RawPolicyPlayer<E> {
    name: String,
    evaluator: E,
    policy: Vec<f32>,
}

impl<E: Evaluator + Send> RawPolicyPlayer<E> {
    pub fn new(name: String, evaluator: E) -> RawPolicyPlayer<E> {
        RawPolicyPlayer {
            name,
            evaluator,
            policy: vec![0.0; ACTIONS],
        }
    }
}

impl<E: Evaluator + Send> Player for RawPolicyPlayer<E> {
    fn name(&self) -> String {
        self.name.clone()
    }

    fn choose(&mut self, pos: &Position, _limits: &Limits) -> anyhow::Result<ChosenMove> {
        let moves = pos.legal_moves();
        if moves.is_empty() {
            return Err(no_legal_move(pos));
        }
        let mut value = [0.0f32];
        self.evaluator
            .evaluate(&[*pos], &[moves.mask()], &mut self.policy, &mut value)
            .with_context(|| format!("evaluator {} failed", self.evaluator.name()))?;
        // Legal moves by prior, best first; ties keep move-list order (deterministic).
        let mut ranked: Vec<(f32, usize)> = moves
            .iter()
            .enumerate()
            .map(|(i, lm)| (self.policy[lm.mv.action()], i))
            .collect();
        anyhow::ensure!(
            ranked.iter().all(|(p, _)| p.is_finite()),
            "evaluator {} returned a non-finite policy",
            self.evaluator.name()
        );
        ranked.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
        let mover = pos.to_move();
        let best = moves.as_slice()[ranked[0].1];
        let top = ranked
            .iter()
            .take(5)
            .map(|&(p, i)| MoveScore {
                notation: moves.as_slice()[i].notation(mover),
                visits: None,
                score: Some(p),
            })
            .collect();
        Ok(ChosenMove {
            mv: best,
            analysis: Analysis {
                value: Some(value[0].clamp(-1.0, 1.0)),
                top,
                pv: vec![best.notation(mover)],
                nodes: Some(1),
                depth: None,
                batch_fill: None,
            },
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::search::UniformEvaluator;

    /// Puts all policy mass on the highest legal action, so the argmax is known.
    struct HighestAction;
    impl Evaluator for HighestAction {
        fn evaluate(
            &mut self,
            _p: &[Position],
            masks: &[u64],
            policy: &mut [f32],
            values: &mut [f32],
        ) -> anyhow::Result<()> {
            policy.fill(0.0);
            policy[63 - masks[0].leading_zeros() as usize] = 1.0;
            values[0] = 0.5;
            Ok(())
        }
        fn name(&self) -> String {
            "highest".into()
        }
    }

    #[test]
    fn the_guard_vetoes_only_past_its_margin() {
        assert!(!vetoed(300, 150, 150), "exactly the margin below stands");
        assert!(vetoed(300, 149, 150));
        assert!(
            !vetoed(300, 400, 150),
            "better than the alpha-beta's own best"
        );
        // A forced loss against a position that is not lost; no overflow at the win scores.
        assert!(vetoed(-200, -999_990, 100));
        assert!(
            !vetoed(-999_990, -999_994, 100),
            "all moves lose: slower or faster alike"
        );
        assert!(!vetoed(i32::MIN, i32::MIN, i32::MAX));
    }

    #[test]
    fn raw_policy_plays_the_argmax_of_any_evaluator() {
        for v in Variant::ALL {
            let pos = Position::start(v);
            let moves = pos.legal_moves();
            let mut uniform = RawPolicyPlayer::new("u".into(), UniformEvaluator);
            let c = uniform.choose(&pos, &Limits::default()).unwrap();
            assert_eq!(
                c.mv,
                moves.as_slice()[0],
                "uniform ties go to the first legal move"
            );
            assert_eq!(c.analysis.value, Some(0.0));

            let mut high = RawPolicyPlayer::new("h".into(), HighestAction);
            let c = high.choose(&pos, &Limits::default()).unwrap();
            let top = moves.iter().map(|lm| lm.mv.action()).max().unwrap();
            assert_eq!(c.mv.mv.action(), top);
            assert_eq!(c.analysis.top[0].score, Some(1.0));
            assert_eq!(c.analysis.win_probability(), Some(0.75));
        }
    }

    #[test]
    fn net_players_load_checkpoints_and_refuse_bad_ones() {
        use crate::neuralnet::{Lineage, NetConfig, Network};
        let spec: crate::play::players::PlayerSpec =
            "net:/no/such/file.safetensors:sims=0".parse().unwrap();
        let err = crate::play::players::build(&spec, Variant::Kujifunza, 0)
            .err()
            .unwrap();
        assert!(err.to_string().contains("not found"), "{err:#}");

        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("tiny.safetensors");
        let net = Network::new(
            &NetConfig::preset("tiny").unwrap(),
            Variant::Kujifunza,
            tch::Device::Cpu,
        )
        .unwrap();
        net.save(&path, &Lineage::default()).unwrap();
        let pos = Position::start(Variant::Kujifunza);
        for sims in [0, 8] {
            let spec: crate::play::players::PlayerSpec =
                format!("net:{}:sims={sims}", path.display())
                    .parse()
                    .unwrap();
            let mut p = crate::play::players::build(&spec, Variant::Kujifunza, 0).unwrap();
            let c = p.choose(&pos, &Limits::default()).unwrap();
            assert!(pos.legal_moves().get(c.mv.mv).is_some());
            assert!(!c.analysis.pv.is_empty());
        }
        // A network trained for the other variant is refused, naming the variant.
        let spec: crate::play::players::PlayerSpec =
            format!("net:{}", path.display()).parse().unwrap();
        let err = crate::play::players::build(&spec, Variant::Kiswahili, 0)
            .err()
            .unwrap();
        assert!(format!("{err:#}").contains("kujifunza"), "{err:#}");
        // A file that is no checkpoint gives an error, not a crash.
        let junk = dir.path().join("junk.safetensors");
        std::fs::write(&junk, b"not a checkpoint").unwrap();
        let spec: crate::play::players::PlayerSpec =
            format!("net:{}", junk.display()).parse().unwrap();
        assert!(crate::play::players::build(&spec, Variant::Kujifunza, 0).is_err());
    }
}
