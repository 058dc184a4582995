//! Fleets through object storage, on `memory://` and local directories: workers and a
//! trainer reach the last generation; a killed trainer resumes, a second one is refused, a
//! killed worker leaves nothing partial, no shard is consumed twice; storage errors end in a
//! non-zero exit; the local forms of `bao selfplay` / `bao learn` still work.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use bao::dataio::store::Store;
use bao::training::fleet::layout::{self, ShardName};
use bao::training::fleet::trainer::{run_trainer, TrainerOptions, TrainerState};
use bao::training::fleet::worker::{run_worker, WorkerOptions};
use common::{check_run, write_config, RUN_TOML};

fn fleet_in_threads(root: &str) {
    let dir = tempfile::tempdir().unwrap();
    let config = write_config(dir.path());
    let trainer = {
        let (root, work_dir) = (root.to_string(), dir.path().join("work"));
        std::thread::spawn(move || {
            let store = Store::open(&root).unwrap();
            let opts = TrainerOptions {
                trainer_id: "t".into(),
                config: Some(config),
                generations: None,
                max_time: Some(Duration::from_secs(300)),
                poll: None,
                device: None,
                work_dir,
                progress: false,
            };
            run_trainer(&store, &opts).unwrap()
        })
    };
    let workers: Vec<_> = (0..2)
        .map(|i| {
            let (root, cache_dir) = (root.to_string(), dir.path().join("cache"));
            std::thread::spawn(move || {
                let store = Store::open(&root).unwrap();
                let opts = WorkerOptions {
                    worker_id: format!("w{i}"),
                    cache_dir,
                    device: bao::neuralnet::DeviceChoice::Cpu,
                    max_time: Some(Duration::from_secs(300)),
                    max_shards: None,
                    poll: Some(Duration::from_millis(50)),
                    games_in_flight: None,
                    progress: false,
                };
                run_worker(&store, &opts).unwrap()
            })
        })
        .collect();
    let summary = trainer.join().unwrap();
    assert_eq!(summary.generation, 2);
    assert_eq!(summary.published, vec![1, 2]);
    assert_eq!(summary.stopped, "reached generation 2");
    let mut first = Vec::new();
    for w in workers {
        let s = w.join().unwrap();
        assert!(s.stopped.contains("finished"), "{}", s.stopped);
        assert!(
            s.generations.windows(2).all(|g| g[0] < g[1]),
            "{:?}",
            s.generations
        );
        first.extend(s.generations.first().copied());
    }
    assert!(first.contains(&0), "someone played generation 0: {first:?}");
    let store = Store::open(root).unwrap();
    let state = check_run(&store, 2);
    // Training samples per new sample are capped: 4 steps of 16 per generation at most.
    assert!(state.steps <= 8);
    // A finished run started again does nothing but say so.
    let again = TrainerOptions {
        trainer_id: "t2".into(),
        config: None,
        generations: None,
        max_time: Some(Duration::from_secs(60)),
        poll: None,
        device: None,
        work_dir: dir.path().join("work2"),
        progress: false,
    };
    let s = run_trainer(&store, &again).unwrap();
    assert_eq!((s.generation, s.published.len()), (2, 0));
}

#[test]
fn workers_and_a_trainer_reach_generation_two_in_memory() {
    fleet_in_threads(&format!("memory://fleet-{}/run", std::process::id()));
}

#[test]
fn workers_and_a_trainer_reach_generation_two_in_a_directory() {
    let dir = tempfile::tempdir().unwrap();
    fleet_in_threads(dir.path().join("root").to_str().unwrap());
    // Nothing half-written lies around on disk either.
    for e in walk(&dir.path().join("root")) {
        let name = e.file_name().unwrap().to_string_lossy().to_string();
        assert!(
            !name.contains('#') && !name.ends_with(".tmp"),
            "staging file {}",
            e.display()
        );
    }
}

fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            out.extend(walk(&p));
        } else {
            out.push(p);
        }
    }
    out
}

#[test]
fn a_trainer_needs_a_config_to_start_and_the_same_config_to_go_on() {
    let dir = tempfile::tempdir().unwrap();
    let root = format!("memory://fleet-config-{}/run", std::process::id());
    let store = Store::open(&root).unwrap();
    let mut opts = TrainerOptions {
        trainer_id: "t".into(),
        config: None,
        generations: Some(0),
        max_time: None,
        poll: None,
        device: None,
        work_dir: dir.path().join("w"),
        progress: false,
    };
    let e = run_trainer(&store, &opts).unwrap_err().to_string();
    assert!(e.contains("no run.toml") && e.contains("--config"), "{e}");
    opts.config = Some(write_config(dir.path()));
    assert_eq!(run_trainer(&store, &opts).unwrap().generation, 0);
    let other = dir.path().join("other.toml");
    std::fs::write(
        &other,
        RUN_TOML.replace("batch_size = 16", "batch_size = 32"),
    )
    .unwrap();
    opts.config = Some(other);
    let e = run_trainer(&store, &opts).unwrap_err().to_string();
    assert!(e.contains("differs"), "{e}");
    let generations = dir.path().join("more.toml");
    std::fs::write(
        &generations,
        RUN_TOML.replace("generations = 2", "generations = 5"),
    )
    .unwrap();
    opts.config = Some(generations);
    assert_eq!(run_trainer(&store, &opts).unwrap().generation, 0);
}

