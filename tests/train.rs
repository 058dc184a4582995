//! The training loop end to end with a tiny network: checkpoints, metrics, plot, resume,
//! refusal of foreign run directories; and the trainer alone overfitting a fixed set.

mod common;

use std::path::Path;

use bao::training::history::results_table;
use bao::training::minibatch::{load_window, train_steps};
use bao::training::schedule::Minibatches;
use bao::training::train::train;
use rand::SeedableRng;

use common::TINY_RUN as CONFIG;

/// What a run produced, byte for byte: shards, game records and checkpoint weights (with
/// optimizer state), steps.csv, and metrics.jsonl without its timings (`elapsed_secs` and
/// the rates). Sidecars are left out: they record when they were written.
fn fingerprint(run: &Path) -> std::collections::BTreeMap<String, Vec<u8>> {
    fn walk(dir: &Path, root: &Path, out: &mut std::collections::BTreeMap<String, Vec<u8>>) {
        for e in std::fs::read_dir(dir).unwrap() {
            let p = e.unwrap().path();
            let name = p.strip_prefix(root).unwrap().display().to_string();
            if p.is_dir() {
                walk(&p, root, out);
            } else if [".shard", ".jsonl", ".safetensors", "steps.csv"]
                .iter()
                .any(|x| name.ends_with(x))
                && name != "metrics.jsonl"
            {
                out.insert(name, std::fs::read(&p).unwrap());
            }
        }
    }
    let mut out = std::collections::BTreeMap::new();
    walk(run, run, &mut out);
    let metrics: Vec<serde_json::Value> = std::fs::read_to_string(run.join("metrics.jsonl"))
        .unwrap()
        .lines()
        .map(|l| {
            let mut v: serde_json::Value = serde_json::from_str(l).unwrap();
            for timing in [
                "elapsed_secs",
                "games_per_sec",
                "samples_per_sec",
                "cpu_secs",
                "selfplay_cpu_secs",
                "train_cpu_secs",
                "eval_cpu_secs",
            ] {
                v.as_object_mut().unwrap().remove(timing);
            }
            v
        })
        .collect();
    out.insert(
        "metrics.jsonl".into(),
        serde_json::to_vec(&metrics).unwrap(),
    );
    out
}

/// Names the first entry two fingerprints disagree on.
fn assert_same_run(a: &Path, b: &Path) {
    let (fa, fb) = (fingerprint(a), fingerprint(b));
    assert_eq!(
        fa.keys().collect::<Vec<_>>(),
        fb.keys().collect::<Vec<_>>(),
        "the runs wrote different files"
    );
    assert!(fa.keys().any(|k| k.ends_with(".shard")), "{:?}", fa.keys());
    for (k, v) in &fa {
        assert!(
            v == &fb[k],
            "{k} differs between {} and {}",
            a.display(),
            b.display()
        );
    }
}

/// Writes `text` as `dir/cfg.toml`, creating `dir`.
fn write_config(dir: &Path, text: &str) -> std::path::PathBuf {
    std::fs::create_dir_all(dir).unwrap();
    let path = dir.join("cfg.toml");
    std::fs::write(&path, text).unwrap();
    path
}

