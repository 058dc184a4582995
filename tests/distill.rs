//! Distillation (`bao learn --teacher`): a student network learns a frozen
//! teacher's policy and value instead of its samples' own targets, and `--network` starts the
//! student fresh at another size. The samples here carry deliberately wrong targets (every
//! value 1, every policy on the first legal move), so a student that comes to judge as the
//! teacher does can only have learned it from the teacher.

mod common;

use std::path::Path;

use bao::dataio::shard::{Sample, ShardWriter};
use bao::game::random_games::opening;
use bao::game::{Position, Variant, ACTIONS};
use bao::neuralnet::{Learner, Lineage, NetConfig, Network, OptimizerConfig};
use bao::search::SearchParams;
use bao::training::minibatch::{train_steps, Teacher};
use bao::training::schedule::Minibatches;
use common::run_bao;
use rand::SeedableRng;
use tch::Device;

/// Positions a few random plies into Kujifunza games, distinct enough to generalise over.
fn positions(n: u32) -> Vec<Position> {
    (0..n)
        .map(|k| opening(Variant::Kujifunza, k % 12, 7, k).0)
        .filter(|p| !p.legal_moves().is_empty())
        .collect()
}

/// Samples of `positions` with targets no teacher would give.
fn wrong_samples(positions: &[Position]) -> Vec<Sample> {
    positions
        .iter()
        .map(|pos| {
            let legal = pos.legal_moves().mask();
            let mut policy = [0.0; ACTIONS];
            policy[legal.trailing_zeros() as usize] = 1.0;
            Sample {
                position: pos.to_bytes(),
                legal,
                policy,
                z: 1.0,
                q: 1.0,
                game_id: 0,
                ply: 0,
                full_search: true,
                reply: None,
                margin: None,
            }
        })
        .collect()
}

fn tiny(seed: u64) -> Network {
    Network::new_seeded(
        &NetConfig::preset("tiny").unwrap(),
        Variant::Kujifunza,
        Device::Cpu,
        seed,
    )
    .unwrap()
}

/// Mean absolute value difference and mean total-variation policy distance of two networks
/// over `samples`' positions.
fn distance(a: &Network, b: &Network, samples: &[Sample]) -> (f32, f32) {
    let enc = a.encoding();
    let mut features = vec![0.0; samples.len() * enc.features()];
    for (s, f) in samples
        .iter()
        .zip(features.chunks_exact_mut(enc.features()))
    {
        enc.encode(&s.position().unwrap(), f);
    }
    let masks: Vec<u64> = samples.iter().map(|s| s.legal).collect();
    let (oa, ob) = (
        a.infer(&features, &masks).unwrap(),
        b.infer(&features, &masks).unwrap(),
    );
    let (mut dv, mut dp) = (0.0, 0.0);
    for (ra, rb) in oa
        .chunks_exact(ACTIONS + 1)
        .zip(ob.chunks_exact(ACTIONS + 1))
    {
        dv += (ra[ACTIONS] - rb[ACTIONS]).abs();
        dp += 0.5
            * ra[..ACTIONS]
                .iter()
                .zip(&rb[..ACTIONS])
                .map(|(x, y)| (x - y).abs())
                .sum::<f32>();
    }
    let n = samples.len() as f32;
    (dv / n, dp / n)
}

/// Trains a fresh student 400 steps on the wrong samples, with or without the teacher.
fn student_after(window: &[Sample], teacher: Option<&Network>) -> Network {
    let opt = OptimizerConfig {
        learning_rate: 0.01,
        ..OptimizerConfig::default()
    };
    let mut learner = Learner::new(tiny(2), opt).unwrap();
    let teacher = teacher.map(|t| {
        let copy = t.duplicate(Device::Cpu).unwrap();
        Teacher::new(copy, 1.0, learner.network()).unwrap()
    });
    let mut plan = Minibatches {
        steps: 400,
        batch_size: 64,
        labels_fraction: 0.0,
        mirror: false,
        q_mix: 0.0,
        rng: rand::rngs::SmallRng::seed_from_u64(3),
    };
    train_steps(
        &mut learner,
        window,
        &[],
        teacher.as_ref(),
        &mut plan,
        |_| Ok(()),
    )
    .unwrap();
    learner.into_network()
}

