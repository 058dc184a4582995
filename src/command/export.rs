//! `bao export`: a checkpoint as a TorchScript file for Python or C++ (see
//! `neuralnet::export` for the module's inputs and output).

use std::path::PathBuf;

use crate::neuralnet;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// The checkpoint (`NAME.safetensors`, with `NAME.json` beside it).
    pub checkpoint: PathBuf,
    /// Output file (default: `NAME.pt` beside the checkpoint).
    #[arg(long, short)]
    pub out: Option<PathBuf>,
}

pub fn run(args: Args) -> anyhow::Result<()> {
    let net = crate::setup::network(&args.checkpoint, None, tch::Device::Cpu)?;
    let out = args
        .out
        .unwrap_or_else(|| args.checkpoint.with_extension("pt"));
    neuralnet::export_torchscript(&net, &out)?;
    println!(
        "wrote {} (bao la {}, {}, step {}): forward(features [N,15,4,8] f32, legal [N,64] bool) \
         -> [N,65] f32 = 64 probabilities then the value",
        out.display(),
        net.variant(),
        net.config().short_name(),
        net.lineage().step
    );
    Ok(())
}
