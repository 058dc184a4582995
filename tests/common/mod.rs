//! Shared by the integration tests: the conformance sample's positions, a refused player
//! spec's error, a `bao` subcommand on pipes, and for the fleet tests a tiny run config and
//! the checks of a finished run.
#![allow(dead_code)]

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use bao::dataio::shard::decode_shard;
use bao::dataio::store::Store;
use bao::training::fleet::layout::{self, Latest, ShardName};
use bao::training::fleet::trainer::TrainerState;

/// A tiny Kujifunza run config: two generations of a few games, seconds on a CPU.
pub const TINY_RUN: &str = r#"
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

/// Asserts that the player spec `spec` is refused with an error that says `says`.
pub fn assert_spec_refused(spec: &str, says: &str) {
    let e = spec
        .parse::<bao::play::players::PlayerSpec>()
        .expect_err(spec)
        .to_string();
    assert!(e.contains(says), "{spec}: {e}");
}

/// Every state of the conformance sample (`tests/vectors/`), both variants.
pub fn vector_positions() -> Vec<bao::game::Position> {
    let mut out = Vec::new();
    for variant in ["kujifunza", "kiswahili"] {
        let file = format!(
            "{}/tests/vectors/{variant}-sample.jsonl",
            env!("CARGO_MANIFEST_DIR")
        );
        let text = std::fs::read_to_string(&file).expect("vectors present");
        for line in text.lines() {
            let v: serde_json::Value = serde_json::from_str(line).expect("vector line is JSON");
            out.push(
                bao::game::Position::from_json(&v["state"].to_string())
                    .expect("vector state valid"),
            );
        }
    }
    out
}

/// `bao train --config CONFIG --run RUN` started in the background, quiet (for tests that kill
/// it part-way and run it again).
pub fn spawn_train(config: &Path, run: &Path) -> std::process::Child {
    std::process::Command::new(env!("CARGO_BIN_EXE_bao"))
        .args(["train", "--config"])
        .arg(config)
        .arg("--run")
        .arg(run)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("bao train starts")
}

/// Runs `bao ARGS...` to the end: whether it succeeded, its stdout and its stderr.
pub fn run_bao(args: &[&str]) -> (bool, String, String) {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_bao"))
        .args(args)
        .output()
        .expect("bao runs");
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Runs `bao ARGS...` to its end, waiting on a thread: whether it succeeded, its stdout and its
/// stderr; `None` when it still runs after `bound` (it is then killed).
pub fn run_bao_within(args: &[&str], bound: std::time::Duration) -> Option<(bool, String, String)> {
    let child = std::process::Command::new(env!("CARGO_BIN_EXE_bao"))
        .args(args)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let pid = child.id();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(child.wait_with_output());
    });
    match rx.recv_timeout(bound) {
        Ok(out) => {
            let out = out.unwrap();
            Some((
                out.status.success(),
                String::from_utf8_lossy(&out.stdout).into_owned(),
                String::from_utf8_lossy(&out.stderr).into_owned(),
            ))
        }
        Err(_) => {
            // The child is owned by the waiting thread: end it by its id.
            let _ = std::process::Command::new("kill")
                .args(["-9", &pid.to_string()])
                .status();
            None
        }
    }
}

/// `bao SUBCOMMAND ARGS...` running with piped stdin and stdout (for line protocols).
pub fn spawn_piped(
    subcommand: &str,
    args: &[&str],
) -> (
    std::process::Child,
    std::process::ChildStdin,
    std::io::BufReader<std::process::ChildStdout>,
) {
    use std::process::{Command, Stdio};
    let mut child = Command::new(env!("CARGO_BIN_EXE_bao"))
        .arg(subcommand)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let stdin = child.stdin.take().unwrap();
    let out = std::io::BufReader::new(child.stdout.take().unwrap());
    (child, stdin, out)
}

/// A run small enough for seconds on one core: tiny network, short games, a generation every
/// ~40 new samples.
pub const RUN_TOML: &str = r#"
variant = "kujifunza"
[network]
preset = "tiny"
[selfplay]
games_in_flight = 4
sims = 8
cheap_sims = 4
max_plies = 40
[train]
generations = 2
window_min = 400
window_growth = 0
window_max = 400
batch_size = 16
reuse = 1.0
max_steps_per_generation = 4
device = "cpu"
[fleet]
samples_per_generation = 40
games_per_shard = 4
poll_secs = 0.05
lease_secs = 30
"#;