#[test]
fn a_student_learns_its_teachers_judgement_not_its_samples_targets() {
    let teacher = tiny(1);
    let all = wrong_samples(&positions(600));
    let (train, held_out) = all.split_at(all.len() * 3 / 4);
    let before = distance(&tiny(2), &teacher, held_out);
    let taught = distance(&student_after(train, Some(&teacher)), &teacher, held_out);
    let untaught = distance(&student_after(train, None), &teacher, held_out);
    // On positions it never trained on, the taught student is far closer to the teacher than
    // it started, in value and in policy; the same training without the teacher is not.
    assert!(
        taught.0 < before.0 / 1.5 && taught.1 < before.1 / 3.0,
        "value / policy distance to the teacher {before:?} -> {taught:?}"
    );
    assert!(
        untaught.0 > 3.0 * taught.0 && untaught.1 > 2.0 * taught.1,
        "without the teacher {untaught:?}, with it {taught:?}"
    );
}

#[test]
fn a_teacher_must_read_the_students_inputs_and_have_a_weight_in_range() {
    let student = tiny(1);
    for w in [0.0, -0.5, 1.5, f32::NAN] {
        let err = Teacher::new(tiny(2), w, &student).err().expect("refused");
        assert!(err.to_string().contains("(0, 1]"), "{err}");
    }
    let moves = NetConfig {
        move_features: true,
        ..NetConfig::preset("tiny").unwrap()
    };
    let reader = Network::new_seeded(&moves, Variant::Kujifunza, Device::Cpu, 3).unwrap();
    let err = Teacher::new(reader, 1.0, &student).err().expect("refused");
    assert!(err.to_string().contains("student's features"), "{err}");
    let other = Network::new_seeded(
        &NetConfig::preset("tiny").unwrap(),
        Variant::Kiswahili,
        Device::Cpu,
        3,
    )
    .unwrap();
    assert!(Teacher::new(other, 1.0, &student).is_err());
}

fn write_shards(dir: &Path, samples: &[Sample]) {
    let mut w = ShardWriter::new(dir, "sp", Variant::Kujifunza, 1, "test", 64).unwrap();
    for s in samples {
        w.push(s.clone()).unwrap();
    }
    w.finish().unwrap();
}

/// Shards of `n` positions in `dir/data`, and a tiny checkpoint `dir/NAME.safetensors` that
/// records non-default search settings (returned) for whoever learns from it.
fn shards_and_checkpoint(
    dir: &Path,
    n: u32,
    name: &str,
) -> (std::path::PathBuf, std::path::PathBuf, SearchParams) {
    let data = dir.join("data");
    write_shards(&data, &wrong_samples(&positions(n)));
    let mut net = tiny(1);
    let search = SearchParams {
        c_puct: 2.5,
        ..SearchParams::default()
    };
    net.set_search_params(Some(search.clone()));
    let path = dir.join(format!("{name}.safetensors"));
    net.save(&path, &Lineage::default()).unwrap();
    (data, path, search)
}

