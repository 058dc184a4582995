//! The engine protocol through a real process and pipe: one answer line per command.

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};

use bao::game::{Position, Variant};

#[test]
fn engine_answers_one_line_per_command_over_a_pipe() {
    let mut child = Command::new(env!("CARGO_BIN_EXE_bao"))
        .args(["engine", "alphabeta:depth=2"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut out = BufReader::new(child.stdout.take().unwrap());
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
    let out = Command::new(env!("CARGO_BIN_EXE_bao"))
        .args(["engine", "alphabeta:depht=3"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("unknown option `depht`"), "{err}");
}
