//! The `bao` command line: one thin file per subcommand.

use clap::{Parser, Subcommand};

pub mod analyze;
pub mod bench;
pub mod doctor;
pub mod engine;
pub mod eval;
pub mod export;
pub mod label;
pub mod learn;
pub mod play;
pub mod position;
pub mod replay;
pub mod rules;
pub mod run;
pub mod selfplay;
pub mod serve;
pub mod solve;
pub mod train;
pub mod tune;

/// bao-zero: train, evaluate and play neural Bao players.
#[derive(Debug, Parser)]
#[command(name = "bao", version, about, propagate_version = true)]
pub struct Cli {
    /// More log output (-v info, -vv debug, -vvv trace). `RUST_LOG` also works.
    #[arg(short, long, global = true, action = clap::ArgAction::Count)]
    pub verbose: u8,
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Print versions, libtorch and CUDA status, and thread settings.
    Doctor(doctor::Args),
    /// Rules tools: list moves of positions, apply moves, play random games.
    Rules(rules::Args),
    /// Benchmarks: rules, network, search, players.
    Bench(bench::Args),
    /// Generate self-play training data with a network.
    Selfplay(selfplay::Args),
    /// Train a network on sample shards.
    Learn(learn::Args),
    /// Run the whole AlphaZero loop from a config.
    Train(train::Args),
    /// Look at a run: a fleet's progress in object storage (`bao run status ROOT`), where a
    /// local run's CPU time went (`bao run cost RUN`).
    Run(run::Args),
    /// Play a tournament between players and report Elo (`--sweep` for a parameter grid).
    Eval(eval::Args),
    /// Tune a network player's search parameters by SPSA at equal time, then gate them.
    Tune(tune::Args),
    /// Play a game against a player in the terminal.
    Play(play::Args),
    /// Speak the line-based engine protocol on stdin/stdout.
    Engine(engine::Args),
    /// Analyse a position with a network and search.
    Analyze(analyze::Args),
    /// Step through a saved game record.
    Replay(replay::Args),
    /// Serve a web page to play in the browser.
    Serve(serve::Args),
    /// Write a checkpoint as a TorchScript file for Python / C++.
    Export(export::Args),
    /// Prove positions won or lost, write and check proofs (alpha-beta to a proof).
    Solve(solve::Args),
    /// Solve random early positions (or label a teacher's games) into training labels (`[train] labels`).
    Label(label::Args),
}

pub fn run(command: Command) -> anyhow::Result<()> {
    match command {
        Command::Doctor(a) => doctor::run(a),
        Command::Rules(a) => rules::run(a),
        Command::Bench(a) => bench::run(a),
        Command::Selfplay(a) => selfplay::run(a),
        Command::Learn(a) => learn::run(a),
        Command::Train(a) => train::run(a),
        Command::Run(a) => run::run(a),
        Command::Eval(a) => eval::run(a),
        Command::Tune(a) => tune::run(a),
        Command::Play(a) => play::run(a),
        Command::Engine(a) => engine::run(a),
        Command::Analyze(a) => analyze::run(a),
        Command::Replay(a) => replay::run(a),
        Command::Serve(a) => serve::run(a),
        Command::Export(a) => export::run(a),
        Command::Solve(a) => solve::run(a),
        Command::Label(a) => label::run(a),
    }
}

/// Logs go to stderr through `tracing`; `-v` raises the level, `RUST_LOG` overrides it.
pub fn init_logging(verbose: u8) {
    let level = match verbose {
        0 => "warn",
        1 => "info",
        2 => "debug",
        _ => "trace",
    };
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new(level));
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .try_init();
}
