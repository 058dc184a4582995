//! TOML configs: typed, and unknown keys are refused with the key and the file named.

use bao::neuralnet::NetConfig;

#[test]
fn unknown_key_names_key_and_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("net.toml");
    std::fs::write(&path, "blocks = 2\nchannels = 16\nchanels = 3\n").unwrap();
    let err = format!(
        "{:#}",
        bao::config::load_toml::<NetConfig>(&path).unwrap_err()
    );
    assert!(err.contains("chanels"), "{err}");
    assert!(err.contains("net.toml"), "{err}");
}

#[test]
fn shipped_network_configs_parse() {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/configs/network");
    let mut n = 0;
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        let cfg: NetConfig = bao::config::load_toml(&path).unwrap_or_else(|e| panic!("{e:#}"));
        cfg.validate().unwrap();
        n += 1;
    }
    assert!(n > 0);
}

#[test]
fn missing_file_is_named() {
    let err = format!(
        "{:#}",
        bao::config::load_toml::<NetConfig>(std::path::Path::new("no/such.toml")).unwrap_err()
    );
    assert!(err.contains("no/such.toml"), "{err}");
}

/// The config names with extension `toml` in `dir`, each parsed and validated as a run config.
fn load_run_configs(dir: &str) -> Vec<String> {
    let mut names = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "toml") {
            bao::training::runconfig::RunConfig::load(&path).unwrap_or_else(|e| panic!("{e:#}"));
            names.push(path.file_name().unwrap().to_string_lossy().into_owned());
        }
    }
    names.sort();
    names
}

/// Every run config a user runs (configs/*.toml) parses and validates, baselines included, so
/// a typo in one fails here and not an hour into a run; `configs/` holds just those.
#[test]
fn shipped_run_configs_load() {
    let names = load_run_configs(concat!(env!("CARGO_MANIFEST_DIR"), "/configs"));
    assert_eq!(
        names,
        ["kiswahili.toml", "kujifunza-quick.toml", "kujifunza.toml"]
    );
}

/// The two variant configs are the whole recipe from nothing to the played player: each ends
/// in a distilled student reading its teacher's input features; Kiswahili's is rated at equal
/// time on the way, against a reference checkpoint that is in the tree.
#[test]
fn variant_configs_train_their_player_from_nothing() {
    for (name, gauntlet) in [("kiswahili", true), ("kujifunza", false)] {
        let path = format!("{}/configs/{name}.toml", env!("CARGO_MANIFEST_DIR"));
        let c = bao::training::runconfig::RunConfig::load(std::path::Path::new(&path)).unwrap();
        let d = c.distill.as_ref().expect("a [distill] stage");
        assert_eq!(d.network.encoding(), c.network.encoding(), "{name}");
        assert!(
            d.network.blocks * d.network.channels < c.network.blocks * c.network.channels,
            "{name}: the student is the smaller network"
        );
        assert_eq!(c.gauntlet.is_some(), gauntlet, "{name}");
        if let Some(g) = &c.gauntlet {
            // Tests run in the package root, where the config's relative paths point.
            g.check_opponents(c.variant).unwrap();
        }
    }
}

/// `--set` re-serializes the config to apply its overrides; nothing else may change on the
/// way. Raising the generations of the Kiswahili run once turned its gauntlet's `alphabeta`
/// (no limit: the gauntlet's 200 ms) into `alphabeta:depth=10`, its default fixed depth.
#[test]
fn set_overrides_change_only_their_keys() {
    use bao::training::runconfig::RunConfig;
    for name in ["kiswahili", "kujifunza", "kujifunza-quick"] {
        let path = format!("{}/configs/{name}.toml", env!("CARGO_MANIFEST_DIR"));
        let path = std::path::Path::new(&path);
        let plain = RunConfig::load(path).unwrap();
        let mut set = RunConfig::load_with_overrides(path, &["train.generations=987".into()])
            .unwrap_or_else(|e| panic!("{name}: {e:#}"));
        assert_eq!(set.train.generations, 987, "{name}");
        set.train.generations = plain.train.generations;
        assert_eq!(
            set, plain,
            "{name}: --set train.generations changed other keys"
        );
    }
}

/// Every experiment config (configs/experiments/*.toml) still parses and validates, and opens
/// with a comment saying what it tested.
#[test]
fn experiment_run_configs_load() {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/configs/experiments");
    let names = load_run_configs(dir);
    assert_eq!(names.len(), 20, "{names:?}");
    for name in names {
        let text = std::fs::read_to_string(format!("{dir}/{name}")).unwrap();
        assert!(text.starts_with("# "), "{name} opens without a comment");
    }
}

/// Loads `configs/kujifunza-quick.toml` with `edit` applied to its text (which must change it,
/// so a test cannot pass on an edit that no longer finds its target).
fn load_quick_config_edited(
    edit: impl Fn(&str) -> String,
) -> anyhow::Result<bao::training::runconfig::RunConfig> {
    let base = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/configs/kujifunza-quick.toml"
    ))
    .unwrap();
    let text = edit(&base);
    assert_ne!(text, base, "the edit changed nothing");
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("edited.toml");
    std::fs::write(&path, text).unwrap();
    bao::training::runconfig::RunConfig::load(&path)
}