#[test]
fn tiny_run_writes_everything_and_resumes_to_the_same_generations() {
    let tmp = tempfile::tempdir().unwrap();
    let cfg = write_config(tmp.path(), CONFIG);
    // Interrupted after generation 1 (a one-generation config), then continued to 2.
    let run = tmp.path().join("run");
    let one = write_config(
        &tmp.path().join("one"),
        &CONFIG.replace("generations = 2", "generations = 1"),
    );
    assert_eq!(train(&one, &run, None).unwrap().len(), 1);
    let state: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(run.join("state.json")).unwrap()).unwrap();
    assert_eq!(state["generation"], 1);
    assert_eq!(
        train(&cfg, &run, None).unwrap().len(),
        2,
        "raising generations continues the run"
    );
    // Another architecture is refused for this run directory.
    let other = write_config(
        &tmp.path().join("other"),
        &CONFIG.replace("preset = \"tiny\"", "preset = \"small\""),
    );
    let err = format!("{:#}", train(&other, &run, None).unwrap_err());
    assert!(err.contains("different config"), "{err}");

    let full = tmp.path().join("full");
    let history = train(&cfg, &full, None).unwrap();
    assert_eq!(history.len(), 2);
    // A run is reproducible, and one interrupted after generation 1 and continued
    // is the uninterrupted run (same shards, weights, optimizer state, metrics).
    assert_same_run(&run, &full);
    for f in [
        "state.json",
        "metrics.jsonl",
        "metrics.csv",
        "steps.csv",
        "curve.svg",
        "config.toml",
        "models/gen-000000.safetensors",
        "models/gen-000002.safetensors",
        "models/gen-000002.json",
    ] {
        assert!(full.join(f).exists(), "{f} missing");
    }
    assert_eq!(
        std::fs::read_to_string(full.join("metrics.csv"))
            .unwrap()
            .lines()
            .count(),
        3
    );
    // The final table shows the games behind each score: 4 games against random.
    let g = &history[1].vs[0].games;
    assert_eq!(g.wins + g.losses + g.unfinished, 4);
    let table = results_table(&history);
    let row = table
        .lines()
        .find(|l| l.starts_with("random"))
        .expect("a row for random");
    assert!(
        row.contains(&format!("{}-{}-{}", g.wins, g.losses, g.unfinished)),
        "{table}"
    );
    // Simulate a crash in generation 2: state says 1, leftovers of generation 2 lie around.
    std::fs::write(
        full.join("state.json"),
        serde_json::to_string(
            &serde_json::json!({"generation": 1, "steps": history[0].steps, "elapsed_secs": 1.0}),
        )
        .unwrap(),
    )
    .unwrap();
    let lines: Vec<String> = std::fs::read_to_string(full.join("metrics.jsonl"))
        .unwrap()
        .lines()
        .map(String::from)
        .collect();
    std::fs::write(full.join("metrics.jsonl"), format!("{}\n", lines[0])).unwrap();
    let resumed = train(&cfg, &full, None).unwrap();
    assert_eq!(resumed.len(), 2);
    assert_eq!(resumed.last().unwrap().generation, 2);
    // Replaying generation 2 after the crash wrote what it wrote the first time.
    assert_same_run(&run, &full);
    // Rerunning a finished run does nothing more.
    assert_eq!(train(&cfg, &full, None).unwrap().len(), 2);
}

#[test]
fn a_new_run_can_start_from_a_checkpoint() {
    let tmp = tempfile::tempdir().unwrap();
    let one = write_config(
        tmp.path(),
        &CONFIG.replace("generations = 2", "generations = 1"),
    );
    let first = tmp.path().join("first");
    let fresh = train(&one, &first, None).unwrap();
    let init = first.join("models/gen-000001.safetensors");
    let second = tmp.path().join("second");
    let from_init = train(&one, &second, Some(&init)).unwrap();
    // A random network trains after one round of self-play (8 games, at most 8 x 60 plies, so
    // fewer than window_min = 500 positions); a trained one first fills its window.
    assert_eq!(fresh[0].selfplay_games, 8);
    assert!(
        fresh[0].selfplay_positions < 500,
        "{}",
        fresh[0].selfplay_positions
    );
    assert!(
        from_init[0].selfplay_positions >= 500,
        "{}",
        from_init[0].selfplay_positions
    );
    assert!(
        from_init[0].selfplay_games >= 16 && from_init[0].selfplay_games.is_multiple_of(8),
        "{}",
        from_init[0].selfplay_games
    );
    // Generation 0 of the new run is the init checkpoint: same weights, its step count, and
    // its name recorded as the parent.
    let a = std::fs::read(&init).unwrap();
    let b = std::fs::read(second.join("models/gen-000000.safetensors")).unwrap();
    assert_eq!(a, b, "generation 0 carries the init weights");
    let meta0: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(second.join("models/gen-000000.json")).unwrap(),
    )
    .unwrap();
    let meta_init: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(first.join("models/gen-000001.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(meta0["step"], meta_init["step"]);
    assert_eq!(meta0["parent"], "gen-000001.safetensors");
    let state: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(second.join("state.json")).unwrap()).unwrap();
    assert_eq!(state["init"], init.display().to_string());
    // A checkpoint of another architecture or variant is refused, naming --init.
    let small = write_config(
        &tmp.path().join("small"),
        &CONFIG.replace("preset = \"tiny\"", "preset = \"small\""),
    );
    let err = format!(
        "{:#}",
        train(&small, &tmp.path().join("third"), Some(&init)).unwrap_err()
    );
    assert!(
        err.contains("--init") && err.contains("cannot grow"),
        "{err}"
    );
    // The same network with move features turned on grows from it: generation 0 reads the
    // move planes (encoding version 2), the run trains on.
    let moves = write_config(
        &tmp.path().join("moves"),
        &CONFIG.replace(
            "preset = \"tiny\"",
            "preset = \"tiny\"\nmove_features = true",
        ),
    );
    let fifth = tmp.path().join("fifth");
    train(&moves, &fifth, Some(&init)).unwrap();
    let meta0 = std::fs::read_to_string(fifth.join("models/gen-000000.json")).unwrap();
    assert!(meta0.contains("\"encoding_version\": 2"), "{meta0}");
    assert!(fifth.join("models/gen-000002.safetensors").exists());
    // And a move-features checkpoint grows into the opponent's threats (version 3), as the
    // Kiswahili campaign's threats arm did.
    let threats = write_config(
        &tmp.path().join("threats"),
        &CONFIG.replace(
            "preset = \"tiny\"",
            "preset = \"tiny\"\nmove_features = true\nthreat_features = true",
        ),
    );
    let sixth = tmp.path().join("sixth");
    train(
        &threats,
        &sixth,
        Some(&fifth.join("models/gen-000002.safetensors")),
    )
    .unwrap();
    let meta0 = std::fs::read_to_string(sixth.join("models/gen-000000.json")).unwrap();
    assert!(meta0.contains("\"encoding_version\": 3"), "{meta0}");
    assert!(sixth.join("models/gen-000002.safetensors").exists());
    let kis = write_config(
        &tmp.path().join("kis"),
        &CONFIG.replace("variant = \"kujifunza\"", "variant = \"kiswahili\""),
    );
    let err = format!(
        "{:#}",
        train(&kis, &tmp.path().join("fourth"), Some(&init)).unwrap_err()
    );
    assert!(err.contains("--init") && err.contains("kujifunza"), "{err}");
}

