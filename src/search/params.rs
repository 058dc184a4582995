//! Search parameters: the `[search]` section of a run config.

use serde::{Deserialize, Serialize};

/// How the root chooses which child to simulate.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Algorithm {
    /// AlphaZero PUCT everywhere, Dirichlet noise at the root when noise is on.
    Puct,
    /// Gumbel AlphaZero root (Danihelka et al. 2022): Gumbel top-k candidates, sequential
    /// halving over the simulation budget, completed-Q policy target. PUCT below the root.
    /// Meant for low simulation counts (it improves the policy even with 8 to 32 sims).
    Gumbel,
}

/// Every knob of the tree search. Defaults follow AlphaZero / KataGo practice.
///
/// In TOML (all keys optional):
/// ```toml
/// [search]
/// algorithm = "puct"          # or "gumbel"
/// c_puct = 1.25               # exploration constant
/// c_puct_base = 19652.0       # growth: c = c_puct + c_puct_factor * ln((N + base + 1) / base)
/// c_puct_factor = 0.0         # 0 = constant c_puct
/// fpu_reduction = 0.25        # unvisited child value = parent Q - r * sqrt(visited prior mass)
/// fpu_reduction_root = 0.0
/// dirichlet_alpha = 0.3
/// dirichlet_fraction = 0.25   # share of noise in root priors when noise is on; 0 = none
/// virtual_loss = 1.0
/// leaves_per_step = 1         # leaves selected per tree per evaluator call
/// reuse_tree = true
/// gumbel_m = 16               # Gumbel candidates at the root
/// gumbel_c_visit = 50.0
/// gumbel_c_scale = 1.0
/// forced_playouts = 0.0       # KataGo's k (2.0 there); 0 = off. PUCT self-play roots only
/// ```
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct SearchParams {
    pub algorithm: Algorithm,
    pub c_puct: f32,
    pub c_puct_base: f32,
    pub c_puct_factor: f32,
    pub fpu_reduction: f32,
    pub fpu_reduction_root: f32,
    pub dirichlet_alpha: f32,
    pub dirichlet_fraction: f32,
    pub virtual_loss: f32,
    pub leaves_per_step: usize,
    pub reuse_tree: bool,
    pub gumbel_m: usize,
    pub gumbel_c_visit: f32,
    pub gumbel_c_scale: f32,
    /// KataGo's forced playouts and policy target pruning, `k` (0 = off): at a noisy PUCT
    /// root each child gets at least `sqrt(k * prior * N)` of the `N` visits, so noise
    /// really explores; the policy target then takes those forced visits back out of every
    /// child but the best, as far as PUCT would not have chosen them, so the target does not
    /// teach the noise.
    pub forced_playouts: f32,
}

impl Default for SearchParams {
    fn default() -> Self {
        SearchParams {
            algorithm: Algorithm::Puct,
            c_puct: 1.25,
            c_puct_base: 19652.0,
            c_puct_factor: 0.0,
            fpu_reduction: 0.25,
            fpu_reduction_root: 0.0,
            dirichlet_alpha: 0.3,
            dirichlet_fraction: 0.25,
            virtual_loss: 1.0,
            leaves_per_step: 1,
            reuse_tree: true,
            gumbel_m: 16,
            gumbel_c_visit: 50.0,
            gumbel_c_scale: 1.0,
            forced_playouts: 0.0,
        }
    }
}

impl SearchParams {
    /// Refuses values the search cannot work with, naming the key. Every comparison is written
    /// so that NaN fails it (`!(x >= 0)` is true for NaN), as configs, `--set` and player specs
    /// all come through here.
    pub fn validate(&self) -> anyhow::Result<()> {
        use anyhow::ensure;
        let non_negative = [
            ("c_puct", self.c_puct),
            ("c_puct_factor", self.c_puct_factor),
            ("virtual_loss", self.virtual_loss),
            ("gumbel_c_visit", self.gumbel_c_visit),
            ("gumbel_c_scale", self.gumbel_c_scale),
            ("forced_playouts", self.forced_playouts),
        ];
        for (key, x) in non_negative {
            ensure!(
                x.is_finite() && x >= 0.0,
                "search.{key} must be a finite number >= 0 (got {x})"
            );
        }
        for (key, x) in [
            ("fpu_reduction", self.fpu_reduction),
            ("fpu_reduction_root", self.fpu_reduction_root),
        ] {
            ensure!(
                x.is_finite(),
                "search.{key} must be a finite number (got {x})"
            );
        }
        ensure!(
            self.c_puct_base.is_finite() && self.c_puct_base > 0.0,
            "search.c_puct_base must be a finite number > 0 (got {})",
            self.c_puct_base
        );
        ensure!(
            self.dirichlet_alpha.is_finite() && self.dirichlet_alpha > 0.0,
            "search.dirichlet_alpha must be a finite number > 0 (got {})",
            self.dirichlet_alpha
        );
        ensure!(
            (0.0..=1.0).contains(&self.dirichlet_fraction),
            "search.dirichlet_fraction must be in [0, 1] (got {})",
            self.dirichlet_fraction
        );
        ensure!(
            (1..=Self::MAX_LEAVES_PER_STEP).contains(&self.leaves_per_step),
            "search.leaves_per_step must be in 1..={} (got {})",
            Self::MAX_LEAVES_PER_STEP,
            self.leaves_per_step
        );
        ensure!(
            self.gumbel_m >= 1,
            "search.gumbel_m must be >= 1 (got {})",
            self.gumbel_m
        );
        Ok(())
    }

