//! `bao serve` in a real browser: starts the server on a free port and runs
//! `tests/e2e/play.mjs` (Playwright driving Debian's headless Chromium), which plays moves by
//! clicking and saves a screenshot to `target/tmp/serve-e2e.png`.
//!
//! Needs `chromium` and `tests/e2e/node_modules` (`scripts/setup-e2e.sh` installs both).
//! Ignored by a plain `cargo test`; `scripts/test.sh` (the README's test command and CI) runs
//! it with `--ignored`, and there a missing prerequisite fails it.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// Kills the server when the test ends, however it ends.
struct Killed(Child);

impl Drop for Killed {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn chromium() -> Option<PathBuf> {
    let candidates = std::env::var_os("CHROMIUM")
        .map(PathBuf::from)
        .into_iter()
        .chain(
            [
                "/usr/bin/chromium",
                "/usr/bin/chromium-browser",
                "/usr/bin/google-chrome",
            ]
            .map(PathBuf::from),
        );
    candidates.into_iter().find(|p| p.is_file())
}

#[test]
#[ignore = "needs Chromium and tests/e2e/node_modules (scripts/setup-e2e.sh); scripts/test.sh runs it"]
fn the_page_plays_by_clicks_in_headless_chromium() {
    let browser = chromium()
        .expect("no Chromium installed: run scripts/setup-e2e.sh (or set CHROMIUM=/path/to/it)");
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let e2e = root.join("tests/e2e");
    assert!(
        e2e.join("node_modules/playwright-core").is_dir(),
        "tests/e2e/node_modules is missing: run scripts/setup-e2e.sh (npm ci in tests/e2e)"
    );

    let mut server = Killed(
        Command::new(env!("CARGO_BIN_EXE_bao"))
            .args([
                "serve",
                "--addr",
                "127.0.0.1:0",
                "--opponent",
                "greedy",
                "--opponent",
                "random",
            ])
            .stdout(Stdio::piped())
            .spawn()
            .expect("start bao serve"),
    );
    let mut line = String::new();
    BufReader::new(server.0.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let url = line
        .trim()
        .strip_prefix("bao serve: listening on ")
        .unwrap_or_else(|| panic!("unexpected first line {line:?}"))
        .to_string();

    let shot = Path::new(env!("CARGO_TARGET_TMPDIR")).join("serve-e2e.png");
    let _ = std::fs::remove_file(&shot);
    let mut node = Command::new("node")
        .arg(e2e.join("play.mjs"))
        .args([url.as_str(), shot.to_str().unwrap()])
        .env("CHROMIUM", &browser)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("node is needed for the browser test (scripts/setup-e2e.sh installs it)");
    let deadline = Instant::now() + Duration::from_secs(180);
    let status = loop {
        if let Some(s) = node.try_wait().unwrap() {
            break s;
        }
        if Instant::now() > deadline {
            let _ = node.kill();
            panic!("the browser test did not finish in 180 s");
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    let out = node.wait_with_output().unwrap();
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    println!("{stdout}{stderr}");
    assert!(status.success(), "browser test failed:\n{stdout}\n{stderr}");
    let png = std::fs::read(&shot).expect("screenshot written");
    assert!(
        png.starts_with(b"\x89PNG") && png.len() > 10_000,
        "a real screenshot: {} bytes",
        png.len()
    );
    assert!(
        server.0.try_wait().unwrap().is_none(),
        "the server is still up after the test"
    );
}
