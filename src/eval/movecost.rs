//! What players spend on their moves: time on the clock, simulations or nodes, depth, batch
//! fill. Tournaments record it per player so that a match played at unequal cost shows it
//! (strength is only comparable at equal time per move).

use std::time::{Duration, Instant};

use serde::Serialize;

use crate::play::players::Analysis;
use crate::search::{Clock, ClockKind};

/// Measures one move on the tournament's clock and on the wall.
pub struct MoveTimer {
    kind: ClockKind,
    clock: Clock,
    wall: Instant,
}

/// The time one move took.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct MoveTime {
    /// The clock `clock` was read on.
    pub kind: ClockKind,
    pub clock: Duration,
    pub wall: Duration,
}

impl MoveTimer {
    /// Starts timing a move. `kind` is the clock budgets are measured on; a player that thinks
    /// in another process (an external engine) spends no CPU time on this thread, so its time
    /// is taken on the wall whatever `kind` says.
    pub fn start(kind: ClockKind, thinks_on_this_thread: bool) -> MoveTimer {
        let kind = if thinks_on_this_thread {
            kind
        } else {
            ClockKind::Wall
        };
        MoveTimer {
            kind,
            clock: Clock::start(kind, None, None),
            wall: Instant::now(),
        }
    }

    /// The time since `start`.
    pub fn stop(&self) -> MoveTime {
        MoveTime {
            kind: self.kind,
            clock: self.clock.elapsed(),
            wall: self.wall.elapsed(),
        }
    }
}

/// Sums over the moves of one player (one game, or many merged).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct MoveCosts {
    /// The clock the moves were timed on (the last one recorded).
    kind: Option<ClockKind>,
    moves: u64,
    clock_sum: Duration,
    clock_max: Duration,
    wall_sum: Duration,
    wall_max: Duration,
    nodes_sum: u64,
    nodes_moves: u64,
    depth_sum: u64,
    depth_max: u32,
    depth_moves: u64,
    fill_sum: f64,
    fill_moves: u64,
}

impl MoveCosts {
    /// Adds one move that took `time`, with what the player reported about it.
    pub fn record(&mut self, time: MoveTime, analysis: &Analysis) {
        let MoveTime { kind, clock, wall } = time;
        self.kind = Some(kind);
        self.moves += 1;
        self.clock_sum += clock;
        self.clock_max = self.clock_max.max(clock);
        self.wall_sum += wall;
        self.wall_max = self.wall_max.max(wall);
        if let Some(n) = analysis.nodes {
            self.nodes_sum += n;
            self.nodes_moves += 1;
        }
        if let Some(d) = analysis.depth {
            self.depth_sum += d as u64;
            self.depth_max = self.depth_max.max(d);
            self.depth_moves += 1;
        }
        if let Some(f) = analysis.batch_fill {
            self.fill_sum += f as f64;
            self.fill_moves += 1;
        }
    }

    pub fn merge(&mut self, o: &MoveCosts) {
        self.kind = self.kind.or(o.kind);
        self.moves += o.moves;
        self.clock_sum += o.clock_sum;
        self.clock_max = self.clock_max.max(o.clock_max);
        self.wall_sum += o.wall_sum;
        self.wall_max = self.wall_max.max(o.wall_max);
        self.nodes_sum += o.nodes_sum;
        self.nodes_moves += o.nodes_moves;
        self.depth_sum += o.depth_sum;
        self.depth_max = self.depth_max.max(o.depth_max);
        self.depth_moves += o.depth_moves;
        self.fill_sum += o.fill_sum;
        self.fill_moves += o.fill_moves;
    }

    pub fn moves(&self) -> u64 {
        self.moves
    }

