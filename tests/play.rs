//! `bao play` and `bao replay` through plain pipes: a whole scripted game.

mod common;

use std::io::{BufReader, Read, Write};
use std::process::{Child, ChildStdin, ChildStdout};

use bao::game::{Position, Variant};
use bao::play::game::PlayRecord;
use bao::play::terminal::resolve_move;

struct Session {
    child: Child,
    stdin: ChildStdin,
    out: BufReader<ChildStdout>,
}

impl Session {
    fn start(args: &[&str]) -> Session {
        let (child, stdin, out) = common::spawn_piped("play", args);
        Session { child, stdin, out }
    }

    /// Everything up to the next prompt.
    fn until_prompt(&mut self) -> String {
        let mut text = Vec::new();
        let mut byte = [0u8];
        while !text.ends_with(b"bao> ") {
            if self.out.read(&mut byte).unwrap() == 0 {
                panic!("play ended early:\n{}", String::from_utf8_lossy(&text));
            }
            text.push(byte[0]);
        }
        String::from_utf8(text).unwrap()
    }

    fn send(&mut self, line: &str) -> String {
        writeln!(self.stdin, "{line}").unwrap();
        self.stdin.flush().unwrap();
        self.until_prompt()
    }

    fn quit(mut self) {
        writeln!(self.stdin, "quit").unwrap();
        drop(self.stdin);
        assert!(self.child.wait().unwrap().success());
    }
}

fn legal_moves(screen: &str) -> Vec<String> {
    let line = screen
        .lines()
        .rev()
        .find(|l| l.starts_with("legal moves: "))
        .expect("legal moves shown");
    line["legal moves: ".len()..]
        .split_whitespace()
        .map(str::to_string)
        .collect()
}

#[test]
fn a_scripted_game_through_a_pipe_with_refusals_save_load_and_replay() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("game.json");
    let file = file.to_str().unwrap();

    let mut s = Session::start(&[
        "--variant",
        "kujifunza",
        "--opponent",
        "greedy",
        "--side",
        "S",
    ]);
    let screen = s.until_prompt();
    assert!(screen.contains("You play South against greedy"), "{screen}");
    assert!(screen.contains("A1  A2"), "the board is shown:\n{screen}");
    let first = legal_moves(&screen);
    // Malformed, wrong side and illegal input is refused with the reason, and asked again.
    let r = s.send("hello");
    assert!(r.contains("refused: malformed move `hello`"), "{r}");
    let r = s.send("a1L");
    assert!(
        r.contains("refused:") && r.contains("names a hole of N"),
        "{r}"
    );
    let illegal = ["A1L", "A1R", "B1L", "B8R", "A4L"]
        .into_iter()
        .find(|m| !first.contains(&m.to_string()))
        .unwrap();
    let r = s.send(illegal);
    assert!(
        r.contains(&format!("refused: illegal move `{illegal}`")),
        "{r}"
    );
    assert!(s.send("save").contains("usage: save FILE"));
    let hint = s.send("hint");
    assert!(hint.contains("hint: "), "{hint}");

    // Play the first legal move each turn (lower-cased: the short form) until the game ends.
    let mut screen = String::new();
    for mine in 0..200 {
        let moves = if mine == 0 {
            first.clone()
        } else {
            legal_moves(&screen)
        };
        screen = s.send(&moves[0].to_ascii_lowercase());
        assert!(
            screen.contains("greedy: ") || screen.contains("Game over"),
            "{screen}"
        );
        if screen.contains("Game over") {
            break;
        }
    }
    assert!(screen.contains("Game over"), "the game ended:\n{screen}");
    let r = s.send(&format!("save {file}"));
    assert!(r.contains("saved"), "{r}");
    let record = PlayRecord::load(std::path::Path::new(file)).unwrap();
    assert!(record.winner.is_some());
    assert_eq!(
        record.players,
        vec!["human".to_string(), "greedy".to_string()]
    );
    // Undo goes back to the human's turn; moves after the game are refused.
    let r = s.send("undo");
    assert!(r.contains("took back"), "{r}");
    assert!(r.contains("legal moves:"), "{r}");
    s.quit();

    // A fresh session loads the record and is at the same point (game over).
    let mut s = Session::start(&["--variant", "kujifunza", "--opponent", "greedy"]);
    s.until_prompt();
    let r = s.send(&format!("load {file}"));
    assert!(
        r.contains(&format!("loaded {} moves", record.moves.len())),
        "{r}"
    );
    assert!(r.contains("Game over"), "{r}");
    assert!(s.send("A1L").contains("refused: the game is over"));
    let r = s.send("load /no/such/file.json");
    assert!(r.contains("cannot load"), "{r}");
    // A record whose winner was edited to the loser is refused, naming the contradiction.
    let mut forged = record.clone();
    let winner = forged.winner.expect("the game ended");
    forged.winner = Some(winner.opponent());
    let forged_file = dir.path().join("forged.json");
    forged.save(&forged_file).unwrap();
    let r = s.send(&format!("load {}", forged_file.display()));
    assert!(
        r.contains("cannot load") && r.contains(&format!("says {} won", winner.opponent())),
        "{r}"
    );
    s.quit();

    // bao replay shows every position and the result.
    let (ok, text, err) = common::run_bao(&["replay", file]);
    assert!(ok, "{err}");
    assert_eq!(text.matches("plays ").count(), record.moves.len());
    assert!(
        text.contains(&format!("{} wins", record.winner.as_ref().unwrap())),
        "{text}"
    );
}

