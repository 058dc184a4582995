//! The JSON API of `bao serve`, through the real router: legal and illegal moves, bad JSON,
//! unknown games, caps, undo, engine moves, records, and that games never touch each other.

mod common;

use std::time::{Duration, Instant};

use axum::body::Body;
use axum::http::{Request, StatusCode};
use axum::Router;
use http_body_util::BodyExt;
use serde_json::{json, Value};
use tower::ServiceExt;

use bao::game::{After, Position, Variant};
use bao::play::game::PlayRecord;
use bao::play::serve::guard::Access;
use bao::play::serve::{api, ServeConfig, Server};

struct Api {
    app: Router,
    rt: tokio::runtime::Runtime,
}

impl Api {
    fn new(opponents: &[&str], max_games: usize, engine_ms: u64) -> Api {
        Api::with_read_timeout(opponents, max_games, engine_ms, Duration::from_secs(30))
    }

    fn with_read_timeout(
        opponents: &[&str],
        max_games: usize,
        engine_ms: u64,
        read_timeout: Duration,
    ) -> Api {
        let config = ServeConfig {
            opponents: opponents.iter().map(|s| s.parse().unwrap()).collect(),
            max_games,
            idle: Duration::from_secs(3600),
            engine_time: Duration::from_millis(engine_ms),
            engine_threads: 1,
            access: Access::default(),
            read_timeout,
        };
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .unwrap();
        Api {
            app: api::router(Server::new(&config).unwrap()),
            rt,
        }
    }

    fn raw(&self, method: &str, uri: &str, body: &str) -> (StatusCode, Vec<u8>, Option<String>) {
        self.with_headers(method, uri, body, &[("content-type", "application/json")])
    }

    /// A request with exactly these headers (no others).
    fn with_headers(
        &self,
        method: &str,
        uri: &str,
        body: &str,
        headers: &[(&str, &str)],
    ) -> (StatusCode, Vec<u8>, Option<String>) {
        let mut req = Request::builder().method(method).uri(uri);
        for (name, value) in headers {
            req = req.header(*name, *value);
        }
        let req = req.body(Body::from(body.to_string())).unwrap();
        self.rt.block_on(async {
            let res = self.app.clone().oneshot(req).await.unwrap();
            let status = res.status();
            let disposition = res
                .headers()
                .get("content-disposition")
                .map(|v| v.to_str().unwrap().to_string());
            let bytes = res.into_body().collect().await.unwrap().to_bytes().to_vec();
            (status, bytes, disposition)
        })
    }

    fn call(&self, method: &str, uri: &str, body: &str) -> (StatusCode, Value) {
        let (status, bytes, _) = self.raw(method, uri, body);
        let value = if bytes.is_empty() {
            Value::Null
        } else {
            serde_json::from_slice(&bytes)
                .unwrap_or_else(|e| panic!("{uri}: {e}: {}", String::from_utf8_lossy(&bytes)))
        };
        (status, value)
    }

    /// A call that must succeed; returns its JSON.
    fn ok(&self, method: &str, uri: &str, body: Value) -> Value {
        let (status, v) = self.call(method, uri, &body.to_string());
        assert!(status.is_success(), "{method} {uri} {body}: {status} {v}");
        v
    }

    /// A call that must fail with `status`; returns its error message.
    fn fails(&self, method: &str, uri: &str, body: &str, status: StatusCode) -> String {
        let (got, v) = self.call(method, uri, body);
        assert_eq!(got, status, "{method} {uri} {body}: {v}");
        v["error"]
            .as_str()
            .unwrap_or_else(|| panic!("no error message in {v}"))
            .to_string()
    }

    fn new_game(&self, body: Value) -> (String, Value) {
        let v = self.ok("POST", "/api/games", body);
        (v["id"].as_str().unwrap().to_string(), v)
    }
}

fn notations(v: &Value) -> Vec<String> {
    v["legal"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["notation"].as_str().unwrap().to_string())
        .collect()
}

