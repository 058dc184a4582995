//! `bao tune`: SPSA over numeric search parameters of a network player, at equal time, on
//! paired openings, as fishtest tunes Stockfish.
//!
//! Each iteration draws a random sign per parameter, plays one opening pair (both games at
//! once, one a core) between the player perturbed up (`theta + c_k * delta`) and down
//! (`theta - c_k * delta`), and moves `theta` by `a_k * result * delta / c_k`, where `result`
//! is the up-player's wins minus losses in the pair. Parameters live on `[0, 1]` across their
//! ranges (so one step size serves them all); integer parameters are rounded when played;
//! bounds are respected. The gains follow Spall's schedule: `c_k = c_end (N / (k + 1))^0.101`
//! and `a_k = r_end c_end^2 ((A + N) / (A + k + 1))^0.602` with `A = N / 10`, so that the last
//! iteration perturbs by `c_end` and steps by `r_end * c_end` per unit of result.
//!
//! Every iteration is appended to `iterations.jsonl` and the run's state to `tune.json`, so a
//! killed run resumes where it stopped (each iteration's signs and opening come from the seed
//! and its number). At the end a gate: an SPRT of the tuned values against the starting ones
//! at the same time control, on openings the tuning never played.

use std::path::{Path, PathBuf};

use anyhow::{bail, Context};
use rand::{Rng, SeedableRng};
use serde::{Deserialize, Serialize};

use crate::eval::sprt::{Sprt, SprtDecision};
use crate::eval::tournament::{run_tournament, Format, TournamentConfig, TournamentResult};
use crate::game::random_games::opening;
use crate::game::Variant;
use crate::play::players::spec::NetParams;
use crate::play::players::PlayerSpec;
use crate::search::SearchParams;
use crate::util::seeds::mix;

/// One tuned parameter and its range.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Param {
    pub name: String,
    pub lo: f64,
    pub hi: f64,
    /// Rounded to whole numbers when played (`leaves_per_step`, ...).
    pub integer: bool,
}

/// Parses `c_puct:0.5..4,fpu_reduction:0..0.6` (names are checked against the player later).
pub fn parse_params(text: &str) -> anyhow::Result<Vec<(String, f64, f64)>> {
    let mut out = Vec::new();
    for part in text.split(',') {
        let part = part.trim();
        let (name, range) = part
            .split_once(':')
            .with_context(|| format!("--params `{part}`: expected NAME:LO..HI"))?;
        let (lo, hi) = range
            .split_once("..")
            .with_context(|| format!("--params `{part}`: expected a range LO..HI"))?;
        let num = |s: &str| -> anyhow::Result<f64> {
            let v: f64 = s
                .trim()
                .parse()
                .with_context(|| format!("--params `{part}`: `{s}` is not a number"))?;
            anyhow::ensure!(v.is_finite(), "--params `{part}`: `{s}` is not finite");
            Ok(v)
        };
        let (lo, hi) = (num(lo)?, num(hi)?);
        anyhow::ensure!(
            lo < hi,
            "--params `{part}`: the range {lo}..{hi} is empty or inverted"
        );
        let name = name.trim();
        anyhow::ensure!(!name.is_empty(), "--params `{part}`: no parameter name");
        anyhow::ensure!(
            out.iter().all(|(n, _, _): &(String, f64, f64)| n != name),
            "--params: `{name}` is given twice"
        );
        out.push((name.to_string(), lo, hi));
    }
    Ok(out)
}

/// Everything that defines a tuning run (a resumed run must match it).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TuneConfig {
    pub variant: Variant,
    /// The player's spec without the tuned parameters' values.
    pub player: String,
    pub params: Vec<Param>,
    /// The values the tuning starts from (the player's own, clamped into the ranges).
    pub start: Vec<f64>,
    pub movetime_ms: u64,
    pub pairs: u32,
    pub seed: u64,
    pub c_end: f64,
    pub r_end: f64,
    pub opening_plies: u32,
    pub ply_cap: u32,
}