#[test]
fn short_forms_resolve_only_when_unambiguous() {
    let pos = Position::start(Variant::Kujifunza);
    let legal = pos.legal_notations();
    let m = &legal[0];
    assert_eq!(resolve_move(&pos, m).unwrap().notation(pos.to_move()), *m);
    assert_eq!(
        resolve_move(&pos, &m.to_ascii_lowercase())
            .unwrap()
            .notation(pos.to_move()),
        *m
    );
    // A hole with both directions legal is ambiguous without L/R.
    let hole = &m[..2];
    let both = legal.iter().filter(|x| x.starts_with(hole)).count();
    let r = resolve_move(&pos, hole);
    if both > 1 {
        assert!(r.unwrap_err().contains("ambiguous"));
    } else {
        assert!(r.is_ok());
    }
    assert!(resolve_move(&pos, "").is_err());
    assert!(resolve_move(&pos, "Q1L").unwrap_err().contains("no hole"));
}

#[test]
fn a_broken_record_is_refused_naming_the_move() {
    let pos = Position::start(Variant::Kujifunza);
    let record = PlayRecord {
        variant: Variant::Kujifunza,
        start: pos.to_state_json(),
        moves: vec![pos.legal_notations()[0].clone(), "A1L".into()],
        players: vec![],
        winner: None,
    };
    let err = record.replay().err().unwrap();
    assert!(
        format!("{err:#}").contains("record move 2 `A1L`"),
        "{err:#}"
    );
}

/// An `ext:` engine that crashes or plays an illegal move loses the game (as `bao
/// eval` counts it); the session goes on and the person can save.
#[test]
fn an_engine_that_crashes_or_plays_illegal_forfeits_and_the_game_can_be_saved() {
    let dir = tempfile::tempdir().unwrap();
    for (name, on_go) in [("crash", "exit 3"), ("illegal", "echo 'bestmove Z9Z'")] {
        let script = dir.path().join(format!("{name}.sh"));
        std::fs::write(
            &script,
            format!(
                "while read -r line; do case \"$line\" in go*) {on_go} ;; name*) echo 'name {name}' ;; *) echo ok ;; esac; done\n"
            ),
        )
        .unwrap();
        let spec = format!("ext:\"sh {}\"", script.display());
        // The engine plays South and fails on its first move.
        let mut s = Session::start(&["--variant", "kujifunza", "--side", "N", "--opponent", &spec]);
        let screen = s.until_prompt();
        assert!(
            screen.contains("forfeits") && screen.contains("You win"),
            "{name}:\n{screen}"
        );
        assert!(
            s.send("A1L").contains("refused: the game is over"),
            "{name}"
        );
        let file = dir.path().join(format!("{name}.json"));
        let saved = s.send(&format!("save {}", file.display()));
        assert!(saved.contains("saved 0 moves"), "{name}: {saved}");
        assert!(PlayRecord::load(&file).is_ok());
        s.quit();
    }
}
