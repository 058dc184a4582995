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

/// An engine whose answers are read on a thread, so every wait for a line is bounded and
/// commands can be sent together, as a front end that pipelines them does.
struct Pipelined {
    child: std::process::Child,
    stdin: std::process::ChildStdin,
    lines: std::sync::mpsc::Receiver<String>,
}

/// The longest a test waits for one answer: far beyond any answer here on a loaded machine.
const ANSWER_WAIT: std::time::Duration = std::time::Duration::from_secs(60);

impl Pipelined {
    fn start(args: &[&str]) -> Pipelined {
        let (child, stdin, out) = common::spawn_piped("engine", args);
        let (tx, lines) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in out.lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        Pipelined {
            child,
            stdin,
            lines,
        }
    }
    /// Sends `commands` in one write, each followed by a newline.
    fn send_all(&mut self, commands: &[&str]) {
        let mut text = commands.join("\n").into_bytes();
        text.push(b'\n');
        self.stdin.write_all(&text).unwrap();
        self.stdin.flush().unwrap();
    }
    fn send_bytes(&mut self, bytes: &[u8]) {
        self.stdin.write_all(bytes).unwrap();
        self.stdin.write_all(b"\n").unwrap();
        self.stdin.flush().unwrap();
    }
    fn line(&mut self) -> String {
        self.lines
            .recv_timeout(ANSWER_WAIT)
            .unwrap_or_else(|e| panic!("no answer within {ANSWER_WAIT:?}: {e}"))
    }
    /// Asserts that no further line comes within a short while (the answers so far were all).
    fn no_more_lines(&mut self) {
        if let Ok(extra) = self
            .lines
            .recv_timeout(std::time::Duration::from_millis(300))
        {
            panic!("an unexpected line: {extra}");
        }
    }
    fn quit(mut self) {
        self.send_all(&["quit"]);
        drop(self.stdin);
        assert!(self.child.wait().unwrap().success());
    }
}

/// `stop` sent together with the commands after it: it ends the search, whose `bestmove` is
/// written before the next command is read, so those commands are answered in order, and a
/// `stop` with no search running gets an answer line too.
#[test]
fn stop_pipelined_with_the_next_commands_answers_them_in_order() {
    let mut e = Pipelined::start(&["alphabeta"]);
    e.send_all(&[
        "position startpos",
        "go movetime 100000",
        "stop",
        "position startpos moves A6R",
        "go movetime 100000",
        "stop",
        "stop",
        "name",
    ]);
    let start = Position::start(Variant::Kiswahili);
    assert_eq!(e.line(), "ok");
    let best = e.line();
    let mv = best
        .strip_prefix("bestmove ")
        .unwrap_or_else(|| panic!("{best}"));
    assert!(start.parse_move(mv).is_ok(), "{best}");
    assert_eq!(e.line(), "ok");
    let after = match start.parse_move("A6R").unwrap().after {
        bao::game::After::Position(p) => p,
        bao::game::After::Won(_) => unreachable!(),
    };
    let best = e.line();
    let mv = best
        .strip_prefix("bestmove ")
        .unwrap_or_else(|| panic!("{best}"));
    assert!(
        after.parse_move(mv).is_ok(),
        "a move for North after A6R: {best}"
    );
    assert_eq!(e.line(), "error stop: no search is running");
    assert!(e.line().starts_with("name alphabeta"));
    e.no_more_lines();
    e.quit();
}

/// A scripted exchange of 200 commands sent in one write: every command is answered, in order,
/// with exactly the line the protocol promises (a `stop` that ends a search by its `bestmove`).
#[test]
fn a_scripted_exchange_answers_every_command_in_order() {
    let mut e = Pipelined::start(&["alphabeta"]);
    let round = [
        "position startpos",
        "go movetime 100000",
        "name",
        "stop",
        "variant kujifunza",
        "stop",
        "variant kiswahili",
        "name",
    ];
    let commands: Vec<&str> = (0..25).flat_map(|_| round).collect();
    assert_eq!(commands.len(), 200);
    e.send_all(&commands);
    for r in 0..25 {
        let answers: Vec<String> = (0..7).map(|_| e.line()).collect();
        let context = format!("round {r}: {answers:?}");
        assert_eq!(answers[0], "ok", "{context}");
        assert!(answers[1].starts_with("error busy"), "{context}");
        assert!(answers[2].starts_with("bestmove "), "{context}");
        assert_eq!(answers[3], "ok", "{context}");
        assert_eq!(answers[4], "error stop: no search is running", "{context}");
        assert_eq!(answers[5], "ok", "{context}");
        assert!(answers[6].starts_with("name alphabeta"), "{context}");
    }
    e.no_more_lines();
    e.quit();
}