impl TuneConfig {
    /// Checks the player and the parameters before any game: each must be a numeric `[search]`
    /// key of a network player, its range inside what the key accepts.
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        variant: Variant,
        player: &PlayerSpec,
        params: &[(String, f64, f64)],
        movetime_ms: u64,
        pairs: u32,
        seed: u64,
        c_end: f64,
        r_end: f64,
    ) -> anyhow::Result<TuneConfig> {
        let PlayerSpec::Net(net) = player else {
            bail!("bao tune tunes the search parameters of a network player (net:PATH...), not `{player}`");
        };
        anyhow::ensure!(movetime_ms >= 1, "--movetime must be at least 1 ms");
        anyhow::ensure!(pairs >= 1, "--pairs must be at least 1");
        anyhow::ensure!(
            c_end > 0.0 && c_end < 0.5 && r_end > 0.0 && r_end.is_finite(),
            "--c-end must be in (0, 0.5) and --r-end > 0"
        );
        anyhow::ensure!(!params.is_empty(), "--params names no parameter");
        let defaults = toml::Table::try_from(SearchParams::default())?;
        let current = effective_search(net)?;
        let mut tuned = Vec::new();
        let mut start = Vec::new();
        for (name, lo, hi) in params {
            let (integer, value) = match (defaults.get(name), current.get(name)) {
                (None, _) => bail!(
                    "--params: the player has no search parameter `{name}` (known: {})",
                    defaults.keys().cloned().collect::<Vec<_>>().join(", ")
                ),
                (Some(toml::Value::Integer(_)), Some(toml::Value::Integer(v))) => (true, *v as f64),
                (Some(toml::Value::Float(_)), Some(toml::Value::Float(v))) => (false, *v),
                (Some(toml::Value::Float(_)), Some(toml::Value::Integer(v))) => (false, *v as f64),
                _ => bail!("--params: `{name}` is not a numeric parameter"),
            };
            let param = Param {
                name: name.clone(),
                lo: *lo,
                hi: *hi,
                integer,
            };
            // Both ends must be values the player accepts.
            for end in [*lo, *hi] {
                player
                    .with_parameter(name, &param.format(end))
                    .with_context(|| format!("--params `{name}:{lo}..{hi}`: the end {end}"))?;
            }
            start.push(value.clamp(*lo, *hi));
            tuned.push(param);
        }
        let mut base = net.clone();
        base.search
            .retain(|(k, _)| !tuned.iter().any(|p| &p.name == k));
        base.ms = Some(movetime_ms);
        base.sims = None;
        Ok(TuneConfig {
            variant,
            player: PlayerSpec::Net(base).to_string(),
            params: tuned,
            start,
            movetime_ms,
            pairs,
            seed,
            c_end,
            r_end,
            opening_plies: TournamentConfig::DEFAULT_OPENING_PLIES,
            ply_cap: TournamentConfig::DEFAULT_PLY_CAP,
        })
    }

    /// The player with parameter values `theta`.
    pub fn spec(&self, theta: &[f64]) -> anyhow::Result<PlayerSpec> {
        let mut spec: PlayerSpec = self.player.parse()?;
        for (p, &v) in self.params.iter().zip(theta) {
            spec = spec.with_parameter(&p.name, &p.format(v))?;
        }
        Ok(spec)
    }

    fn gains(&self, k: u32) -> (f64, f64) {
        let n = self.pairs as f64;
        let a_big = n / 10.0;
        let c = self.c_end * (n / (k as f64 + 1.0)).powf(0.101);
        let a =
            self.r_end * self.c_end.powi(2) * ((a_big + n) / (a_big + k as f64 + 1.0)).powf(0.602);
        (a, c)
    }

    /// The seed of iteration `k`'s opening (its tournament's opening 0) and signs.
    fn iteration_seed(&self, k: u32) -> u64 {
        mix(self.seed ^ mix(0x7475_6e65 ^ k as u64))
    }
}

impl Param {
    fn to_unit(&self, v: f64) -> f64 {
        ((v - self.lo) / (self.hi - self.lo)).clamp(0.0, 1.0)
    }
    fn value_at(&self, u: f64) -> f64 {
        let v = self.lo + u.clamp(0.0, 1.0) * (self.hi - self.lo);
        if self.integer {
            v.round().clamp(self.lo.ceil(), self.hi.floor())
        } else {
            v
        }
    }
    fn format(&self, v: f64) -> String {
        if self.integer {
            format!("{}", v.round() as i64)
        } else {
            format!("{v}")
        }
    }
}

/// The search settings the player plays with (its checkpoint's, as a player takes them, with
/// the spec's own on top), as a table.
fn effective_search(net: &NetParams) -> anyhow::Result<toml::Table> {
    let meta = crate::neuralnet::CheckpointMeta::read(&net.path)
        .with_context(|| format!("cannot read network {}", net.path.display()))?;
    let params = crate::play::players::net::player_search_params(meta.search.as_ref(), net)?;
    Ok(toml::Table::try_from(params)?)
}