#[test]
fn foreign_and_corrupt_run_directories_are_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let cfg = write_config(tmp.path(), CONFIG);
    let foreign = tmp.path().join("foreign");
    std::fs::create_dir_all(&foreign).unwrap();
    std::fs::write(foreign.join("notes.txt"), "mine").unwrap();
    let err = format!("{:#}", train(&cfg, &foreign, None).unwrap_err());
    assert!(err.contains("not a bao run directory"), "{err}");
    assert_eq!(
        std::fs::read_to_string(foreign.join("notes.txt")).unwrap(),
        "mine",
        "left intact"
    );
    // A second trainer on a directory in use is refused, naming the holder.
    let busy = tmp.path().join("busy");
    let held = bao::training::runlock::RunLock::acquire(&busy).unwrap();
    let err = format!("{:#}", train(&cfg, &busy, None).unwrap_err());
    assert!(
        err.contains("in use by another process") && err.contains("pid "),
        "{err}"
    );
    drop(held);
    let corrupt = tmp.path().join("corrupt");
    std::fs::create_dir_all(&corrupt).unwrap();
    std::fs::copy(&cfg, corrupt.join("config.toml")).unwrap();
    std::fs::write(corrupt.join("state.json"), "{not json").unwrap();
    let err = format!("{:#}", train(&cfg, &corrupt, None).unwrap_err());
    assert!(err.contains("corrupt run state"), "{err}");
    let bad = write_config(
        tmp.path(),
        &CONFIG.replace("batch_size = 32", "batch_sise = 32"),
    );
    let err = format!(
        "{:#}",
        train(&bad, &tmp.path().join("x"), None).unwrap_err()
    );
    assert!(
        err.contains("batch_sise") && err.contains("cfg.toml"),
        "{err}"
    );
}

