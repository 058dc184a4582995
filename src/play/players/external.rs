//! An external engine driven through the `bao engine` protocol (`ext:"COMMAND"`).
//!
//! Each move sends the whole position (`position json ...`) and a `go` with the spec's limits
//! (or the caller's), so the engine needs no game history. Replies are read on a thread so
//! that a hung engine is reported after a timeout instead of blocking a tournament: the
//! handshake and every answer but a `go`'s within [`REPLY_TIMEOUT`], a `go` within twice its
//! movetime plus [`GO_GRACE`] ([`GO_TIMEOUT`] without a movetime); the spec's `timeout=MS`
//! replaces them (a `go` then gets its movetime plus `MS`). An engine that started but failed
//! its handshake is an [`EngineFailure`], which tournaments score as a forfeit.

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::time::Duration;

use anyhow::{bail, Context};

use super::spec::ExtParams;
use super::{ChosenMove, Limits, Player};
use crate::game::{Position, Variant};

/// How long an engine may take to answer anything but `go` (the handshake included).
pub const REPLY_TIMEOUT: Duration = Duration::from_secs(30);
/// Extra time a `go` may take beyond twice its movetime.
pub const GO_GRACE: Duration = Duration::from_secs(10);
/// How long a `go` without a movetime may take.
pub const GO_TIMEOUT: Duration = Duration::from_secs(120);

/// An engine that started but did not answer its handshake as the protocol says (silent, out
/// of time, exited, or nonsense): the engine's fault, not the spec's, so a tournament scores
/// each of its games as a forfeit and goes on.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct EngineFailure(pub String);

/// Whether `e` is (or was caused by) an [`EngineFailure`].
pub fn is_engine_failure(e: &anyhow::Error) -> bool {
    e.chain().any(|c| c.is::<EngineFailure>())
}

pub struct ExternalPlayer {
    name: String,
    params: ExtParams,
    child: Child,
    stdin: ChildStdin,
    lines: Receiver<String>,
    variant: Variant,
}

/// Splits a command line like a POSIX shell (quotes group words). A program named `bao` is the
/// running `bao` binary itself when that is what runs, so `ext:"bao engine ..."` always works.
fn command(line: &str) -> anyhow::Result<Command> {
    let words =
        shlex::split(line).with_context(|| format!("cannot split engine command `{line}`"))?;
    let (program, args) = words
        .split_first()
        .with_context(|| format!("empty engine command `{line}`"))?;
    let mut program = std::path::PathBuf::from(program);
    if program.as_os_str() == "bao" {
        if let Ok(me) = std::env::current_exe() {
            if me.file_stem().is_some_and(|s| s == "bao") {
                program = me;
            }
        }
    }
    let mut cmd = Command::new(program);
    cmd.args(args);
    Ok(cmd)
}

impl ExternalPlayer {
    /// Starts the engine and sets its variant; fails if it does not answer `ok`.
    pub fn spawn(
        name: String,
        params: &ExtParams,
        variant: Variant,
    ) -> anyhow::Result<ExternalPlayer> {
        let mut child = command(&params.command)?
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .with_context(|| format!("cannot start engine `{}`", params.command))?;
        let stdin = child.stdin.take().context("engine stdin")?;
        let stdout = child.stdout.take().context("engine stdout")?;
        let (tx, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        let mut player = ExternalPlayer {
            name,
            params: params.clone(),
            child,
            stdin,
            lines,
            variant,
        };
        // Dropping the player on failure ends the process.
        player
            .expect_ok(&format!("variant {variant}"))
            .map_err(|e| anyhow::Error::new(EngineFailure(format!("{e:#}"))))?;
        Ok(player)
    }

    /// How long an answer to anything but `go` may take.
    fn reply_timeout(&self) -> Duration {
        self.params
            .timeout
            .map_or(REPLY_TIMEOUT, Duration::from_millis)
    }

    /// How long the answer to a `go` with this movetime may take.
    fn go_timeout(&self, movetime_ms: Option<u64>) -> Duration {
        let movetime = Duration::from_millis(movetime_ms.unwrap_or(0));
        match (self.params.timeout, movetime_ms) {
            (Some(t), _) => movetime + Duration::from_millis(t),
            (None, Some(_)) => movetime * 2 + GO_GRACE,
            (None, None) => GO_TIMEOUT,
        }
    }

    fn ask(&mut self, command: &str, timeout: Duration) -> anyhow::Result<String> {
        writeln!(self.stdin, "{command}")
            .and_then(|_| self.stdin.flush())
            .with_context(|| format!("engine `{}` closed its input", self.params.command))?;
        match self.lines.recv_timeout(timeout) {
            Ok(line) => Ok(line),
            Err(RecvTimeoutError::Timeout) => {
                bail!(
                    "engine `{}` did not answer `{command}` within {timeout:?}",
                    self.params.command
                )
            }
            Err(RecvTimeoutError::Disconnected) => {
                bail!(
                    "engine `{}` exited while answering `{command}`",
                    self.params.command
                )
            }
        }
    }

    fn expect_ok(&mut self, command: &str) -> anyhow::Result<()> {
        let reply = self.ask(command, self.reply_timeout())?;
        if reply.trim() != "ok" {
            bail!(
                "engine `{}` answered `{reply}` to `{command}`",
                self.params.command
            );
        }
        Ok(())
    }

    /// The engine's own name (`name` command).
    pub fn engine_name(&mut self) -> anyhow::Result<String> {
        let reply = self.ask("name", self.reply_timeout())?;
        reply
            .strip_prefix("name ")
            .map(str::to_string)
            .with_context(|| format!("engine answered `{reply}` to `name`"))
    }
}

impl Player for ExternalPlayer {
    fn name(&self) -> String {
        self.name.clone()
    }

    fn thinks_on_this_thread(&self) -> bool {
        false
    }

    fn choose(&mut self, pos: &Position, limits: &Limits) -> anyhow::Result<ChosenMove> {
        if pos.variant() != self.variant {
            self.expect_ok(&format!("variant {}", pos.variant()))?;
            self.variant = pos.variant();
        }
        self.expect_ok(&format!("position json {}", pos.to_json()))?;
        let mut go = String::from("go");
        let sims = limits.sims.or(self.params.sims);
        let depth = limits.depth.or(self.params.depth);
        let ms = limits
            .movetime
            .map(|t| t.as_millis() as u64)
            .or(self.params.ms);
        if let Some(s) = sims {
            go.push_str(&format!(" sims {s}"));
        }
        if let Some(d) = depth {
            go.push_str(&format!(" depth {d}"));
        }
        if let Some(m) = ms {
            go.push_str(&format!(" movetime {m}"));
        }
        let reply = self.ask(&go, self.go_timeout(ms))?;
        let text = reply.strip_prefix("bestmove ").with_context(|| {
            format!(
                "engine `{}` answered `{reply}` to `{go}`",
                self.params.command
            )
        })?;
        let mv = pos
            .parse_move(text.trim())
            .with_context(|| format!("engine `{}` played a bad move", self.params.command))?;
        Ok(ChosenMove::bare(mv))
    }
}

impl Drop for ExternalPlayer {
    fn drop(&mut self) {
        let _ = writeln!(self.stdin, "quit").and_then(|_| self.stdin.flush());
        // Give it a moment to exit on its own, then make sure it is gone.
        for _ in 0..20 {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