/// One iteration, as recorded in `iterations.jsonl`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Iteration {
    pub k: u32,
    pub plus: Vec<f64>,
    pub minus: Vec<f64>,
    /// The up-player's wins minus losses in the pair (-2..=2).
    pub result: i32,
    /// The values after the step (what the next iteration perturbs).
    pub theta: Vec<f64>,
    /// Mean measured ms a move of the up- and down-player.
    pub ms_per_move: (Option<f64>, Option<f64>),
    pub secs: f64,
}

/// A tuning run's state (`tune.json`).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct TuneState {
    pub config: TuneConfig,
    /// Parameters on `[0, 1]`, after the last recorded iteration.
    pub unit: Vec<f64>,
    pub done: u32,
}

/// What a run ended with.
#[derive(Clone, Debug)]
pub struct Tuned {
    pub start: Vec<f64>,
    pub tuned: Vec<f64>,
    pub iterations: Vec<Iteration>,
    /// All of `config.pairs` are played (not stopped early by `stop_after`).
    pub finished: bool,
}

/// Runs (or resumes) the iterations of `config` in `dir`; with `stop_after`, at most that many
/// in this call (a later call resumes).
pub fn run(
    config: &TuneConfig,
    dir: &Path,
    stop_after: Option<u32>,
    progress: bool,
) -> anyhow::Result<Tuned> {
    std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    let state_path = dir.join("tune.json");
    let log_path = dir.join("iterations.jsonl");
    let mut state = match std::fs::read_to_string(&state_path) {
        Ok(text) => {
            let state: TuneState = serde_json::from_str(&text)
                .with_context(|| format!("corrupt tuning state {}", state_path.display()))?;
            if &state.config != config {
                bail!(
                    "{} holds a tuning run with other settings (player, parameters, time, pairs or seed); use another --out",
                    dir.display()
                );
            }
            state
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => TuneState {
            config: config.clone(),
            unit: config
                .params
                .iter()
                .zip(&config.start)
                .map(|(p, &v)| p.to_unit(v))
                .collect(),
            done: 0,
        },
        Err(e) => return Err(e).context(format!("cannot read {}", state_path.display())),
    };
    let mut iterations = read_iterations(&log_path, state.done)?;
    let bar = crate::util::progress::bar(config.pairs as u64, "pairs", progress);
    bar.set_position(state.done as u64);
    let last = stop_after.map_or(config.pairs, |n| (state.done + n).min(config.pairs));
    while state.done < last {
        let k = state.done;
        let started = std::time::Instant::now();
        let (a, c) = config.gains(k);
        let mut rng = rand::rngs::SmallRng::seed_from_u64(config.iteration_seed(k));
        let delta: Vec<f64> = (0..config.params.len())
            .map(|_| if rng.random::<bool>() { 1.0 } else { -1.0 })
            .collect();
        let shifted = |sign: f64| -> Vec<f64> {
            config
                .params
                .iter()
                .zip(&state.unit)
                .zip(&delta)
                .map(|((p, &u), &d)| p.value_at(u + sign * c * d))
                .collect()
        };
        let (plus, minus) = (shifted(1.0), shifted(-1.0));
        let r = play_pair(config, &plus, &minus, config.iteration_seed(k), 1)?;
        let (w, l) = (r.pairs[0].a_wins as i32, r.pairs[0].b_wins as i32);
        let result = w - l;
        for (u, d) in state.unit.iter_mut().zip(&delta) {
            *u = (*u + a * result as f64 * d / c).clamp(0.0, 1.0);
        }
        let theta = values(config, &state.unit);
        let it = Iteration {
            k,
            plus,
            minus,
            result,
            theta,
            ms_per_move: (
                r.costs.first().and_then(|c| c.mean_ms),
                r.costs.get(1).and_then(|c| c.mean_ms),
            ),
            secs: started.elapsed().as_secs_f64(),
        };
        // The log first, then the state that says it holds `done` lines: a kill between the
        // two replays this iteration (the log is cut back to `done` on resume).
        append_line(&log_path, &serde_json::to_string(&it)?)?;
        state.done += 1;
        crate::dataio::atomic::write_bytes(
            &state_path,
            serde_json::to_string_pretty(&state)?.as_bytes(),
        )?;
        bar.set_message(
            config
                .params
                .iter()
                .zip(&it.theta)
                .map(|(p, v)| format!("{}={}", p.name, p.format(*v)))
                .collect::<Vec<_>>()
                .join(" "),
        );
        bar.inc(1);
        iterations.push(it);
    }
    bar.finish_and_clear();
    write_trajectories(dir, config, &iterations)?;
    Ok(Tuned {
        start: config.start.clone(),
        tuned: values(config, &state.unit),
        iterations,
        finished: state.done == config.pairs,
    })
}

fn values(config: &TuneConfig, unit: &[f64]) -> Vec<f64> {
    config
        .params
        .iter()
        .zip(unit)
        .map(|(p, &u)| p.value_at(u))
        .collect()
}

/// Plays `games / 2` opening pairs of the player with `a` against it with `b` (both games of a
/// pair at once), openings from `seed`.
fn play_pair(
    config: &TuneConfig,
    a: &[f64],
    b: &[f64],
    seed: u64,
    pairs: u32,
) -> anyhow::Result<TournamentResult> {
    let players = vec![config.spec(a)?, config.spec(b)?];
    let mut t = TournamentConfig::new(config.variant, players, 2 * pairs);
    t.format = Format::Gauntlet;
    t.seed = seed;
    t.threads = 2;
    t.opening_plies = config.opening_plies;
    t.ply_cap = config.ply_cap;
    run_tournament(&t)
}

/// The recorded iterations, cut back to the `done` the state commits (a line written after a
/// kill's last committed state is dropped, and the iteration replayed).
fn read_iterations(path: &Path, done: u32) -> anyhow::Result<Vec<Iteration>> {
    let text = match std::fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
        Err(e) => return Err(e).context(format!("cannot read {}", path.display())),
    };
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate().take(done as usize) {
        out.push(
            serde_json::from_str(line)
                .with_context(|| format!("{} line {}", path.display(), i + 1))?,
        );
    }
    anyhow::ensure!(
        out.len() == done as usize,
        "{} holds {} iterations where tune.json says {done}",
        path.display(),
        out.len()
    );
    let kept: String = text
        .lines()
        .take(done as usize)
        .map(|l| format!("{l}\n"))
        .collect();
    if kept.len() != text.len() {
        crate::dataio::atomic::write_bytes(path, kept.as_bytes())?;
    }
    Ok(out)
}

