//! Random games: statistics of the rules in play (`bao rules random`, `bao bench rules`), and
//! the uniformly random openings tournaments and solver labels start from.

use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

use crate::game::{After, MoveList, Outcome, Position, Side, Variant, WinReason};
use crate::util::seeds::mix;

/// Totals over a set of random games.
#[derive(Clone, Debug, Default)]
pub struct RandomStats {
    pub games: u64,
    pub plies: u64,
    pub min_plies: u64,
    pub max_plies: u64,
    /// Sum over positions of the number of legal moves (branching factor numerator).
    pub legal_moves: u64,
    pub captures: u64,
    pub seeds_captured: u64,
    pub seeds_sown: u64,
    /// Wins by `[side][reason]`, reason 0 = front-empty, 1 = no-move.
    pub wins: [[u64; 2]; 2],
    /// Games that reached the ply cap (R10: unfinished, never a win).
    pub unfinished: u64,
}

impl RandomStats {
    pub fn merge(mut self, o: RandomStats) -> RandomStats {
        self.min_plies = match (self.games, o.games) {
            (0, _) => o.min_plies,
            (_, 0) => self.min_plies,
            _ => self.min_plies.min(o.min_plies),
        };
        self.games += o.games;
        self.plies += o.plies;
        self.max_plies = self.max_plies.max(o.max_plies);
        self.legal_moves += o.legal_moves;
        self.captures += o.captures;
        self.seeds_captured += o.seeds_captured;
        self.seeds_sown += o.seeds_sown;
        for s in 0..2 {
            for r in 0..2 {
                self.wins[s][r] += o.wins[s][r];
            }
        }
        self.unfinished += o.unfinished;
        self
    }
}

/// Plays one uniformly random game; returns its outcome (`None`: hit `max_plies`).
pub fn play_random_game(
    variant: Variant,
    rng: &mut SmallRng,
    max_plies: u64,
    stats: &mut RandomStats,
) -> Option<Outcome> {
    let mut pos = Position::start(variant);
    let mut plies = 0;
    let mut list = MoveList::new();
    let outcome = loop {
        pos.legal_moves_into(&mut list);
        if list.is_empty() {
            break Some(Outcome {
                winner: pos.to_move().opponent(),
                reason: WinReason::NoMove,
            });
        }
        if plies >= max_plies {
            break None;
        }
        stats.legal_moves += list.len() as u64;
        let lm = list.as_slice()[rng.random_range(0..list.len())];
        plies += 1;
        stats.seeds_sown += lm.sown as u64;
        if lm.kind.is_capture() {
            stats.captures += 1;
            stats.seeds_captured += lm.captured as u64;
        }
        match lm.after {
            After::Position(next) => pos = next,
            After::Won(o) => break Some(o),
        }
    };
    stats.min_plies = if stats.games == 0 {
        plies
    } else {
        stats.min_plies.min(plies)
    };
    stats.games += 1;
    stats.plies += plies;
    stats.max_plies = stats.max_plies.max(plies);
    match outcome {
        Some(o) => stats.wins[o.winner.index()][(o.reason == WinReason::NoMove) as usize] += 1,
        None => stats.unfinished += 1,
    }
    outcome
}

/// Plays `games` random games from `seed`, spread over the rayon pool when `parallel`.
/// Game `i` always uses the RNG stream `seeds::derive(seed, i)`, so results do not depend on
/// threads.
pub fn random_games(
    variant: Variant,
    games: u64,
    seed: u64,
    max_plies: u64,
    parallel: bool,
) -> RandomStats {
    use rayon::prelude::*;
    let one = |i: u64| {
        let mut s = RandomStats::default();
        let mut rng = SmallRng::seed_from_u64(crate::util::seeds::derive(seed, i));
        play_random_game(variant, &mut rng, max_plies, &mut s);
        s
    };
    if parallel {
        (0..games)
            .into_par_iter()
            .map(one)
            .reduce(RandomStats::default, RandomStats::merge)
    } else {
        (0..games)
            .map(one)
            .fold(RandomStats::default(), RandomStats::merge)
    }
}

