//! `bao tune`: SPSA over a network player's search parameters at equal time
//! ([`crate::eval::tune`]), then an SPRT gate of the tuned values on fresh openings.

use std::path::PathBuf;

use crate::eval::sprt::{Sprt, SprtDecision};
use crate::eval::tune::{self, parse_params, TuneConfig};
use crate::game::Variant;
use crate::play::players::PlayerSpec;

#[derive(Debug, clap::Args)]
pub struct Args {
    #[arg(long)]
    pub variant: Variant,
    /// The network player to tune, e.g. `net:models/kiswahili.safetensors`.
    #[arg(long)]
    pub player: String,
    /// The parameters and their ranges, `NAME:LO..HI,...` (numeric `[search]` keys, e.g.
    /// `c_puct:0.5..4,fpu_reduction:0..0.6,leaves_per_step:1..16`; integers are rounded).
    #[arg(long)]
    pub params: String,
    /// Thinking time per move of both sides, in ms (the time control tuned for).
    #[arg(long, default_value_t = 200)]
    pub movetime: u64,
    /// SPSA iterations: one opening pair (two games, played at once) each.
    #[arg(long, default_value_t = 200)]
    pub pairs: u32,
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// The perturbation at the last iteration, as a share of each range.
    #[arg(long, default_value_t = 0.05)]
    pub c_end: f64,
    /// The learning rate at the last iteration: a step of r_end * c_end of the range per unit
    /// of result (wins minus losses of the pair).
    #[arg(long, default_value_t = 0.2)]
    pub r_end: f64,
    /// The gate: an SPRT of the tuned values against the starting ones, elo0,elo1.
    #[arg(long, default_value = "0,20")]
    pub gate_sprt: String,
    /// The gate's most opening pairs (it stops earlier when the SPRT decides); 0 skips it.
    #[arg(long, default_value_t = 200)]
    pub gate_pairs: u32,
    /// Play at most this many iterations now and stop (rerun to go on).
    #[arg(long)]
    pub stop_after: Option<u32>,
    /// Folder for `tune.json`, `iterations.jsonl`, `trajectory.csv` and `trajectory-*.svg`;
    /// rerunning with the same settings resumes.
    #[arg(long, default_value_os_t = tune::default_dir())]
    pub out: PathBuf,
}

pub fn run(args: Args) -> anyhow::Result<()> {
    let player: PlayerSpec = args.player.parse()?;
    let params = parse_params(&args.params)?;
    let sprt = Sprt::parse(&args.gate_sprt)?;
    let config = TuneConfig::new(
        args.variant,
        &player,
        &params,
        args.movetime,
        args.pairs,
        args.seed,
        args.c_end,
        args.r_end,
    )?;
    let show = |values: &[f64]| {
        config
            .params
            .iter()
            .zip(values)
            .map(|(p, v)| format!("{}={v:.4}", p.name))
            .collect::<Vec<_>>()
            .join(" ")
    };
    eprintln!(
        "tuning {} at {} ms a move from {} over {} opening pairs into {}",
        config.player,
        config.movetime_ms,
        show(&config.start),
        config.pairs,
        args.out.display()
    );
    let done = tune::run(&config, &args.out, args.stop_after, true)?;
    let secs: f64 = done.iterations.iter().map(|i| i.secs).sum();
    println!(
        "{} iterations ({:.0} an hour of this run's wall time); start {}; tuned {}",
        done.iterations.len(),
        3600.0 * done.iterations.len() as f64 / secs.max(1e-9),
        show(&done.start),
        show(&done.tuned)
    );
    println!(
        "wrote {}/iterations.jsonl, trajectory.csv and trajectory-*.svg",
        args.out.display()
    );
    if !done.finished {
        println!("stopped after --stop-after iterations: rerun the same command to go on");
        return Ok(());
    }
    if args.gate_pairs == 0 {
        return Ok(());
    }
    if done.tuned == done.start {
        let results: Vec<i32> = done.iterations.iter().map(|i| i.result).collect();
        println!(
            "the tuning ended where it started ({} of {} pairs split 1-1): nothing to gate",
            results.iter().filter(|&&r| r == 0).count(),
            results.len()
        );
        return Ok(());
    }
    let gate = tune::gate(&config, &done.tuned, sprt, args.gate_pairs, &args.out, true)?;
    print!("{}", crate::eval::tournament::format_table(&gate.result));
    crate::eval::tournament::write_json(&gate.result, &args.out.join("gate.json"))?;
    let verdict = match gate.decision {
        SprtDecision::H1 => "passed: the tuned values are better",
        SprtDecision::H0 => "failed: no gain of elo1 (keep the starting values)",
        SprtDecision::Continue => "inconclusive within the gate's pairs",
    };
    println!(
        "gate on openings the tuning never played (seed {}): {verdict}",
        gate.seed
    );
    println!("verify: {}", gate.verify);
    if gate.decision == SprtDecision::H1 {
        if let PlayerSpec::Net(p) = &player {
            let sets: Vec<String> = config
                .params
                .iter()
                .zip(&done.tuned)
                .map(|(p, v)| format!("--search {}={v}", p.name))
                .collect();
            println!(
                "record: bao learn --data . --model {} --steps 0 {}",
                p.path.display(),
                sets.join(" ")
            );
        }
    }
    Ok(())
}
