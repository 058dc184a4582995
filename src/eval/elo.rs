//! Elo arithmetic: win-rate intervals and Bradley-Terry ratings by maximum likelihood.
//!
//! The model is the logistic Elo curve `P(i beats j) = 1 / (1 + 10^((R_j - R_i) / 400))`.
//! Ratings maximise the likelihood of all finished games together (so a tournament's ratings
//! use every pair, not just games against the anchor); one player is fixed at 0, and standard
//! errors come from the inverse of the observed information (minus the Hessian).
//!
//! The maximum-likelihood ratings exist only when no group of players won (or lost) every game
//! against the rest. When one did, every pair that played gets one virtual draw (half a win
//! each way) — the usual BayesElo-style prior — and the fit says so (`regularized`).

/// z for a two-sided 95% interval.
pub const Z95: f64 = 1.959_963_984_540_054;

const K: f64 = std::f64::consts::LN_10 / 400.0;

/// Expected score of a player `diff` Elo stronger than its opponent.
pub fn expected_score(diff: f64) -> f64 {
    1.0 / (1.0 + 10f64.powf(-diff / 400.0))
}

/// The Elo difference whose expected score is `p` (infinite at 0 and 1).
pub fn elo_from_score(p: f64) -> f64 {
    -400.0 * (1.0 / p - 1.0).log10()
}

/// Wilson score interval for `wins` out of `n` at normal quantile `z`; `(0, 1)` when `n = 0`.
pub fn wilson_interval(wins: f64, n: f64, z: f64) -> (f64, f64) {
    if n <= 0.0 {
        return (0.0, 1.0);
    }
    let p = wins / n;
    let z2 = z * z;
    let centre = (p + z2 / (2.0 * n)) / (1.0 + z2 / n);
    let half = z / (1.0 + z2 / n) * (p * (1.0 - p) / n + z2 / (4.0 * n * n)).sqrt();
    ((centre - half).max(0.0), (centre + half).min(1.0))
}

/// Finished games between two players (`i` won `wins_i`, `j` won `wins_j`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PairCounts {
    pub i: usize,
    pub j: usize,
    pub wins_i: f64,
    pub wins_j: f64,
}

/// Ratings of a fit; `None` for players with no finished games linking them to the anchor.
#[derive(Clone, Debug, PartialEq)]
pub struct EloFit {
    pub ratings: Vec<Option<f64>>,
    /// Standard errors (0 for the anchor).
    pub stderr: Vec<Option<f64>>,
    /// Whether the virtual-draw prior was needed (see module docs).
    pub regularized: bool,
}

impl EloFit {
    /// The 95% interval of player `i`, `(low, high)`.
    pub fn interval95(&self, i: usize) -> Option<(f64, f64)> {
        let (r, s) = (self.ratings[i]?, self.stderr[i]?);
        Some((r - Z95 * s, r + Z95 * s))
    }
}