/// End to end: `bao learn --network ... --teacher ...` writes a fresh student of the stated
/// architecture that plays with the teacher's search settings; bad requests are refused with
/// the reason, and leave an existing checkpoint untouched.
#[test]
fn bao_learn_starts_a_student_of_the_stated_size_from_a_teacher() {
    let tmp = tempfile::tempdir().unwrap();
    let (data, teacher_path, search) = shards_and_checkpoint(tmp.path(), 100, "teacher");
    let arch = tmp.path().join("student.toml");
    std::fs::write(
        &arch,
        "blocks = 2\nchannels = 8\npolicy_channels = 2\nvalue_channels = 1\nvalue_hidden = 16\n",
    )
    .unwrap();
    let student = tmp.path().join("student.safetensors");
    let s = |p: &Path| p.to_str().unwrap().to_string();
    let (data, teacher_s, arch_s, student_s) = (s(&data), s(&teacher_path), s(&arch), s(&student));
    let learn = |model: &str, extra: &[&str]| {
        let mut args = vec!["learn", "--data", &data, "--model", model, "--steps", "5"];
        args.extend_from_slice(extra);
        run_bao(&args)
    };

    let (ok, stdout, stderr) = learn(&student_s, &["--network", &arch_s, "--teacher", &teacher_s]);
    assert!(ok, "{stdout}\n{stderr}");
    let net = Network::load(&student, Device::Cpu).unwrap();
    assert_eq!(net.variant(), Variant::Kujifunza, "the teacher's variant");
    assert_eq!((net.config().blocks, net.config().channels), (2, 8));
    assert_eq!(net.search_params(), Some(&search));
    assert_eq!(net.lineage().parent.as_deref(), Some(teacher_s.as_str()));

    // Trained on from an earlier student, its lineage names the newer teacher it learned from.
    let newer = tmp.path().join("newer.safetensors");
    for ext in ["safetensors", "json"] {
        std::fs::copy(teacher_path.with_extension(ext), newer.with_extension(ext)).unwrap();
    }
    let newer_s = s(&newer);
    let (ok, stdout, stderr) = learn(&student_s, &["--teacher", &newer_s]);
    assert!(ok, "{stdout}\n{stderr}");
    let net = Network::load(&student, Device::Cpu).unwrap();
    assert_eq!(net.lineage().parent.as_deref(), Some(newer_s.as_str()));
    assert_eq!(
        net.lineage().step,
        10,
        "steps count on from the earlier student"
    );

    let saved = std::fs::read(&student).unwrap();
    for (extra, says) in [
        (
            vec!["--network", &arch_s, "--teacher", &teacher_s],
            "exists",
        ),
        (
            vec!["--teacher", &teacher_s, "--teacher-weight", "0"],
            "(0, 1]",
        ),
        (vec!["--teacher", "missing.safetensors"], "--teacher"),
    ] {
        let (ok, _, stderr) = learn(&student_s, &extra);
        assert!(!ok && stderr.contains(says), "{extra:?}: {stderr}");
        assert_eq!(std::fs::read(&student).unwrap(), saved, "{extra:?} left it");
    }
    let fresh = s(&tmp.path().join("fresh.safetensors"));
    let (ok, _, stderr) = learn(&fresh, &["--network", &arch_s]);
    assert!(!ok && stderr.contains("--variant"), "{stderr}");
    let moves = tmp.path().join("moves.toml");
    std::fs::write(
        &moves,
        "blocks = 1\nchannels = 8\npolicy_channels = 2\nvalue_channels = 1\nvalue_hidden = 16\nmove_features = true\n",
    )
    .unwrap();
    let (ok, _, stderr) = learn(&fresh, &["--network", &s(&moves), "--teacher", &teacher_s]);
    assert!(!ok && stderr.contains("student's features"), "{stderr}");
    assert!(
        !Path::new(&fresh).exists(),
        "a refused student is not written"
    );
}