fn append_line(path: &Path, line: &str) -> anyhow::Result<()> {
    use std::io::Write;
    let mut f = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .with_context(|| format!("cannot open {}", path.display()))?;
    writeln!(f, "{line}").with_context(|| format!("cannot write {}", path.display()))?;
    f.sync_data()?;
    Ok(())
}

/// `trajectory.csv` and one `trajectory-NAME.svg` per parameter.
fn write_trajectories(dir: &Path, config: &TuneConfig, its: &[Iteration]) -> anyhow::Result<()> {
    let mut csv = format!(
        "iteration,result,{}\n",
        config
            .params
            .iter()
            .map(|p| p.name.as_str())
            .collect::<Vec<_>>()
            .join(",")
    );
    for it in its {
        let vals: Vec<String> = it.theta.iter().map(|v| format!("{v:.6}")).collect();
        csv += &format!("{},{},{}\n", it.k + 1, it.result, vals.join(","));
    }
    crate::dataio::atomic::write_bytes(&dir.join("trajectory.csv"), csv.as_bytes())?;
    for (i, p) in config.params.iter().enumerate() {
        let mut points = vec![crate::util::chart::Point {
            x: 0.0,
            y: config.start[i],
            interval: None,
        }];
        points.extend(its.iter().map(|it| crate::util::chart::Point {
            x: (it.k + 1) as f64,
            y: it.theta[i],
            interval: None,
        }));
        let svg = crate::util::chart::xy_svg(
            &format!("{} ({}..{}) by SPSA iteration", p.name, p.lo, p.hi),
            "iteration (one opening pair)",
            &p.name,
            &points,
        )?;
        crate::dataio::atomic::write_bytes(
            &dir.join(format!("trajectory-{}.svg", p.name)),
            svg.as_bytes(),
        )?;
    }
    Ok(())
}

/// The openings the tuning played (their move lists), in iteration order.
pub fn played_openings(config: &TuneConfig) -> Vec<Vec<String>> {
    (0..config.pairs)
        .map(|k| {
            opening(
                config.variant,
                config.opening_plies,
                config.iteration_seed(k),
                0,
            )
            .1
        })
        .collect()
}