    /// Most leaves one tree may batch per evaluator call: far beyond what helps (virtual loss
    /// spreads a batch over ever worse leaves), and a bound that keeps buffers small.
    pub const MAX_LEAVES_PER_STEP: usize = 256;

    /// These parameters with `KEY=VALUE` overrides applied (values in TOML syntax, bare words
    /// taken as strings: `c_puct=2.5`, `algorithm=gumbel`), checked exactly as a config's
    /// `[search]` section is: unknown keys, wrong types and out-of-range values are refused,
    /// naming the key.
    pub fn with_overrides<'a>(
        &self,
        sets: impl IntoIterator<Item = (&'a str, &'a str)>,
    ) -> anyhow::Result<SearchParams> {
        use anyhow::Context;
        let mut table = toml::Table::try_from(self).context("search parameters as TOML")?;
        for (key, value) in sets {
            let key = key.trim();
            anyhow::ensure!(
                !key.is_empty(),
                "empty search parameter name in `{key}={value}`"
            );
            anyhow::ensure!(
                table.contains_key(key),
                "unknown search parameter `{key}` (known: {})",
                table.keys().cloned().collect::<Vec<_>>().join(", ")
            );
            table.insert(key.to_string(), crate::config::override_value(value));
        }
        let params: SearchParams = table.try_into().context("invalid search parameters")?;
        params.validate()?;
        Ok(params)
    }

    /// [`Self::with_overrides`] from command-line words `KEY=VALUE` (`KEY` or `search.KEY`,
    /// as in `bao selfplay --set`); `flag` names the option in errors.
    pub fn with_assignments(&self, flag: &str, sets: &[String]) -> anyhow::Result<SearchParams> {
        use anyhow::Context;
        let mut pairs = Vec::with_capacity(sets.len());
        for set in sets {
            let (key, _) = crate::config::parse_assignment(flag, set)?;
            let value = &set[set.find('=').expect("parse_assignment found it") + 1..];
            pairs.push((key.strip_prefix("search.").unwrap_or(key), value));
        }
        self.with_overrides(pairs)
            .with_context(|| format!("invalid search parameters ({flag})"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn overrides_are_checked_like_configs() {
        let d = SearchParams::default();
        let p = d
            .with_overrides([
                ("c_puct", "2.5"),
                ("algorithm", "gumbel"),
                ("leaves_per_step", "8"),
            ])
            .unwrap();
        assert_eq!(
            (p.c_puct, p.algorithm, p.leaves_per_step),
            (2.5, Algorithm::Gumbel, 8)
        );
        for (k, v, needle) in [
            ("c_puct", "nan", "c_puct"),
            ("c_puct", "-1", "c_puct"),
            ("fpu_reduction", "nan", "fpu_reduction"),
            ("fpu_reduction", "inf", "fpu_reduction"),
            ("leaves_per_step", "0", "leaves_per_step"),
            ("c_pucr", "1", "unknown search parameter `c_pucr`"),
            ("algorithm", "minimax", "algorithm"),
            ("gumbel_m", "-3", "gumbel_m"),
        ] {
            let err = format!("{:#}", d.with_overrides([(k, v)]).unwrap_err());
            assert!(err.contains(needle), "{k}={v}: {err}");
        }
    }

    #[test]
    fn assignments_take_key_or_search_key_and_name_the_flag() {
        let d = SearchParams::default();
        let words = [
            "search.algorithm=gumbel".to_string(),
            "c_puct = 2".to_string(),
        ];
        let p = d.with_assignments("--search", &words).unwrap();
        assert_eq!((p.algorithm, p.c_puct), (Algorithm::Gumbel, 2.0));
        let err = format!(
            "{:#}",
            d.with_assignments("--search", &["gumbel".into()])
                .unwrap_err()
        );
        assert!(err.contains("--search gumbel: expected KEY=VALUE"), "{err}");
        let err = format!(
            "{:#}",
            d.with_assignments("--set", &["c_puct=-1".into()])
                .unwrap_err()
        );
        assert!(err.contains("(--set)") && err.contains("c_puct"), "{err}");
    }
}