/// `bao learn --search KEY=VALUE` records the search settings a checkpoint is played with
/// (a student of a PUCT-trained teacher shipped to play with a Gumbel root); with `--steps 0`
/// the weights stay as they were. A bad setting is refused by name and writes nothing.
#[test]
fn bao_learn_search_records_how_a_checkpoint_is_played() {
    use bao::search::Algorithm;
    let tmp = tempfile::tempdir().unwrap();
    let (data, path, _) = shards_and_checkpoint(tmp.path(), 20, "model");
    let out = tmp.path().join("shipped.safetensors");
    let s = |p: &Path| p.to_str().unwrap().to_string();
    let (data, path_s, out_s) = (s(&data), s(&path), s(&out));
    let learn = |extra: &[&str]| {
        let mut args = vec![
            "learn", "--data", &data, "--model", &path_s, "--out", &out_s,
        ];
        args.extend_from_slice(extra);
        run_bao(&args)
    };

    let (ok, stdout, stderr) = learn(&["--steps", "0", "--search", "algorithm=gumbel"]);
    assert!(ok, "{stdout}\n{stderr}");
    let shipped = Network::load(&out, Device::Cpu).unwrap();
    let search = shipped.search_params().expect("settings recorded");
    assert_eq!(search.algorithm, Algorithm::Gumbel);
    assert_eq!(search.c_puct, 2.5, "the other settings carried over");
    let weights = |p: &Path| {
        let sidecar = std::fs::read_to_string(p.with_extension("json")).unwrap();
        let v: serde_json::Value = serde_json::from_str(&sidecar).unwrap();
        v["weights_sha256"].as_str().unwrap().to_string()
    };
    assert_eq!(weights(&out), weights(&path), "no step, no change");

    std::fs::remove_file(&out).unwrap();
    for (bad, says) in [
        ("c_puct=-1", "c_puct"),
        ("algorithm=minimax", "algorithm"),
        ("gumbel", "--search gumbel: expected KEY=VALUE"),
    ] {
        let (ok, _, stderr) = learn(&["--steps", "0", "--search", bad]);
        assert!(!ok && stderr.contains(says), "{bad}: {stderr}");
        assert!(!out.exists(), "{bad}: nothing written");
    }
}

/// The tiny run's stages: a student after each of its 2 generations (the second from the
/// first), each played against `random` at equal time.
const DISTILL: &str = r#"
[distill]
every = 1
window = 2000
phases = [[1000, 0.001], [500, 0.0002]]
warm_phases = [[1500, 0.0005]]
batch_size = 64
[distill.network]
blocks = 1
channels = 8
policy_channels = 2
value_channels = 1
value_hidden = 8
[gauntlet]
opponents = ["random"]
movetime = 5
pairs = 1
"#;

