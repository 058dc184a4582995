//! `bao doctor`: what this build runs on.

#[derive(Debug, clap::Args)]
pub struct Args {}

pub fn run(_args: Args) -> anyhow::Result<()> {
    println!("bao-zero {}", env!("CARGO_PKG_VERSION"));
    println!("libtorch lib dir: {}", env!("BAO_LIBTORCH_LIB"));
    println!("cuda available: {}", tch::Cuda::is_available());
    println!("torch threads: {}", tch::get_num_threads());
    Ok(())
}