/// A readable summary of random-game statistics.
pub fn describe(variant: Variant, s: &RandomStats) -> String {
    let g = s.games.max(1) as f64;
    let p = s.plies.max(1) as f64;
    let pct = |x: u64| 100.0 * x as f64 / g;
    let name = |side: Side| {
        if side == Side::South {
            "South"
        } else {
            "North"
        }
    };
    let mut out = format!(
        "{variant}: {} random games\n  plies per game: mean {:.1}, min {}, max {}\n  legal moves per position: {:.2}\n  captures per game: {:.1} ({:.1} seeds captured)\n  seeds sown per move: {:.1}\n",
        s.games, s.plies as f64 / g, s.min_plies, s.max_plies, s.legal_moves as f64 / p,
        s.captures as f64 / g, s.seeds_captured as f64 / g, s.seeds_sown as f64 / p,
    );
    for side in Side::BOTH {
        let w = s.wins[side.index()];
        out += &format!(
            "  {} wins: {:.1}% ({:.1}% front row emptied, {:.1}% opponent without a move)\n",
            name(side),
            pct(w[0] + w[1]),
            pct(w[0]),
            pct(w[1])
        );
    }
    out += &format!("  unfinished (ply cap): {:.1}%\n", pct(s.unfinished));
    out
}

/// Opening `k` of a tournament (and draw `k` of `bao label`): `plies` uniformly random plies
/// from the start, redrawn if the game would end inside the opening or the side to move could
/// win at once after it. Returns the position and the moves.
pub fn opening(variant: Variant, plies: u32, seed: u64, k: u32) -> (Position, Vec<String>) {
    for attempt in 0u64.. {
        let mut rng =
            SmallRng::seed_from_u64(mix(mix(seed ^ 0x6f70_656e) ^ (k as u64) << 20 ^ attempt));
        let mut pos = Position::start(variant);
        let mut moves = Vec::new();
        let mut ok = true;
        for _ in 0..plies {
            let list = pos.legal_moves();
            if list.is_empty() {
                ok = false;
                break;
            }
            let lm = list.as_slice()[rng.random_range(0..list.len())];
            moves.push(lm.notation(pos.to_move()));
            match lm.after {
                After::Position(p) => pos = p,
                After::Won(_) => {
                    ok = false;
                    break;
                }
            }
        }
        // An opening the side to move wins at once measures nothing (both colours would just
        // take the win), and in kujifunza such openings are common: draw another.
        let list = pos.legal_moves();
        if ok && !list.is_empty() && !list.iter().any(|lm| matches!(lm.after, After::Won(_))) {
            return (pos, moves);
        }
    }
    unreachable!("the loop only ends by returning")
}

/// Walks up to `plies` uniformly random moves from the start of `variant`, showing `visit`
/// each position before its move; stops early at a position without a legal move or before a
/// move that ends the game. Returns the last position reached.
pub fn random_walk_with<R: Rng>(
    variant: Variant,
    plies: usize,
    rng: &mut R,
    mut visit: impl FnMut(&Position),
) -> Position {
    let mut pos = Position::start(variant);
    for _ in 0..plies {
        visit(&pos);
        let moves = pos.legal_moves();
        if moves.is_empty() {
            break;
        }
        match moves.as_slice()[rng.random_range(0..moves.len())].after {
            After::Position(p) => pos = p,
            After::Won(_) => break,
        }
    }
    pos
}

/// [`random_walk_with`] without a visitor: a position `plies` random moves into a game (fewer
/// where the game would end).
pub fn random_walk<R: Rng>(variant: Variant, plies: usize, rng: &mut R) -> Position {
    random_walk_with(variant, plies, rng, |_| {})
}

/// `n` positions with a legal move, each a random walk of a length drawn from `plies`: the
/// sample of real positions benchmarks and tests judge.
pub fn sample_positions<R: Rng>(
    variant: Variant,
    n: usize,
    plies: std::ops::Range<usize>,
    rng: &mut R,
) -> Vec<Position> {
    let mut out = Vec::with_capacity(n);
    while out.len() < n {
        let length = rng.random_range(plies.clone());
        let pos = random_walk(variant, length, rng);
        if !pos.legal_moves().is_empty() {
            out.push(pos);
        }
    }
    out
}
