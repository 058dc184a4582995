//! A run's record in the repository: `bao run snapshot RUN DEST` copies what a run's readers
//! and its continuation need, leaving out the self-play data (hundreds of MB), so that a long
//! run outlives the machine it ran on: a run directory is git-ignored and a fresh checkout has
//! none, so a snapshot committed before the machine goes is what a later run resumes from.
//!
//! A snapshot is itself a run directory without `data/`: its config, overrides, state and
//! history, the gauntlet's points and figures, every finished student (small), and the newest
//! generation's checkpoint with its optimizer state, with the checkpoint that plays the next
//! generation's self-play where that is an older one (`[train] pipeline`); an earlier
//! snapshot's older checkpoints are removed, so a snapshot kept up to date stays small.
//! A copy of it resumes with `bao train --run COPY`: the teacher, its optimizer, the schedule
//! and the students go on exactly; only the replay windows restart from the new generations'
//! self-play, since the older samples stayed behind (`bao train` says so when it resumes).
//!
//! The state is read once, first, and written last, with that generation's checkpoint, so
//! that a snapshot of a run still training is consistent: a generation or a student that
//! commits meanwhile is left out (a history line it appended is dropped on resume). A
//! snapshot while a student is being made is refused: the copy could not make it, since that
//! needs the self-play data.

use std::path::{Path, PathBuf};

use anyhow::{bail, Context};

use crate::dataio::atomic::write_bytes;
use crate::neuralnet::checkpoint::{optimizer_paths, sidecar_path};
use crate::training::schedule::{generation_name, Schedule};
use crate::training::train::{
    finished_students, read_generation, run_config, unfinished_student, RunDir,
};

/// The run's record files, copied where present.
const RECORD: [&str; 7] = [
    "config.toml",
    "overrides.json",
    "metrics.jsonl",
    "metrics.csv",
    "curve.svg",
    "gauntlet.csv",
    "gauntlet.svg",
];

/// What a snapshot holds.
#[derive(Debug)]
pub struct Snapshot {
    /// The run's committed generation, whose checkpoint it holds.
    pub generation: u32,
    pub students: usize,
    pub files: usize,
    pub bytes: u64,
}

/// Copies `run`'s record, its finished students and the checkpoints it resumes from into
/// `dest` (created if missing; an earlier snapshot's files there are replaced, others left
/// alone).
pub fn snapshot(run: &Path, dest: &Path) -> anyhow::Result<Snapshot> {
    let (run_dir, dest_dir) = (RunDir(run.to_path_buf()), RunDir(dest.to_path_buf()));
    let state_path = run_dir.state();
    let state = std::fs::read(&state_path).with_context(|| {
        format!(
            "{} is not a bao run directory (no readable state.json)",
            run.display()
        )
    })?;
    let generation = read_generation(&state)
        .with_context(|| format!("corrupt run state {}", state_path.display()))?;
    let (run_abs, dest_abs) = (std::path::absolute(run)?, std::path::absolute(dest)?);
    if dest_abs.starts_with(&run_abs) || run_abs.starts_with(&dest_abs) {
        bail!(
            "the snapshot {} and the run {} must be apart (neither inside the other)",
            dest.display(),
            run.display()
        );
    }
    let config = run_config(run)?;
    if let Some(g) = unfinished_student(run, &config, generation) {
        bail!(
            "generation {g}'s student is not finished in {} (its [distill] stage is running or \
             was killed): it is made from the run's self-play data, which a snapshot leaves \
             behind; snapshot once `bao train` has made it",
            run.display()
        );
    }
    let mut out = Snapshot {
        generation,
        students: 0,
        files: 0,
        bytes: 0,
    };
    let mut copy = |from: &Path, to: &Path| -> anyhow::Result<()> {
        let bytes =
            std::fs::read(from).with_context(|| format!("cannot read {}", from.display()))?;
        if let Some(parent) = to.parent() {
            std::fs::create_dir_all(parent)
                .with_context(|| format!("cannot create {}", parent.display()))?;
        }
        write_bytes(to, &bytes)?;
        out.files += 1;
        out.bytes += bytes.len() as u64;
        Ok(())
    };

    // The checkpoint the state names, with its sidecar and optimizer state, and the one the
    // next generation's self-play is played by (with `[train] pipeline`, the one before).
    let next_player = Schedule::new(&config).played_by(generation + 1);
    let mut keep: Vec<PathBuf> = Vec::new();
    for g in [generation, next_player] {
        if keep.contains(&dest_dir.model(g)) {
            continue;
        }
        let weights = run_dir.model(g);
        copy(&weights, &dest_dir.model(g))?;
        keep.push(dest_dir.model(g));
        let mut extras = vec![sidecar_path(&weights)?];
        // The player's optimizer state is not needed: only the newest checkpoint trains on.
        if g == generation {
            let (tensors, json) = optimizer_paths(&weights)?;
            extras.extend([tensors, json]);
        }
        for from in extras.into_iter().filter(|f| f.exists()) {
            let to = dest.join("models").join(from.file_name().expect("a file"));
            copy(&from, &to)?;
            keep.push(to);
        }
    }
    remove_other_checkpoints(&dest.join("models"), &keep)?;

    // Every student of a committed generation whose stage finished, done.json last.
    for student in finished_students(run)? {
        let Some(dir) = student.0.file_name().and_then(|n| n.to_str()) else {
            continue;
        };
        if dir > generation_name(generation).as_str() {
            continue;
        }
        for file in student.files() {
            if file.exists() {
                let to = dest
                    .join("students")
                    .join(dir)
                    .join(file.file_name().expect("a file"));
                copy(&file, &to)?;
            }
        }
        out.students += 1;
    }
    let points = run.join("gauntlet");
    if points.exists() {
        for entry in std::fs::read_dir(&points)
            .with_context(|| format!("cannot list {}", points.display()))?
        {
            let path = entry?.path();
            if path.extension().is_some_and(|e| e == "json") {
                copy(
                    &path,
                    &dest
                        .join("gauntlet")
                        .join(path.file_name().expect("a file")),
                )?;
            }
        }
    }
    for file in RECORD {
        let from = run.join(file);
        if from.exists() {
            copy(&from, &dest.join(file))?;
        }
    }
    // Last, as in the run: the state that names the checkpoint copied first.
    write_bytes(&dest.join("state.json"), &state)?;
    out.files += 1;
    out.bytes += state.len() as u64;
    Ok(out)
}

/// Removes checkpoint files (`gen-*`) in `models` other than `keep`: an earlier snapshot's.
fn remove_other_checkpoints(models: &Path, keep: &[PathBuf]) -> anyhow::Result<()> {
    for entry in
        std::fs::read_dir(models).with_context(|| format!("cannot list {}", models.display()))?
    {
        let path = entry?.path();
        let ours = path
            .file_name()
            .and_then(|n| n.to_str())
            .is_some_and(|n| n.starts_with("gen-"));
        if ours && !keep.contains(&path) {
            std::fs::remove_file(&path)
                .with_context(|| format!("cannot remove {}", path.display()))?;
        }
    }
    Ok(())
}