#[test]
fn trainer_overfits_a_small_fixed_set() {
    use bao::neuralnet::{Learner, NetConfig, Network, OptimizerConfig};
    let tmp = tempfile::tempdir().unwrap();
    let mut sp = bao::training::selfplay::SelfplayRunConfig::new(bao::game::Variant::Kujifunza);
    sp.selfplay.games_in_flight = 8;
    sp.selfplay.sims = 16;
    sp.selfplay.max_plies = 60;
    bao::training::selfplay::run_selfplay(
        &sp,
        &mut bao::search::UniformEvaluator,
        8,
        tmp.path(),
        false,
    )
    .unwrap();
    let mut window = load_window(&[tmp.path().to_path_buf()], 10_000).unwrap();
    window.truncate(64);
    assert!(window.len() >= 32);
    let net = Network::new(
        &NetConfig::preset("tiny").unwrap(),
        bao::game::Variant::Kujifunza,
        tch::Device::Cpu,
    )
    .unwrap();
    let opt = OptimizerConfig {
        learning_rate: 0.01,
        ..OptimizerConfig::default()
    };
    let mut learner = Learner::new(net, opt).unwrap();
    let plan = |steps: usize| Minibatches {
        steps,
        batch_size: 64,
        labels_fraction: 0.0,
        mirror: false,
        q_mix: 0.0,
        rng: rand::rngs::SmallRng::seed_from_u64(steps as u64),
    };
    let first = train_steps(&mut learner, &window, &[], None, &mut plan(5), |_| Ok(())).unwrap();
    train_steps(&mut learner, &window, &[], None, &mut plan(300), |_| Ok(())).unwrap();
    let last = train_steps(&mut learner, &window, &[], None, &mut plan(5), |_| Ok(())).unwrap();
    assert!(
        last.value < first.value / 3.0,
        "value loss {} -> {}",
        first.value,
        last.value
    );
    assert!(
        last.total < first.total * 0.8,
        "total loss {} -> {}",
        first.total,
        last.total
    );
}

/// After a crash between appending history and committing `state.json`, or in the
/// middle of a line, resuming leaves exactly the committed generations: no rolled-back rows,
/// no duplicates, no torn lines.
#[test]
fn resume_trims_history_to_the_committed_state() {
    let tmp = tempfile::tempdir().unwrap();
    let one = write_config(
        tmp.path(),
        &CONFIG.replace("generations = 2", "generations = 1"),
    );
    let run = tmp.path().join("run");
    assert_eq!(train(&one, &run, None).unwrap().len(), 1);
    // What an interrupted generation 2 leaves behind, then a torn line.
    let jsonl = run.join("metrics.jsonl");
    let first = std::fs::read_to_string(&jsonl).unwrap();
    let mut v: serde_json::Value = serde_json::from_str(first.trim()).unwrap();
    v["generation"] = 2.into();
    let steps = std::fs::read_to_string(run.join("steps.csv")).unwrap();
    let step_rows = steps.lines().count();
    assert!(step_rows > 0);
    std::fs::write(&jsonl, format!("{first}{v}\n{{\"generation\":")).unwrap();
    std::fs::write(
        run.join("steps.csv"),
        format!("{steps}2,99,0.1,0.1,0.1,0.1,0.001\n1,10"),
    )
    .unwrap();
    // Resuming (nothing left to play) trims them.
    let history = train(&one, &run, None).unwrap();
    assert_eq!(
        history.iter().map(|m| m.generation).collect::<Vec<_>>(),
        vec![1]
    );
    assert_eq!(std::fs::read_to_string(&jsonl).unwrap(), first);
    assert_eq!(
        std::fs::read_to_string(run.join("steps.csv")).unwrap(),
        steps
    );
    let csv = std::fs::read_to_string(run.join("metrics.csv")).unwrap();
    assert_eq!(csv.lines().count(), 2, "header and generation 1:\n{csv}");
}

