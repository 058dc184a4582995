//! Evaluation: alpha-beta finds forced wins, real matches, tournaments and their reports.

mod common;

use bao::eval::sprt::{Sprt, SprtDecision};
use bao::eval::tournament::{self, run_match, GameEnd, MatchOptions, TournamentConfig};
use bao::game::{After, Position, Variant};
use bao::play::players::{self, Limits, PlayerSpec};
use bao::search::alphabeta::{AlphaBeta, WIN};
use bao::search::Clock;

fn spec(s: &str) -> PlayerSpec {
    s.parse().unwrap_or_else(|e| panic!("{e}"))
}

fn wins_at_once(pos: &Position) -> Vec<String> {
    let me = pos.to_move();
    pos.legal_moves()
        .iter()
        .filter(|lm| matches!(lm.after, After::Won(_)))
        .map(|lm| lm.notation(me))
        .collect()
}

/// Whether the side to move can force a win within `plies` of its own plies and the replies
/// between them (brute force, no pruning).
fn forced_win(pos: &Position, plies: u32) -> bool {
    if plies == 0 {
        return false;
    }
    pos.legal_moves().iter().any(|lm| match lm.after {
        After::Won(_) => true,
        After::Position(p) => {
            let replies = p.legal_moves();
            replies.is_empty()
                || plies >= 3
                    && replies.iter().all(|r| match r.after {
                        After::Won(_) => false,
                        After::Position(q) => forced_win(&q, plies - 2),
                    })
        }
    })
}

/// Positions along seeded random games of `variant` where `pick` holds, up to `want` of them.
fn positions_where(
    variant: Variant,
    want: usize,
    pick: impl Fn(&Position) -> bool,
) -> Vec<Position> {
    let mut found = Vec::new();
    let mut state = 7u64;
    let mut next = move |n: usize| {
        state = state
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (state >> 33) as usize % n
    };
    'games: for _game in 0..400 {
        let mut pos = Position::start(variant);
        for _ply in 0..300 {
            let moves = pos.legal_moves();
            if moves.is_empty() {
                continue 'games;
            }
            if pick(&pos) {
                found.push(pos);
                if found.len() == want {
                    return found;
                }
                continue 'games;
            }
            match moves.as_slice()[next(moves.len())].after {
                After::Position(p) => pos = p,
                After::Won(_) => continue 'games,
            }
        }
    }
    panic!("only {} positions found", found.len());
}

#[test]
fn alphabeta_finds_a_win_at_depth_1() {
    // Positions where some moves win at once (R5, front row emptied) and others do not.
    for variant in Variant::ALL {
        let found = positions_where(variant, 5, |p| {
            let w = wins_at_once(p).len();
            w > 0 && w < p.legal_moves().len()
        });
        for pos in found {
            let winning = wins_at_once(&pos);
            let mut ab = AlphaBeta::new(1);
            let r = ab.search(&pos, 1, &Clock::unlimited()).unwrap();
            assert!(
                winning.contains(&r.best.notation(pos.to_move())),
                "{:?} not in {winning:?}\n{pos}",
                r.best
            );
            assert_eq!(r.score, WIN - 1);
            // Through the player interface as well.
            let mut p = players::build(&spec("alphabeta:depth=1"), variant, 0).unwrap();
            let c = p.choose(&pos, &Limits::default()).unwrap();
            assert!(winning.contains(&c.mv.notation(pos.to_move())));
            assert_eq!(c.analysis.value, Some(1.0));
        }
    }
}

#[test]
fn alphabeta_finds_a_forced_win_at_depth_3_that_depth_1_cannot_see() {
    // No win at once, but a move after which every reply allows a win at once.
    for variant in Variant::ALL {
        for pos in positions_where(variant, 3, |p| {
            wins_at_once(p).is_empty() && forced_win(p, 3)
        }) {
            let r = AlphaBeta::new(1)
                .search(&pos, 3, &Clock::unlimited())
                .unwrap();
            assert_eq!(r.score, WIN - 3, "depth 3 sees the win in 3 plies\n{pos}");
            // The chosen move really forces the win.
            let After::Position(p) = r.best.after else {
                panic!("no win at once here")
            };
            let replies = p.legal_moves();
            assert!(
                replies
                    .iter()
                    .all(|x| matches!(x.after, After::Position(q) if !wins_at_once(&q).is_empty())),
                "{pos}"
            );
            assert_eq!(
                r.pv.len(),
                if replies.is_empty() { 1 } else { 3 },
                "the line shows the win"
            );
            // Depth 1 cannot know it.
            let shallow = AlphaBeta::new(1)
                .search(&pos, 1, &Clock::unlimited())
                .unwrap();
            assert!(shallow.score < WIN - 1000);
        }
    }
}