/// Bad settings are refused by name: `[eval] proofs_ms = 0` would check nothing,
/// `[selfplay] solver_depth` beyond alpha-beta's limit cannot be searched, an opening range
/// that runs backwards holds no count, and solver labels need both their directory and their
/// share of the minibatch (a whole minibatch of labels would train on no self-play at all).
#[test]
fn bad_solver_and_opening_settings_are_refused() {
    for (from, to, expect) in [
        ("[eval]", "[eval]\nproofs_ms = 0", "proofs_ms"),
        (
            "[selfplay]",
            "[selfplay]\nsolver_depth = 65",
            "solver_depth",
        ),
        (
            "opening_plies = 2",
            "opening_plies = [4, 2]",
            "opening_plies = [4, 2]: the range must not run backwards",
        ),
        (
            "[train]",
            "[train]\nlabels = \"l\"",
            "labels and labels_fraction go together",
        ),
        (
            "[train]",
            "[train]\nlabels_fraction = 0.2",
            "labels and labels_fraction go together",
        ),
        (
            "[train]",
            "[train]\nlabels = \"l\"\nlabels_fraction = 1.0",
            "labels_fraction must be in [0, 1)",
        ),
    ] {
        let err = format!(
            "{:#}",
            load_quick_config_edited(|t| t.replace(from, to)).unwrap_err()
        );
        assert!(err.contains(expect), "{err}");
    }
}

/// `[selfplay] opening_plies` takes a count or a range, and writes back the form it was given.
#[test]
fn opening_plies_take_a_count_or_a_range() {
    use bao::training::selfplay::OpeningPlies;
    for (form, expect) in [
        ("3", OpeningPlies::exactly(3)),
        ("[0, 4]", OpeningPlies::range(0, 4).unwrap()),
    ] {
        let cfg = load_quick_config_edited(|t| {
            t.replace("opening_plies = 2", &format!("opening_plies = {form}"))
        })
        .unwrap();
        assert_eq!(cfg.selfplay.opening_plies, expect);
        let text = toml::to_string(&cfg.selfplay).unwrap();
        assert!(text.contains(&format!("opening_plies = {form}")), "{text}");
    }
}

/// Every numeric key that sizes work or memory is bounded, and the error names the key, the
/// file and the key's line: `[train] batch_size = 1000000000000` used to be accepted and end a
/// run in an out-of-memory abort after its self-play, `generations = 0` in an empty run.
#[test]
fn numeric_keys_are_bounded_naming_key_file_and_line() {
    for (from, to, key) in [
        (
            "batch_size = 256",
            "batch_size = 1000000000000",
            "batch_size",
        ),
        ("generations = 12", "generations = 0", "generations"),
        (
            "games_per_generation = 256",
            "games_per_generation = 100000000000",
            "games_per_generation",
        ),
        ("window_min = 8000", "window_min = 0", "window_min"),
        (
            "window_max = 40000",
            "window_max = 10000000000",
            "window_max",
        ),
        (
            "window_growth = 4000",
            "window_growth = 1000000000000",
            "window_growth",
        ),
        (
            "max_steps_per_generation = 200",
            "max_steps_per_generation = 1000000000000",
            "max_steps_per_generation",
        ),
        ("reuse = 4.0", "reuse = 1e30", "reuse"),
        (
            "games_in_flight = 128",
            "games_in_flight = 1000000000",
            "games_in_flight",
        ),
        ("sims = 48\ncheap", "sims = 1000000000\ncheap", "sims"),
        ("cheap_sims = 12", "cheap_sims = 1000000000", "cheap_sims"),
        ("max_plies = 200", "max_plies = 1000000000", "max_plies"),
        ("games = 100", "games = 0", "games"),
        ("games = 100", "games = 1000000000", "games"),
        ("ply_cap = 300", "ply_cap = 1000000000", "ply_cap"),
        ("channels = 32", "channels = 100000", "channels"),
        ("blocks = 2", "blocks = 1000", "blocks"),
        ("value_hidden = 64", "value_hidden = 100000", "value_hidden"),
    ] {
        let base = std::fs::read_to_string(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/configs/kujifunza-quick.toml"
        ))
        .unwrap();
        let text = base.replacen(from, to, 1);
        let first = to.lines().next().unwrap();
        let line = 1 + text
            .lines()
            .position(|l| l == first)
            .expect("the edited line");
        let err = format!(
            "{:#}",
            load_quick_config_edited(|t| t.replacen(from, to, 1))
                .err()
                .unwrap_or_else(|| panic!("`{first}` was accepted"))
        );
        assert!(err.contains(&format!("`{key}`")), "{first}: {err}");
        assert!(
            err.contains(&format!("edited.toml:{line}")),
            "{first}: wanted edited.toml:{line} in {err}"
        );
        assert!(err.len() < 400, "{err}");
    }
}
