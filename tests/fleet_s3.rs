//! The S3 code path against a real S3 server (`s3s-fs`, files under a temporary directory)
//! started inside the test on 127.0.0.1: the store's guarantees, then `bao learn --data
//! s3://...` and `bao selfplay --out s3://...` with the tiny network.

mod common;

use std::process::{Command, Stdio};

use bao::dataio::store::{Conflict, Put, Store};
use bao::training::fleet::layout;

const KEY: &str = "bao-test-key";
const SECRET: &str = "bao-test-secret";

/// Serves S3 on 127.0.0.1 (random port) from `dir` until the test process ends; returns
/// the endpoint URL.
fn start_s3(dir: &std::path::Path) -> String {
    let fs = s3s_fs::FileSystem::new(dir).unwrap();
    let mut b = s3s::service::S3ServiceBuilder::new(fs);
    b.set_auth(s3s::auth::SimpleAuth::from_single(KEY, SECRET));
    let service = b.build();
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    listener.set_nonblocking(true).unwrap();
    std::thread::spawn(move || {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .unwrap();
        rt.block_on(async move {
            let listener = tokio::net::TcpListener::from_std(listener).unwrap();
            let http =
                hyper_util::server::conn::auto::Builder::new(hyper_util::rt::TokioExecutor::new());
            loop {
                let Ok((socket, _)) = listener.accept().await else {
                    continue;
                };
                let conn = http
                    .serve_connection(hyper_util::rt::TokioIo::new(socket), service.clone())
                    .into_owned();
                tokio::spawn(async move {
                    let _ = conn.await;
                });
            }
        });
    });
    format!("http://{addr}")
}

fn s3_env(endpoint: &str) -> Vec<(&'static str, String)> {
    vec![
        ("AWS_ENDPOINT", endpoint.to_string()),
        ("AWS_ALLOW_HTTP", "true".into()),
        ("AWS_ACCESS_KEY_ID", KEY.into()),
        ("AWS_SECRET_ACCESS_KEY", SECRET.into()),
        ("AWS_REGION", "us-east-1".into()),
        ("BAO_STORE_RETRIES", "3".into()),
    ]
}

#[test]
fn s3_store_and_a_fleet_run_through_s3() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("s3");
    std::fs::create_dir_all(data.join("bucket")).unwrap(); // s3s-fs: a bucket is a directory
    let endpoint = start_s3(&data);
    for (k, v) in s3_env(&endpoint) {
        // SAFETY-free in edition 2021; this test file runs one test, before any thread reads env.
        std::env::set_var(k, v);
    }

    // The store's guarantees on S3.
    let store = Store::open("s3://bucket/check").unwrap();
    store.put("a/x", b"one").unwrap();
    assert_eq!(store.get("a/x").unwrap(), b"one");
    assert_eq!(store.get_opt("a/none").unwrap(), None);
    assert_eq!(store.put_immutable("a/imm", b"v1").unwrap(), Put::Created);
    assert_eq!(
        store.put_immutable("a/imm", b"v1").unwrap(),
        Put::AlreadyThere
    );
    assert!(store
        .put_immutable("a/imm", b"v2")
        .unwrap_err()
        .downcast_ref::<Conflict>()
        .is_some());
    assert_eq!(store.get("a/imm").unwrap(), b"v1");
    assert_eq!(store.get_range("a/x", 1..3).unwrap(), b"ne");
    let keys: Vec<String> = store
        .list("a")
        .unwrap()
        .into_iter()
        .map(|e| e.key)
        .collect();
    assert_eq!(keys, vec!["a/imm", "a/x"]);
    store.delete("a/x").unwrap();
    assert!(!store.exists("a/x").unwrap());

    // A fleet through S3: the trainer starts the run, a worker plays, generation 1 is reached.
    let root = "s3://bucket/runs/one";
    let config = common::write_config(dir.path());
    let cache = dir.path().join("cache");
    let trainer = Command::new(env!("CARGO_BIN_EXE_bao"))
        .args([
            "learn",
            "--data",
            root,
            "--config",
            config.to_str().unwrap(),
            "--generations",
            "1",
            "--quiet",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let worker = Command::new(env!("CARGO_BIN_EXE_bao"))
        .args([
            "selfplay",
            "--model",
            &format!("{root}/models/LATEST"),
            "--out",
            root,
            "--worker-id",
            "s3w",
        ])
        .args([
            "--cache",
            cache.to_str().unwrap(),
            "--quiet",
            "--max-time",
            "300s",
            "--poll",
            "0.1",
        ])
        .output()
        .unwrap();
    assert!(
        worker.status.success(),
        "worker: {}",
        String::from_utf8_lossy(&worker.stderr)
    );
    assert!(String::from_utf8_lossy(&worker.stdout).contains("run finished at generation 1"));
    let trainer = trainer.wait_with_output().unwrap();
    assert!(
        trainer.status.success(),
        "trainer: {}",
        String::from_utf8_lossy(&trainer.stderr)
    );

    let store = Store::open(root).unwrap();
    let state = common::check_run(&store, 1);
    assert!(state.consumed.iter().all(|c| c.key.contains("/s3w-")));
    // The objects are plain files in the server's directory: nothing partial there either.
    assert!(data
        .join("bucket/runs/one")
        .join(layout::model_key(1))
        .exists());
    let status = Command::new(env!("CARGO_BIN_EXE_bao"))
        .args(["run", "status", root])
        .output()
        .unwrap();
    assert!(
        String::from_utf8_lossy(&status.stdout).contains("LATEST: generation 1 "),
        "{status:?}"
    );
    // A second trainer on a finished run with a live lease is not possible; a fresh one just
    // confirms the end.
    let again = Command::new(env!("CARGO_BIN_EXE_bao"))
        .args(["learn", "--data", root, "--quiet"])
        .output()
        .unwrap();
    assert!(
        again.status.success(),
        "{}",
        String::from_utf8_lossy(&again.stderr)
    );
}