#[test]
fn greedy_beats_random_clearly() {
    let r = run_match(
        Variant::Kujifunza,
        &spec("greedy"),
        &spec("random"),
        &options(60, 11, None),
    )
    .unwrap();
    assert_eq!(r.a_wins + r.b_wins + r.unfinished, 60);
    assert_eq!(r.forfeits, 0);
    let score = r.score.unwrap();
    assert!(score > 0.75, "greedy scored only {score:.2}: {r:?}");
    let (lo, _) = r.elo_ci95.unwrap();
    assert!(
        lo > 0.0,
        "greedy's Elo over random is clearly positive: {r:?}"
    );
}

#[test]
fn alphabeta_beats_greedy() {
    let r = run_match(
        Variant::Kujifunza,
        &spec("alphabeta:depth=3"),
        &spec("greedy"),
        &options(10, 5, None),
    )
    .unwrap();
    assert!(r.score.unwrap() >= 0.7, "{r:?}");
    assert_eq!(r.proofs, None, "no proofs asked for");
}

fn options(games: u32, seed: u64, proofs_ms: Option<u64>) -> MatchOptions {
    MatchOptions {
        games,
        ply_cap: 400,
        seed,
        progress: false,
        proofs: proofs_ms.map(std::time::Duration::from_millis),
    }
}

/// A match with proofs checked reports the first player's proven wins kept and
/// given away (as the training metrics record them with `[eval] proofs_ms`): greedy, winning
/// most games against random, moves from proven wins near their ends.
#[test]
fn a_match_with_proofs_counts_the_first_players_kept_and_dropped_wins() {
    let r = run_match(
        Variant::Kujifunza,
        &spec("greedy"),
        &spec("random"),
        &options(4, 3, Some(20)),
    )
    .unwrap();
    let p = r.proofs.expect("proofs were asked for");
    assert!(p.proven_wins > 0, "{p:?}");
    assert_eq!(p.kept + p.dropped + p.unresolved, p.proven_wins, "{p:?}");
}

#[test]
fn tournament_reports_ratings_json_and_plot() {
    let mut config = TournamentConfig::new(
        Variant::Kujifunza,
        vec![spec("greedy"), spec("random"), spec("alphabeta:depth=1")],
        6,
    );
    config.threads = 2;
    let r = tournament::run_tournament(&config).unwrap();
    assert_eq!(r.pairs.len(), 3);
    assert_eq!(r.games.len(), 18);
    assert_eq!(r.anchor, "random");
    assert_eq!(r.ratings[1].elo, Some(0.0));
    assert!(r.ratings[0].elo.unwrap() > 0.0, "{:?}", r.ratings);
    for p in &r.pairs {
        assert_eq!(p.a_wins + p.b_wins + p.unfinished, 6);
        let (lo, hi) = p.a_win_rate_ci95;
        assert!(lo <= p.a_win_rate.unwrap() && p.a_win_rate.unwrap() <= hi);
    }
    let table = tournament::format_table(&r);
    assert!(
        table.contains("alphabeta:depth=1") && table.contains("Elo anchored at random"),
        "{table}"
    );

    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("results.json");
    tournament::write_json(&r, &json).unwrap();
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(v["ratings"].as_array().unwrap().len(), 3);
    assert_eq!(v["games"].as_array().unwrap().len(), 18);
    assert!(v["pairs"][0]["a_win_rate_ci95"].is_array());
    // Every game's record replays, with legal moves, from the start through its opening to
    // the end the tournament reported, and names its players.
    for g in &r.games {
        let rec = &g.record;
        assert_eq!(rec.moves[..g.opening_moves.len()], g.opening_moves[..]);
        assert_eq!(rec.plies, g.plies);
        let (_, outcome) = rec.replay().unwrap();
        assert_eq!(outcome.map(|o| o.winner), g.end.winner());
        assert_eq!(rec.result.winner(), g.end.winner());
        assert_eq!(rec.meta["south"], r.players[g.south]);
        assert_eq!(rec.meta["north"], r.players[g.north]);
    }
    // `bao replay --game N` steps through one game of such a records file.
    let games = dir.path().join("games.jsonl");
    let records: Vec<_> = r.games.iter().map(|g| g.record.clone()).collect();
    bao::dataio::records::write_records(&games, &records).unwrap();
    let games = games.to_str().expect("a UTF-8 temporary path");
    let replay = |n: &str| common::run_bao(&["replay", "--game", n, games]);
    let (ok, text, err) = replay("3");
    assert!(ok, "{err}");
    assert_eq!(
        text.matches("plays ").count(),
        r.games[2].plies as usize,
        "{text}"
    );
    assert!(text.contains(&r.players[r.games[2].south]), "{text}");
    let (ok, _, err) = replay("19");
    assert!(!ok && err.contains("holds games 1 to 18"), "{err}");
    let svg = tournament::elo_svg(&r).unwrap();
    assert!(
        svg.contains("<svg") && svg.contains("random"),
        "{}",
        &svg[..svg.len().min(400)]
    );
}