/// Fits Bradley-Terry ratings for `n` players with `anchor` fixed at 0.
pub fn fit(n: usize, anchor: usize, pairs: &[PairCounts]) -> EloFit {
    assert!(anchor < n, "anchor out of range");
    // Players linked to the anchor by finished games.
    let played: Vec<&PairCounts> = pairs
        .iter()
        .filter(|p| p.wins_i + p.wins_j > 0.0 && p.i != p.j)
        .collect();
    let linked = reach(n, anchor, |a, b| {
        played
            .iter()
            .any(|p| p.i == a && p.j == b || p.i == b && p.j == a)
    });
    // The MLE exists iff the "beat" graph on linked players is strongly connected.
    let beat = |a: usize, b: usize| {
        played.iter().any(|p| {
            (p.i == a && p.j == b && p.wins_i > 0.0) || (p.j == a && p.i == b && p.wins_j > 0.0)
        })
    };
    let forward = reach(n, anchor, beat);
    let backward = reach(n, anchor, |a, b| beat(b, a));
    let regularized = (0..n).any(|x| linked[x] && !(forward[x] && backward[x]));
    let games: Vec<PairCounts> = played
        .iter()
        .map(|p| {
            let prior = if regularized { 0.5 } else { 0.0 };
            PairCounts {
                wins_i: p.wins_i + prior,
                wins_j: p.wins_j + prior,
                ..**p
            }
        })
        .collect();

    // Free parameters: linked players other than the anchor.
    let free: Vec<usize> = (0..n).filter(|&x| linked[x] && x != anchor).collect();
    let index = |x: usize| free.iter().position(|&f| f == x);
    let m = free.len();
    let mut r = vec![0.0f64; n];
    let mut info = vec![vec![0.0; m]; m];
    for _ in 0..200 {
        let mut grad = vec![0.0; m];
        info = vec![vec![0.0; m]; m];
        for g in &games {
            let p = expected_score(r[g.i] - r[g.j]);
            let total = g.wins_i + g.wins_j;
            let d = K * (g.wins_i - total * p); // d logL / d r_i
            let h = K * K * total * p * (1.0 - p);
            let (a, b) = (index(g.i), index(g.j));
            if let Some(a) = a {
                grad[a] += d;
                info[a][a] += h;
            }
            if let Some(b) = b {
                grad[b] -= d;
                info[b][b] += h;
            }
            if let (Some(a), Some(b)) = (a, b) {
                info[a][b] -= h;
                info[b][a] -= h;
            }
        }
        let Some(step) = solve(&info, &grad) else {
            break;
        };
        let mut biggest: f64 = 0.0;
        for (k, &x) in free.iter().enumerate() {
            let s = step[k].clamp(-400.0, 400.0);
            r[x] += s;
            biggest = biggest.max(s.abs());
        }
        if biggest < 1e-9 {
            break;
        }
    }
    let cov = invert(&info);
    let ratings = (0..n).map(|x| linked[x].then_some(r[x])).collect();
    let stderr = (0..n)
        .map(|x| {
            if x == anchor {
                Some(0.0)
            } else {
                let k = index(x)?;
                cov.as_ref().map(|c| c[k][k].max(0.0).sqrt())
            }
        })
        .collect();
    EloFit {
        ratings,
        stderr,
        regularized,
    }
}

/// Nodes reachable from `from` along `edge`.
fn reach(n: usize, from: usize, edge: impl Fn(usize, usize) -> bool) -> Vec<bool> {
    let mut seen = vec![false; n];
    seen[from] = true;
    let mut stack = vec![from];
    while let Some(a) = stack.pop() {
        for (b, s) in seen.iter_mut().enumerate() {
            if !*s && edge(a, b) {
                *s = true;
                stack.push(b);
            }
        }
    }
    seen
}

/// Solves `a x = b` by Gaussian elimination with partial pivoting; `None` if singular.
fn solve(a: &[Vec<f64>], b: &[f64]) -> Option<Vec<f64>> {
    let m = b.len();
    let mut aug: Vec<Vec<f64>> = a
        .iter()
        .zip(b)
        .map(|(row, &y)| row.iter().copied().chain([y]).collect())
        .collect();
    for c in 0..m {
        let p = (c..m).max_by(|&x, &y| aug[x][c].abs().total_cmp(&aug[y][c].abs()))?;
        if aug[p][c].abs() < 1e-300 {
            return None;
        }
        aug.swap(c, p);
        let pivot = aug[c].clone();
        for (r, row) in aug.iter_mut().enumerate() {
            if r != c {
                let f = row[c] / pivot[c];
                for (x, p) in row[c..].iter_mut().zip(&pivot[c..]) {
                    *x -= f * p;
                }
            }
        }
    }
    Some((0..m).map(|r| aug[r][m] / aug[r][r]).collect())
}

