//! `bao doctor`: what this build runs on — versions, libtorch, CUDA, thread settings.

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Also run a tiny libtorch forward pass to prove the library works.
    #[arg(long)]
    pub check: bool,
}

pub fn run(args: Args) -> anyhow::Result<()> {
    crate::setup::torch_threads(None);
    println!("bao-zero        {}", env!("CARGO_PKG_VERSION"));
    println!("libtorch        {}", env!("BAO_LIBTORCH_VERSION"));
    println!("libtorch lib    {}", env!("BAO_LIBTORCH_LIB"));
    println!(
        "cuda backend    {}",
        if crate::neuralnet::cuda::load_backend() {
            "loaded (libtorch_cuda)"
        } else {
            "not loaded (no NVIDIA driver, a CPU build, or BAO_NO_CUDA)"
        }
    );
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
        let mut devices = vec![tch::Device::Cpu];
        if tch::Cuda::is_available() {
            devices.push(tch::Device::Cuda(0));
        }
        for device in devices {
            let x = tch::Tensor::randn([4, 8], (tch::Kind::Float, device));
            let w = tch::Tensor::randn([8, 2], (tch::Kind::Float, device));
            let y = x.matmul(&w);
            anyhow::ensure!(
                y.size() == [4, 2],
                "libtorch matmul on {device:?} gave shape {:?}",
                y.size()
            );
            // Compare with the same product on the CPU: the GPU path computes, not just allocates.
            let cpu = x.to(tch::Device::Cpu).matmul(&w.to(tch::Device::Cpu));
            let diff = (y.to(tch::Device::Cpu) - cpu).abs().max().double_value(&[]);
            anyhow::ensure!(
                diff < 1e-3,
                "libtorch matmul on {device:?} differs from the CPU by {diff}"
            );
            println!("libtorch check  ok on {device:?} (a 4x8 @ 8x2 matmul ran)");
        }
    }
    Ok(())
}