/// `[distill]` as a stage of `bao train`: killed in the middle of a stage and run again, the
/// run writes the students an uninterrupted run writes, byte for byte; a student has the
/// stated size, its lineage names the teacher, the second starts from the first, each is
/// played in the gauntlet, and a finished run does not distil again.
#[test]
fn the_distill_stage_resumes_exactly_after_a_kill() {
    let tmp = tempfile::tempdir().unwrap();
    let cfg = tmp.path().join("run.toml");
    std::fs::write(&cfg, format!("{}{DISTILL}", common::TINY_RUN)).unwrap();
    let train = |run: &Path| common::spawn_train(&cfg, run);
    let reference = tmp.path().join("reference");
    assert!(train(&reference).wait().unwrap().success());
    let student = |run: &Path, g: u32| run.join(format!("students/gen-{g:06}"));
    let expected = std::fs::read(student(&reference, 2).join("student.safetensors")).unwrap();
    let net = Network::load(
        &student(&reference, 2).join("student.safetensors"),
        Device::Cpu,
    )
    .unwrap();
    assert_eq!((net.config().blocks, net.config().channels), (1, 8));
    let meta: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(student(&reference, 2).join("student.json")).unwrap(),
    )
    .unwrap();
    assert!(
        meta.to_string().contains("gen-000002.safetensors"),
        "the lineage names the teacher: {meta}"
    );
    let done: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(student(&reference, 2).join("done.json")).unwrap(),
    )
    .unwrap();
    assert!(
        done["warm_from"].as_str().unwrap().contains("gen-000001"),
        "the second student starts from the first: {done}"
    );
    assert_eq!(done["steps"], 1500, "in warm_phases: {done}");
    assert!(done["cpu_secs"].as_f64().unwrap() > 0.0, "{done}");

    // The gauntlet: a point per student, its CSV and figure, its cost counted apart.
    let csv = std::fs::read_to_string(reference.join("gauntlet.csv")).unwrap();
    let rows: Vec<&str> = csv.lines().collect();
    assert_eq!(rows.len(), 3, "{csv}");
    assert!(
        rows[1].starts_with("1,") && rows[2].starts_with("2,"),
        "{csv}"
    );
    assert!(
        rows[2].contains("students/gen-000002/student.safetensors,random"),
        "{csv}"
    );
    assert!(std::fs::read_to_string(reference.join("gauntlet.svg"))
        .unwrap()
        .contains("<svg"));
    let point: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(reference.join("gauntlet/gen-000002.json")).unwrap(),
    )
    .unwrap();
    let games = point[0]["wins"].as_u64().unwrap()
        + point[0]["losses"].as_u64().unwrap()
        + point[0]["unfinished"].as_u64().unwrap();
    assert_eq!(games, 2, "one opening pair: {point}");
    assert!(point[0]["player_ms"].as_f64().is_some(), "{point}");
    let hours = |row: &str| row.split(',').nth(1).unwrap().parse::<f64>().unwrap();
    assert!(hours(rows[2]) > hours(rows[1]), "{csv}");
    let metrics = std::fs::read_to_string(reference.join("metrics.jsonl")).unwrap();
    let last: serde_json::Value = serde_json::from_str(metrics.lines().last().unwrap()).unwrap();
    assert!(
        last["cpu_secs"].as_f64().unwrap() > 0.0 && last["train_cpu_secs"].as_f64().unwrap() > 0.0,
        "{last}"
    );

    // Killed once the second stage has started (its network.toml is its first write), before
    // it ends.
    let run = tmp.path().join("run");
    let mut child = train(&run);
    let started = student(&run, 2).join("network.toml");
    let done = student(&run, 2).join("done.json");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(600);
    while !started.exists() {
        assert!(
            child.try_wait().unwrap().is_none(),
            "the run ended before its stage began"
        );
        assert!(
            std::time::Instant::now() < deadline,
            "the stage never began"
        );
        std::thread::sleep(std::time::Duration::from_millis(2));
    }
    child.kill().unwrap();
    child.wait().unwrap();
    assert!(
        !done.exists(),
        "the kill came after the stage ended: raise the [distill] steps"
    );
    assert!(train(&run).wait().unwrap().success());
    let model = student(&run, 2).join("student.safetensors");
    assert_eq!(std::fs::read(&model).unwrap(), expected);
    assert!(run.join("gauntlet/gen-000002.json").exists());
    // Done: a rerun leaves the student alone.
    let before = std::fs::metadata(&model).unwrap().modified().unwrap();
    assert!(train(&run).wait().unwrap().success());
    let after = std::fs::metadata(&model).unwrap().modified().unwrap();
    assert_eq!(before, after);
}

/// A `[distill]` stage that cannot run is refused before any work, naming the key and the
/// file: students every 0 generations, a student reading other input features, a gauntlet against a checkpoint that does not exist or with a schedule of its own
/// beside `[distill]`'s.
#[test]
fn a_distill_stage_that_cannot_run_is_refused_before_any_work() {
    let tmp = tempfile::tempdir().unwrap();
    let staged = format!("{}{DISTILL}", common::TINY_RUN);
    for (edit, says) in [
        (staged.replace("every = 1", "every = 0"), "every"),
        (
            staged.replace("movetime = 5", "movetime = 5\nevery = 1"),
            "[gauntlet] every",
        ),
        (
            staged.replace("[\"random\"]", "[\"net:no/such.safetensors\"]"),
            "no/such.safetensors",
        ),
        (
            staged.replace("[[1500, 0.0005]]", "[[1500, 0]]"),
            "warm_phases",
        ),
        (
            staged.replace(
                "value_hidden = 8\n",
                "value_hidden = 8\nmove_features = true\n",
            ),
            "input features",
        ),
        (
            staged.replace(
                "phases = [[1000, 0.001], [500, 0.0002]]",
                "phases = [[0, 0.001]]",
            ),
            "phases",
        ),
        (staged.replace("window = 2000", "windw = 2000"), "windw"),
    ] {
        let cfg = tmp.path().join("bad.toml");
        std::fs::write(&cfg, &edit).unwrap();
        let run = tmp.path().join("bad-run");
        let (ok, _, stderr) = run_bao(&[
            "train",
            "--config",
            cfg.to_str().unwrap(),
            "--run",
            run.to_str().unwrap(),
        ]);
        assert!(!ok && stderr.contains(says), "{says}: {stderr}");
        assert!(stderr.contains("bad.toml"), "names the file: {stderr}");
        assert!(!run.exists(), "{says}: the run directory was written");
    }
}

