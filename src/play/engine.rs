//! The engine protocol (`bao engine <player spec>`): a line protocol on stdin/stdout, answered
//! in order, one line per command.
//!
//! ```text
//! variant kiswahili|kujifunza                   -> ok
//! position startpos [moves m1 m2 ...]           -> ok
//! position json <R13 JSON> [moves m1 m2 ...]    -> ok
//! go [sims N] [depth D] [movetime MS]           -> bestmove <move>
//! stop                                          -> (the running go answers now: bestmove)
//! setoption name KEY value V                    -> ok   (a `[search]` key of a net: player)
//! name                                          -> name <text>
//! quit                                          -> (exits, no answer; stops a running go)
//! ```
//!
//! Anything malformed or illegal is answered `error <reason>` and changes nothing; the engine
//! keeps going (a line that is not UTF-8 included; errors quote at most
//! [`QUOTE_CHARS`] characters of what they got, control characters escaped). `position json`
//! switches to the JSON's variant. A `go` is checked before anything starts: a refused one is
//! answered at once and leaves the engine idle. An accepted `go` searches on a worker thread
//! while commands are still read: `stop` ends the search and its `bestmove` (the best move so
//! far) is written before the next command is read, so commands sent together with `stop` are
//! answered in order after it; `quit` stops it and exits; any other command meanwhile gets
//! `error busy ...`. A `stop` with no search running (one that ended by itself included) is
//! answered `error stop: no search is running`. `movetime` is measured on the searching
//! thread's CPU clock (`--clock wall` for real time). The session logic is [`EngineSession`],
//! so it can be tested without a process.

use std::io::{BufRead, Write};
use std::sync::mpsc;
use std::time::Duration;

use anyhow::Context;

use crate::game::{After, Position, Variant};
use crate::play::players::{self, Limits, Player, PlayerSpec};
use crate::search::alphabeta::AlphaBetaParams;
use crate::search::{ClockKind, StopSignal};
pub use crate::util::quote::QUOTE_CHARS;
use crate::util::quote::{clip, quote, MESSAGE_CHARS};

/// The engine's state between commands.
pub struct EngineSession {
    spec: PlayerSpec,
    seed: u64,
    clock: ClockKind,
    variant: Variant,
    player: Box<dyn Player>,
    /// `None` once the moves of a `position` command ended the game.
    position: Option<Position>,
}

impl EngineSession {
    pub fn new(spec: PlayerSpec, variant: Variant, seed: u64) -> anyhow::Result<EngineSession> {
        let player = players::build(&spec, variant, seed)
            .with_context(|| format!("cannot build player `{spec}`"))?;
        Ok(EngineSession {
            spec,
            seed,
            clock: ClockKind::Cpu,
            variant,
            player,
            position: Some(Position::start(variant)),
        })
    }

    /// Measures `go movetime` and `ms=` on `clock`.
    pub fn set_clock(&mut self, clock: ClockKind) {
        self.clock = clock;
    }

    /// The answer to one command line; `None` for `quit`. A `go` runs to its end here (the
    /// process driver, [`run`], runs it on a worker thread so that `stop` can end it).
    pub fn respond(&mut self, line: &str) -> Option<String> {
        self.respond_with(line, None)
    }

    /// [`Self::respond`], with `stop` ending a `go` early when another thread raises it.
    pub fn respond_with(&mut self, line: &str, stop: Option<StopSignal>) -> Option<String> {
        let words: Vec<&str> = line.split_whitespace().collect();
        match words.first().copied() {
            Some("quit") if words.len() == 1 => None,
            _ => Some(match self.command(line.trim(), &words, stop) {
                Ok(reply) => reply,
                Err(e) => error_line(&e),
            }),
        }
    }

