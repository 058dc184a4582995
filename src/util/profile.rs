//! Where a search's time goes: per-thread phase timers, off unless a benchmark turns them on.
//!
//! Why this and not a sampling profiler: the phases that matter for a network player (feature
//! encoding with its move generations, the forward pass, the cache, tree selection and backup,
//! reading the clock) cut across functions, and a sampling profile of a 200 ms move spreads
//! them over dozens of symbols. Each instrumented place opens a [`scope`]; time is charged to
//! the innermost open phase only (exclusive time), so the shares add up to the time the
//! profile ran. Switched off (the default), a scope costs one relaxed atomic load; switched on,
//! two `Instant::now` calls (about 25 ns each here), a few per evaluator call.

use std::cell::RefCell;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// The phases a search's time is split into.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Phase {
    /// Anything outside the phases below (the player's own bookkeeping, tree reuse).
    Other,
    /// Feature encoding of the positions sent to the network, its move generations included.
    Encode,
    /// The network's forward pass (Rust or libtorch), from features to probabilities.
    Forward,
    /// The evaluation cache: lookups, copies of hits, storing results.
    Cache,
    /// Tree selection: descending by PUCT, expanding leaves (their move generation included).
    Select,
    /// Applying evaluations: priors, backup of values, proofs.
    Backup,
    /// Reading the move's clock (the thread's CPU time: a system call).
    Clock,
}

impl Phase {
    pub const ALL: [Phase; 7] = [
        Phase::Encode,
        Phase::Forward,
        Phase::Cache,
        Phase::Select,
        Phase::Backup,
        Phase::Clock,
        Phase::Other,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Phase::Other => "other",
            Phase::Encode => "encode",
            Phase::Forward => "forward",
            Phase::Cache => "cache",
            Phase::Select => "select",
            Phase::Backup => "backup",
            Phase::Clock => "clock",
        }
    }
}

static ENABLED: AtomicBool = AtomicBool::new(false);

struct State {
    current: Phase,
    since: Instant,
    totals: [Duration; 7],
}

thread_local! {
    static STATE: RefCell<State> = RefCell::new(State {
        current: Phase::Other,
        since: Instant::now(),
        totals: [Duration::ZERO; 7],
    });
}

/// Charges the time since the last switch to the current phase and makes `to` current;
/// returns the phase that was current.
fn switch(to: Phase) -> Phase {
    let now = Instant::now();
    STATE.with(|s| {
        let mut s = s.borrow_mut();
        let spent = now.duration_since(s.since);
        let was = s.current;
        s.totals[was as usize] += spent;
        s.current = to;
        s.since = now;
        was
    })
}

/// Starts profiling on this thread from zero (and turns the timers on for every thread).
pub fn start() {
    ENABLED.store(true, Ordering::Relaxed);
    STATE.with(|s| {
        let mut s = s.borrow_mut();
        s.current = Phase::Other;
        s.since = Instant::now();
        s.totals = [Duration::ZERO; 7];
    });
}

/// Stops the timers and returns this thread's time per phase since [`start`], in
/// [`Phase::ALL`]'s order.
pub fn stop() -> Vec<(Phase, Duration)> {
    switch(Phase::Other);
    ENABLED.store(false, Ordering::Relaxed);
    STATE.with(|s| {
        let s = s.borrow();
        Phase::ALL
            .iter()
            .map(|&p| (p, s.totals[p as usize]))
            .collect()
    })
}

/// An open phase; closing it (drop) returns the time to the phase it interrupted.
#[must_use = "a phase lasts as long as its guard"]
pub struct Scope(Option<Phase>);

/// Opens `phase` until the returned guard drops (nothing at all while profiling is off).
#[inline]
pub fn scope(phase: Phase) -> Scope {
    if ENABLED.load(Ordering::Relaxed) {
        Scope(Some(switch(phase)))
    } else {
        Scope(None)
    }
}

impl Drop for Scope {
    #[inline]
    fn drop(&mut self) {
        if let Some(previous) = self.0 {
            switch(previous);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spin(d: Duration) {
        let t = Instant::now();
        while t.elapsed() < d {}
    }

    #[test]
    fn nested_phases_are_charged_exclusively() {
        start();
        let outer_started = Instant::now();
        {
            let _outer = scope(Phase::Cache);
            spin(Duration::from_millis(4));
            {
                let _inner = scope(Phase::Forward);
                spin(Duration::from_millis(8));
            }
            spin(Duration::from_millis(4));
        }
        let outer = outer_started.elapsed();
        let totals = stop();
        let get = |p| totals.iter().find(|(q, _)| *q == p).unwrap().1;
        assert!(get(Phase::Forward) >= Duration::from_millis(8));
        assert!(get(Phase::Cache) >= Duration::from_millis(8));
        // Charged exclusively, the two phases share the outer scope's time; charged twice, the
        // inner phase's 8 ms or more would be counted again. (Bounds on the elapsed time
        // itself would fail whenever the machine preempts the test.)
        assert!(
            get(Phase::Cache) + get(Phase::Forward) <= outer,
            "the inner phase's time is not the outer's: {:?} + {:?} > {outer:?}",
            get(Phase::Cache),
            get(Phase::Forward)
        );
        // Off again: scopes record nothing.
        {
            let _s = scope(Phase::Encode);
            spin(Duration::from_millis(2));
        }
        start();
        assert!(stop()
            .iter()
            .all(|(p, d)| *p == Phase::Other || d.is_zero()));
    }
}