// ---- command lines on a local directory ----------------------------------------------------

fn bao() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_bao"));
    c.env("BAO_STORE_RETRIES", "2");
    c
}

fn spawn(args: &[&str], log: &Path) -> Child {
    let out = std::fs::File::create(log).unwrap();
    bao()
        .args(args)
        .stdout(out.try_clone().unwrap())
        .stderr(out)
        .spawn()
        .unwrap()
}

fn wait_until(what: &str, limit: Duration, mut f: impl FnMut() -> bool) {
    let t = Instant::now();
    while !f() {
        assert!(t.elapsed() < limit, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn wait_ok(mut child: Child, what: &str, log: &Path, limit: Duration) {
    let t = Instant::now();
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            assert!(
                status.success(),
                "{what} failed: {}",
                std::fs::read_to_string(log).unwrap_or_default()
            );
            return;
        }
        if t.elapsed() > limit {
            let _ = child.kill();
            panic!(
                "{what} did not finish: {}",
                std::fs::read_to_string(log).unwrap_or_default()
            );
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

#[test]
fn killed_trainer_resumes_second_trainer_is_refused_killed_worker_leaves_nothing_partial() {
    let dir = tempfile::tempdir().unwrap();
    let config = write_config(dir.path());
    let root = dir.path().join("root");
    let r = root.to_str().unwrap();
    let model = format!("{r}/models/LATEST");
    let cache = dir.path().join("cache");
    let log = |n: &str| dir.path().join(n);
    let store = Store::open(r).unwrap();

    let trainer = spawn(
        &[
            "learn",
            "--data",
            r,
            "--config",
            config.to_str().unwrap(),
            "--generations",
            "1000",
            "--quiet",
        ],
        &log("t1"),
    );
    let worker_args = |id: &'static str| {
        vec![
            "selfplay",
            "--model",
            &model,
            "--out",
            r,
            "--worker-id",
            id,
            "--cache",
            cache.to_str().unwrap(),
            "--quiet",
            "--max-time",
            "240s",
        ]
        .into_iter()
        .map(String::from)
        .collect::<Vec<_>>()
    };
    let w0 = bao()
        .args(worker_args("w0"))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // A worker killed at some point of its work leaves only whole shards behind.
    let mut w1 = spawn(
        &worker_args("w1")
            .iter()
            .map(String::as_str)
            .collect::<Vec<_>>(),
        &log("w1"),
    );
    // Killed once its first shard is up, so the kill lands inside its second shard's games.
    wait_until("w1's first shard", Duration::from_secs(120), || {
        store.list(layout::SHARDS).is_ok_and(|l| {
            l.iter()
                .filter_map(|e| ShardName::parse(&e.key))
                .any(|n| n.worker == "w1")
        })
    });
    w1.kill().unwrap();
    w1.wait().unwrap();

    wait_until("generation 1", Duration::from_secs(120), || {
        TrainerState::read(&store)
            .ok()
            .flatten()
            .is_some_and(|s| s.generation >= 1)
    });
    // A second trainer on the same root fails while the first one lives (it cannot have
    // finished: its target is far away), without waiting for the lease to run out.
    let second = bao()
        .args(["learn", "--data", r, "--quiet"])
        .output()
        .unwrap();
    assert!(!second.status.success());
    let err = String::from_utf8_lossy(&second.stderr);
    assert!(err.contains("another trainer holds"), "{err}");

    // Kill the trainer; a new one (another id, same host, dead pid) resumes at once.
    let mut trainer = trainer;
    trainer.kill().unwrap();
    trainer.wait().unwrap();
    let killed_at = TrainerState::read(&store).unwrap().unwrap().generation;
    assert!(killed_at >= 1);
    let resumed = spawn(
        &[
            "learn",
            "--data",
            r,
            "--generations",
            &(killed_at + 1).to_string(),
            "--quiet",
        ],
        &log("t2"),
    );
    wait_ok(
        resumed,
        "resumed trainer",
        &log("t2"),
        Duration::from_secs(180),
    );
    let text = std::fs::read_to_string(log("t2")).unwrap();
    assert!(
        text.contains(&format!("resumed {r} at generation {killed_at}")),
        "{text}"
    );

    let out = w0.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8_lossy(&out.stdout).contains("run finished"));
    check_run(&store, killed_at + 1);

    let status = bao().args(["run", "status", r]).output().unwrap();
    assert!(status.status.success());
    let text = String::from_utf8_lossy(&status.stdout);
    assert!(
        text.contains(&format!("LATEST: generation {}", killed_at + 1)) && text.contains("w0:"),
        "{text}"
    );
    let table = bao()
        .args(["run", "status", r, "--table"])
        .output()
        .unwrap();
    let table = String::from_utf8_lossy(&table.stdout);
    let listed = store.list(layout::SHARDS).unwrap().len() as u64;
    let shards: u64 = table
        .lines()
        .map(|l| l.split(' ').nth(1).unwrap().parse::<u64>().unwrap())
        .sum();
    assert_eq!(shards, listed, "{table}");
}

#[test]
fn storage_errors_are_retried_then_exit_non_zero() {
    let t = Instant::now();
    let out = bao()
        .args(["learn", "--data", "s3://bucket/run", "--quiet"])
        .env("AWS_ENDPOINT", "http://127.0.0.1:9")
        .env("AWS_ALLOW_HTTP", "true")
        .env("AWS_ACCESS_KEY_ID", "k")
        .env("AWS_SECRET_ACCESS_KEY", "s")
        .env("AWS_REGION", "us-east-1")
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("cannot read s3://bucket/run/run.toml"),
        "{err}"
    );
    assert!(t.elapsed() < Duration::from_secs(60));
}

#[test]
fn local_selfplay_and_learn_still_work_and_urls_need_fleet_mode() {
    use bao::neuralnet::{NetConfig, Network};
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let out = bao()
        .args([
            "selfplay",
            "--games",
            "2",
            "--out",
            data.to_str().unwrap(),
            "--quiet",
        ])
        .args([
            "--set",
            "variant=\"kujifunza\"",
            "--set",
            "selfplay.games_in_flight=2",
            "--set",
            "selfplay.sims=4",
        ])
        .args([
            "--set",
            "selfplay.cheap_sims=2",
            "--set",
            "selfplay.max_plies=20",
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let model = dir.path().join("m.safetensors");
    let net = Network::new(
        &NetConfig::preset("tiny").unwrap(),
        bao::game::Variant::Kujifunza,
        tch::Device::Cpu,
    )
    .unwrap();
    net.save(&model, &Default::default()).unwrap();
    let trained = dir.path().join("t.safetensors");
    let out = bao()
        .args([
            "learn",
            "--data",
            data.to_str().unwrap(),
            "--model",
            model.to_str().unwrap(),
            "--steps",
            "2",
        ])
        .args([
            "--batch-size",
            "8",
            "--device",
            "cpu",
            "--out",
            trained.to_str().unwrap(),
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(trained.exists());

    let out = bao()
        .args(["selfplay", "--games", "1", "--out", "memory://x/run"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("fleet mode"));
    let out = bao()
        .args([
            "selfplay",
            "--model",
            "memory://x/run/models/LATEST",
            "--out",
            "memory://x/other",
        ])
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("must be the run root"));
    let out = bao()
        .args([
            "learn",
            "--data",
            "s3://b/r",
            "--model",
            model.to_str().unwrap(),
        ])
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("drop --model"));
}

#[test]
fn corrupt_and_stray_shards_are_set_aside_not_trained_on() {
    let dir = tempfile::tempdir().unwrap();
    let root = format!("memory://fleet-corrupt-{}/run", std::process::id());
    let store = Store::open(&root).unwrap();
    let opts = TrainerOptions {
        trainer_id: "t".into(),
        config: Some(write_config(dir.path())),
        generations: Some(1),
        max_time: Some(Duration::from_millis(500)),
        poll: Some(Duration::from_millis(50)),
        device: None,
        work_dir: dir.path().join("w"),
        progress: false,
    };
    assert_eq!(run_trainer(&store, &opts).unwrap().generation, 0);
    let bad = "shards/gen-000000/w-000000-0123456789abcdef.shard";
    store.put(bad, b"not a shard").unwrap();
    store.put("shards/gen-000000/README", b"stray").unwrap();
    let s = run_trainer(&store, &opts).unwrap();
    assert_eq!((s.generation, s.stopped.as_str()), (0, "time limit"));
    let state = TrainerState::read(&store).unwrap().unwrap();
    assert_eq!(state.rejected.len(), 1);
    assert_eq!(state.rejected[0].0, bad);
    assert!(
        state.rejected[0].1.contains("not a shard"),
        "{:?}",
        state.rejected
    );
    assert!(state.consumed.is_empty());
    // LATEST still points at generation 0, not finished: workers keep going.
    let latest = layout::Latest::parse(&store.get(layout::LATEST).unwrap(), "LATEST").unwrap();
    assert_eq!((latest.generation, latest.finished), (0, false));
    // `bao run status` counts both objects as stray instead of failing on the short header.
    let status = bao::training::fleet::status::run_status(&store).unwrap();
    assert_eq!(status.stray_objects, 2);
    assert!(
        status.generations.get(&0).is_none_or(|g| g.shards == 0),
        "{:?}",
        status.generations
    );
}