    fn command(
        &mut self,
        line: &str,
        words: &[&str],
        stop: Option<StopSignal>,
    ) -> anyhow::Result<String> {
        match words {
            [] => anyhow::bail!("empty command (expected variant, position, go, name or quit)"),
            ["variant", v] => {
                let variant: Variant = v.parse().map_err(anyhow::Error::msg)?;
                self.set_variant(variant)?;
                self.position = Some(Position::start(variant));
                Ok("ok".into())
            }
            ["variant", ..] => anyhow::bail!("usage: variant kiswahili|kujifunza"),
            ["position", "startpos", rest @ ..] => {
                let moves = moves_part(rest)?;
                let pos = apply_moves(Position::start(self.variant), moves)?;
                self.position = pos;
                Ok("ok".into())
            }
            ["position", "json", ..] => {
                let body = line
                    .trim_start_matches("position")
                    .trim_start()
                    .trim_start_matches("json")
                    .trim();
                let (json, moves) = match body.find(" moves") {
                    Some(i) if body[..i].trim_end().ends_with('}') => {
                        (&body[..i], Some(&body[i + 6..]))
                    }
                    _ => (body, None),
                };
                anyhow::ensure!(
                    !json.is_empty(),
                    "usage: position json <R13 JSON> [moves ...]"
                );
                let start = Position::from_json(json)?;
                let moves: Vec<&str> = moves
                    .map(|m| m.split_whitespace().collect())
                    .unwrap_or_default();
                let pos = apply_moves(start, &moves)?;
                if start.variant() != self.variant {
                    self.set_variant(start.variant())?;
                }
                self.position = pos;
                Ok("ok".into())
            }
            ["position", ..] => {
                anyhow::bail!("usage: position startpos|json <R13 JSON> [moves m1 m2 ...]")
            }
            ["go", ..] => {
                let (pos, limits) = self.prepare_go(words, stop)?;
                self.search(&pos, &limits)
            }
            ["setoption", "name", key, "value", value @ ..] if !value.is_empty() => {
                self.set_option(key, &value.join(" "))?;
                Ok("ok".into())
            }
            ["setoption", ..] => anyhow::bail!("usage: setoption name KEY value VALUE"),
            ["name"] => Ok(format!("name {}", self.player.name())),
            ["stop"] => anyhow::bail!("stop: no search is running"),
            [cmd, ..] => anyhow::bail!(
                "unknown command `{}` (expected variant, position, go, stop, setoption, name or quit)",
                quote(cmd)
            ),
        }
    }

    /// Checks a `go` command (its words) and the position before any search starts: the
    /// position and limits to search, or why the `go` is refused.
    pub fn prepare_go(
        &self,
        words: &[&str],
        stop: Option<StopSignal>,
    ) -> anyhow::Result<(Position, Limits)> {
        let rest = match words {
            ["go", rest @ ..] => rest,
            _ => anyhow::bail!("not a go command"),
        };
        let limits = Limits {
            clock: self.clock,
            stop,
            ..parse_go(rest)?
        };
        let pos = self.position.context("no legal move: the game is over")?;
        anyhow::ensure!(
            !pos.legal_moves().is_empty(),
            "no legal move: the game is over"
        );
        Ok((pos, limits))
    }

    /// Runs a search [`Self::prepare_go`] accepted: the `bestmove` line.
    fn search(&mut self, pos: &Position, limits: &Limits) -> anyhow::Result<String> {
        let chosen = self.player.choose(pos, limits)?;
        Ok(format!("bestmove {}", chosen.mv.notation(pos.to_move())))
    }

    /// [`Self::search`] as the protocol line it answers (`error ...` when the player failed).
    pub fn search_line(&mut self, pos: &Position, limits: &Limits) -> String {
        self.search(pos, limits).unwrap_or_else(|e| error_line(&e))
    }

    /// `setoption name KEY value VALUE`: sets the `[search]` key `KEY` of a `net:` player (as
    /// the spec option `KEY=VALUE` would) for the `go`s that follow, rebuilding the player.
    /// Refused, changing nothing, for an unknown key, a bad value, or a player without search
    /// settings.
    fn set_option(&mut self, key: &str, value: &str) -> anyhow::Result<()> {
        let PlayerSpec::Net(params) = &self.spec else {
            anyhow::bail!(
                "setoption `{}`: `{}` has no [search] settings (only net: players take setoption)",
                quote(key),
                quote(&self.spec.to_string())
            );
        };
        let key = if key == "cpuct" { "c_puct" } else { key };
        let mut params = params.clone();
        match params.search.iter_mut().find(|(k, _)| k == key) {
            Some(slot) => slot.1 = value.to_string(),
            None => params.search.push((key.to_string(), value.to_string())),
        }
        crate::search::SearchParams::default()
            .with_overrides(params.search.iter().map(|(k, v)| (k.as_str(), v.as_str())))
            .with_context(|| format!("setoption `{}`", quote(key)))?;
        let spec = PlayerSpec::Net(params);
        let player = players::build(&spec, self.variant, self.seed)
            .with_context(|| format!("setoption `{}`", quote(key)))?;
        self.spec = spec;
        self.player = player;
        Ok(())
    }

