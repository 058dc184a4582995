//! Thinking time: a per-move budget measured on the thread's CPU clock or the wall clock, and a
//! stop signal another thread can raise.
//!
//! Strength is compared at equal time per move, so every searching player (alpha-beta, rollout
//! MCTS, network MCTS) reads its budget from one [`Clock`]. The default is the **thread's CPU
//! time**: in a tournament that plays several games at once, or on a machine that is busy with
//! something else, a player that is descheduled does not lose thinking time, so load does not
//! bias one side. Wall time is there for what people feel (`bao play`, `bao serve`) and for
//! evaluators whose work runs on other threads (a GPU, or libtorch with several intra-op
//! threads: their CPU time is not the calling thread's).

use std::str::FromStr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Which clock a time budget is measured on.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize,
)]
#[serde(rename_all = "lowercase")]
pub enum ClockKind {
    /// CPU time of the searching thread (see module docs).
    #[default]
    Cpu,
    /// Elapsed real time.
    Wall,
}

impl FromStr for ClockKind {
    type Err = String;
    fn from_str(s: &str) -> Result<ClockKind, String> {
        match s {
            "cpu" => Ok(ClockKind::Cpu),
            "wall" => Ok(ClockKind::Wall),
            _ => Err(format!("unknown clock `{s}` (expected `cpu` or `wall`)")),
        }
    }
}

impl std::fmt::Display for ClockKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            ClockKind::Cpu => "cpu",
            ClockKind::Wall => "wall",
        })
    }
}

/// CPU time consumed by the calling thread so far.
#[cfg(unix)]
pub fn thread_cpu_time() -> Duration {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid, writable timespec; CLOCK_THREAD_CPUTIME_ID exists on every
    // platform this crate builds for (Linux, macOS), and on failure `ts` stays zero.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    if rc != 0 {
        return Duration::ZERO;
    }
    Duration::new(ts.tv_sec as u64, ts.tv_nsec as u32)
}

/// Where no thread CPU clock exists, CPU budgets fall back to the wall clock.
#[cfg(not(unix))]
pub fn thread_cpu_time() -> Duration {
    static START: std::sync::OnceLock<Instant> = std::sync::OnceLock::new();
    START.get_or_init(Instant::now).elapsed()
}

/// A flag another thread raises to end a search early (the engine's `stop`); the searcher
/// returns the best move it has. Cloning shares the flag.
#[derive(Clone, Debug, Default)]
pub struct StopSignal(Arc<AtomicBool>);

impl StopSignal {
    pub fn new() -> StopSignal {
        StopSignal::default()
    }
    pub fn stop(&self) {
        self.0.store(true, Ordering::Relaxed);
    }
    pub fn is_stopped(&self) -> bool {
        self.0.load(Ordering::Relaxed)
    }
    /// Lowers the flag for the next search.
    pub fn reset(&self) {
        self.0.store(false, Ordering::Relaxed);
    }
}

impl PartialEq for StopSignal {
    /// Two signals are equal when they are the same flag.
    fn eq(&self, other: &StopSignal) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

/// How far past its budget `budget` a timed move may end: 5 ms plus 1% of the budget. The
/// tests hold every searching player to it at 30 ms (alpha-beta reads its clock every 256
/// nodes, rollout MCTS every simulation, network MCTS before each batch, from the slowest step
/// seen); at long budgets a network search's tree grows large enough that moving and growing
/// it costs a few milliseconds more (the ladder measured 1009.5 ms at 1000 ms;
/// docs/equal-time.md#the-equal-time-ladder).
pub fn overshoot_margin(budget: Duration) -> Duration {
    Duration::from_millis(5) + budget / 100
}

/// The clock of one move: started when the search starts, read by the search between steps.
#[derive(Clone, Debug)]
pub struct Clock {
    kind: ClockKind,
    wall_start: Instant,
    cpu_start: Duration,
    budget: Option<Duration>,
    stop: Option<StopSignal>,
}

impl Clock {
    /// Starts a clock with `budget` (none: only the stop signal ends the search early).
    pub fn start(kind: ClockKind, budget: Option<Duration>, stop: Option<StopSignal>) -> Clock {
        Clock {
            kind,
            wall_start: Instant::now(),
            cpu_start: if kind == ClockKind::Cpu {
                thread_cpu_time()
            } else {
                Duration::ZERO
            },
            budget,
            stop,
        }
    }

    /// A clock that never runs out (searches bounded by simulations or depth alone).
    pub fn unlimited() -> Clock {
        Clock::start(ClockKind::Wall, None, None)
    }

    pub fn kind(&self) -> ClockKind {
        self.kind
    }

    pub fn budget(&self) -> Option<Duration> {
        self.budget
    }

    /// True when a time budget is set (the search should spend it rather than a fixed count).
    pub fn is_timed(&self) -> bool {
        self.budget.is_some()
    }

    /// Time spent so far on this clock.
    pub fn elapsed(&self) -> Duration {
        match self.kind {
            ClockKind::Cpu => thread_cpu_time().saturating_sub(self.cpu_start),
            ClockKind::Wall => self.wall_start.elapsed(),
        }
    }

    /// Real time since the start, whatever the clock kind.
    pub fn wall_elapsed(&self) -> Duration {
        self.wall_start.elapsed()
    }

    /// True when the stop signal is up.
    pub fn stopped(&self) -> bool {
        self.stop.as_ref().is_some_and(StopSignal::is_stopped)
    }

    /// True when the budget is spent or the search was stopped.
    pub fn expired(&self) -> bool {
        self.stopped() || self.budget.is_some_and(|b| self.elapsed() >= b)
    }

    /// True when a step expected to take `next` would end past the budget (or the search was
    /// stopped): searches call this before each step so that the budget is a hard limit,
    /// not a point after which they notice they are late.
    pub fn would_overrun(&self, next: Duration) -> bool {
        self.stopped() || self.budget.is_some_and(|b| self.elapsed() + next >= b)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpu_clock_counts_work_not_sleep() {
        let clock = Clock::start(ClockKind::Cpu, Some(Duration::from_millis(5)), None);
        std::thread::sleep(Duration::from_millis(20));
        assert!(!clock.expired(), "sleeping spends no CPU time");
        let mut x = 0u64;
        while !clock.expired() {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1);
        }
        assert!(clock.elapsed() >= Duration::from_millis(5), "{x}");
    }

    #[test]
    fn stop_signal_ends_an_unbudgeted_clock() {
        let stop = StopSignal::new();
        let clock = Clock::start(ClockKind::Wall, None, Some(stop.clone()));
        assert!(!clock.expired());
        stop.stop();
        assert!(clock.expired() && clock.would_overrun(Duration::ZERO));
        stop.reset();
        assert!(!clock.expired());
    }

    #[test]
    fn clock_kinds_parse() {
        assert_eq!("cpu".parse::<ClockKind>(), Ok(ClockKind::Cpu));
        assert_eq!("wall".parse::<ClockKind>(), Ok(ClockKind::Wall));
        assert!("sundial".parse::<ClockKind>().unwrap_err().contains("cpu"));
    }
}
