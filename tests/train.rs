//! The training loop end to end with a tiny network: checkpoints, metrics, plot, resume,
//! refusal of foreign run directories; and the trainer alone overfitting a fixed set.

use std::path::Path;

use bao::program::train::{load_window, results_table, train, train_steps};
use rand::SeedableRng;

const CONFIG: &str = r#"
variant = "kujifunza"
[network]
preset = "tiny"
[selfplay]
games_in_flight = 8
sims = 8
cheap_sims = 4
max_plies = 60
[train]
generations = 2
games_per_generation = 8
window_min = 500
window_growth = 0
window_max = 500
batch_size = 32
max_steps_per_generation = 4
device = "cpu"
[eval]
baselines = ["random"]
games = 4
sims = 4
ply_cap = 60
"#;

fn write_config(dir: &Path, text: &str) -> std::path::PathBuf {
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
    let one_dir = tmp.path().join("one");
    std::fs::create_dir_all(&one_dir).unwrap();
    let one = write_config(
        &one_dir,
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
    let other_dir = tmp.path().join("other");
    std::fs::create_dir_all(&other_dir).unwrap();
    let other = write_config(
        &other_dir,
        &CONFIG.replace("preset = \"tiny\"", "preset = \"small\""),
    );
    let err = format!("{:#}", train(&other, &run, None).unwrap_err());
    assert!(err.contains("different config"), "{err}");

    let full = tmp.path().join("full");
    let history = train(&cfg, &full, None).unwrap();
    assert_eq!(history.len(), 2);
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
    let g = &history[1].vs_games[0];
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
    let small_dir = tmp.path().join("small");
    std::fs::create_dir_all(&small_dir).unwrap();
    let small = write_config(
        &small_dir,
        &CONFIG.replace("preset = \"tiny\"", "preset = \"small\""),
    );
    let err = format!(
        "{:#}",
        train(&small, &tmp.path().join("third"), Some(&init)).unwrap_err()
    );
    assert!(err.contains("--init") && err.contains("differs"), "{err}");
    let kis_dir = tmp.path().join("kis");
    std::fs::create_dir_all(&kis_dir).unwrap();
    let kis = write_config(
        &kis_dir,
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
    // Issue 16: a second trainer on a directory in use is refused, naming the holder.
    let busy = tmp.path().join("busy");
    let held = bao::program::runlock::RunLock::acquire(&busy).unwrap();
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
    let mut sp = bao::program::selfplay::SelfplayRunConfig::new(bao::game::Variant::Kujifunza);
    sp.selfplay.games_in_flight = 8;
    sp.selfplay.sims = 16;
    sp.selfplay.max_plies = 60;
    bao::program::selfplay::run_selfplay(
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
    let mut rng = rand::rngs::SmallRng::seed_from_u64(1);
    let first = train_steps(&mut learner, &window, 5, 64, false, 0.0, &mut rng, |_| {
        Ok(())
    })
    .unwrap();
    train_steps(&mut learner, &window, 300, 64, false, 0.0, &mut rng, |_| {
        Ok(())
    })
    .unwrap();
    let last = train_steps(&mut learner, &window, 5, 64, false, 0.0, &mut rng, |_| {
        Ok(())
    })
    .unwrap();
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

/// Issue 16: after a crash between appending history and committing `state.json`, or in the
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