#[test]
fn sprt_stops_a_lopsided_match_early() {
    let mut config = TournamentConfig::new(
        Variant::Kujifunza,
        vec![spec("greedy"), spec("random")],
        400,
    );
    config.sprt = Some(Sprt::new(0.0, 100.0).unwrap());
    config.threads = 2;
    let r = tournament::run_tournament(&config).unwrap();
    let s = r.sprt.as_ref().unwrap();
    assert_eq!(s.decision, SprtDecision::H1, "{s:?}");
    assert!(r.games.len() < 100, "stopped after {} games", r.games.len());
}

#[test]
fn an_external_engine_plays_a_full_match() {
    let exe = env!("CARGO_BIN_EXE_bao");
    let ext = spec(&format!(
        "ext:\"{exe} engine greedy --seed 3\":name=ext-greedy"
    ));
    assert_eq!(ext.display_name(), "ext-greedy");
    // One worker, so the engine's own random tie-breaks are reproducible.
    let mut config = TournamentConfig::new(Variant::Kujifunza, vec![ext, spec("random")], 6);
    config.threads = 1;
    let r = tournament::run_tournament(&config).unwrap();
    assert_eq!(r.games.len(), 6);
    for g in &r.games {
        assert!(!matches!(g.end, GameEnd::Forfeit { .. }), "{:?}", g.end);
        assert!(g.plies > config.opening_plies);
    }
    assert_eq!(r.players[0], "ext-greedy");
    assert!(
        r.pairs[0].a_wins >= 3,
        "greedy through the engine beats random: {:?}",
        r.pairs[0]
    );
}

#[test]
fn a_crashing_external_engine_fails_cleanly() {
    let err = players::build(&spec("ext:\"/no/such/engine\""), Variant::Kujifunza, 0)
        .err()
        .unwrap();
    assert!(
        format!("{err:#}").contains("cannot start engine"),
        "{err:#}"
    );
    // An engine that answers nonsense to `variant`.
    // (It may exit before reading, so the error is the answer or the closed pipe.)
    let err = players::build(&spec("ext:\"echo hello\""), Variant::Kujifunza, 0)
        .err()
        .unwrap();
    let msg = format!("{err:#}");
    assert!(
        msg.contains("answered `hello`") || msg.contains("closed its input"),
        "{msg}"
    );
}

