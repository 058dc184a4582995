//! The Ray driver (`scripts/ray_cluster.py`) on a two-node cluster on loopback addresses:
//! two generations with a worker killed mid-run. The run reaches generation 2, every shard is
//! consumed once, nothing partial is visible, and no process of ours is left afterwards.
//!
//! Needs Ray 2.60 for the Python in `$BAO_RAY_PYTHON` (scripts/setup.sh installs it and sets
//! that). Ignored by a plain `cargo test` (it starts a Ray cluster: a minute of both cores);
//! `scripts/test.sh` (the README's test command and CI) runs it with `--ignored`, and there a
//! missing Ray fails it.

mod common;

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use bao::dataio::store::Store;
use bao::training::fleet::layout;

fn python() -> String {
    std::env::var("BAO_RAY_PYTHON").unwrap_or_else(|_| "python3".into())
}

fn script() -> String {
    format!("{}/scripts/ray_cluster.py", env!("CARGO_MANIFEST_DIR"))
}

/// Pids of processes whose command line mentions `needle`.
fn processes_mentioning(needle: &str) -> Vec<(u32, String)> {
    let mut out = Vec::new();
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = e.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let Ok(cmd) = std::fs::read(e.path().join("cmdline")) else {
            continue;
        };
        let cmd = String::from_utf8_lossy(&cmd).replace('\0', " ");
        if cmd.contains(needle) && pid != std::process::id() {
            out.push((pid, cmd));
        }
    }
    out
}

/// Stops the local cluster however the test ends.
struct Cluster<'a> {
    state: &'a Path,
}

impl Drop for Cluster<'_> {
    fn drop(&mut self) {
        let _ = Command::new(python())
            .args([&script(), "down", "--state", self.state.to_str().unwrap()])
            .status();
    }
}

#[test]
#[ignore = "needs Ray (scripts/setup.sh) and a minute of both cores; scripts/test.sh runs it"]
fn a_two_node_ray_cluster_runs_two_generations_through_a_killed_worker() {
    let probe = Command::new(python())
        .args(["-c", "import ray"])
        .stderr(Stdio::null())
        .status();
    assert!(
        probe.is_ok_and(|s| s.success()),
        "Ray is not installed for `{}`: run scripts/setup.sh",
        python()
    );
    let dir = tempfile::tempdir().unwrap();
    let tag = dir.path().to_str().unwrap().to_string();
    let state = dir.path().join("ray");
    let root = dir.path().join("root");
    let config = common::write_config(dir.path());
    // A free port on the head's address.
    let port = std::net::TcpListener::bind("127.0.0.2:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();

    let up = Command::new(python())
        .args([
            &script(),
            "local-up",
            "--nodes",
            "2",
            "--state",
            state.to_str().unwrap(),
            "--port",
            &port.to_string(),
        ])
        .args(["--cpus-per-node", "2", "--timeout", "180"])
        .output()
        .unwrap();
    let _cluster = Cluster { state: &state };
    assert!(
        up.status.success(),
        "local-up failed: {}",
        String::from_utf8_lossy(&up.stderr)
    );
    let address = String::from_utf8_lossy(&up.stdout).trim().to_string();
    assert_eq!(address, format!("127.0.0.2:{port}"));

    let r = root.to_str().unwrap();
    let run = Command::new(python())
        .args([
            &script(),
            "run",
            "--address",
            &address,
            "--state",
            state.to_str().unwrap(),
            "--root",
            r,
        ])
        .args([
            "--workers",
            "2",
            "--config",
            config.to_str().unwrap(),
            "--bao",
            env!("CARGO_BIN_EXE_bao"),
        ])
        .args([
            "--log-dir",
            dir.path().join("logs").to_str().unwrap(),
            "--timeout",
            "400",
            "--grace",
            "60",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();

    // Once shards flow, kill one worker's `bao` process; the driver must start it again.
    let store = Store::open(r).unwrap();
    let t = Instant::now();
    let victim = loop {
        assert!(
            t.elapsed() < Duration::from_secs(300),
            "no worker uploaded a shard"
        );
        let workers: Vec<(u32, String)> = processes_mentioning(r)
            .into_iter()
            .filter(|(_, c)| c.contains(" selfplay ") && c.contains("-w0 "))
            .collect();
        if !workers.is_empty()
            && store
                .list(layout::SHARDS)
                .map(|l| !l.is_empty())
                .unwrap_or(false)
        {
            break workers[0].0;
        }
        std::thread::sleep(Duration::from_millis(200));
    };
    assert!(Command::new("kill")
        .args(["-9", &victim.to_string()])
        .status()
        .unwrap()
        .success());

    let out = run.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "ray run failed: {stderr}");
    let report = String::from_utf8_lossy(&out.stdout);
    let report: serde_json::Value =
        serde_json::from_str(report.lines().last().unwrap_or("")).unwrap();
    assert!(
        report["restarts"]["worker0"].as_u64().unwrap_or(0) >= 1,
        "worker0 was not restarted: {report}\n{stderr}"
    );
    assert_eq!(report["trainer_finished"], true);

    let state_now = common::check_run(&store, 2);
    assert!(state_now.consumed.len() >= 2);
    drop(_cluster);
    let t = Instant::now();
    loop {
        let left = processes_mentioning(&tag);
        if left.is_empty() {
            break;
        }
        assert!(
            t.elapsed() < Duration::from_secs(30),
            "processes left behind: {left:?}"
        );
        std::thread::sleep(Duration::from_millis(500));
    }
}
