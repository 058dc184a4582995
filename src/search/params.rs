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
        }
    }
}

impl SearchParams {
    /// Refuses values the search cannot work with, naming the key.
    pub fn validate(&self) -> anyhow::Result<()> {
        use anyhow::ensure;
        ensure!(self.c_puct.is_finite() && self.c_puct >= 0.0, "search.c_puct must be >= 0");
        ensure!(self.c_puct_base > 0.0, "search.c_puct_base must be > 0");
        ensure!(self.c_puct_factor >= 0.0, "search.c_puct_factor must be >= 0");
        ensure!(self.dirichlet_alpha > 0.0, "search.dirichlet_alpha must be > 0");
        ensure!(
            (0.0..=1.0).contains(&self.dirichlet_fraction),
            "search.dirichlet_fraction must be in [0, 1]"
        );
        ensure!(self.virtual_loss >= 0.0, "search.virtual_loss must be >= 0");
        ensure!(self.leaves_per_step >= 1, "search.leaves_per_step must be >= 1");
        ensure!(self.gumbel_m >= 1, "search.gumbel_m must be >= 1");
        ensure!(self.gumbel_c_visit >= 0.0, "search.gumbel_c_visit must be >= 0");
        ensure!(self.gumbel_c_scale >= 0.0, "search.gumbel_c_scale must be >= 0");
        Ok(())
    }
}
