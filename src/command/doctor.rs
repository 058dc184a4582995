//! `bao doctor`: what this build runs on — versions, libtorch, CUDA, thread settings.

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Also run a tiny libtorch forward pass to prove the library works.
    #[arg(long)]
    pub check: bool,
}

pub fn run(args: Args) -> anyhow::Result<()> {
    crate::neuralnet::configure_threads(None);
    println!("bao-zero        {}", env!("CARGO_PKG_VERSION"));
    println!("libtorch        {}", env!("BAO_LIBTORCH_VERSION"));
    println!("libtorch lib    {}", env!("BAO_LIBTORCH_LIB"));
    println!("cuda available  {}", tch::Cuda::is_available());
    println!("cuda devices    {}", tch::Cuda::device_count());
    println!("cudnn available {}", tch::Cuda::cudnn_is_available());
    println!("torch threads   {} intra-op", tch::get_num_threads());
    println!("rayon threads   {}", rayon::current_num_threads());
    println!(
        "cpu cores       {}",
        std::thread::available_parallelism().map_or(1, |n| n.get())
    );
    if args.check {
        let x = tch::Tensor::randn([4, 8], (tch::Kind::Float, tch::Device::Cpu));
        let w = tch::Tensor::randn([8, 2], (tch::Kind::Float, tch::Device::Cpu));
        let y = x.matmul(&w);
        anyhow::ensure!(
            y.size() == [4, 2],
            "libtorch matmul gave shape {:?}",
            y.size()
        );
        println!("libtorch check  ok (a 4x8 @ 8x2 matmul ran)");
    }
    Ok(())
}