/// A `go` that is refused starts nothing: its error comes first and the commands after it are
/// answered as usual, not `error busy`.
#[test]
fn a_refused_go_answers_first_and_leaves_the_engine_idle() {
    let mut e = Pipelined::start(&["alphabeta:ms=50"]);
    e.send_all(&[
        "position startpos",
        "go movetime -5",
        "name",
        "position startpos",
        "go movetime 0",
        "go depth 99",
        "go movetime 18446744073709551616",
        "go sims 4294967296",
        "name",
    ]);
    assert_eq!(e.line(), "ok");
    let r = e.line();
    assert!(
        r.starts_with("error ") && r.contains("-5") && !r.contains("busy"),
        "{r}"
    );
    assert_eq!(e.line(), "name alphabeta:ms=50");
    assert_eq!(e.line(), "ok");
    for _ in 0..2 {
        let r = e.line();
        assert!(r.starts_with("error ") && !r.contains("busy"), "{r}");
    }
    for _ in 0..2 {
        let r = e.line();
        assert!(r.starts_with("error ") && r.contains("too large"), "{r}");
    }
    assert_eq!(e.line(), "name alphabeta:ms=50");
    e.no_more_lines();
    e.quit();
}

/// Error lines never carry the control bytes of the input (NUL, escape sequences, BEL): they
/// are escaped, whatever command quotes them.
#[test]
fn error_lines_escape_control_bytes() {
    let mut e = Pipelined::start(&["greedy"]);
    let nasty: &[&[u8]] = &[
        b"fo\x00o\x1b[31m\x07",
        b"position startpos moves A6R\x1b[2J",
        b"variant kis\x1bwahili",
        b"go movetime 5\x07",
        // A JSON escape: the state's parser hands the raw ESC to the variant's error.
        br#"position json {"variant":"k\u001b[31m","to_move":"S","S":{"front":[2,2,2,2,2,2,2,2],"back":[2,2,2,2,2,2,2,2],"hand":0,"nyumba":false},"N":{"front":[2,2,2,2,2,2,2,2],"back":[2,2,2,2,2,2,2,2],"hand":0,"nyumba":false},"takasia":null}"#,
        b"setoption name c_\x07puct value 1",
    ];
    for bytes in nasty {
        e.send_bytes(bytes);
        let r = e.line();
        assert!(r.starts_with("error "), "{r:?}");
        assert!(
            !r.chars().any(|c| c.is_control()),
            "control characters in {r:?}"
        );
        assert!(
            r.contains("\\u{1b}") || r.contains("\\u{7}") || r.contains("\\0"),
            "{r:?}"
        );
    }
    e.quit();
}

/// `setoption name KEY value V` sets a `[search]` key of a network player for the `go`s that
/// follow; unknown keys, bad values and players without search settings are refused, naming
/// the key.
#[test]
fn setoption_tunes_a_network_players_search() {
    let mut e = Pipelined::start(&["net:models/kujifunza.safetensors:sims=8"]);
    e.send_all(&["setoption name c_puct value 2.5"]);
    assert_eq!(e.line(), "ok");
    e.send_all(&["name"]);
    let name = e.line();
    assert!(
        name.contains("c_puct=2.5"),
        "the option shows in the name: {name}"
    );
    e.send_all(&["setoption name algorithm value gumbel", "go"]);
    assert_eq!(e.line(), "ok");
    let best = e.line();
    let mv = best
        .strip_prefix("bestmove ")
        .unwrap_or_else(|| panic!("{best}"));
    assert!(
        Position::start(Variant::Kujifunza).parse_move(mv).is_ok(),
        "{best}"
    );
    // Setting a key again replaces its value.
    e.send_all(&["setoption name c_puct value 1.5", "name"]);
    assert_eq!(e.line(), "ok");
    let name = e.line();
    assert!(
        name.contains("c_puct=1.5") && !name.contains("c_puct=2.5"),
        "{name}"
    );
    for (cmd, needle) in [
        ("setoption name c_pucr value 1", "c_pucr"),
        ("setoption name c_puct value -1", "c_puct"),
        (
            "setoption name leaves_per_step value many",
            "leaves_per_step",
        ),
        ("setoption name c_puct", "usage: setoption"),
        ("setoption c_puct 1", "usage: setoption"),
    ] {
        e.send_all(&[cmd]);
        let r = e.line();
        assert!(
            r.starts_with("error ") && r.contains(needle),
            "`{cmd}` -> {r}"
        );
    }
    // The refused options changed nothing.
    e.send_all(&["name", "go"]);
    assert!(e.line().contains("c_puct=1.5"));
    assert!(e.line().starts_with("bestmove "));
    e.quit();

    let mut e = Pipelined::start(&["alphabeta:depth=2"]);
    e.send_all(&["setoption name c_puct value 2"]);
    let r = e.line();
    assert!(
        r.starts_with("error ") && r.contains("c_puct") && r.contains("search"),
        "{r}"
    );
    e.quit();
}

/// A refused player spec quotes a short prefix of itself, however long it is, with control
/// characters escaped.
#[test]
fn a_long_bad_spec_is_quoted_short() {
    let huge = format!("alphabeta:depth=3:{}=1", "x".repeat(100_000));
    let (ok, _, err) = common::run_bao(&["engine", &huge]);
    assert!(!ok);
    assert!(
        err.contains("unknown option"),
        "{}",
        &err[..err.len().min(300)]
    );
    assert!(err.len() < 2000, "{} bytes on stderr", err.len());
    let (ok, _, err) = common::run_bao(&["engine", "alpha\u{1b}[2Jbeta"]);
    assert!(!ok);
    assert!(
        err.contains("\\u{1b}") && !err.contains('\u{1b}'),
        "{err:?}"
    );
}
