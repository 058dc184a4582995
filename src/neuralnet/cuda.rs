//! Makes libtorch's CUDA backend visible to this binary where a GPU driver exists.
//!
//! Why this is needed: `tch` links `libtorch_cpu` and `libc10` only. The CUDA backend lives in
//! `libtorch_cuda`, which registers itself when it is loaded, but nothing in the binary names
//! one of its symbols, so the linker (with `--as-needed`) drops it: without this,
//! `tch::Cuda::is_available()` is false even on a GPU machine with a CUDA build of torch. The
//! backend is loaded at run time, when a device other than the CPU is chosen
//! (`DeviceChoice::device`), and only where the NVIDIA driver (`libcuda.so.1`) loads, because
//! loading it pulls in the CUDA libraries (about half a second per process here, wasted on a
//! CPU-only machine or a CPU-only command).

use std::ffi::CString;
use std::sync::OnceLock;

/// Whether the CUDA backend is loaded (once per process; later calls answer at once).
pub fn load_backend() -> bool {
    static LOADED: OnceLock<bool> = OnceLock::new();
    *LOADED.get_or_init(|| {
        if std::env::var_os("BAO_NO_CUDA").is_some() {
            return false;
        }
        // SAFETY: dlopen with valid NUL-terminated names; handles are kept for the process's
        // life (never dlclosed), so the registered backend stays valid.
        unsafe {
            let driver = CString::new("libcuda.so.1").expect("no NUL");
            if libc::dlopen(driver.as_ptr(), libc::RTLD_LAZY | libc::RTLD_GLOBAL).is_null() {
                return false;
            }
            // The libtorch found at build time first, then the loader's search path
            // (LD_LIBRARY_PATH, e.g. a machine's own torch of the same version).
            let built = std::path::Path::new(env!("BAO_LIBTORCH_LIB")).join("libtorch_cuda.so");
            let names = [
                built.to_string_lossy().into_owned(),
                "libtorch_cuda.so".into(),
            ];
            names.iter().any(|name| {
                let c = CString::new(name.as_str()).unwrap_or_default();
                !libc::dlopen(c.as_ptr(), libc::RTLD_NOW | libc::RTLD_GLOBAL).is_null()
            })
        }
    })
}
