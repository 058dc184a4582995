//! The training schedule of a run: what generation `g` trains on, for how long, at what
//! rate, and with which random streams. The local loop ([`crate::training::train`]) and the fleet
//! trainer ([`crate::training::fleet::trainer`]) both ask it, so the two cannot drift apart, and a
//! recipe change (window, steps, learning rate) is made here once.
//!
//! Every random stream is derived from `[train] seed` and the generation
//! ([`crate::util::seeds::derive`]), so a resumed run draws exactly what the uninterrupted run
//! would have drawn.

use rand::rngs::SmallRng;
use rand::SeedableRng;

use crate::game::Variant;
use crate::training::runconfig::{RunConfig, WindowShape};
use crate::training::selfplay::SelfplayRunConfig;
use crate::util::seeds;

/// The independent random streams of one generation.
#[derive(Clone, Copy, Debug)]
enum Stream {
    /// Self-play game seeds (each game derives its own from this).
    Selfplay = 1,
    /// Which window samples the minibatches draw, and their mirroring.
    Minibatches = 2,
    /// libtorch's generator: a new run's initial weights.
    Torch = 3,
    /// The end-of-generation matches against the baselines.
    Eval = 4,
}

/// The name of generation `g`'s checkpoint and data: `gen-NNNNNN` (sorts oldest first).
pub fn generation_name(g: u32) -> String {
    format!("gen-{g:06}")
}

/// How one generation trains: `steps` minibatches of `batch_size` samples drawn uniformly
/// from the window with `rng` (a `labels_fraction` share of each from the solver labels),
/// mirrored at random when `mirror`, value target `(1 - q_mix) * z + q_mix * q`.
pub struct Minibatches {
    pub steps: usize,
    pub batch_size: usize,
    pub labels_fraction: f32,
    pub mirror: bool,
    pub q_mix: f32,
    pub rng: SmallRng,
}

/// The schedule of one run config.
#[derive(Clone, Copy)]
pub struct Schedule<'a> {
    config: &'a RunConfig,
}