pub fn write_config(dir: &Path) -> PathBuf {
    let p = dir.join("run.toml");
    std::fs::write(&p, RUN_TOML).unwrap();
    p
}

/// Checks a finished run: LATEST at `generation`, every listed shard whole and in the right
/// place, every consumed shard listed, none consumed twice.
pub fn check_run(store: &Store, generation: u32) -> TrainerState {
    let latest = Latest::parse(&store.get(layout::LATEST).unwrap(), "LATEST").unwrap();
    assert_eq!(latest.generation, generation);
    assert!(latest.finished);
    for g in 0..=generation {
        assert!(store.exists(&layout::model_key(g)).unwrap(), "model {g}");
        assert!(
            store.exists(&layout::sidecar_key(g)).unwrap(),
            "sidecar {g}"
        );
    }
    let listed: BTreeSet<String> = store
        .list(layout::SHARDS)
        .unwrap()
        .into_iter()
        .map(|e| e.key)
        .collect();
    assert!(!listed.is_empty());
    for key in &listed {
        let name = ShardName::parse(key).unwrap_or_else(|| panic!("stray object {key}"));
        let shard = decode_shard(&store.get(key).unwrap(), key).unwrap();
        assert_eq!(shard.header.generation, name.generation, "{key}");
        assert!(store.exists(&name.games_key()).unwrap(), "records of {key}");
    }
    let state = TrainerState::read(store).unwrap().unwrap();
    assert_eq!(state.generation, generation);
    let consumed: Vec<&String> = state.consumed.iter().map(|c| &c.key).collect();
    let unique: BTreeSet<&String> = consumed.iter().copied().collect();
    assert_eq!(unique.len(), consumed.len(), "a shard was consumed twice");
    assert!(unique.iter().all(|k| listed.contains(*k)));
    assert!(state.rejected.is_empty(), "{:?}", state.rejected);
    state
}

/// Asserts that the labels in `dir` (some) hold none of the openings of `bao eval --seed S`
/// for `seed` (the first `EXCLUDED_OPENINGS`, at the default opening plies) and no position one
/// move after one: what `--exclude-eval-seeds` promises, for solver and teacher labels alike.
pub fn assert_eval_openings_left_out(dir: &Path, variant: bao::game::Variant, seed: u64) {
    use bao::eval::tournament::{opening, TournamentConfig};
    use bao::game::After;
    use bao::training::label::{read_labels, EXCLUDED_OPENINGS};
    let labelled: std::collections::HashSet<_> = read_labels(dir, variant)
        .unwrap()
        .iter()
        .map(|s| s.position)
        .collect();
    assert!(!labelled.is_empty());
    let plies = TournamentConfig::DEFAULT_OPENING_PLIES;
    for k in 0..EXCLUDED_OPENINGS {
        let (pos, _) = opening(variant, plies, seed, k);
        assert!(!labelled.contains(&pos.to_bytes()), "opening {k} labelled");
        for lm in pos.legal_moves().iter() {
            if let After::Position(next) = lm.after {
                assert!(
                    !labelled.contains(&next.to_bytes()),
                    "opening {k}: a reply labelled"
                );
            }
        }
    }
}

/// The lines of a label directory's `runs.jsonl` (one per `bao label` run), parsed.
pub fn label_runs(dir: &Path) -> Vec<serde_json::Value> {
    let path = dir.join(bao::training::label::RUNS_FILE);
    std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
        .lines()
        .map(|l| serde_json::from_str(l).expect("one JSON object per line"))
        .collect()
}

/// Gives `net`'s batch-norm layers random running statistics (variances in [0.1, 2.1), means
/// and affine terms in [-0.6, 0.9)), so that a comparison of forward passes exercises the
/// folding of those layers instead of a fresh network's identities.
pub fn randomize_batch_norm(net: &bao::neuralnet::Network) {
    tch::no_grad(|| {
        for (name, mut t) in net.var_store().variables() {
            if name.contains(".bn.") {
                let r = tch::Tensor::rand_like(&t);
                let v = if name.ends_with("running_var") {
                    r * 2.0 + 0.1
                } else {
                    r * 1.5 - 0.6
                };
                t.copy_(&v);
            }
        }
    });
}