/// Copies the directory tree `from` to `to`.
fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let path = entry.unwrap().path();
        let target = to.join(path.file_name().unwrap());
        if path.is_dir() {
            copy_tree(&path, &target);
        } else {
            std::fs::copy(&path, &target).unwrap();
        }
    }
}

/// `bao run snapshot`: a run's record, its students, its newest checkpoint with optimizer
/// state and the one that plays its next self-play, without self-play data; a copy of it
/// resumes on another machine (here: another directory) and goes on with the next generation
/// and its student, from the snapshot's checkpoints and students; a second snapshot replaces
/// the first's checkpoints. What is not a run, a run whose student is still being made, or a
/// snapshot inside its run is refused before anything is written.
#[test]
fn a_snapshot_of_a_run_resumes_without_its_self_play_data() {
    let tmp = tempfile::tempdir().unwrap();
    let cfg = tmp.path().join("run.toml");
    // With self-play beside training, generation 3 is played by generation 1's network.
    let pipelined = common::TINY_RUN.replace("[train]\n", "[train]\npipeline = true\n");
    assert_ne!(pipelined, common::TINY_RUN);
    std::fs::write(&cfg, format!("{pipelined}{DISTILL}")).unwrap();
    let run = tmp.path().join("run");
    assert!(common::spawn_train(&cfg, &run).wait().unwrap().success());
    let snap = tmp.path().join("snap");
    let (ok, stdout, stderr) = run_bao(&["run", "snapshot", s(&run), s(&snap)]);
    assert!(ok, "{stderr}");
    assert!(
        stdout.contains("generation 2") && stdout.contains("2 students"),
        "{stdout}"
    );
    assert!(!snap.join("data").exists(), "no self-play data");
    let models: Vec<String> = std::fs::read_dir(snap.join("models"))
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    for f in [
        "gen-000002.safetensors",
        "gen-000002.json",
        "gen-000002.optim.safetensors",
        "gen-000002.optim.json",
        "gen-000001.safetensors",
        "gen-000001.json",
    ] {
        assert!(models.iter().any(|m| m == f), "{f} in {models:?}");
        assert_eq!(
            std::fs::read(snap.join("models").join(f)).unwrap(),
            std::fs::read(run.join("models").join(f)).unwrap(),
            "{f}"
        );
    }
    assert!(
        !models.iter().any(|m| m.starts_with("gen-000000")),
        "only what the run resumes from: {models:?}"
    );
    for g in 1..=2 {
        let student = format!("students/gen-{g:06}/student.safetensors");
        assert_eq!(
            std::fs::read(snap.join(&student)).unwrap(),
            std::fs::read(run.join(&student)).unwrap()
        );
    }
    for f in [
        "state.json",
        "metrics.jsonl",
        "gauntlet.csv",
        "gauntlet/gen-000002.json",
    ] {
        assert!(snap.join(f).exists(), "{f}");
    }

    // Another machine: a copy of the snapshot goes on for a generation and its student.
    let copy = tmp.path().join("copy");
    copy_tree(&snap, &copy);
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_bao"))
        .args(["train", "--config", s(&cfg), "--run", s(&copy)])
        .args(["--set", "train.generations=3"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(
        stderr.contains("resuming") && stderr.contains("refill"),
        "{stderr}"
    );
    let state: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(copy.join("state.json")).unwrap()).unwrap();
    assert_eq!(state["generation"], 3, "{state}");
    let sidecar = std::fs::read_to_string(copy.join("models/gen-000003.json")).unwrap();
    assert!(
        sidecar.contains("gen-000002.safetensors"),
        "from the snapshot's checkpoint: {sidecar}"
    );
    let done: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(copy.join("students/gen-000003/done.json")).unwrap(),
    )
    .unwrap();
    assert!(
        done["warm_from"].as_str().unwrap().contains("gen-000002"),
        "the new student starts from the snapshot's: {done}"
    );

    // Brought up to date: the newer checkpoint replaces the older.
    let (ok, _, stderr) = run_bao(&["run", "snapshot", s(&copy), s(&snap)]);
    assert!(ok, "{stderr}");
    assert!(snap.join("models/gen-000003.optim.safetensors").exists());
    assert!(
        snap.join("models/gen-000002.safetensors").exists(),
        "plays generation 4"
    );
    assert!(!snap.join("models/gen-000001.safetensors").exists());
    assert!(!snap.join("models/gen-000002.optim.safetensors").exists());
    assert!(snap.join("students/gen-000003/done.json").exists());

    // Refused, writing nothing: not a run; a snapshot inside its run.
    let nothing = tmp.path().join("nothing");
    std::fs::create_dir_all(&nothing).unwrap();
    let out_dir = tmp.path().join("out");
    let (ok, _, stderr) = run_bao(&["run", "snapshot", s(&nothing), s(&out_dir)]);
    assert!(!ok && stderr.contains("state.json"), "{stderr}");
    assert!(!out_dir.exists());
    let killed = tmp.path().join("killed");
    copy_tree(&run, &killed);
    std::fs::remove_file(killed.join("students/gen-000002/done.json")).unwrap();
    let (ok, _, stderr) = run_bao(&["run", "snapshot", s(&killed), s(&out_dir)]);
    assert!(!ok && stderr.contains("generation 2's student"), "{stderr}");
    assert!(!out_dir.exists());
    let inside = run.join("snap");
    let (ok, _, stderr) = run_bao(&["run", "snapshot", s(&run), s(&inside)]);
    assert!(!ok && stderr.contains("apart"), "{stderr}");
    assert!(!inside.exists());
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// `bao learn --model` goes on with the optimizer saved beside the checkpoint, of the kind it
/// was saved with (a run's AdamW; `bao learn` alone would start Adam), and refuses optimizer
/// state that is there but cannot be resumed, leaving the checkpoint as it was; with none
/// beside it, it starts a fresh optimizer and says so.
#[test]
fn bao_learn_goes_on_with_the_saved_optimizer_or_refuses_a_broken_one() {
    use bao::neuralnet::OptimizerKind;
    let tmp = tempfile::tempdir().unwrap();
    let (data, _, _) = shards_and_checkpoint(tmp.path(), 100, "unused");
    let model = tmp.path().join("model.safetensors");
    let adamw = OptimizerConfig {
        kind: OptimizerKind::AdamW,
        ..OptimizerConfig::default()
    };
    Learner::new(tiny(2), adamw).unwrap().save(&model).unwrap();
    let optim = model.with_extension("optim.json");
    let learn = || {
        run_bao(&[
            "learn",
            "--data",
            s(&data),
            "--model",
            s(&model),
            "--steps",
            "3",
        ])
    };

    let (ok, _, stderr) = learn();
    assert!(ok, "{stderr}");
    assert!(!stderr.contains("starts fresh"), "{stderr}");
    let saved: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&optim).unwrap()).unwrap();
    assert_eq!(saved["kind"], "adamw", "{saved}");
    assert_eq!(saved["step"], 3, "{saved}");

    let before = std::fs::read(&model).unwrap();
    std::fs::write(&optim, "{ not json").unwrap();
    let (ok, _, stderr) = learn();
    assert!(
        !ok && stderr.contains("optim.json") && stderr.contains("malformed"),
        "{stderr}"
    );
    assert_eq!(std::fs::read(&model).unwrap(), before, "left as it was");

    std::fs::remove_file(&optim).unwrap();
    std::fs::remove_file(model.with_extension("optim.safetensors")).unwrap();
    let (ok, _, stderr) = learn();
    assert!(ok && stderr.contains("starts fresh"), "{stderr}");
}