/// Fault injection: `bao train` killed with SIGKILL at many points of a tiny run
/// (at start, while self-play writes shards, while it trains, after a checkpoint, after the
/// metrics line, after the commit), resumed after each kill, ends with exactly the run an
/// uninterrupted `bao train` writes: generations 1..=N once each, no duplicate step rows,
/// every checkpoint loadable. Kills wait for those events on disk, never for a time.
#[test]
fn killed_at_many_points_and_resumed_a_run_ends_as_if_never_killed() {
    use rand::Rng;
    const GENERATIONS: u32 = 3;
    let tmp = tempfile::tempdir().unwrap();
    let cfg = write_config(
        tmp.path(),
        &CONFIG.replace("generations = 2", &format!("generations = {GENERATIONS}")),
    );
    let spawn = |run: &Path| common::spawn_train(&cfg, run);
    let committed = |run: &Path| -> u32 {
        std::fs::read_to_string(run.join("state.json"))
            .ok()
            .and_then(|t| serde_json::from_str::<serde_json::Value>(&t).ok())
            .and_then(|v| v["generation"].as_u64())
            .map_or(0, |g| g as u32)
    };
    let lines = |p: &Path| std::fs::read_to_string(p).map_or(0, |t| t.lines().count());
    let reference = tmp.path().join("reference");
    assert!(spawn(&reference).wait().unwrap().success());
    assert_eq!(committed(&reference), GENERATIONS);

    let run = tmp.path().join("run");
    let mut rng = rand::rngs::SmallRng::seed_from_u64(16);
    let mut kills = 0;
    for _ in 0..12 {
        let g = committed(&run) + 1;
        if g > GENERATIONS {
            break;
        }
        let data = run.join("data").join(format!("gen-{g:06}"));
        let steps_before = lines(&run.join("steps.csv"));
        let point = rng.random_range(0..6);
        let reached = |run: &Path| match point {
            0 => true,
            1 => std::fs::read_dir(&data).is_ok_and(|d| {
                d.filter_map(Result::ok)
                    .any(|e| e.path().extension().is_some_and(|x| x == "shard"))
            }),
            2 => lines(&run.join("steps.csv")) > steps_before,
            3 => run
                .join("models")
                .join(format!("gen-{g:06}.safetensors"))
                .exists(),
            4 => lines(&run.join("metrics.jsonl")) >= g as usize,
            _ => committed(run) >= g,
        };
        let mut child = spawn(&run);
        loop {
            if reached(&run) {
                child.kill().unwrap(); // SIGKILL: no cleanup runs
                child.wait().unwrap();
                kills += 1;
                break;
            }
            if let Some(status) = child.try_wait().unwrap() {
                assert!(status.success(), "bao train failed on resume ({status})");
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(2));
        }
    }
    assert!(kills >= 6, "only {kills} kills landed");
    // Resume to the end.
    assert!(spawn(&run).wait().unwrap().success());
    assert_eq!(committed(&run), GENERATIONS);
    let generations: Vec<u64> = std::fs::read_to_string(run.join("metrics.jsonl"))
        .unwrap()
        .lines()
        .map(|l| {
            serde_json::from_str::<serde_json::Value>(l).unwrap()["generation"]
                .as_u64()
                .unwrap()
        })
        .collect();
    assert_eq!(generations, (1..=GENERATIONS as u64).collect::<Vec<_>>());
    let steps: Vec<u64> = std::fs::read_to_string(run.join("steps.csv"))
        .unwrap()
        .lines()
        .map(|l| l.split(',').nth(1).unwrap().parse().unwrap())
        .collect();
    assert_eq!(steps, (1..=steps.len() as u64).collect::<Vec<_>>());
    for g in 0..=GENERATIONS {
        let model = run.join("models").join(format!("gen-{g:06}.safetensors"));
        bao::neuralnet::Network::load(&model, tch::Device::Cpu)
            .unwrap_or_else(|e| panic!("{}: {e:#}", model.display()));
    }
    assert_same_run(&reference, &run);
}

