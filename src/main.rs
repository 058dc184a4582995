use std::process::ExitCode;

use clap::Parser;

fn main() -> ExitCode {
    let cli = bao::command::Cli::parse();
    bao::command::init_logging(cli.verbose);
    match bao::command::run(cli.command) {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("error: {err:#}");
            ExitCode::FAILURE
        }
    }
}
