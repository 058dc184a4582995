//! Sequential probability ratio test for a two-player match.
//!
//! H0: the Elo difference is `elo0`; H1: it is `elo1` (logistic Elo). The decision is taken on
//! complete opening pairs with the generalised (pentanomial) log-likelihood ratio, as fishtest
//! does ([`Pentanomial::llr`]), against Wald's bounds `ln(beta/(1-alpha))` and
//! `ln((1-beta)/alpha)`. The per-game ratio `W ln(p1/p0) + L ln((1-p1)/(1-p0))` (with
//! `p = expected_score(elo)`, Bao having no draws) stays available for comparison: it treats
//! the two games of a pair as independent, which they are not.

use crate::eval::elo::expected_score;
use crate::eval::pentanomial::Pentanomial;

#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize)]
pub struct Sprt {
    pub elo0: f64,
    pub elo1: f64,
    pub alpha: f64,
    pub beta: f64,
}

/// The state of the test.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum SprtDecision {
    /// Keep playing.
    Continue,
    /// H0 accepted: the first player is not `elo1` stronger.
    H0,
    /// H1 accepted: the first player is `elo1` stronger (rather than `elo0`).
    H1,
}

impl Sprt {
    pub fn new(elo0: f64, elo1: f64) -> anyhow::Result<Sprt> {
        anyhow::ensure!(
            elo0.is_finite() && elo1.is_finite() && elo0 < elo1,
            "--sprt elo0,elo1 needs elo0 < elo1 (got {elo0},{elo1})"
        );
        Ok(Sprt {
            elo0,
            elo1,
            alpha: 0.05,
            beta: 0.05,
        })
    }

    /// Parses `elo0,elo1`.
    pub fn parse(text: &str) -> anyhow::Result<Sprt> {
        let (a, b) = text
            .split_once(',')
            .ok_or_else(|| anyhow::anyhow!("--sprt expects elo0,elo1, e.g. 0,50"))?;
        let num = |s: &str| {
            s.trim()
                .parse::<f64>()
                .map_err(|_| anyhow::anyhow!("--sprt: `{s}` is not a number"))
        };
        Sprt::new(num(a)?, num(b)?)
    }

    /// `(lower, upper)` bounds of the log likelihood ratio.
    pub fn bounds(&self) -> (f64, f64) {
        (
            (self.beta / (1.0 - self.alpha)).ln(),
            ((1.0 - self.beta) / self.alpha).ln(),
        )
    }

    /// Log likelihood ratio after `wins` and `losses` of the first player.
    pub fn llr(&self, wins: f64, losses: f64) -> f64 {
        let (p0, p1) = (expected_score(self.elo0), expected_score(self.elo1));
        wins * (p1 / p0).ln() + losses * ((1.0 - p1) / (1.0 - p0)).ln()
    }

    /// The generalised log-likelihood ratio of the first player's complete opening pairs.
    pub fn llr_pairs(&self, pairs: &Pentanomial) -> f64 {
        pairs.llr(self.elo0, self.elo1)
    }

    /// The decision on the first player's complete opening pairs.
    pub fn decide_pairs(&self, pairs: &Pentanomial) -> SprtDecision {
        self.decision_at(self.llr_pairs(pairs))
    }

    /// The decision on per-game counts (treating games as independent).
    pub fn decide(&self, wins: f64, losses: f64) -> SprtDecision {
        self.decision_at(self.llr(wins, losses))
    }

    fn decision_at(&self, llr: f64) -> SprtDecision {
        let (lo, hi) = self.bounds();
        if llr >= hi {
            SprtDecision::H1
        } else if llr <= lo {
            SprtDecision::H0
        } else {
            SprtDecision::Continue
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn llr_and_bounds_by_hand() {
        let s = Sprt::new(0.0, 100.0).unwrap();
        let (lo, hi) = s.bounds();
        assert!((hi - 19f64.ln()).abs() < 1e-12 && (lo + 19f64.ln()).abs() < 1e-12);
        // p0 = 0.5, p1 = 0.640065: one win adds ln(1.280130) = 0.246962,
        // one loss adds ln(0.719870) = -0.328684.
        assert!((s.llr(1.0, 0.0) - 0.246962).abs() < 1e-5);
        assert!((s.llr(0.0, 1.0) + 0.328684).abs() < 1e-5);
        // ln 19 = 2.944: 12 straight wins (2.96) accept H1, 11 do not; 9 losses (-2.96) accept H0.
        assert_eq!(s.decide(11.0, 0.0), SprtDecision::Continue);
        assert_eq!(s.decide(12.0, 0.0), SprtDecision::H1);
        assert_eq!(s.decide(0.0, 9.0), SprtDecision::H0);
        assert!(Sprt::parse("50,0").is_err());
        assert!(Sprt::parse("0;50").is_err());
        assert_eq!(Sprt::parse(" -10, 40").unwrap().elo1, 40.0);
    }
}