/// The Kujifunza measure: with `proofs`, every move from a proven win is counted as kept,
/// dropped or unresolved, per player, and every win given away is listed with its position
/// and move, which a fresh solver confirms. Alpha-beta at depth 6 keeps more of its wins
/// than a random player, which gives most of them away.
#[test]
fn proof_checks_count_kept_and_given_away_wins_that_anyone_can_recheck() {
    use bao::eval::proofs::{ProofChecker, ProofCounts};
    let mut config = TournamentConfig::new(
        Variant::Kujifunza,
        vec![spec("alphabeta:depth=6"), spec("random")],
        8,
    );
    config.threads = 2;
    config.proofs = Some(std::time::Duration::from_millis(30));
    let r = tournament::run_tournament(&config).unwrap();
    assert_eq!(r.proofs.len(), 2);
    for p in &r.proofs {
        let c = p.counts;
        assert_eq!(c.kept + c.dropped + c.unresolved, c.proven_wins, "{p:?}");
    }
    let (ab, random) = (&r.proofs[0], &r.proofs[1]);
    assert!(random.counts.dropped > 0, "{random:?}");
    assert!(ab.kept_share.unwrap_or(1.0) > random.kept_share.unwrap_or(0.0));
    let text = tournament::format_table(&r);
    assert!(text.contains("proven wins"), "{text}");
    // Every listed give-away is confirmed by another solver with more time.
    let mut recheck = ProofChecker::new(std::time::Duration::from_millis(200));
    let mut listed = 0;
    for d in r.games.iter().flat_map(|g| &g.dropped_wins) {
        let pos = Position::from_state_json(&d.position).unwrap();
        let lm = pos.parse_move(&d.mv).unwrap();
        let mut counts = ProofCounts::default();
        assert!(recheck.check(&pos, &lm, &mut counts).is_some(), "{d:?}");
        listed += 1;
    }
    let dropped: u32 = r.proofs.iter().map(|p| p.counts.dropped).sum();
    assert_eq!(listed, dropped as usize);
    let json = serde_json::to_value(&r).unwrap();
    assert!(
        json["proofs"][1]["dropped"].as_u64().unwrap() > 0,
        "{}",
        json["proofs"]
    );
}

/// `net:...:precision=bf16`: the network player judges in bf16 and plays whole games (the
/// spec's name keeps the option, so tables tell the two apart).
#[test]
fn a_bf16_network_player_plays_a_match() {
    let bf16 = spec("net:models/kiswahili.safetensors:sims=16:precision=bf16");
    assert!(bf16.to_string().ends_with(":precision=bf16"), "{bf16}");
    let mut config = TournamentConfig::new(Variant::Kiswahili, vec![bf16, spec("random")], 2);
    config.threads = 1;
    let r = tournament::run_tournament(&config).unwrap();
    assert_eq!(r.games.len(), 2);
    for g in &r.games {
        assert!(!matches!(g.end, GameEnd::Forfeit { .. }), "{:?}", g.end);
        assert!(g.plies > config.opening_plies, "{} plies", g.plies);
    }
}

/// An external engine that never answers (not even the handshake) forfeits each game with the
/// reason in the results; its process is ended and the tournament goes on to its end.
#[test]
fn an_engine_that_never_answers_forfeits_and_the_tournament_ends() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let started = std::time::Instant::now();
    let bound = std::time::Duration::from_secs(60);
    let (ok, text, err) = common::run_bao_within(
        &[
            "eval",
            "--variant",
            "kujifunza",
            "--games",
            "2",
            "--threads",
            "1",
            "--players",
            "random,ext:\"sleep 100\":timeout=1000",
            "--out",
            out.to_str().unwrap(),
        ],
        bound,
    )
    .unwrap_or_else(|| panic!("bao eval still waits after {bound:?}"));
    assert!(ok, "{text}\n{err}");
    assert!(started.elapsed() < bound);
    let results: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("results.json")).unwrap()).unwrap();
    let games = results["games"].as_array().unwrap();
    assert_eq!(games.len(), 2, "{results}");
    for g in games {
        let end = &g["end"];
        assert_eq!(end["kind"], "forfeit", "{g}");
        let reason = end["reason"].as_str().unwrap();
        assert!(reason.contains("did not answer"), "{reason}");
        let ext_side = if g["south"] == 1 { "S" } else { "N" };
        assert_eq!(end["loser"], ext_side, "{g}");
    }
    assert_eq!(results["pairs"][0]["forfeits"], 2, "{results}");
}

