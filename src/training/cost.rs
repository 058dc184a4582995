//! Where a local run's CPU time went (`bao run cost RUN`): self-play, training steps, the
//! `[eval]` checks, the distillation stages and the gauntlet matches, and how many self-play
//! positions a CPU second bought in each stretch of generations that searched alike. Read from
//! what the run already records (`metrics.jsonl`, each student's `done.json`, the gauntlet's
//! points), so it costs nothing to keep and answers for any run, old or running.

use std::fmt;
use std::path::Path;

use serde::Serialize;

use crate::training::gauntlet;
use crate::training::history::read_metrics;
use crate::training::schedule::Schedule;
use crate::training::train::{committed_cpu_secs, finished_students, run_config};

/// Generations in a row whose self-play searched with the same simulations (and no split of
/// [`run_cost`] between them).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Stretch {
    pub first: u32,
    pub last: u32,
    /// Simulations of the full and the cheap searches.
    pub sims: usize,
    pub cheap_sims: usize,
    pub positions: u64,
    pub selfplay_cpu_secs: f64,
    pub train_cpu_secs: f64,
}

impl Stretch {
    /// Self-play positions a CPU second of self-play.
    pub fn positions_per_cpu_sec(&self) -> f64 {
        self.positions as f64 / self.selfplay_cpu_secs.max(f64::MIN_POSITIVE)
    }
}

/// A run's CPU seconds by stage, all invocations of `bao train` together.
#[derive(Clone, Debug, Serialize)]
pub struct RunCost {
    pub generations: u32,
    /// `state.json`'s count of the committed work: the sum of the rest (but for uncounted
    /// generations). The gauntlet's CPU-hours are this count less its own matches.
    pub total_cpu_secs: f64,
    pub selfplay_cpu_secs: f64,
    pub train_cpu_secs: f64,
    pub eval_cpu_secs: f64,
    pub distill_cpu_secs: f64,
    pub students: usize,
    pub gauntlet_cpu_secs: f64,
    pub gauntlet_points: usize,
    /// Generations recorded before their cost was (their lines hold 0): the figures above
    /// leave them out.
    pub uncounted_generations: u32,
    pub stretches: Vec<Stretch>,
}

/// Reads the cost of the local run in `run`, a stretch also starting at each generation of
/// `splits` (to compare the self-play rate before and after a change that the config does not
/// record, such as a new binary or machine). Self-play's CPU time is booked to the generation
/// whose line records it; with `pipeline = true` that is the self-play of the next generation,
/// played beside this one's training, so a stretch's rate is off by one generation at its ends.
pub fn run_cost(run: &Path, splits: &[u32]) -> anyhow::Result<RunCost> {
    let config = run_config(run)?;
    let schedule = Schedule::new(&config);
    let metrics = read_metrics(run)?;
    anyhow::ensure!(
        !metrics.is_empty(),
        "{} holds no generation yet (no metrics.jsonl lines)",
        run.display()
    );
    let mut cost = RunCost {
        generations: metrics.last().map_or(0, |m| m.generation),
        total_cpu_secs: committed_cpu_secs(run)?,
        selfplay_cpu_secs: 0.0,
        train_cpu_secs: 0.0,
        eval_cpu_secs: 0.0,
        distill_cpu_secs: 0.0,
        students: 0,
        gauntlet_cpu_secs: 0.0,
        gauntlet_points: 0,
        uncounted_generations: 0,
        stretches: Vec::new(),
    };
    for m in &metrics {
        if m.cpu_secs == 0.0 {
            cost.uncounted_generations += 1;
            continue;
        }
        cost.selfplay_cpu_secs += m.selfplay_cpu_secs;
        cost.train_cpu_secs += m.train_cpu_secs;
        cost.eval_cpu_secs += m.eval_cpu_secs;
        let (sims, cheap_sims) = schedule.selfplay_sims(m.generation);
        match cost.stretches.last_mut() {
            Some(s)
                if (s.sims, s.cheap_sims) == (sims, cheap_sims)
                    && !splits.contains(&m.generation) =>
            {
                s.last = m.generation;
                s.positions += m.selfplay_positions;
                s.selfplay_cpu_secs += m.selfplay_cpu_secs;
                s.train_cpu_secs += m.train_cpu_secs;
            }
            _ => cost.stretches.push(Stretch {
                first: m.generation,
                last: m.generation,
                sims,
                cheap_sims,
                positions: m.selfplay_positions,
                selfplay_cpu_secs: m.selfplay_cpu_secs,
                train_cpu_secs: m.train_cpu_secs,
            }),
        }
    }
    for student in finished_students(run)? {
        if let Some(record) = student.record()? {
            cost.students += 1;
            cost.distill_cpu_secs += record.cpu_secs;
        }
    }
    let points = gauntlet::read_points(run)?;
    cost.gauntlet_points = points.len();
    cost.gauntlet_cpu_secs = points.iter().fold(0.0, |sum, p| sum + p.cpu_secs);
    Ok(cost)
}

/// "1 student", "2 students".
fn counted(n: usize, noun: &str) -> String {
    format!("{n} {noun}{}", if n == 1 { "" } else { "s" })
}

impl fmt::Display for RunCost {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let share = |secs: f64| 100.0 * secs / self.total_cpu_secs.max(f64::MIN_POSITIVE);
        writeln!(
            f,
            "{} generations, {:.2} CPU-hours ({:.0} CPU s)",
            self.generations,
            self.total_cpu_secs / 3600.0,
            self.total_cpu_secs
        )?;
        let rows = [
            ("self-play", self.selfplay_cpu_secs, String::new()),
            ("training steps", self.train_cpu_secs, String::new()),
            ("[eval] checks", self.eval_cpu_secs, String::new()),
            (
                "distillation",
                self.distill_cpu_secs,
                format!("  ({})", counted(self.students, "student")),
            ),
            (
                "gauntlet matches",
                self.gauntlet_cpu_secs,
                format!("  ({})", counted(self.gauntlet_points, "point")),
            ),
        ];
        for (name, secs, note) in rows {
            writeln!(
                f,
                "  {name:<17}{:>10.0} CPU s {:>5.1}%{note}",
                secs,
                share(secs)
            )?;
        }
        if self.uncounted_generations > 0 {
            writeln!(
                f,
                "  ({} generations recorded before their cost was are left out)",
                self.uncounted_generations
            )?;
        }
        writeln!(f, "self-play by stretch of equal search:")?;
        for s in &self.stretches {
            writeln!(
                f,
                "  generations {:>4}-{:<4} {:>4}/{:<3} simulations  {:>10} positions  {:>6.1} a CPU s  {:>5.1} CPU s a generation ({:.1} training)",
                s.first,
                s.last,
                s.sims,
                s.cheap_sims,
                s.positions,
                s.positions_per_cpu_sec(),
                s.selfplay_cpu_secs / f64::from(s.last - s.first + 1),
                s.train_cpu_secs / f64::from(s.last - s.first + 1),
            )?;
        }
        Ok(())
    }
}
