//! The training schedule of a run: what generation `g` trains on, for how long, at what
//! rate, and with which random streams. The local loop ([`super::train`]) and the fleet
//! trainer ([`super::fleet::trainer`]) both ask it, so the two cannot drift apart, and a
//! recipe change (window, steps, learning rate) is made here once.
//!
//! Every random stream is derived from `[train] seed` and the generation
//! ([`super::seeds::derive`]), so a resumed run draws exactly what the uninterrupted run
//! would have drawn.

use rand::rngs::SmallRng;
use rand::SeedableRng;

use super::runconfig::RunConfig;
use super::seeds;
use super::selfplay::SelfplayRunConfig;
use crate::game::Variant;

/// The independent random streams of one generation.
#[derive(Clone, Copy, Debug)]
enum Stream {
    /// Self-play game seeds (each game derives its own from this).
    Selfplay = 1,
    /// Which window samples the minibatches draw, and their mirroring.
    Minibatches = 2,
    /// libtorch's generator (initial weights; anything random inside training).
    Torch = 3,
    /// The end-of-generation matches against the baselines.
    Eval = 4,
}

/// The name of generation `g`'s checkpoint and data: `gen-NNNNNN` (sorts oldest first).
pub fn generation_name(g: u32) -> String {
    format!("gen-{g:06}")
}

/// How one generation trains: `steps` minibatches of `batch_size` samples drawn uniformly
/// from the window with `rng`, mirrored at random when `mirror`, value target
/// `(1 - q_mix) * z + q_mix * q`.
pub struct Minibatches {
    pub steps: usize,
    pub batch_size: usize,
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

    /// Samples in generation `g`'s window (the newest ones): `window_min` at generation 1,
    /// growing by `window_growth` a generation, at most `window_max` (KataGo-style).
    pub fn window_size(&self, g: u32) -> usize {
        let t = &self.config.train;
        (t.window_min + t.window_growth * (g.max(1) as usize - 1)).min(t.window_max)
    }

    /// Optimizer steps after `new_samples` new training samples: each is used `reuse` times
    /// on average, at least one step, at most `max_steps_per_generation`. Tied to new data,
    /// so a slow or dead self-play slows training down instead of overfitting the window.
    pub fn steps(&self, new_samples: u64) -> usize {
        let t = &self.config.train;
        ((new_samples as f64 * t.reuse / t.batch_size as f64).ceil() as usize)
            .clamp(1, t.max_steps_per_generation)
    }

    /// The learning rate of generation `g`: `learning_rate` until `lr_drop_generation`,
    /// then `learning_rate * lr_drop`.
    pub fn learning_rate(&self, g: u32) -> f64 {
        let base = self.config.optimizer.learning_rate;
        let t = &self.config.train;
        if g >= t.lr_drop_generation {
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
            mirror: self.mirror(),
            q_mix: t.q_mix,
            rng: SmallRng::seed_from_u64(self.seed(g, Stream::Minibatches)),
        }
    }

    /// Self-play settings of generation `g` (played by the network of generation `g - 1`),
    /// seeded for that generation; `round` > 0 for more games in the same generation.
    pub fn selfplay(&self, g: u32, round: u32) -> SelfplayRunConfig {
        let mut sp = self.config.selfplay_config();
        sp.selfplay.seed = seeds::derive(self.seed(g, Stream::Selfplay), round as u64);
        sp.selfplay.generation = g;
        sp
    }

    /// Seeds libtorch's generator for generation `g` (0: the initial weights), so the
    /// randomly initialised network of a new run is the same on every run of the config.
    pub fn seed_torch(&self, g: u32) {
        tch::manual_seed(self.seed(g, Stream::Torch) as i64);
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
        let windows: Vec<usize> = (1..=5).map(|g| s.window_size(g)).collect();
        assert_eq!(windows, vec![100, 150, 200, 220, 220]);
        assert_eq!(s.steps(0), 1);
        assert_eq!(s.steps(41), 9); // ceil(41 * 2 / 10)
        assert_eq!(s.steps(1000), 30);
        assert_eq!(s.learning_rate(2), 0.01);
        assert_eq!(s.learning_rate(3), 0.005);
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
