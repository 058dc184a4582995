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

/// Every run config the project ships (configs/*.toml) parses and validates, baselines included,
/// so a typo in one fails here and not an hour into a run.
#[test]
fn shipped_run_configs_load() {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/configs");
    let mut names = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "toml") {
            bao::program::runconfig::RunConfig::load(&path).unwrap_or_else(|e| panic!("{e:#}"));
            names.push(path.file_name().unwrap().to_string_lossy().into_owned());
        }
    }
    names.sort();
    assert_eq!(
        names,
        [
            "kiswahili-campaign.toml",
            "kiswahili-continue.toml",
            "kiswahili-moves.toml",
            "kiswahili.toml",
            "kujifunza-aux.toml",
            "kujifunza-baseline.toml",
            "kujifunza-campaign.toml",
            "kujifunza-moves-4x48.toml",
            "kujifunza-moves.toml",
            "kujifunza-quick.toml",
            "kujifunza-recipe.toml",
            "kujifunza-solver.toml",
            "kujifunza.toml"
        ]
    );
}

/// Bad solver settings are refused by name: `[eval] proofs_ms = 0` would check nothing, and
/// `[selfplay] solver_depth` beyond alpha-beta's limit cannot be searched.
#[test]
fn bad_solver_settings_are_refused() {
    let base = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/configs/kujifunza-quick.toml"
    ))
    .unwrap();
    let dir = tempfile::tempdir().unwrap();
    for (text, expect) in [
        (base.replace("[eval]", "[eval]\nproofs_ms = 0"), "proofs_ms"),
        (
            base.replace("[selfplay]", "[selfplay]\nsolver_depth = 65"),
            "solver_depth",
        ),
    ] {
        let path = dir.path().join("bad.toml");
        std::fs::write(&path, text).unwrap();
        let err = format!(
            "{:#}",
            bao::program::runconfig::RunConfig::load(&path).unwrap_err()
        );
        assert!(err.contains(expect), "{err}");
    }
}