/// The gate's openings' seed: fixed by the tuning's seed, apart from every iteration's.
/// Its stream is read past the openings the tuning played ([`played_openings`]); few plies
/// in Kiswahili make few distinct openings, so a seed whose first openings all happen to be
/// new may not exist (and searching for one never ended).
pub fn gate_seed(config: &TuneConfig) -> u64 {
    mix(config.seed ^ 0x6761_7465)
}

/// The file in a tuning's folder that lists the openings it played, one a line (the moves
/// separated by spaces): the gate avoids them, and so does its `bao eval` command.
pub const PLAYED_OPENINGS_FILE: &str = "tuning-openings.txt";

/// The gate's verdict.
#[derive(Clone, Debug)]
pub struct Gate {
    pub seed: u64,
    pub result: TournamentResult,
    pub decision: SprtDecision,
    /// The `bao eval` command that plays the same gate again.
    pub verify: String,
}

/// An SPRT of the tuned values against the starting ones at the same time control, at most
/// `pairs` opening pairs the tuning never played, every core busy. Writes the played openings
/// to `dir/`[`PLAYED_OPENINGS_FILE`] for the verifying command.
pub fn gate(
    config: &TuneConfig,
    tuned: &[f64],
    sprt: Sprt,
    pairs: u32,
    dir: &Path,
    progress: bool,
) -> anyhow::Result<Gate> {
    let seed = gate_seed(config);
    let played = played_openings(config);
    let file = dir.join(PLAYED_OPENINGS_FILE);
    let lines: String = played.iter().map(|o| o.join(" ") + "\n").collect();
    crate::dataio::atomic::write_bytes(&file, lines.as_bytes())?;
    let players = vec![config.spec(tuned)?, config.spec(&config.start)?];
    let mut t = TournamentConfig::new(config.variant, players.clone(), 2 * pairs);
    t.format = Format::Gauntlet;
    t.seed = seed;
    t.sprt = Some(sprt);
    t.progress = progress;
    t.opening_plies = config.opening_plies;
    t.ply_cap = config.ply_cap;
    t.avoid_openings = std::sync::Arc::new(played.into_iter().collect());
    let result = run_tournament(&t)?;
    let decision = result
        .sprt
        .as_ref()
        .map_or(SprtDecision::Continue, |s| s.decision);
    let verify = format!(
        "bao eval --variant {} --players '{},{}' --games {} --seed {seed} --avoid-openings {} \
         --opening-plies {} --ply-cap {} --sprt {},{}",
        config.variant,
        players[0],
        players[1],
        2 * pairs,
        file.display(),
        config.opening_plies,
        config.ply_cap,
        sprt.elo0,
        sprt.elo1
    );
    Ok(Gate {
        seed,
        result,
        decision,
        verify,
    })
}

/// Where `bao tune` writes unless told: `tune-results/`.
pub fn default_dir() -> PathBuf {
    PathBuf::from("tune-results")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn params_parse_and_bad_ranges_are_refused_by_name() {
        let p = parse_params("c_puct:0.5..4, leaves_per_step:1..16").unwrap();
        assert_eq!(p[0], ("c_puct".into(), 0.5, 4.0));
        assert_eq!(p[1], ("leaves_per_step".into(), 1.0, 16.0));
        for (bad, says) in [
            ("c_puct:4..0.5", "empty or inverted"),
            ("c_puct:1..1", "empty or inverted"),
            ("c_puct", "NAME:LO..HI"),
            ("c_puct:1-2", "LO..HI"),
            ("c_puct:a..2", "not a number"),
            ("c_puct:1..2,c_puct:1..3", "twice"),
        ] {
            let err = format!("{:#}", parse_params(bad).unwrap_err());
            assert!(err.contains(says), "{bad}: {err}");
        }
    }

    #[test]
    fn units_round_integers_and_respect_bounds() {
        let p = Param {
            name: "leaves_per_step".into(),
            lo: 1.0,
            hi: 16.0,
            integer: true,
        };
        assert_eq!(p.value_at(-0.5), 1.0);
        assert_eq!(p.value_at(1.7), 16.0);
        assert_eq!(p.value_at(0.5), 9.0);
        assert_eq!(p.format(8.6), "9");
        let f = Param {
            name: "c_puct".into(),
            lo: 0.5,
            hi: 4.0,
            integer: false,
        };
        assert!((f.value_at(f.to_unit(1.25)) - 1.25).abs() < 1e-12);
    }
}