/// The overlapped pipeline: with `[train] pipeline`, generation g + 1's self-play runs
/// while g trains, played by the network of g - 1. No shard is lost (every generation's data
/// is whole and trained on), each generation trains `ceil(new * reuse / batch)` steps, and the
/// run stays reproducible: interrupted after generation 1 and resumed, it writes what the
/// uninterrupted run writes.
#[test]
fn a_pipelined_run_overlaps_selfplay_and_stays_reproducible() {
    use bao::dataio::shard::{list_shards, read_shard};
    let tmp = tempfile::tempdir().unwrap();
    let text = CONFIG
        .replace("generations = 2", "generations = 3")
        .replace("device = \"cpu\"", "device = \"cpu\"\npipeline = true")
        .replace("[eval]", "[eval]\nevery = 3");
    let cfg = write_config(tmp.path(), &text);
    let full = tmp.path().join("full");
    let history = train(&cfg, &full, None).unwrap();
    assert_eq!(history.len(), 3);
    // `[eval] every = 3`: matches in the first and the last generation only here.
    let matched: Vec<bool> = history.iter().map(|m| !m.vs.is_empty()).collect();
    assert_eq!(matched, vec![true, false, true]);
    let csv = std::fs::read_to_string(full.join("metrics.csv")).unwrap();
    let widths: Vec<usize> = csv.lines().map(|l| l.split(',').count()).collect();
    assert!(widths.iter().all(|&w| w == widths[0]), "{csv}");
    let sidecar_step = |g: u32| -> u64 {
        let p = full.join("models").join(format!("gen-{g:06}.json"));
        serde_json::from_str::<serde_json::Value>(&std::fs::read_to_string(p).unwrap()).unwrap()
            ["step"]
            .as_u64()
            .unwrap()
    };
    for (g, m) in (1..=3u32).zip(&history) {
        let shards = list_shards(&full.join("data").join(format!("gen-{g:06}"))).unwrap();
        assert!(!shards.is_empty(), "generation {g} lost its shards");
        let samples: u64 = shards
            .iter()
            .map(|s| {
                let shard = read_shard(s).unwrap();
                // Played by generation g - 2 (the initial network for 1 and 2).
                let by = g.saturating_sub(2);
                assert!(
                    shard
                        .header
                        .model
                        .ends_with(&format!("step {}", sidecar_step(by))),
                    "generation {g}: {}",
                    shard.header.model
                );
                shard.samples.len() as u64
            })
            .sum();
        assert_eq!(samples, m.selfplay_positions);
        let expected = ((samples as f64 * 4.0 / 32.0).ceil() as usize).clamp(1, 4);
        assert_eq!(m.train_steps, expected, "generation {g}");
    }
    let one = write_config(
        &tmp.path().join("part"),
        &text.replace("generations = 3", "generations = 1"),
    );
    let run = tmp.path().join("run");
    train(&one, &run, None).unwrap();
    train(&cfg, &run, None).unwrap();
    assert_same_run(&run, &full);
}

/// `[train] labels`: a run reads its solver labels before it touches the run
/// directory (a missing set leaves nothing behind), and trains with them mixed in.
#[test]
fn a_run_trains_with_solver_labels_and_refuses_a_missing_set() {
    use bao::training::label::{label_positions, LabelConfig};
    let tmp = tempfile::tempdir().unwrap();
    let labels = tmp.path().join("labels");
    let text = CONFIG.replace(
        "[train]",
        &format!(
            "[train]\nlabels = {:?}\nlabels_fraction = 0.25",
            labels.display().to_string()
        ),
    );
    let cfg = write_config(tmp.path(), &text);
    let run = tmp.path().join("run");
    let err = format!("{:#}", train(&cfg, &run, None).unwrap_err());
    assert!(
        err.contains("no label shards") && err.contains("bao label"),
        "{err}"
    );
    assert!(!run.exists(), "nothing written for a run that cannot start");
    let stats = label_positions(
        &LabelConfig {
            variant: bao::game::Variant::Kujifunza,
            plies: bao::training::selfplay::OpeningPlies::range(6, 10).unwrap(),
            positions: 8,
            budget: std::time::Duration::from_millis(200),
            tt_mb: 8,
            threads: 1,
            seed: 1,
            exclude_eval_seeds: Vec::new(),
        },
        &labels,
        false,
    )
    .unwrap();
    assert!(stats.won + stats.lost > 0, "{stats:?}");
    let history = train(&cfg, &run, None).unwrap();
    assert_eq!(history.len(), 2);
    assert!(history
        .iter()
        .all(|m| m.train_steps > 0 && m.value_loss.is_finite()));
}