fn invert(a: &[Vec<f64>]) -> Option<Vec<Vec<f64>>> {
    let m = a.len();
    let cols: Option<Vec<Vec<f64>>> = (0..m)
        .map(|k| {
            solve(
                a,
                &(0..m).map(|r| (r == k) as u8 as f64).collect::<Vec<_>>(),
            )
        })
        .collect();
    let cols = cols?;
    Some(
        (0..m)
            .map(|r| (0..m).map(|c| cols[c][r]).collect())
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64, tol: f64) {
        assert!((a - b).abs() <= tol, "{a} vs {b}");
    }

    #[test]
    fn expected_score_and_inverse() {
        close(expected_score(0.0), 0.5, 1e-12);
        close(expected_score(400.0), 10.0 / 11.0, 1e-12);
        close(elo_from_score(0.75), 400.0 * 3f64.log10(), 1e-9); // 190.849
        close(elo_from_score(expected_score(-123.0)), -123.0, 1e-9);
    }

    #[test]
    fn wilson_matches_hand_computation() {
        // 30 of 40 at z = 1.96: centre (0.75 + 0.048018) / 1.096036 = 0.728095,
        // half 1.96 / 1.096036 * sqrt(0.0046875 + 0.00060023) = 0.130034.
        let (lo, hi) = wilson_interval(30.0, 40.0, Z95);
        close(lo, 0.598060, 1e-5);
        close(hi, 0.858129, 1e-5);
        assert_eq!(wilson_interval(0.0, 0.0, Z95), (0.0, 1.0));
        let (lo, hi) = wilson_interval(10.0, 10.0, Z95);
        // 10 of 10: centre (1 + 0.192073) / 1.384146 = 0.861234, half 0.138766.
        close(hi, 1.0, 1e-9);
        close(lo, 0.722467, 1e-5);
    }

    #[test]
    fn two_players_give_the_closed_form() {
        // A (1) beat random (0) 30 times of 40: R = 400 log10 3 = 190.85; the information is
        // n p (1-p) (ln 10 / 400)^2 = 7.5 * 3.3137e-5, so the standard error is 63.43.
        let fit = fit(
            2,
            0,
            &[PairCounts {
                i: 1,
                j: 0,
                wins_i: 30.0,
                wins_j: 10.0,
            }],
        );
        assert!(!fit.regularized);
        close(fit.ratings[0].unwrap(), 0.0, 1e-12);
        close(fit.ratings[1].unwrap(), 190.849, 1e-3);
        close(fit.stderr[1].unwrap(), 63.433, 1e-2);
        let (lo, hi) = fit.interval95(1).unwrap();
        close(hi - lo, 2.0 * Z95 * 63.433, 0.05);
    }

    #[test]
    fn three_players_consistent_results_are_additive() {
        // Scores that fit the model exactly: B is +100 on A, C +100 on B, so C is +200 on A.
        let n = 1000.0;
        let p1 = expected_score(100.0);
        let p2 = expected_score(200.0);
        let pairs = [
            PairCounts {
                i: 1,
                j: 0,
                wins_i: n * p1,
                wins_j: n * (1.0 - p1),
            },
            PairCounts {
                i: 2,
                j: 1,
                wins_i: n * p1,
                wins_j: n * (1.0 - p1),
            },
            PairCounts {
                i: 2,
                j: 0,
                wins_i: n * p2,
                wins_j: n * (1.0 - p2),
            },
        ];
        let fit = fit(3, 0, &pairs);
        close(fit.ratings[1].unwrap(), 100.0, 1e-6);
        close(fit.ratings[2].unwrap(), 200.0, 1e-6);
        // More games in all, so C's error is smaller than one pair alone would give.
        let alone = 1.0 / (K * K * n * p2 * (1.0 - p2)).sqrt();
        assert!(fit.stderr[2].unwrap() < alone);
    }

    #[test]
    fn perfect_scores_are_regularized_and_unlinked_players_unrated() {
        // 10-0: pure MLE is infinite; one virtual draw gives 10.5 of 11 = 400 log10 21.
        let fit = fit(
            3,
            0,
            &[PairCounts {
                i: 1,
                j: 0,
                wins_i: 10.0,
                wins_j: 0.0,
            }],
        );
        assert!(fit.regularized);
        close(fit.ratings[1].unwrap(), 400.0 * 21f64.log10(), 1e-6);
        assert_eq!(fit.ratings[2], None);
        assert_eq!(fit.stderr[2], None);
    }
}
