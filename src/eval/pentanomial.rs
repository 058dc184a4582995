//! Statistics of paired games: each opening is played twice with colours swapped, and the pair
//! is the unit of evidence.
//!
//! Why: the two games of a pair are strongly correlated (in Kiswahili, South wins most games
//! whoever plays it), so per-game intervals are wrong in both directions: too wide where the
//! opening decides the pair, too narrow where it does not. Scoring each pair 0, 0.5, 1, 1.5 or
//! 2 (the *pentanomial* counts) and taking the variance over pairs accounts for it, as
//! Stockfish's fishtest does. A game unfinished at the ply cap counts half a point here (Bao
//! has no draws, but a capped game is neither side's win).
//!
//! The sequential test is fishtest's generalised SPRT (GSPRT) on the pentanomial counts: for
//! each hypothesis the maximum-likelihood distribution of pair scores whose mean is the
//! hypothesis' expected score, and the log-likelihood ratio of the two.

use serde::Serialize;

use crate::eval::elo::{elo_from_score, expected_score, Z95};

/// Counts of pair scores from one player's side: `counts[k]` pairs scored `k / 2` points out of
/// 2 (0: both lost ... 4: both won).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Pentanomial {
    pub counts: [u32; 5],
}

/// What a pentanomial sample says about a player's strength.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct PairedEstimate {
    /// Mean score per game, in [0, 1].
    pub score: f64,
    /// 95% interval of the score (normal approximation over pairs).
    pub score_ci95: (f64, f64),
    pub elo: f64,
    pub elo_ci95: (f64, f64),
}

impl Pentanomial {
    /// Records one pair from the player's side: `points` in half points, 0..=4.
    pub fn add(&mut self, half_points: u32) {
        self.counts[half_points.min(4) as usize] += 1;
    }

    pub fn pairs(&self) -> u32 {
        self.counts.iter().sum()
    }

    /// The same pairs from the opponent's side.
    pub fn flipped(&self) -> Pentanomial {
        let mut counts = self.counts;
        counts.reverse();
        Pentanomial { counts }
    }

    /// Empirical distribution of the per-game score of a pair: `(score, probability)` for the
    /// five outcomes 0, 0.25, ..., 1.
    fn distribution(&self) -> [(f64, f64); 5] {
        let n = self.pairs().max(1) as f64;
        std::array::from_fn(|k| (k as f64 / 4.0, self.counts[k] as f64 / n))
    }

    /// Score, Elo and their 95% intervals; `None` without pairs. A sample with no spread (every
    /// pair the same score) gets the interval of one pair more of each neighbouring score,
    /// rather than a zero width it does not deserve.
    pub fn estimate(&self) -> Option<PairedEstimate> {
        let n = self.pairs();
        if n == 0 {
            return None;
        }
        let pdf = self.distribution();
        let mean: f64 = pdf.iter().map(|(a, p)| a * p).sum();
        let mut var: f64 = pdf.iter().map(|(a, p)| p * (a - mean).powi(2)).sum();
        if var == 0.0 {
            // One pair of spread (a quarter point each way) over n + 1 pairs.
            var = (0.25f64).powi(2) * 2.0 / (n as f64 + 2.0);
        }
        let half = Z95 * (var / n as f64).sqrt();
        let lo = (mean - half).clamp(0.0, 1.0);
        let hi = (mean + half).clamp(0.0, 1.0);
        Some(PairedEstimate {
            score: mean,
            score_ci95: (lo, hi),
            elo: elo_from_score(mean),
            elo_ci95: (elo_from_score(lo), elo_from_score(hi)),
        })
    }

    /// The GSPRT log-likelihood ratio of H1 (the player is `elo1` stronger) against H0 (it is
    /// `elo0` stronger), in logistic Elo, as fishtest computes it: empty cells are given a
    /// small count (1e-3) so that the maximum-likelihood problem has a solution.
    pub fn llr(&self, elo0: f64, elo1: f64) -> f64 {
        let n = self.pairs();
        if n == 0 {
            return 0.0;
        }
        let regularised: [f64; 5] = std::array::from_fn(|k| match self.counts[k] {
            0 => 1e-3,
            c => c as f64,
        });
        let total: f64 = regularised.iter().sum();
        let pdf: [(f64, f64); 5] =
            std::array::from_fn(|k| (k as f64 / 4.0, regularised[k] / total));
        let (s0, s1) = (expected_score(elo0), expected_score(elo1));
        let ll = |s: f64| -> f64 {
            // log of the ratio p*_k / p_k = -ln(1 + x (a_k - s)) of the MLE with mean s.
            let x = mle_multiplier(&pdf, s);
            pdf.iter().map(|(a, p)| -p * (1.0 + x * (a - s)).ln()).sum()
        };
        n as f64 * (ll(s1) - ll(s0))
    }
}

