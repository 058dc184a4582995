//! Locates the libtorch that `torch-sys` links against and embeds its directory as an rpath,
//! so the `bao` binary runs without `LD_LIBRARY_PATH`. The build fails with one readable
//! message when torch is missing or has the wrong version, instead of a linker error.
use std::path::PathBuf;
use std::process::Command;

const TORCH_VERSION: &str = "2.13.0";

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-env-changed=LIBTORCH");
    println!("cargo:rerun-if-env-changed=LIBTORCH_USE_PYTORCH");
    println!("cargo:rerun-if-env-changed=PATH");

    let (version, lib_dir) = match std::env::var("LIBTORCH") {
        Ok(dir) => (
            "unknown (LIBTORCH set)".to_string(),
            PathBuf::from(dir).join("lib"),
        ),
        Err(_) => torch_from_python(),
    };
    println!("cargo:rustc-env=BAO_LIBTORCH_VERSION={version}");
    println!("cargo:rustc-link-arg=-Wl,-rpath,{}", lib_dir.display());
    println!("cargo:rustc-env=BAO_LIBTORCH_LIB={}", lib_dir.display());
}

fn torch_from_python() -> (String, PathBuf) {
    let python = std::env::var("PYTHON_SYS_EXECUTABLE").unwrap_or_else(|_| "python".into());
    let script = "import torch, os; print(torch.__version__); print(os.path.join(os.path.dirname(torch.__file__), 'lib'))";
    let out = Command::new(&python).args(["-c", script]).output();
    let fail = |why: &str| -> ! {
        panic!(
            "\n\nbao-zero needs PyTorch {TORCH_VERSION} (libtorch for tch 0.26): {why}.\n\
             Run `scripts/setup.sh` (or use `scripts/test.sh` / `scripts/train.sh`, which run it), \
             or build with `. scripts/setup.sh && cargo build --release`.\n\n"
        )
    };
    let out = match out {
        Ok(o) if o.status.success() => o,
        Ok(_) => fail(&format!("`{python}` cannot import torch")),
        Err(_) => fail(&format!("no `{python}` on PATH")),
    };
    let text = String::from_utf8_lossy(&out.stdout);
    let mut lines = text.lines();
    let version = lines.next().unwrap_or_default();
    if version.split('+').next() != Some(TORCH_VERSION) {
        fail(&format!("found torch {version} instead"));
    }
    (
        version.to_string(),
        PathBuf::from(lines.next().unwrap_or_default().trim()),
    )
}
