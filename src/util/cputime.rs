//! CPU time of this process and of the calling thread: what a training run's cost is counted
//! in (CPU-hours), since wall time on a shared 2-core machine says little about the work done.

/// CPU seconds (user + system) `who` has used.
fn rusage_secs(who: libc::c_int) -> f64 {
    let mut usage = std::mem::MaybeUninit::<libc::rusage>::zeroed();
    // SAFETY: `getrusage` writes a `struct rusage` into the pointer it is given, which points
    // at a zero-initialised value of exactly that type owned by this frame; `who` is one of
    // the two constants the callers below pass.
    let rc = unsafe { libc::getrusage(who, usage.as_mut_ptr()) };
    if rc != 0 {
        return 0.0;
    }
    // SAFETY: the call succeeded, so it filled the struct (and it was zeroed before anyway).
    let usage = unsafe { usage.assume_init() };
    let secs = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 * 1e-6;
    secs(usage.ru_utime) + secs(usage.ru_stime)
}

/// CPU seconds the whole process has used so far (all its threads).
pub fn process_secs() -> f64 {
    rusage_secs(libc::RUSAGE_SELF)
}

/// CPU seconds the calling thread has used so far (on Linux; the process's elsewhere).
pub fn thread_secs() -> f64 {
    #[cfg(target_os = "linux")]
    {
        rusage_secs(libc::RUSAGE_THREAD)
    }
    #[cfg(not(target_os = "linux"))]
    {
        process_secs()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Busy work shows up in both clocks, and a thread's clock does not count another's work.
    #[test]
    fn counts_work_done() {
        let spin = |secs: f64| {
            let start = thread_secs();
            let mut x = 0u64;
            while thread_secs() - start < secs {
                x = x.wrapping_mul(6364136223846793005).wrapping_add(1);
            }
            std::hint::black_box(x);
        };
        let (p0, t0) = (process_secs(), thread_secs());
        spin(0.05);
        let other = std::thread::spawn(|| {
            let t = thread_secs();
            let mut x = 0u64;
            while thread_secs() - t < 0.05 {
                x = x.wrapping_add(1);
            }
            std::hint::black_box(x);
        });
        other.join().unwrap();
        let (p1, t1) = (process_secs(), thread_secs());
        assert!(t1 - t0 >= 0.05 && t1 - t0 < 0.5, "thread {}", t1 - t0);
        assert!(p1 - p0 >= 0.1, "process {}", p1 - p0);
    }
}
