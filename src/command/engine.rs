//! `bao engine <player spec>`: a line protocol on stdin/stdout, one answer line per command.
//!
//! ```text
//! variant kiswahili|kujifunza                   -> ok
//! position startpos [moves m1 m2 ...]           -> ok
//! position json <R13 JSON> [moves m1 m2 ...]    -> ok
//! go [sims N] [depth D] [movetime MS]           -> bestmove <move>
//! name                                          -> name <text>
//! quit                                          -> (exits, no answer)
//! ```
//!
//! Anything malformed or illegal is answered `error <reason>` and changes nothing; the engine
//! keeps going. `position json` switches to the JSON's variant. The session logic is
//! [`EngineSession`], so it can be tested without a process.

use std::io::{BufRead, Write};
use std::time::Duration;

use anyhow::Context;

use crate::game::{After, Position, Variant};
use crate::program::players::{self, Limits, Player, PlayerSpec};

#[derive(Debug, clap::Args)]
pub struct Args {
    /// The player that answers `go`, e.g. `alphabeta:ms=200`.
    pub player: String,
    /// The variant until a `variant` or `position json` command says otherwise.
    #[arg(long, default_value = "kiswahili")]
    pub variant: Variant,
    /// Seed of random players.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
}

/// The engine's state between commands.
pub struct EngineSession {
    spec: PlayerSpec,
    seed: u64,
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
            variant,
            player,
            position: Some(Position::start(variant)),
        })
    }

    /// The answer to one command line; `None` for `quit`.
    pub fn respond(&mut self, line: &str) -> Option<String> {
        let words: Vec<&str> = line.split_whitespace().collect();
        match words.first().copied() {
            Some("quit") if words.len() == 1 => None,
            _ => Some(match self.command(line.trim(), &words) {
                Ok(reply) => reply,
                Err(e) => format!("error {}", format!("{e:#}").replace('\n', " ")),
            }),
        }
    }

    fn command(&mut self, line: &str, words: &[&str]) -> anyhow::Result<String> {
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
            ["go", rest @ ..] => {
                let limits = parse_go(rest)?;
                let pos = self.position.context("no legal move: the game is over")?;
                anyhow::ensure!(
                    !pos.legal_moves().is_empty(),
                    "no legal move: the game is over"
                );
                let chosen = self.player.choose(&pos, &limits)?;
                Ok(format!("bestmove {}", chosen.mv.notation(pos.to_move())))
            }
            ["name"] => Ok(format!("name {}", self.player.name())),
            [cmd, ..] => anyhow::bail!(
                "unknown command `{cmd}` (expected variant, position, go, name or quit)"
            ),
        }
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
        [other, ..] => anyhow::bail!("expected `moves` after the position, found `{other}`"),
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
        let value = it
            .next()
            .with_context(|| format!("`go {key}` needs a number"))?;
        let n: u64 = value.parse().map_err(|_| {
            anyhow::anyhow!("`go {key} {value}`: `{value}` is not a non-negative integer")
        })?;
        match key {
            "sims" => limits.sims = Some(u32::try_from(n).context("sims too large")?),
            "depth" => {
                anyhow::ensure!(
                    (1..=64).contains(&n),
                    "`go depth {n}`: depth must be 1..=64"
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

pub fn run(args: Args) -> anyhow::Result<()> {
    let spec: PlayerSpec = args.player.parse()?;
    let mut session = EngineSession::new(spec, args.variant, args.seed)?;
    let stdin = std::io::stdin();
    let mut out = std::io::stdout().lock();
    for line in stdin.lock().lines() {
        let line = line.context("cannot read stdin")?;
        match session.respond(&line) {
            Some(reply) => {
                writeln!(out, "{reply}")?;
                out.flush()?;
            }
            None => break,
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