/// `[selfplay] precision = "bf16"`: the self-play network judges in bf16 (every shard's header
/// names it), while training and checkpoints stay f32 (the saved network loads in f32 and
/// trains on). A run may switch it when resumed: here generation 1 plays in f32, 2 in bf16.
#[test]
fn bf16_selfplay_plays_in_bf16_and_checkpoints_stay_f32() {
    use bao::dataio::shard::{list_shards, read_shard};
    use bao::neuralnet::{Learner, Network, OptimizerConfig, Precision};
    let tmp = tempfile::tempdir().unwrap();
    let one = write_config(
        &tmp.path().join("one"),
        &CONFIG.replace("generations = 2", "generations = 1"),
    );
    let run = tmp.path().join("run");
    train(&one, &run, None).unwrap();
    let text = CONFIG.replace("[selfplay]\n", "[selfplay]\nprecision = \"bf16\"\n");
    let cfg = write_config(tmp.path(), &text);
    assert_eq!(train(&cfg, &run, None).unwrap().len(), 2);
    for (g, in_bf16) in [(1u32, false), (2, true)] {
        let shards = list_shards(&run.join("data").join(format!("gen-{g:06}"))).unwrap();
        assert!(!shards.is_empty(), "generation {g} has no shards");
        for s in shards {
            let model = read_shard(&s).unwrap().header.model;
            assert_eq!(model.contains(" bf16 "), in_bf16, "generation {g}: {model}");
        }
    }
    let last = Network::load(&run.join("models/gen-000002.safetensors"), tch::Device::Cpu).unwrap();
    assert_eq!(last.precision(), Precision::F32);
    Learner::new(last, OptimizerConfig::default()).unwrap();
    let bad = write_config(
        &tmp.path().join("bad"),
        &CONFIG.replace("[selfplay]\n", "[selfplay]\nprecision = \"fp16\"\n"),
    );
    let err = format!(
        "{:#}",
        train(&bad, &tmp.path().join("bad-run"), None).unwrap_err()
    );
    assert!(err.contains("fp16") && err.contains("precision"), "{err}");
    assert!(
        !tmp.path().join("bad-run").exists(),
        "a bad config leaves no run behind"
    );
}

/// A config with a key out of range is refused before any work and before the run directory
/// is created, naming the key, the file and its line; `generations = 0` is refused the same
/// way rather than leaving an empty run directory behind.
#[test]
fn out_of_range_keys_are_refused_before_the_run_directory_exists() {
    let tmp = tempfile::tempdir().unwrap();
    for (from, to, key) in [
        ("generations = 2", "generations = 0", "generations"),
        (
            "batch_size = 32",
            "batch_size = 1000000000000",
            "batch_size",
        ),
    ] {
        let text = CONFIG.replace(from, to);
        assert_ne!(text, CONFIG);
        let cfg = write_config(tmp.path(), &text);
        let line = 1 + text.lines().position(|l| l == to).unwrap();
        let run = tmp.path().join(format!("run-{key}"));
        let run_text = run.to_str().unwrap();
        let (ok, out, err) = common::run_bao_within(
            &[
                "train",
                "--config",
                cfg.to_str().unwrap(),
                "--run",
                run_text,
            ],
            std::time::Duration::from_secs(120),
        )
        .expect("bao train ends");
        assert!(!ok, "`{to}` was accepted: {out}");
        assert!(
            err.contains(&format!("`{key}`")) && err.contains(&format!("cfg.toml:{line}")),
            "{err}"
        );
        assert!(!run.exists(), "{} was created", run.display());
    }
}

/// `bao train --set`: an override changes the run (checked like the file, unknown keys and
/// bad values named, before anything is written), is recorded in the run directory, kept by a
/// resume that leaves it out, and a resume with another override is refused.
#[test]
fn set_overrides_a_config_key_and_a_resume_keeps_it() {
    use bao::training::train::train_with;
    let tmp = tempfile::tempdir().unwrap();
    let one = write_config(
        &tmp.path().join("one"),
        &CONFIG.replace("generations = 2", "generations = 1"),
    );
    for (set, named) in [
        ("search.c_pucct=2", "c_pucct"),
        ("search.c_puct=-1", "c_puct"),
        ("train.batch_size=many", "batch_size"),
        ("nosuchsection.key=1", "nosuchsection"),
        ("search.c_puct", "expected KEY=VALUE"),
    ] {
        let run = tmp.path().join("refused");
        let err = format!(
            "{:#}",
            train_with(&one, &[set.to_string()], &run, None).unwrap_err()
        );
        assert!(err.contains(named), "--set {set}: {err}");
        assert!(!run.exists(), "--set {set} wrote {}", run.display());
    }
    let run = tmp.path().join("run");
    let set = vec!["search.c_puct=2.5".to_string()];
    assert_eq!(train_with(&one, &set, &run, None).unwrap().len(), 1);
    let recorded: Vec<String> =
        serde_json::from_str(&std::fs::read_to_string(run.join("overrides.json")).unwrap())
            .unwrap();
    assert_eq!(recorded, set);
    let meta = std::fs::read_to_string(run.join("models/gen-000001.json")).unwrap();
    let meta: serde_json::Value = serde_json::from_str(&meta).unwrap();
    assert_eq!(meta["search"]["c_puct"], 2.5, "{meta}");
    // Another override on resume is refused like another config; none keeps the recorded one,
    // and the generation count may still be raised by --set.
    let err = format!(
        "{:#}",
        train_with(&one, &["search.c_puct=3".to_string()], &run, None).unwrap_err()
    );
    assert!(
        err.contains("search.c_puct=2.5") && err.contains("differs"),
        "{err}"
    );
    let more = vec![
        "search.c_puct=2.5".to_string(),
        "train.generations=2".to_string(),
    ];
    assert_eq!(train_with(&one, &more, &run, None).unwrap().len(), 2);
    assert_eq!(
        train(&one, &run, None).unwrap().len(),
        2,
        "a resume keeps its --set"
    );
}