    fn set_variant(&mut self, variant: Variant) -> anyhow::Result<()> {
        if variant != self.variant {
            self.player = players::build(&self.spec, variant, self.seed)?;
            self.variant = variant;
        }
        Ok(())
    }
}

/// The move list after `startpos`: nothing, or `moves m1 m2 ...`.
fn moves_part<'a>(rest: &'a [&'a str]) -> anyhow::Result<&'a [&'a str]> {
    match rest {
        [] => Ok(&[]),
        ["moves", moves @ ..] => Ok(moves),
        [other, ..] => anyhow::bail!(
            "expected `moves` after the position, found `{}`",
            quote(other)
        ),
    }
}

/// Plays `moves` from `start`; `None` when the last move won.
fn apply_moves(start: Position, moves: &[&str]) -> anyhow::Result<Option<Position>> {
    Ok(match start.play_line(moves)? {
        After::Position(pos) => Some(pos),
        After::Won(_) => None,
    })
}

fn parse_go(rest: &[&str]) -> anyhow::Result<Limits> {
    let mut limits = Limits::default();
    let mut it = rest.iter();
    while let Some(&key) = it.next() {
        let (key, value) = (quote(key), it.next().map(|v| quote(v)));
        let value = value.with_context(|| format!("`go {key}` needs a number"))?;
        let n: u64 = value.parse().map_err(|_| {
            if !value.is_empty() && value.bytes().all(|b| b.is_ascii_digit()) {
                anyhow::anyhow!("`go {key} {value}`: `{value}` is too large")
            } else {
                anyhow::anyhow!("`go {key} {value}`: `{value}` is not a non-negative integer")
            }
        })?;
        match key.as_str() {
            "sims" => {
                limits.sims = Some(u32::try_from(n).map_err(|_| {
                    anyhow::anyhow!("`go sims {n}`: {n} is too large (at most {})", u32::MAX)
                })?)
            }
            "depth" => {
                let max = AlphaBetaParams::MAX_DEPTH as u64;
                anyhow::ensure!(
                    (1..=max).contains(&n),
                    "`go depth {n}`: depth must be 1..={max} (a deep search ends on `stop`)"
                );
                limits.depth = Some(n as u32);
            }
            "movetime" => {
                anyhow::ensure!(n > 0, "`go movetime 0`: movetime must be at least 1 ms");
                limits.movetime = Some(Duration::from_millis(n));
            }
            other => {
                anyhow::bail!("unknown go option `{other}` (expected sims, depth or movetime)")
            }
        }
    }
    Ok(limits)
}

/// An error as one protocol line: control characters escaped (a newline too), and cut short
/// should a message quote more of its input than it should.
fn error_line(e: &anyhow::Error) -> String {
    format!("error {}", clip(&format!("{e:#}"), MESSAGE_CHARS))
}

/// What the driver's loop waits for: a line from stdin, or the end of a search.
enum Event {
    /// A line of stdin; `Err` when it was not UTF-8.
    Line(Result<String, std::string::FromUtf8Error>),
    /// Stdin closed or failed.
    Eof,
    /// The search with this number ended (its answer is collected by joining its thread).
    Done(u64),
}

/// Reads stdin line by line (as bytes, so a line that is not UTF-8 is an answerable error, not
/// the end of the session) and hands each to the driver.
fn read_lines(tx: mpsc::Sender<Event>) {
    let mut stdin = std::io::stdin().lock();
    let mut buf = Vec::new();
    loop {
        buf.clear();
        match stdin.read_until(b'\n', &mut buf) {
            Ok(0) | Err(_) => break,
            Ok(_) => {
                while buf.last().is_some_and(|b| *b == b'\n' || *b == b'\r') {
                    buf.pop();
                }
                if tx
                    .send(Event::Line(String::from_utf8(buf.clone())))
                    .is_err()
                {
                    return;
                }
            }
        }
    }
    let _ = tx.send(Event::Eof);
}

const NOT_UTF8: &str = "error the line is not valid UTF-8";

/// Runs the protocol on stdin and stdout until `quit` or the end of input.
pub fn serve_stdio(mut session: EngineSession) -> anyhow::Result<()> {
    let (tx, rx) = mpsc::channel();
    let reader = tx.clone();
    std::thread::spawn(move || read_lines(reader));
    let mut out = std::io::stdout().lock();
    let mut say = |line: &str| -> anyhow::Result<()> {
        writeln!(out, "{line}")?;
        out.flush().context("cannot write stdout")
    };
    let mut searches = 0u64;
    while let Ok(event) = rx.recv() {
        let line = match event {
            Event::Line(Ok(line)) => line,
            Event::Line(Err(_)) => {
                say(NOT_UTF8)?;
                continue;
            }
            // A search that `stop` ended already answered.
            Event::Done(_) => continue,
            Event::Eof => break,
        };
        let words: Vec<&str> = line.split_whitespace().collect();
        if words.first() != Some(&"go") {
            match session.respond(&line) {
                Some(reply) => say(&reply)?,
                None => break,
            }
            continue;
        }
        // `go`: checked here, so that a refused one answers first and starts nothing.
        let stop = StopSignal::new();
        let (pos, limits) = match session.prepare_go(&words, Some(stop.clone())) {
            Ok(go) => go,
            Err(e) => {
                say(&error_line(&e))?;
                continue;
            }
        };
        // Search on a worker thread, reading commands meanwhile: `stop` and `quit` end the
        // search, whose answer is written before the next command is read; the rest is busy.
        searches += 1;
        let id = searches;
        let mut exit = false;
        std::thread::scope(|scope| -> anyhow::Result<()> {
            let done = tx.clone();
            let session = &mut session;
            let search = scope.spawn(move || {
                let reply = session.search_line(&pos, &limits);
                let _ = done.send(Event::Done(id));
                reply
            });
            loop {
                match rx.recv() {
                    Ok(Event::Done(n)) if n == id => break,
                    Ok(Event::Done(_)) => {}
                    Ok(Event::Line(Ok(l))) => match l.trim() {
                        "stop" => break,
                        "quit" => {
                            exit = true;
                            break;
                        }
                        _ => say("error busy: a search is running (send stop)")?,
                    },
                    Ok(Event::Line(Err(_))) => say(NOT_UTF8)?,
                    // Stdin closed: nobody sends `stop`; end the search, then the session.
                    Ok(Event::Eof) | Err(_) => {
                        exit = true;
                        break;
                    }
                }
            }
            stop.stop();
            let reply = search
                .join()
                .unwrap_or_else(|_| "error the search failed (it panicked)".to_string());
            say(&reply)
        })?;
        if exit {
            break;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn session(spec: &str) -> EngineSession {
        EngineSession::new(spec.parse().unwrap(), Variant::Kiswahili, 1).unwrap()
    }

    #[test]
    fn answers_every_command_as_specified() {
        let mut s = session("greedy");
        assert_eq!(s.respond("name").unwrap(), "name greedy");
        assert_eq!(s.respond("variant kujifunza").unwrap(), "ok");
        assert_eq!(s.respond("position startpos").unwrap(), "ok");
        let start = Position::start(Variant::Kujifunza);
        let best = s.respond("go").unwrap();
        let mv = best.strip_prefix("bestmove ").expect(&best);
        assert!(start.parse_move(mv).is_ok(), "{best}");
        // A move list, then go from there.
        let after = match start.parse_move(mv).unwrap().after {
            After::Position(p) => p,
            After::Won(_) => unreachable!(),
        };
        let reply = s.respond(&format!("position startpos moves {mv}")).unwrap();
        assert_eq!(reply, "ok");
        let best2 = s.respond("go depth 2 movetime 50 sims 10").unwrap();
        assert!(
            after
                .parse_move(best2.strip_prefix("bestmove ").unwrap())
                .is_ok(),
            "{best2}"
        );
        // The same position as JSON, with and without moves.
        assert_eq!(
            s.respond(&format!("position json {}", after.to_json()))
                .unwrap(),
            "ok"
        );
        assert_eq!(
            s.respond(&format!("position json {} moves", start.to_json()))
                .unwrap(),
            "ok"
        );
        assert_eq!(
            s.respond(&format!("position json {} moves {mv}", start.to_json()))
                .unwrap(),
            "ok"
        );
        let best3 = s.respond("go").unwrap();
        assert!(
            after
                .parse_move(best3.strip_prefix("bestmove ").unwrap())
                .is_ok(),
            "{best3}"
        );
        // JSON switches the variant.
        assert_eq!(
            s.respond(&format!(
                "position json {}",
                Position::start(Variant::Kiswahili).to_json()
            ))
            .unwrap(),
            "ok"
        );
        let best4 = s.respond("go").unwrap();
        assert!(
            Position::start(Variant::Kiswahili)
                .parse_move(&best4[9..])
                .is_ok(),
            "{best4}"
        );
        assert_eq!(s.respond("quit"), None);
    }

    #[test]
    fn errors_keep_the_engine_going_and_change_nothing() {
        let mut s = session("alphabeta:depth=2");
        assert_eq!(s.respond("variant kujifunza").unwrap(), "ok");
        let start = Position::start(Variant::Kujifunza);
        let legal = start.legal_notations()[0].clone();
        assert_eq!(
            s.respond(&format!("position startpos moves {legal}"))
                .unwrap(),
            "ok"
        );
        let expect_error = |s: &mut EngineSession, cmd: &str, needle: &str| {
            let r = s.respond(cmd).unwrap();
            assert!(
                r.starts_with("error ") && r.contains(needle),
                "`{cmd}` -> `{r}` (wanted `{needle}`)"
            );
            assert!(!r.contains('\n'));
        };
        expect_error(&mut s, "", "empty command");
        expect_error(&mut s, "fly", "unknown command `fly`");
        expect_error(&mut s, "variant chess", "unknown variant `chess`");
        expect_error(&mut s, "variant", "usage: variant");
        expect_error(&mut s, "position", "usage: position");
        expect_error(&mut s, "position startpos A1", "expected `moves`");
        expect_error(&mut s, "position startpos moves A9L", "move 1 `A9L`");
        expect_error(&mut s, "position startpos moves a1L", "move 1 `a1L`");
        expect_error(
            &mut s,
            &format!("position startpos moves {legal} {legal}"),
            "move 2",
        );
        expect_error(
            &mut s,
            "position json {\"variant\":\"kujifunza\"}",
            "invalid state",
        );
        expect_error(&mut s, "position json", "usage: position json");
        expect_error(&mut s, "go depth", "needs a number");
        expect_error(&mut s, "go depth x", "not a non-negative integer");
        expect_error(&mut s, "go depth 0", "depth must be");
        expect_error(&mut s, "go nodes 5", "unknown go option `nodes`");
        expect_error(&mut s, "name now", "unknown command `name`");
        // The position set before the errors is still in force: North is to move.
        let best = s.respond("go").unwrap();
        assert!(
            best.starts_with("bestmove a") || best.starts_with("bestmove b"),
            "{best}"
        );
    }

    #[test]
    fn go_on_a_finished_game_is_an_error() {
        // South has no move of 2+ seeds: the game is over (R6, R10).
        let over = r#"{"variant":"kujifunza","to_move":"S",
            "S":{"front":[1,0,0,0,0,0,0,0],"back":[0,0,0,0,0,0,0,0],"hand":0,"nyumba":false},
            "N":{"front":[4,4,4,4,4,4,4,4],"back":[4,4,4,4,4,4,4,3],"hand":0,"nyumba":false},
            "takasia":null}"#
            .replace(char::is_whitespace, "");
        let mut s = session("random");
        assert_eq!(s.respond(&format!("position json {over}")).unwrap(), "ok");
        let r = s.respond("go").unwrap();
        assert!(r.starts_with("error ") && r.contains("game is over"), "{r}");
        let r = s
            .respond(&format!("position json {over} moves A1L"))
            .unwrap();
        assert!(r.starts_with("error "), "{r}");
    }
}