impl<'a> Schedule<'a> {
    pub fn new(config: &'a RunConfig) -> Schedule<'a> {
        Schedule { config }
    }

    fn seed(&self, g: u32, stream: Stream) -> u64 {
        seeds::derive(self.config.train.seed, (g as u64) << 8 | stream as u64)
    }

    /// Samples in generation `g`'s window (the newest ones), when `played` samples have
    /// been played in all (see `[train] window`): linear, `window_min` at generation 1
    /// growing by `window_growth` a generation; sublinear, every sample up to `c =
    /// window_min`, then `c * (1 + beta * ((played / c)^alpha - 1) / alpha)`. At most
    /// `window_max` either way.
    pub fn window_size(&self, g: u32, played: u64) -> usize {
        let t = &self.config.train;
        let size = match t.window {
            WindowShape::Linear => t.window_min + t.window_growth * (g.max(1) as usize - 1),
            WindowShape::Sublinear => {
                let (c, n) = (t.window_min as f64, played as f64);
                if n <= c {
                    t.window_min
                } else {
                    let grown = c
                        * (1.0
                            + t.window_beta * ((n / c).powf(t.window_alpha) - 1.0)
                                / t.window_alpha);
                    grown.floor() as usize
                }
            }
        };
        size.min(t.window_max)
    }

    /// Optimizer steps after `new_samples` new training samples: each is used `reuse` times
    /// on average, at least one step, at most `max_steps_per_generation`. Tied to new data,
    /// so a slow or dead self-play slows training down instead of overfitting the window.
    pub fn steps(&self, new_samples: u64) -> usize {
        let t = &self.config.train;
        ((new_samples as f64 * t.reuse / t.batch_size as f64).ceil() as usize)
            .clamp(1, t.max_steps_per_generation)
    }

    /// The learning rate of generation `g`: the `lr_schedule` step it falls in when one is
    /// given, else `learning_rate` until `lr_drop_generation`, then `learning_rate * lr_drop`.
    pub fn learning_rate(&self, g: u32) -> f64 {
        let base = self.config.optimizer.learning_rate;
        let t = &self.config.train;
        if let Some(&(_, rate)) = t.lr_schedule.iter().rev().find(|&&(from, _)| from <= g) {
            rate
        } else if g >= t.lr_drop_generation {
            base * t.lr_drop
        } else {
            base
        }
    }

    /// Left-right mirroring applies to Kujifunza only: Kiswahili's rules are not symmetric
    /// (the nyumba is on one side).
    pub fn mirror(&self) -> bool {
        self.config.train.mirror && self.config.variant == Variant::Kujifunza
    }

    /// Generation `g`'s minibatches after `new_samples` new samples.
    pub fn minibatches(&self, g: u32, new_samples: u64) -> Minibatches {
        let t = &self.config.train;
        Minibatches {
            steps: self.steps(new_samples),
            batch_size: t.batch_size,
            labels_fraction: t.labels_fraction,
            mirror: self.mirror(),
            q_mix: t.q_mix,
            rng: SmallRng::seed_from_u64(self.seed(g, Stream::Minibatches)),
        }
    }

    /// The generation whose network plays generation `g`'s self-play: `g - 1`, or `g - 2`
    /// when self-play and training overlap (`[train] pipeline`; generation 0 at the start).
    pub fn played_by(&self, g: u32) -> u32 {
        let lag = if self.config.train.pipeline { 2 } else { 1 };
        g.saturating_sub(lag)
    }

    /// Self-play settings of generation `g` (played by the network of
    /// [`Self::played_by`]`(g)`), seeded for that generation; `round` > 0 for more games in
    /// the same generation.
    pub fn selfplay(&self, g: u32, round: u32) -> SelfplayRunConfig {
        let mut sp = self.config.selfplay_config();
        (sp.selfplay.sims, sp.selfplay.cheap_sims) = self.selfplay_sims(g);
        sp.selfplay.seed = seeds::derive(self.seed(g, Stream::Selfplay), round as u64);
        sp.selfplay.generation = g;
        sp
    }

    /// Simulations of generation `g`'s full and cheap searches: the `sims_schedule` step it
    /// falls in, else `[selfplay] sims` and `cheap_sims`.
    pub fn selfplay_sims(&self, g: u32) -> (usize, usize) {
        let sp = &self.config.selfplay;
        self.config
            .train
            .sims_schedule
            .iter()
            .rev()
            .find(|s| s.0 <= g)
            .map_or((sp.sims, sp.cheap_sims), |&(_, sims, cheap)| (sims, cheap))
    }

    /// The seed of a new run's initial weights ([`crate::neuralnet::Network::new_seeded`]),
    /// so its randomly initialised network is the same on every run of the config. Training
    /// draws nothing else from torch's generator.
    pub fn torch_seed(&self) -> u64 {
        self.seed(0, Stream::Torch)
    }

    /// Seed of generation `g`'s matches against the baselines.
    pub fn eval_seed(&self, g: u32) -> u64 {
        self.seed(g, Stream::Eval)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(toml_text: &str) -> RunConfig {
        toml::from_str(&format!(
            "variant = \"kujifunza\"\n[network]\npreset = \"tiny\"\n{toml_text}"
        ))
        .unwrap()
    }

    #[test]
    fn window_steps_and_rate_follow_the_formulas() {
        let c = config(
            "[train]\nwindow_min = 100\nwindow_growth = 50\nwindow_max = 220\nbatch_size = 10\n\
             reuse = 2.0\nmax_steps_per_generation = 30\nlr_drop_generation = 3\nlr_drop = 0.5\n\
             [optimizer]\nlearning_rate = 0.01\n",
        );
        let s = Schedule::new(&c);
        let windows: Vec<usize> = (1..=5).map(|g| s.window_size(g, 0)).collect();
        assert_eq!(windows, vec![100, 150, 200, 220, 220]);
        assert_eq!(s.steps(0), 1);
        assert_eq!(s.steps(41), 9); // ceil(41 * 2 / 10)
        assert_eq!(s.steps(1000), 30);
        assert_eq!(s.learning_rate(2), 0.01);
        assert_eq!(s.learning_rate(3), 0.005);
        let stepped = config("[train]\nlr_schedule = [[1, 0.002], [3, 0.0006], [5, 0.0002]]\n");
        let s = Schedule::new(&stepped);
        let rates: Vec<f64> = (1..=6).map(|g| s.learning_rate(g)).collect();
        assert_eq!(rates, vec![0.002, 0.002, 0.0006, 0.0006, 0.0002, 0.0002]);
        assert!(stepped.validate().is_ok());
        let mut bad = stepped.clone();
        bad.train.lr_schedule = vec![(3, 0.1), (2, 0.1)];
        assert!(bad.validate().is_err());
    }

    #[test]
    fn self_play_simulations_follow_the_sims_schedule() {
        let c = config(
            "[selfplay]\nsims = 64\ncheap_sims = 16\n\
             [train]\nsims_schedule = [[3, 128, 32], [5, 256, 48]]\n",
        );
        assert!(c.validate().is_ok());
        let s = Schedule::new(&c);
        let sims: Vec<(usize, usize)> = (1..=6).map(|g| s.selfplay_sims(g)).collect();
        assert_eq!(
            sims,
            vec![
                (64, 16),
                (64, 16),
                (128, 32),
                (128, 32),
                (256, 48),
                (256, 48)
            ]
        );
        let sp = s.selfplay(4, 0).selfplay;
        assert_eq!((sp.sims, sp.cheap_sims), (128, 32));
        for bad in [
            "[[5, 128, 32], [3, 256, 48]]",
            "[[0, 128, 32]]",
            "[[3, 0, 32]]",
            "[[3, 128, 0]]",
        ] {
            let c = config(&format!("[train]\nsims_schedule = {bad}\n"));
            let e = format!("{:#}", c.validate().unwrap_err());
            assert!(e.contains("sims_schedule"), "{bad}: {e}");
        }
    }

    #[test]
    fn the_sublinear_window_follows_katagos_formula() {
        let c = config(
            "[train]\nwindow = \"sublinear\"\nwindow_min = 1000\nwindow_max = 1000000\n\
             window_alpha = 0.75\nwindow_beta = 0.4\n",
        );
        let s = Schedule::new(&c);
        // Everything until c samples were played, whatever the generation.
        assert_eq!(s.window_size(7, 0), 1000);
        assert_eq!(s.window_size(7, 1000), 1000);
        // 16 c played: c * (1 + 0.4 * (16^0.75 - 1) / 0.75) = c * (1 + 0.4 * 7 / 0.75).
        let expected = (1000.0 * (1.0 + 0.4 * 7.0 / 0.75)) as usize;
        assert_eq!(s.window_size(7, 16_000), expected);
        // Growing, but ever more slowly than what is played.
        let sizes: Vec<usize> = [2_000, 4_000, 8_000, 16_000]
            .iter()
            .map(|&n| s.window_size(1, n))
            .collect();
        assert!(sizes.windows(2).all(|w| w[0] < w[1]), "{sizes:?}");
        assert!(sizes[3] < 16_000 / 2, "{sizes:?}");
    }

    #[test]
    fn streams_differ_by_generation_and_purpose_and_repeat_exactly() {
        let c = config("");
        let s = Schedule::new(&c);
        let seeds = [
            s.selfplay(1, 0).selfplay.seed,
            s.selfplay(2, 0).selfplay.seed,
            s.selfplay(1, 1).selfplay.seed,
            s.eval_seed(1),
            s.eval_seed(2),
        ];
        let distinct: std::collections::HashSet<u64> = seeds.iter().copied().collect();
        assert_eq!(distinct.len(), seeds.len(), "{seeds:?}");
        assert_eq!(
            s.selfplay(3, 0).selfplay.seed,
            s.selfplay(3, 0).selfplay.seed
        );
        assert_eq!(s.selfplay(3, 0).selfplay.generation, 3);
        use rand::Rng;
        let draw = |g| s.minibatches(g, 10).rng.random::<u64>();
        assert_eq!(draw(4), draw(4));
        assert_ne!(draw(4), draw(5));
    }

    #[test]
    fn only_kujifunza_is_mirrored() {
        assert!(Schedule::new(&config("")).mirror());
        let mut kiswahili = config("");
        kiswahili.variant = Variant::Kiswahili;
        assert!(!Schedule::new(&kiswahili).mirror());
    }
}