/// `bao run cost`: a run's CPU time by stage, and self-play by stretch of equal search, read
/// with the overrides the run was started with (here a `sims_schedule` given by `--set`).
#[test]
fn a_runs_cost_is_read_by_stage_and_by_stretch_of_equal_search() {
    use bao::training::cost::run_cost;
    use bao::training::history::read_metrics;
    use bao::training::train::{committed_cpu_secs, train_with};
    let tmp = tempfile::tempdir().unwrap();
    let cfg = write_config(tmp.path(), CONFIG);
    let run = tmp.path().join("run");
    let set = vec!["train.sims_schedule=[[2, 12, 4]]".to_string()];
    assert_eq!(train_with(&cfg, &set, &run, None).unwrap().len(), 2);

    let cost = run_cost(&run, &[]).unwrap();
    let metrics = read_metrics(&run).unwrap();
    assert_eq!(cost.generations, 2);
    assert_eq!(cost.total_cpu_secs, committed_cpu_secs(&run).unwrap());
    let stretches: Vec<(u32, u32, usize, usize, u64)> = cost
        .stretches
        .iter()
        .map(|s| (s.first, s.last, s.sims, s.cheap_sims, s.positions))
        .collect();
    assert_eq!(
        stretches,
        vec![
            (1, 1, 8, 4, metrics[0].selfplay_positions),
            (2, 2, 12, 4, metrics[1].selfplay_positions)
        ],
        "[selfplay] sims, then the --set schedule's step"
    );
    assert!(cost.selfplay_cpu_secs > 0.0 && cost.train_cpu_secs > 0.0);
    let parts = cost.selfplay_cpu_secs
        + cost.train_cpu_secs
        + cost.eval_cpu_secs
        + cost.distill_cpu_secs
        + cost.gauntlet_cpu_secs;
    assert!(
        parts <= cost.total_cpu_secs * (1.0 + 1e-9),
        "{parts} > {}",
        cost.total_cpu_secs
    );
    assert_eq!((cost.students, cost.gauntlet_points), (0, 0));

    // A split where the search is already the same starts a stretch of its own too.
    let set = vec!["train.generations=3".to_string(), set[0].clone()];
    assert_eq!(train_with(&cfg, &set, &run, None).unwrap().len(), 3);
    let spans = |splits: &[u32]| -> Vec<(u32, u32)> {
        let cost = run_cost(&run, splits).unwrap();
        cost.stretches.iter().map(|s| (s.first, s.last)).collect()
    };
    assert_eq!(spans(&[3]), vec![(1, 1), (2, 2), (3, 3)]);
    assert_eq!(spans(&[]), vec![(1, 1), (2, 3)]);

    let dir = run.to_str().unwrap();
    let (ok, out, err) = common::run_bao(&["run", "cost", "--split", "3", dir]);
    assert!(ok, "{err}");
    assert!(out.contains("generations    3-3"), "{out}");
    let (ok, out, err) = common::run_bao(&["run", "cost", dir]);
    assert!(ok, "{err}");
    assert!(
        out.starts_with("3 generations") && out.contains("12/4"),
        "{out}"
    );
    let (ok, out, err) = common::run_bao(&["run", "cost", "--json", dir]);
    assert!(ok, "{err}");
    let json: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(json["stretches"][1]["sims"], 12, "{json}");
    let (ok, _, err) = common::run_bao(&["run", "cost", tmp.path().to_str().unwrap()]);
    assert!(!ok && err.contains("no state.json"), "{err}");
}