/// The Lagrange multiplier `x` of the maximum-likelihood distribution with mean `s` near the
/// empirical `pdf`: the root of `sum p (a - s) / (1 + x (a - s)) = 0` in the interval where
/// every `1 + x (a - s)` stays positive (the function falls strictly there, so bisection finds
/// it). Its distribution is `p / (1 + x (a - s))`.
fn mle_multiplier(pdf: &[(f64, f64); 5], s: f64) -> f64 {
    let (v, w) = (pdf[0].0, pdf[4].0);
    let s = s.clamp(v + 1e-9, w - 1e-9);
    let f = |x: f64| -> f64 {
        pdf.iter()
            .map(|(a, p)| p * (a - s) / (1.0 + x * (a - s)))
            .sum()
    };
    let (mut lo, mut hi) = (-1.0 / (w - s), 1.0 / (s - v));
    // Shrink the open interval a hair so that f stays finite at its ends.
    let eps = (hi - lo) * 1e-12;
    lo += eps;
    hi -= eps;
    for _ in 0..200 {
        let mid = 0.5 * (lo + hi);
        if f(mid) > 0.0 {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    0.5 * (lo + hi)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The GSPRT log-likelihood ratio against values computed independently (mpmath at 40
    /// digits, the multiplier found by `mpmath.findroot`'s Anderson solver, fishtest's
    /// regularisation of empty cells):
    ///
    /// ```text
    /// from mpmath import mp, mpf, log, findroot
    /// mp.dps = 40
    /// def L(elo): return 1 / (1 + mpf(10) ** (-mpf(elo) / 400))
    /// def llr(c, e0, e1):
    ///     n = sum(c); r = [x if x > 0 else mpf('1e-3') for x in c]; t = sum(r)
    ///     pdf = [(mpf(k) / 4, mpf(r[k]) / t) for k in range(5)]
    ///     def ll(s):
    ///         lo, hi = -1/(1-s), 1/s; eps = (hi-lo)*mpf('1e-30')
    ///         x = findroot(lambda x: sum(p*(a-s)/(1+x*(a-s)) for a, p in pdf),
    ///                      (lo+eps, hi-eps), solver='anderson', maxsteps=500, verify=False)
    ///         return sum(-p*log(1+x*(a-s)) for a, p in pdf)
    ///     return n * (ll(L(e1)) - ll(L(e0)))
    /// ```
    #[test]
    fn llr_matches_an_independent_computation() {
        for (counts, elo0, elo1, expected) in [
            ([10, 20, 40, 25, 5], 0.0, 10.0, -0.437_486_232_891_028),
            ([2, 10, 30, 40, 18], 0.0, 50.0, 10.568_120_203_162_888),
            ([0, 5, 20, 5, 0], -10.0, 10.0, 0.0),
            ([3, 12, 20, 8, 1], 0.0, 20.0, -1.449_343_410_061_09),
            ([0, 0, 0, 7, 3], 0.0, 30.0, 0.826_004_845_877_992),
        ] {
            let llr = Pentanomial { counts }.llr(elo0, elo1);
            assert!(
                (llr - expected).abs() < 1e-6,
                "{counts:?} [{elo0}, {elo1}]: {llr} against {expected}"
            );
        }
    }

    #[test]
    fn estimate_uses_the_spread_of_pairs() {
        // Every pair split 1-1: score 0.5 whatever the colours did; the per-pair spread is
        // small, so the interval is narrower than per-game binomial counting would give.
        let even = Pentanomial {
            counts: [0, 0, 100, 0, 0],
        };
        let e = even.estimate().unwrap();
        assert_eq!(e.score, 0.5);
        assert!(e.score_ci95.1 - e.score_ci95.0 < 0.05, "{e:?}");
        // Pairs won or lost outright: the same mean, a much wider interval.
        let split = Pentanomial {
            counts: [50, 0, 0, 0, 50],
        };
        let s = split.estimate().unwrap();
        assert_eq!(s.score, 0.5);
        assert!(s.score_ci95.1 - s.score_ci95.0 > 0.15, "{s:?}");
        assert_eq!(split.flipped(), split);
        assert_eq!(
            Pentanomial {
                counts: [1, 2, 3, 4, 5]
            }
            .flipped()
            .counts,
            [5, 4, 3, 2, 1]
        );
        assert!(Pentanomial::default().estimate().is_none());
    }
}