fn moves(v: &Value) -> Vec<String> {
    v["moves"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["notation"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn legal_and_illegal_moves_and_the_engines_answer() {
    let api = Api::new(&["greedy", "random:seed=3"], 8, 1000);
    let info = api.ok("GET", "/api/info", json!(null));
    assert_eq!(
        info["engines"]["kiswahili"],
        json!(["greedy", "random:seed=3"])
    );
    assert_eq!(info["max_games"], 8);

    let (id, g) = api.new_game(json!({"variant": "kiswahili"}));
    assert_eq!(
        (
            g["to_move"].as_str(),
            g["engine"].as_str(),
            g["engine_side"].as_str()
        ),
        (Some("S"), Some("greedy"), Some("N"))
    );
    assert_eq!(g["players"], json!({"S": "human", "N": "greedy"}));
    assert_eq!(g["board"]["S"]["front"], json!([0, 0, 0, 0, 6, 2, 2, 0]));
    assert_eq!(g["board"]["S"]["hand"], 22);
    let legal = notations(&g);
    assert_eq!(legal, Position::start(Variant::Kiswahili).legal_notations());
    assert_eq!(
        api.ok("GET", &format!("/api/games/{id}/moves"), json!(null))
            .as_array()
            .unwrap()
            .len(),
        legal.len()
    );

    // Illegal, malformed and wrong-side moves are refused with the reason; nothing changes.
    let e = api.fails(
        "POST",
        &format!("/api/games/{id}/moves"),
        r#"{"move":"A1L"}"#,
        StatusCode::UNPROCESSABLE_ENTITY,
    );
    assert!(e.contains("illegal move `A1L`") && e.contains("A7L"), "{e}");
    let e = api.fails(
        "POST",
        &format!("/api/games/{id}/moves"),
        r#"{"move":"hello"}"#,
        StatusCode::UNPROCESSABLE_ENTITY,
    );
    assert!(e.contains("malformed"), "{e}");
    let e = api.fails(
        "POST",
        &format!("/api/games/{id}/moves"),
        r#"{"move":"a5R"}"#,
        StatusCode::UNPROCESSABLE_ENTITY,
    );
    assert!(e.contains("S is to move"), "{e}");
    assert_eq!(
        api.ok("GET", &format!("/api/games/{id}"), json!(null))["version"],
        0
    );

    // A legal move: the board changes and the move is told step by step.
    let g = api.ok(
        "POST",
        &format!("/api/games/{id}/moves"),
        json!({"move": "A7L"}),
    );
    assert_eq!(moves(&g), ["A7L"]);
    assert_eq!(g["board"]["S"]["front"], json!([0, 0, 0, 1, 7, 3, 0, 0]));
    assert_eq!(g["to_move"], "N");
    let last = &g["last"];
    assert_eq!(
        (last["notation"].as_str(), last["by"].as_str()),
        (Some("A7L"), Some("S"))
    );
    assert_eq!(
        last["before"]["S"]["front"],
        json!([0, 0, 0, 0, 6, 2, 2, 0])
    );
    let kinds: Vec<&str> = last["steps"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["kind"].as_str().unwrap())
        .collect();
    assert_eq!(kinds, ["hand", "lap", "end"]);
    assert_eq!(last["steps"][1]["sown"], json!(["A6", "A5", "A4"]));
    assert_eq!(last["steps"][1]["from"], "A7");

    // Now it is the engine's turn: a person's move is refused, the engine answers legally.
    let e = api.fails(
        "POST",
        &format!("/api/games/{id}/moves"),
        r#"{"move":"a5R"}"#,
        StatusCode::CONFLICT,
    );
    assert!(e.contains("engine's turn"), "{e}");
    let before =
        Position::from_state_json(&serde_json::from_value(g["position"].clone()).unwrap()).unwrap();
    let r = api.ok(
        "POST",
        &format!("/api/games/{id}/engine"),
        json!({"play": true}),
    );
    let reply = r["move"].as_str().unwrap();
    assert!(
        before.legal_notations().iter().any(|m| m == reply),
        "{reply}"
    );
    assert_eq!(moves(&r["game"]), ["A7L", reply]);
    assert_eq!(r["game"]["last"]["engine"]["engine"], "greedy");
    assert_eq!(r["game"]["last"]["engine"]["side"], "N");
    assert_eq!(r["game"]["to_move"], "S");

    // A hint reports a move without playing it; another offered engine can be asked by name.
    let h = api.ok(
        "POST",
        &format!("/api/games/{id}/engine"),
        json!({"play": false, "engine": "random:seed=3"}),
    );
    assert_eq!(moves(&h["game"]).len(), 2);
    assert_eq!(h["analysis"]["engine"], "random:seed=3");
    let e = api.fails(
        "POST",
        &format!("/api/games/{id}/engine"),
        r#"{"engine":"ext:\"rm -rf /\""}"#,
        StatusCode::BAD_REQUEST,
    );
    assert!(e.contains("no engine") && e.contains("greedy"), "{e}");

    // Undo takes back the person's move and the engine's reply; at the start there is nothing.
    let u = api.ok("POST", &format!("/api/games/{id}/undo"), json!(null));
    assert_eq!(moves(&u).len(), 0);
    assert_eq!(u["board"]["S"]["front"], json!([0, 0, 0, 0, 6, 2, 2, 0]));
    api.fails(
        "POST",
        &format!("/api/games/{id}/undo"),
        "",
        StatusCode::CONFLICT,
    );
}

#[test]
fn bad_json_and_unknown_games_get_4xx_with_a_message() {
    let api = Api::new(&["greedy"], 8, 1000);
    let (id, _) = api.new_game(json!({"variant": "kujifunza"}));
    let play = format!("/api/games/{id}/moves");
    for body in [
        "{not json",
        "[1,2]",
        r#"{"move": 7}"#,
        r#"{"mv":"A1L"}"#,
        r#"{"move":"A2L","extra":1}"#,
        "\u{0}",
    ] {
        let e = api.fails("POST", &play, body, StatusCode::BAD_REQUEST);
        assert!(e.starts_with("bad JSON body"), "{body}: {e}");
    }
    for body in [
        r#"{"variant":"chess"}"#,
        r#"{"opponent":"alphabeta"}"#,
        r#"{"engine_side":"E"}"#,
        r#"{"opponent":"human","engine_side":"N"}"#,
    ] {
        let e = api.fails("POST", "/api/games", body, StatusCode::BAD_REQUEST);
        assert!(!e.is_empty(), "{body}");
    }
    // A start state is checked as R13 demands.
    let mut bad = Position::start(Variant::Kujifunza).to_state_json();
    bad.south.front[0] = 3;
    let e = api.fails(
        "POST",
        "/api/games",
        &json!({"variant": "kujifunza", "start": bad}).to_string(),
        StatusCode::BAD_REQUEST,
    );
    assert!(e.contains("65 seeds"), "{e}");
    let e = api.fails("POST", "/api/games", &json!({"variant": "kiswahili", "start": Position::start(Variant::Kujifunza).to_state_json()}).to_string(), StatusCode::BAD_REQUEST);
    assert!(e.contains("kujifunza state"), "{e}");
    // Too large a body is refused before it is read whole.
    let (status, _, _) = api.raw(
        "POST",
        &play,
        &format!(r#"{{"move":"{}"}}"#, "x".repeat(100_000)),
    );
    assert_eq!(status, StatusCode::PAYLOAD_TOO_LARGE);

    for (method, uri) in [
        ("GET", "/api/games/nope".to_string()),
        ("GET", "/api/games/nope/moves".to_string()),
        ("POST", "/api/games/nope/moves".to_string()),
        ("POST", "/api/games/nope/engine".to_string()),
        ("POST", "/api/games/nope/undo".to_string()),
        ("GET", "/api/games/nope/record".to_string()),
        ("DELETE", "/api/games/nope".to_string()),
        ("GET", format!("/api/games/{}", "%C3%A9".repeat(300))),
    ] {
        let body = if method == "POST" && uri.ends_with("/moves") {
            r#"{"move":"A2L"}"#
        } else {
            ""
        };
        let e = api.fails(method, &uri, body, StatusCode::NOT_FOUND);
        assert!(e.contains("no game"), "{uri}: {e}");
        assert!(e.len() < 200, "the message does not echo huge ids: {e}");
    }
    let e = api.fails("GET", "/api/nothing", "", StatusCode::NOT_FOUND);
    assert!(e.contains("no such page"), "{e}");
    let e = api.fails(
        "PUT",
        &format!("/api/games/{id}/moves"),
        "",
        StatusCode::METHOD_NOT_ALLOWED,
    );
    assert!(e.contains("method"), "{e}");
    let e = api.fails(
        "GET",
        &format!("/api/games/{id}/steps/1"),
        "",
        StatusCode::NOT_FOUND,
    );
    assert!(e.contains("plies 1..=0"), "{e}");
    api.fails(
        "GET",
        &format!("/api/games/{id}/steps/x"),
        "",
        StatusCode::NOT_FOUND,
    );
    // The game itself is untouched by all of this, and still works.
    let g = api.ok("GET", &format!("/api/games/{id}"), json!(null));
    assert_eq!((g["version"].as_u64(), moves(&g).len()), (Some(0), 0));
    api.ok("POST", &play, json!({"move": notations(&g)[0]}));
    // Closing a game makes it unknown.
    let (status, _) = api.call("DELETE", &format!("/api/games/{id}"), "");
    assert_eq!(status, StatusCode::NO_CONTENT);
    api.fails(
        "GET",
        &format!("/api/games/{id}"),
        "",
        StatusCode::NOT_FOUND,
    );
}

#[test]
fn games_are_separate_capped_and_recorded() {
    let api = Api::new(&["greedy"], 3, 1000);
    let (a, _) = api.new_game(json!({"variant": "kujifunza", "opponent": "human"}));
    let (b, gb) = api.new_game(json!({"variant": "kujifunza", "opponent": "human"}));
    assert_ne!(a, b);
    assert_eq!(a.len(), 32, "ids are 128 random bits");
    // Two people: both sides are played through the API, and only game `a` changes.
    let mut pos = Position::start(Variant::Kujifunza);
    let mut played = Vec::new();
    for ply in 0..6 {
        let legal = pos.legal_moves();
        let lm = legal.as_slice()[(ply * 7) % legal.len()];
        let text = lm.notation(pos.to_move());
        let g = api.ok(
            "POST",
            &format!("/api/games/{a}/moves"),
            json!({"move": text}),
        );
        played.push(text);
        assert_eq!(moves(&g), played);
        match lm.after {
            After::Position(p) => pos = p,
            After::Won(_) => break,
        }
        assert_eq!(
            g["position"],
            serde_json::to_value(pos.to_state_json()).unwrap()
        );
    }
    let still = api.ok("GET", &format!("/api/games/{b}"), json!(null));
    assert_eq!(still["version"], gb["version"]);
    assert_eq!(still["board"], gb["board"]);

    // The record is what `bao play` saves, and replays to the same game.
    let (status, bytes, disposition) = api.raw("GET", &format!("/api/games/{a}/record"), "");
    assert_eq!(status, StatusCode::OK);
    assert!(disposition
        .unwrap()
        .starts_with("attachment; filename=\"bao-kujifunza-"));
    let record: PlayRecord = serde_json::from_slice(&bytes).unwrap();
    assert_eq!(record.moves, played);
    assert_eq!(record.players, ["human", "human"]);
    let (_, replayed) = record.replay().unwrap();
    assert_eq!(replayed.moves().len(), played.len());

    // Undo between two people takes back one move.
    assert_eq!(
        moves(&api.ok("POST", &format!("/api/games/{a}/undo"), json!(null))).len(),
        played.len() - 1
    );
    // Any earlier move can be stepped through.
    let s = api.ok("GET", &format!("/api/games/{a}/steps/1"), json!(null));
    assert_eq!(s["by"], "S");
    assert_eq!(s["before"]["S"]["front"], json!([2, 2, 2, 2, 2, 2, 2, 2]));

    // The cap: a third game fits, a fourth is refused while none has been idle long.
    api.new_game(json!({}));
    let e = api.fails("POST", "/api/games", "{}", StatusCode::SERVICE_UNAVAILABLE);
    assert!(e.contains("3 live games"), "{e}");
    assert_eq!(api.ok("GET", "/api/info", json!(null))["live_games"], 3);
}

#[test]
fn choices_and_game_over_show_in_the_view() {
    let api = Api::new(&["greedy"], 8, 1000);
    // Find, by random play, a Kiswahili position whose moves include a safari choice and a
    // namua capture with a kichwa choice, and start a game there.
    let mut rng = 7u64;
    let mut next = |n: usize| {
        rng = rng
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (rng >> 33) as usize % n
    };
    let (mut safari, mut kichwa) = (None, None);
    'games: for _ in 0..300 {
        let mut pos = Position::start(Variant::Kiswahili);
        for _ in 0..40 {
            let legal = pos.legal_notations();
            if legal.is_empty() {
                continue 'games;
            }
            if safari.is_none() && legal.iter().any(|m| m.ends_with('+')) {
                safari = Some(pos);
            }
            let lm = pos.legal_moves();
            let caps: Vec<_> = lm
                .iter()
                .filter(|m| m.kind == bao::game::MoveKind::NamuaCapture)
                .collect();
            if kichwa.is_none()
                && caps.iter().any(|a| {
                    caps.iter()
                        .any(|b| a.mv.hole == b.mv.hole && a.mv.dir != b.mv.dir)
                })
            {
                kichwa = Some(pos);
            }
            if safari.is_some() && kichwa.is_some() {
                break 'games;
            }
            match lm.as_slice()[next(lm.len())].after {
                After::Position(p) => pos = p,
                After::Won(_) => continue 'games,
            }
        }
    }
    let safari = safari.expect("a safari choice arises in random Kiswahili games");
    let (_, g) = api.new_game(
        json!({"variant": "kiswahili", "opponent": "human", "start": safari.to_state_json()}),
    );
    let legal = g["legal"].as_array().unwrap();
    let plus = legal.iter().find(|m| m["safari"] == true).unwrap();
    let twin = legal
        .iter()
        .find(|m| m["safari"] == false && m["hole"] == plus["hole"] && m["way"] == plus["way"]);
    assert!(twin.is_some(), "a safari move has its stop twin: {plus}");
    assert_eq!(plus["kind"], "namua-capture");

    let kichwa = kichwa.expect("a kichwa choice arises in random Kiswahili games");
    let (_, g) = api.new_game(
        json!({"variant": "kiswahili", "opponent": "human", "start": kichwa.to_state_json()}),
    );
    let caps: Vec<&Value> = g["legal"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["kind"] == "namua-capture")
        .collect();
    assert!(caps.iter().any(|a| caps
        .iter()
        .any(|b| a["hole"] == b["hole"] && a["way"] != b["way"])));

    // A game played to its end: no legal moves, the winner, and further moves refused.
    let (id, mut g) = api.new_game(json!({"variant": "kujifunza", "opponent": "human"}));
    for ply in 0..2000 {
        if !g["over"].is_null() {
            break;
        }
        let legal = notations(&g);
        g = api.ok(
            "POST",
            &format!("/api/games/{id}/moves"),
            json!({"move": legal[(ply * 5) % legal.len()]}),
        );
    }
    assert!(!g["over"].is_null(), "the game ended");
    assert!(g["legal"].as_array().unwrap().is_empty());
    assert!(g["to_move"].is_null());
    let seeds: u64 = ["S", "N"]
        .iter()
        .flat_map(|s| {
            ["front", "back"].map(|r| {
                g["board"][s][r]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|c| c.as_u64().unwrap())
                    .sum::<u64>()
            })
        })
        .sum();
    assert!(seeds <= 64);
    let e = api.fails(
        "POST",
        &format!("/api/games/{id}/moves"),
        r#"{"move":"A1L"}"#,
        StatusCode::CONFLICT,
    );
    assert!(e.contains("over"), "{e}");
    api.fails(
        "POST",
        &format!("/api/games/{id}/engine"),
        "",
        StatusCode::CONFLICT,
    );
}

#[test]
fn the_engine_time_caps_a_request() {
    // A rollout search asked for far more simulations than 300 ms allow stops at the cap.
    let api = Api::new(&["mcts:sims=100000000"], 8, 300);
    let (id, _) = api.new_game(json!({"variant": "kujifunza", "engine_side": "S"}));
    let t = Instant::now();
    let r = api.ok("POST", &format!("/api/games/{id}/engine"), json!({}));
    // Without the cap this search would run for minutes; the bound is loose for a busy machine.
    assert!(
        t.elapsed() < Duration::from_secs(15),
        "took {:?}",
        t.elapsed()
    );
    assert_eq!(moves(&r["game"]).len(), 1);
    assert_eq!(r["game"]["to_move"], "N");
}

#[test]
fn a_network_engine_reports_its_evaluation_and_plays_only_its_variant() {
    use bao::neuralnet::{Lineage, NetConfig, Network};
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("tiny.safetensors");
    let net = Network::new(
        &NetConfig::preset("tiny").unwrap(),
        Variant::Kujifunza,
        tch::Device::Cpu,
    )
    .unwrap();
    net.save(&path, &Lineage::default()).unwrap();
    let spec = format!("net:{}:sims=8", path.display());
    let api = Api::new(&[spec.as_str()], 8, 3000);

    let info = api.ok("GET", "/api/info", json!(null));
    assert_eq!(info["engines"]["kujifunza"], json!([spec]));
    assert_eq!(
        info["engines"]["kiswahili"],
        json!([]),
        "a kujifunza network is not offered for kiswahili"
    );
    let e = api.fails(
        "POST",
        "/api/games",
        r#"{"variant":"kiswahili"}"#,
        StatusCode::BAD_REQUEST,
    );
    assert!(e.contains("no engine is offered"), "{e}");

    let (id, _) = api.new_game(json!({"variant": "kujifunza", "engine_side": "S"}));
    let r = api.ok("POST", &format!("/api/games/{id}/engine"), json!({}));
    let note = &r["game"]["last"]["engine"];
    let p = note["win_probability"]
        .as_f64()
        .expect("a network gives a value");
    assert!((0.0..=1.0).contains(&p), "{note}");
    // The most visited moves, best first (the move played may tie with them on visits).
    let start = Position::start(Variant::Kujifunza).legal_notations();
    let visits: Vec<u64> = note["top"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| {
            assert!(
                start.contains(&m["notation"].as_str().unwrap().to_string()),
                "{m}"
            );
            m["visits"].as_u64().unwrap()
        })
        .collect();
    assert!(
        !visits.is_empty() && visits.windows(2).all(|w| w[0] >= w[1]),
        "{visits:?}"
    );
    assert_eq!(note["pv"][0], r["move"]);
}

/// The JSON error of a raw answer.
fn error_of(bytes: &[u8]) -> String {
    let v: Value = serde_json::from_slice(bytes)
        .unwrap_or_else(|e| panic!("not JSON ({e}): {}", String::from_utf8_lossy(bytes)));
    v["error"]
        .as_str()
        .unwrap_or_else(|| panic!("no error in {v}"))
        .to_string()
}

#[test]
fn foreign_pages_and_hosts_are_refused_and_bodies_must_be_json() {
    let api = Api::new(&["greedy"], 4, 1000);
    let new = r#"{"opponent":"human"}"#;
    let json = ("content-type", "application/json");
    // A page elsewhere filling the game cap: refused, and no game is made.
    let (status, bytes, _) = api.with_headers(
        "POST",
        "/api/games",
        new,
        &[
            json,
            ("host", "127.0.0.1:8080"),
            ("origin", "http://evil.example"),
        ],
    );
    assert_eq!(status, StatusCode::FORBIDDEN);
    assert!(error_of(&bytes).contains("origin"));
    // A text/plain body (a "simple" cross-site form post) is refused.
    let (status, bytes, _) =
        api.with_headers("POST", "/api/games", new, &[("content-type", "text/plain")]);
    assert_eq!(status, StatusCode::UNSUPPORTED_MEDIA_TYPE);
    assert!(error_of(&bytes).contains("application/json"));
    // DNS rebinding: the browser names the attacker's host.
    let (status, bytes, _) = api.with_headers(
        "GET",
        "/api/info",
        "",
        &[("host", "rebind.evil.example:8080")],
    );
    assert_eq!(status, StatusCode::FORBIDDEN);
    assert!(error_of(&bytes).contains("Host"));
    assert_eq!(api.ok("GET", "/api/info", json!(null))["live_games"], 0);
    // The page's own origin, on any loopback name, works.
    for host in ["127.0.0.1:8080", "localhost:8080", "[::1]:8080"] {
        let origin = format!("http://{host}");
        let (status, bytes, _) = api.with_headers(
            "POST",
            "/api/games",
            new,
            &[json, ("host", host), ("origin", &origin)],
        );
        assert_eq!(
            status,
            StatusCode::CREATED,
            "{host}: {}",
            String::from_utf8_lossy(&bytes)
        );
    }
    // A body-less POST (the page's undo) needs no content type.
    let (status, _, _) = api.with_headers("POST", "/api/games/nope/undo", "", &[]);
    assert_eq!(status, StatusCode::NOT_FOUND);
}

#[test]
fn allowed_hosts_and_origins_are_answered() {
    let config = ServeConfig {
        opponents: vec!["greedy".parse().unwrap()],
        max_games: 4,
        idle: Duration::from_secs(3600),
        engine_time: Duration::from_millis(1000),
        engine_threads: 1,
        access: Access::new(
            Some("0.0.0.0:8080".parse().unwrap()),
            &["bao.lan".to_string()],
            &["http://tools.lan:3000".to_string()],
        ),
        read_timeout: Duration::from_secs(30),
    };
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let api = Api {
        app: api::router(Server::new(&config).unwrap()),
        rt,
    };
    for (host, origin, want) in [
        ("bao.lan:8080", "http://bao.lan:8080", StatusCode::OK),
        ("bao.lan:8080", "http://tools.lan:3000", StatusCode::OK),
        (
            "bao.lan:8080",
            "http://tools.lan:3001",
            StatusCode::FORBIDDEN,
        ),
        (
            "other.lan:8080",
            "http://other.lan:8080",
            StatusCode::FORBIDDEN,
        ),
    ] {
        let (status, _, _) = api.with_headers(
            "GET",
            "/api/info",
            "",
            &[("host", host), ("origin", origin)],
        );
        assert_eq!(status, want, "{host} {origin}");
    }
}

#[test]
fn oversized_bodies_and_uris_answer_json() {
    let api = Api::new(&["greedy"], 4, 1000);
    let (status, bytes, _) = api.raw(
        "POST",
        "/api/games",
        &format!(r#"{{"variant":"{}"}}"#, "x".repeat(100_000)),
    );
    assert_eq!(status, StatusCode::PAYLOAD_TOO_LARGE);
    assert!(error_of(&bytes).contains("bytes"));
    let (status, bytes, _) = api.raw("GET", &format!("/api/games/{}", "x".repeat(10_000)), "");
    assert_eq!(status, StatusCode::URI_TOO_LONG);
    assert!(error_of(&bytes).contains("bytes"));
}

impl Api {
    /// Sends a request whose body never arrives, declaring `length` bytes: the status, or
    /// `None` when no answer came within `bound`.
    fn with_stalled_body(&self, length: &str, bound: Duration) -> Option<StatusCode> {
        let body = Body::from_stream(futures::stream::pending::<Result<Vec<u8>, std::io::Error>>());
        let req = Request::builder()
            .method("POST")
            .uri("/api/games")
            .header("content-type", "application/json")
            .header("content-length", length)
            .body(body)
            .unwrap();
        self.rt.block_on(async {
            tokio::time::timeout(bound, self.app.clone().oneshot(req))
                .await
                .ok()
                .map(|res| res.unwrap().status())
        })
    }
}

/// A declared body larger than the limit is refused before any of it is read, and a body
/// that does not arrive within the read timeout gets 408 instead of holding the request open.
#[test]
fn huge_or_stalled_bodies_are_refused_in_bounded_time() {
    let bound = Duration::from_secs(60);
    let api = Api::with_read_timeout(&["greedy"], 4, 1000, Duration::from_secs(1));
    assert_eq!(
        api.with_stalled_body("1000000000000", bound),
        Some(StatusCode::PAYLOAD_TOO_LARGE),
        "an oversized Content-Length"
    );
    let started = Instant::now();
    assert_eq!(
        api.with_stalled_body("20", bound),
        Some(StatusCode::REQUEST_TIMEOUT),
        "a body that never comes"
    );
    assert!(started.elapsed() < bound);
    // Bodies that do come are served as before.
    let (status, _) = api.call("POST", "/api/games", r#"{"variant":"kujifunza"}"#);
    assert_eq!(status, StatusCode::CREATED);
}

/// A client that opens a connection and sends part of a request, then nothing, is
/// disconnected after the read timeout instead of holding the connection for ever.
#[test]
fn a_slow_client_is_disconnected() {
    use std::io::{BufRead, Read, Write};
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_bao"))
        .args([
            "serve",
            "--addr",
            "127.0.0.1:0",
            "--opponent",
            "random",
            "--read-timeout",
            "2",
        ])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let out = child.stdout.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut line = String::new();
        let _ = std::io::BufReader::new(out).read_line(&mut line);
        let _ = tx.send(line);
    });
    let line = rx
        .recv_timeout(Duration::from_secs(60))
        .expect("bao serve starts");
    let addr = line
        .trim()
        .strip_prefix("bao serve: listening on http://")
        .unwrap_or_else(|| panic!("{line}"))
        .trim_end_matches('/')
        .to_string();
    let bound = Duration::from_secs(60);
    let mut stream = std::net::TcpStream::connect(&addr).unwrap();
    stream.set_read_timeout(Some(bound)).unwrap();
    stream
        .write_all(b"GET /api/info HTTP/1.1\r\nHost: localhost\r\n")
        .unwrap();
    let started = Instant::now();
    let mut buf = [0u8; 1024];
    let closed = loop {
        match stream.read(&mut buf) {
            Ok(0) => break true,
            Ok(_) => continue,
            Err(e) if e.kind() == std::io::ErrorKind::ConnectionReset => break true,
            Err(_) => break false,
        }
    };
    let _ = child.kill();
    let _ = child.wait();
    assert!(closed, "the connection was still open after {bound:?}");
    assert!(started.elapsed() < bound);
}

/// Serve's limits are checked before it starts, as `--engine-ms 0` always was.
#[test]
fn serve_refuses_zero_limits_and_bad_origins() {
    for (flag, value, says) in [
        ("--max-games", "0", "--max-games"),
        ("--engine-threads", "0", "--engine-threads"),
        ("--allow-origin", "not a url", "--allow-origin"),
        (
            "--allow-origin",
            "http://tools.lan:3000/path",
            "--allow-origin",
        ),
        ("--read-timeout", "0", "--read-timeout"),
        ("--engine-ms", "0", "--engine-ms"),
    ] {
        let (ok, _, err) = common::run_bao_within(
            &[
                "serve",
                "--addr",
                "127.0.0.1:0",
                "--opponent",
                "random",
                flag,
                value,
            ],
            Duration::from_secs(60),
        )
        .unwrap_or_else(|| panic!("`{flag} {value}` was accepted: the server kept running"));
        assert!(!ok, "{flag} {value}");
        assert!(err.contains(says), "{flag} {value}: {err}");
    }
}

/// A start position is checked as R13 states are everywhere: a takasia mark R9 never makes
/// (here on the only occupied hole of the front row) and a finished game are refused, naming
/// the rule, instead of starting a game that is already over.
#[test]
fn start_positions_that_cannot_arise_are_refused() {
    let api = Api::new(&["greedy"], 4, 1000);
    let state = |s_front: [i64; 8], n_front: [i64; 8], takasia: Option<&str>| {
        let mut s_back = [0i64; 8];
        s_back[0] = 32 - s_front.iter().sum::<i64>();
        let mut n_back = [0i64; 8];
        n_back[0] = 32 - n_front.iter().sum::<i64>();
        json!({
            "variant": "kiswahili", "to_move": "S",
            "S": {"front": s_front, "back": s_back, "hand": 0, "nyumba": false},
            "N": {"front": n_front, "back": n_back, "hand": 0, "nyumba": false},
            "takasia": takasia,
        })
    };
    let fine = state([0, 0, 4, 0, 0, 0, 0, 0], [2; 8], None);
    let (status, _) = api.call(
        "POST",
        "/api/games",
        &json!({"variant": "kiswahili", "start": fine}).to_string(),
    );
    assert_eq!(status, StatusCode::CREATED);
    for (start, rule) in [
        (state([0, 0, 4, 0, 0, 0, 0, 0], [2; 8], Some("A3")), "R9"),
        (state([2; 8], [0; 8], None), "R10"),
    ] {
        let e = api.fails(
            "POST",
            "/api/games",
            &json!({"variant": "kiswahili", "start": start}).to_string(),
            StatusCode::BAD_REQUEST,
        );
        assert!(e.contains(rule), "{e}");
    }
    // The start position names every R13 key, `takasia` too.
    let mut no_mark = fine.clone();
    no_mark.as_object_mut().unwrap().remove("takasia");
    let e = api.fails(
        "POST",
        "/api/games",
        &json!({"variant": "kiswahili", "start": no_mark}).to_string(),
        StatusCode::BAD_REQUEST,
    );
    assert!(e.contains("takasia"), "{e}");
}
