//! The engine protocol through a real process and pipe: one answer line per command.

mod common;

use std::io::{BufRead, BufReader, Write};

use bao::game::{Position, Variant};

#[test]
fn engine_answers_one_line_per_command_over_a_pipe() {
    let (mut child, mut stdin, mut out) = common::spawn_piped("engine", &["alphabeta:depth=2"]);
    let mut ask = |cmd: &str| {
        writeln!(stdin, "{cmd}").unwrap();
        stdin.flush().unwrap();
        let mut line = String::new();
        out.read_line(&mut line).unwrap();
        line.trim_end().to_string()
    };
    assert_eq!(ask("name"), "name alphabeta:depth=2");
    assert_eq!(ask("variant kujifunza"), "ok");
    let start = Position::start(Variant::Kujifunza);
    let reply = ask("go");
    let mv = reply
        .strip_prefix("bestmove ")
        .unwrap_or_else(|| panic!("{reply}"));
    assert!(start.parse_move(mv).is_ok());
    assert!(ask("position startpos moves Z9Z").starts_with("error "));
    assert!(ask("gibberish").starts_with("error unknown command"));
    assert_eq!(
        ask(&format!("position json {} moves {mv}", start.to_json())),
        "ok"
    );
    let reply = ask("go depth 1");
    assert!(
        reply.starts_with("bestmove a") || reply.starts_with("bestmove b"),
        "{reply}"
    );
    writeln!(stdin, "quit").unwrap();
    drop(stdin);
    assert!(child.wait().unwrap().success());
}

#[test]
fn engine_refuses_a_bad_spec() {
    let (ok, _, err) = common::run_bao(&["engine", "alphabeta:depht=3"]);
    assert!(!ok);
    assert!(err.contains("unknown option `depht`"), "{err}");
}

/// A running engine process with line access to its pipes.
struct Engine {
    child: std::process::Child,
    stdin: std::process::ChildStdin,
    out: BufReader<std::process::ChildStdout>,
}

impl Engine {
    fn start(args: &[&str]) -> Engine {
        let (child, stdin, out) = common::spawn_piped("engine", args);
        Engine { child, stdin, out }
    }
    fn send(&mut self, bytes: &[u8]) {
        self.stdin.write_all(bytes).unwrap();
        self.stdin.write_all(b"\n").unwrap();
        self.stdin.flush().unwrap();
    }
    fn line(&mut self) -> String {
        let mut line = String::new();
        self.out.read_line(&mut line).unwrap();
        line.trim_end().to_string()
    }
    fn ask(&mut self, cmd: &str) -> String {
        self.send(cmd.as_bytes());
        self.line()
    }
    fn quit(mut self) {
        self.send(b"quit");
        drop(self.stdin);
        assert!(self.child.wait().unwrap().success());
    }
}

/// `go depth 64` is unbounded in practice; `stop` ends it with the best move so far,
/// commands sent meanwhile are answered `error busy`, and deeper depths are refused.
#[test]
fn stop_ends_a_deep_search_and_other_commands_wait() {
    let mut e = Engine::start(&["alphabeta"]);
    assert!(
        e.ask("go depth 65").starts_with("error "),
        "depth is bounded"
    );
    e.send(b"go depth 64");
    e.send(b"name");
    // The busy answer proves the search is running while commands are read.
    let busy = e.line();
    assert!(busy.starts_with("error busy"), "{busy}");
    e.send(b"stop");
    let best = e.line();
    let mv = best
        .strip_prefix("bestmove ")
        .unwrap_or_else(|| panic!("{best}"));
    assert!(
        Position::start(Variant::Kiswahili).parse_move(mv).is_ok(),
        "{best}"
    );
    // The session goes on.
    assert!(e.ask("name").starts_with("name alphabeta"));
    assert!(e.ask("stop").starts_with("error "), "stop without a search");
    e.quit();
}

/// A line that is not UTF-8 is an error line, not the end of the session; an unknown
/// command is quoted back short, whatever its length.
#[test]
fn bad_bytes_and_huge_lines_get_short_errors() {
    let mut e = Engine::start(&["greedy"]);
    e.send(&[0x66, 0xff, 0xfe, 0x6f]);
    let r = e.line();
    assert!(r.starts_with("error ") && r.contains("UTF-8"), "{r}");
    let huge = "x".repeat(1 << 20);
    let r = e.ask(&huge);
    assert!(
        r.starts_with("error unknown command"),
        "{}",
        &r[..r.len().min(80)]
    );
    assert!(
        r.len() < 200,
        "the answer quotes a prefix only: {} bytes",
        r.len()
    );
    assert_eq!(e.ask("name"), "name greedy");
    e.quit();
}

/// A network engine starts in its checkpoint's variant, and a `variant` it cannot
/// play is an error answer, not an exit.
#[test]
fn a_network_engine_starts_in_its_own_variant() {
    let mut e = Engine::start(&["net:models/kujifunza.safetensors:sims=8"]);
    let best = e.ask("go");
    let mv = best
        .strip_prefix("bestmove ")
        .unwrap_or_else(|| panic!("{best}"));
    assert!(
        Position::start(Variant::Kujifunza).parse_move(mv).is_ok(),
        "{best}"
    );
    let r = e.ask("variant kiswahili");
    assert!(r.starts_with("error ") && r.contains("kujifunza"), "{r}");
    // Still playing Kujifunza.
    assert_eq!(e.ask("position startpos"), "ok");
    assert!(e.ask("go").starts_with("bestmove "));
    e.quit();
}

/// `go movetime` is honoured (on the CPU clock by default) and `--clock wall` is accepted.
#[test]
fn movetime_bounds_a_search_on_either_clock() {
    for clock in ["cpu", "wall"] {
        let mut e = Engine::start(&["--clock", clock, "mcts"]);
        let best = e.ask("go movetime 20");
        assert!(best.starts_with("bestmove "), "{clock}: {best}");
        e.quit();
    }
}