/// An engine that answers the handshake but never a `go` forfeits when its move time is up
/// (the default derived from the movetime); the next game starts it afresh, and the
/// tournament ends.
#[test]
fn an_engine_that_never_moves_forfeits_each_game_in_bounded_time() {
    let silent_go =
        "ext:\"sh -c 'while read l; do case $l in go*) ;; quit) exit ;; *) echo ok ;; esac; done'\":ms=200";
    let mut config =
        TournamentConfig::new(Variant::Kujifunza, vec![spec("random"), spec(silent_go)], 2);
    config.threads = 1;
    let started = std::time::Instant::now();
    let r = tournament::run_tournament(&config).unwrap();
    assert!(
        started.elapsed() < std::time::Duration::from_secs(60),
        "took {:?}",
        started.elapsed()
    );
    assert_eq!(r.games.len(), 2);
    for g in &r.games {
        match &g.end {
            GameEnd::Forfeit { reason, .. } => {
                assert!(reason.contains("did not answer `go"), "{reason}")
            }
            other => panic!("{other:?}"),
        }
        assert_eq!(g.winner(), Some(0));
    }
}

/// The timeout option is checked like every other.
#[test]
fn an_external_engines_timeout_is_checked() {
    common::assert_spec_refused("ext:\"bao engine greedy\":timeout=0", "timeout");
    common::assert_spec_refused("ext:\"bao engine greedy\":timeout=x", "timeout");
    assert_eq!(
        spec("ext:\"bao engine greedy\":timeout=1500").to_string(),
        "ext:\"bao engine greedy\":timeout=1500"
    );
}

/// `--avoid-openings FILE`: the tournament plays none of the file's openings (the seed's stream
/// is read past them), and a file line that is no opening is refused, naming the line, before
/// any game.
#[test]
fn avoided_openings_are_not_played_and_bad_lines_are_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let eval = |extra: &[&str], out: &str| {
        let out = tmp.path().join(out);
        let mut args = vec![
            "eval",
            "--variant",
            "kujifunza",
            "--players",
            "random,greedy",
            "--games",
            "8",
            "--seed",
            "3",
            "--out",
            out.to_str().unwrap(),
        ];
        args.extend_from_slice(extra);
        let (ok, stdout, stderr) = common::run_bao(&args);
        let games: Vec<String> = if ok {
            let json: serde_json::Value =
                serde_json::from_str(&std::fs::read_to_string(out.join("results.json")).unwrap())
                    .unwrap();
            json["games"]
                .as_array()
                .unwrap()
                .iter()
                .map(|g| {
                    g["opening_moves"]
                        .as_array()
                        .unwrap()
                        .iter()
                        .map(|m| m.as_str().unwrap())
                        .collect::<Vec<_>>()
                        .join(" ")
                })
                .collect()
        } else {
            Vec::new()
        };
        (ok, games, format!("{stdout}{stderr}"))
    };
    let (ok, plain, err) = eval(&[], "plain");
    assert!(ok, "{err}");
    // Avoid two of the plain run's openings.
    let mut distinct = plain.clone();
    distinct.sort();
    distinct.dedup();
    assert!(distinct.len() >= 2, "{plain:?}");
    let first: Vec<&String> = distinct.iter().take(2).collect();
    let file = tmp.path().join("avoid.txt");
    std::fs::write(&file, format!("{}\n\n{}\n", first[0], first[1])).unwrap();
    let (ok, avoiding, err) = eval(&["--avoid-openings", file.to_str().unwrap()], "avoiding");
    assert!(ok, "{err}");
    assert_eq!(avoiding.len(), 8);
    for o in &avoiding {
        assert!(!first.contains(&o), "{o} was to be avoided");
    }
    for (text, says) in [
        ("A1R a5L A1R", "line 1: 3 moves"),
        ("A1R a5L A1R zz9", "line 1: `zz9`"),
        ("A1R\u{1b}[2J a5L A1R a4R", "line 1"),
    ] {
        std::fs::write(&file, text).unwrap();
        let (ok, _, err) = eval(&["--avoid-openings", file.to_str().unwrap()], "bad");
        assert!(!ok && err.contains(says), "{text}: {err}");
        assert!(!err.contains('\u{1b}'), "control bytes are escaped: {err}");
        assert!(!tmp.path().join("bad").exists(), "{text}: nothing written");
    }
    let (ok, _, err) = eval(&["--avoid-openings", "no/such/file"], "bad");
    assert!(!ok && err.contains("no/such/file"), "{err}");
}