    /// The per-move figures of player `name`; `clock` names the clock when no move was timed.
    pub fn report(&self, name: &str, clock: ClockKind) -> PlayerCosts {
        let clock = self.kind.unwrap_or(clock);
        let mean = |sum: f64, n: u64| (n > 0).then(|| sum / n as f64);
        let ms = |d: Duration| d.as_secs_f64() * 1e3;
        PlayerCosts {
            name: name.to_string(),
            clock,
            moves: self.moves,
            mean_ms: mean(ms(self.clock_sum), self.moves),
            max_ms: (self.moves > 0).then(|| ms(self.clock_max)),
            mean_wall_ms: mean(ms(self.wall_sum), self.moves),
            max_wall_ms: (self.moves > 0).then(|| ms(self.wall_max)),
            nodes_per_move: mean(self.nodes_sum as f64, self.nodes_moves),
            mean_depth: mean(self.depth_sum as f64, self.depth_moves),
            max_depth: (self.depth_moves > 0).then_some(self.depth_max),
            batch_fill: mean(self.fill_sum, self.fill_moves),
        }
    }
}

/// One player's per-move figures in a tournament's results.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct PlayerCosts {
    pub name: String,
    /// The clock `mean_ms`/`max_ms` are on (the wall for external engines).
    pub clock: ClockKind,
    pub moves: u64,
    pub mean_ms: Option<f64>,
    pub max_ms: Option<f64>,
    pub mean_wall_ms: Option<f64>,
    pub max_wall_ms: Option<f64>,
    /// Simulations (MCTS) or nodes (alpha-beta) per move, where the player reports them.
    pub nodes_per_move: Option<f64>,
    /// Completed alpha-beta depth.
    pub mean_depth: Option<f64>,
    pub max_depth: Option<u32>,
    /// Mean share of the network's batch that leaf batching filled.
    pub batch_fill: Option<f64>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_means_maxima_and_only_reported_figures() {
        let mut a = MoveCosts::default();
        let ms = Duration::from_millis;
        let searched = Analysis {
            nodes: Some(100),
            depth: Some(6),
            ..Analysis::default()
        };
        let t = |c, w| MoveTime {
            kind: ClockKind::Cpu,
            clock: ms(c),
            wall: ms(w),
        };
        a.record(t(10, 12), &searched);
        a.record(t(30, 31), &Analysis::default());
        let mut b = MoveCosts::default();
        b.record(
            t(20, 20),
            &Analysis {
                nodes: Some(300),
                depth: Some(8),
                batch_fill: Some(0.5),
                ..Analysis::default()
            },
        );
        a.merge(&b);
        let r = a.report("x", ClockKind::Cpu);
        assert_eq!(r.moves, 3);
        assert!((r.mean_ms.unwrap() - 20.0).abs() < 1e-9);
        assert!((r.max_ms.unwrap() - 30.0).abs() < 1e-9);
        assert!((r.max_wall_ms.unwrap() - 31.0).abs() < 1e-9);
        assert_eq!(r.nodes_per_move, Some(200.0));
        assert_eq!(r.mean_depth, Some(7.0));
        assert_eq!(r.max_depth, Some(8));
        assert_eq!(r.batch_fill, Some(0.5));
        let none = MoveCosts::default().report("y", ClockKind::Wall);
        assert_eq!((none.mean_ms, none.nodes_per_move), (None, None));
    }

    #[test]
    fn an_external_engine_is_timed_on_the_wall() {
        let t = MoveTimer::start(ClockKind::Cpu, false);
        std::thread::sleep(Duration::from_millis(20)); // sleeping burns no CPU time
        let m = t.stop();
        assert_eq!(m.kind, ClockKind::Wall);
        assert!(m.clock >= Duration::from_millis(20) && m.wall >= Duration::from_millis(20));
        let t = MoveTimer::start(ClockKind::Cpu, true);
        std::thread::sleep(Duration::from_millis(20));
        let m = t.stop();
        assert_eq!(m.kind, ClockKind::Cpu);
        assert!(
            m.clock < Duration::from_millis(15),
            "sleep is no CPU time: {m:?}"
        );
    }
}
