//! The JSON API (documented in docs/play.md): routes, request bodies and
//! errors. Every failure is a 4xx or 5xx with `{"error": "..."}` naming what is wrong.

use std::sync::Arc;

use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use serde::de::DeserializeOwned;
use serde::Deserialize;

use crate::game::json::StateJson;
use crate::game::{Position, Side, Variant};
use crate::play::game::Game;

use super::error::{ApiError, ApiResult, MAX_BODY_BYTES};
use super::games::{lock, EngineNote, LiveGame, Opponent};
use super::view::{game_view, legal_views, step_view_of};
use super::{assets, guard, Server};

type Shared = State<Arc<Server>>;

/// Parses a JSON body; an empty body is `{}` (every field optional there).
fn body<T: DeserializeOwned>(bytes: &Bytes) -> ApiResult<T> {
    let text: &[u8] = if bytes.iter().all(u8::is_ascii_whitespace) {
        b"{}"
    } else {
        bytes
    };
    serde_json::from_slice(text).map_err(|e| ApiError::bad(format!("bad JSON body: {e}")))
}

/// The routes of the page and the API.
pub fn router(server: Arc<Server>) -> Router {
    Router::new()
        .route("/", get(|| async { assets::page("index.html") }))
        .route("/app.js", get(|| async { assets::page("app.js") }))
        .route("/style.css", get(|| async { assets::page("style.css") }))
        .route("/api/info", get(info))
        .route("/api/games", post(new_game))
        .route("/api/games/{id}", get(state).delete(close))
        .route("/api/games/{id}/moves", get(moves).post(play))
        .route("/api/games/{id}/engine", post(engine))
        .route("/api/games/{id}/undo", post(undo))
        .route("/api/games/{id}/steps/{ply}", get(steps))
        .route("/api/games/{id}/record", get(record))
        .fallback(|| async {
            ApiError::new(
                StatusCode::NOT_FOUND,
                "no such page or API route (see docs/play.md, the JSON API)",
            )
        })
        .method_not_allowed_fallback(|| async {
            ApiError::new(
                StatusCode::METHOD_NOT_ALLOWED,
                "this route does not take that method (see docs/play.md, the JSON API)",
            )
        })
        .layer(axum::extract::DefaultBodyLimit::max(MAX_BODY_BYTES))
        .layer(axum::middleware::from_fn_with_state(
            guard::Gate {
                access: server.access.clone(),
                read_timeout: server.read_timeout,
            },
            guard::guard,
        ))
        .with_state(server)
}

/// `GET /api/info`: variants, the engines offered for each, and the server's limits.
async fn info(State(s): Shared) -> Json<serde_json::Value> {
    let offered: serde_json::Map<String, serde_json::Value> = Variant::ALL
        .iter()
        .map(|v| {
            (
                v.name().to_string(),
                serde_json::json!(s.engines.offered(*v)),
            )
        })
        .collect();
    Json(serde_json::json!({
        "variants": Variant::ALL.iter().map(|v| v.name()).collect::<Vec<_>>(),
        "engines": offered,
        "max_games": s.games.max(),
        "live_games": s.games.len(),
        "engine_ms": s.engines.engine_time().as_millis() as u64,
    }))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct NewGame {
    variant: Option<String>,
    /// An offered engine's spec text, or `"human"` for two people; default: the first engine.
    opponent: Option<String>,
    /// The engine's side, `"S"` or `"N"` (default `"N"`: the person moves first).
    engine_side: Option<String>,
    /// Start from this R13 state instead of the start position.
    start: Option<StateJson>,
}

/// `POST /api/games`: starts a game; answers 201 with its view.
async fn new_game(State(s): Shared, bytes: Bytes) -> ApiResult<Response> {
    let req: NewGame = body(&bytes)?;
    let variant: Variant = match &req.variant {
        Some(v) => v.parse().map_err(ApiError::bad)?,
        None => Variant::Kiswahili,
    };
    let start = match &req.start {
        None => Position::start(variant),
        Some(state) => {
            let p = Position::from_state_json(state).map_err(|e| ApiError::bad(e.to_string()))?;
            if p.variant() != variant {
                return Err(ApiError::bad(format!(
                    "start is a {} state but the game is {variant}",
                    p.variant()
                )));
            }
            p
        }
    };
    let opponent = match req.opponent.as_deref() {
        Some("human") => Opponent::Humans,
        requested => {
            let name = match requested {
                Some(n) => n.to_string(),
                None => s
                    .engines
                    .offered(variant)
                    .into_iter()
                    .next()
                    .ok_or_else(|| {
                        ApiError::bad(format!(
                            "no engine is offered for {variant}; ask for \"opponent\": \"human\""
                        ))
                    })?,
            };
            s.engines.check(variant, &name)?;
            let side = match req.engine_side.as_deref() {
                None => Side::North,
                Some(t) => Side::from_letter(t).ok_or_else(|| {
                    ApiError::bad(format!("engine_side must be \"S\" or \"N\", not {t:?}"))
                })?,
            };
            Opponent::Engine { name, side }
        }
    };
    if opponent == Opponent::Humans && req.engine_side.is_some() {
        return Err(ApiError::bad(
            "engine_side given for a game between two people",
        ));
    }
    let (id, game) = s.games.insert(LiveGame::new(Game::new(start), opponent))?;
    let view = game_view(&id, &lock(&game));
    Ok((StatusCode::CREATED, Json(view)).into_response())
}

/// `GET /api/games/{id}`.
async fn state(State(s): Shared, Path(id): Path<String>) -> ApiResult<Response> {
    let game = s.games.get(&id)?;
    let view = game_view(&id, &lock(&game));
    Ok(Json(view).into_response())
}

/// `DELETE /api/games/{id}`.
async fn close(State(s): Shared, Path(id): Path<String>) -> ApiResult<StatusCode> {
    s.games.remove(&id)?;
    Ok(StatusCode::NO_CONTENT)
}

/// `GET /api/games/{id}/moves`: the legal moves of the side to move.
async fn moves(State(s): Shared, Path(id): Path<String>) -> ApiResult<Response> {
    let game = s.games.get(&id)?;
    let g = lock(&game);
    let legal = g
        .game
        .current()
        .filter(|_| g.game.outcome().is_none())
        .map(|p| legal_views(&p))
        .unwrap_or_default();
    Ok(Json(legal).into_response())
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct PlayMove {
    /// R12 notation, e.g. `A7L`.
    #[serde(rename = "move")]
    mv: String,
}

/// `POST /api/games/{id}/moves` `{"move": "A7L"}`: plays a person's move.
async fn play(State(s): Shared, Path(id): Path<String>, bytes: Bytes) -> ApiResult<Response> {
    let req: PlayMove = body(&bytes)?;
    let game = s.games.get(&id)?;
    let mut g = lock(&game);
    let pos = g
        .game
        .current()
        .filter(|_| g.game.outcome().is_none())
        .ok_or_else(|| ApiError::conflict("the game is over"))?;
    if let Opponent::Engine { side, .. } = &g.opponent {
        if pos.to_move() == *side {
            return Err(ApiError::conflict(format!(
                "it is the engine's turn ({side}); ask it with POST .../engine"
            )));
        }
    }
    let lm = pos
        .parse_move(&req.mv)
        .map_err(|e| ApiError::new(StatusCode::UNPROCESSABLE_ENTITY, e.to_string()))?;
    g.push(lm, None);
    Ok(Json(game_view(&id, &g)).into_response())
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct AskEngine {
    /// Play the engine's move (default), or only report it (a hint).
    play: Option<bool>,
    /// Which offered engine; default: the game's engine, else the first offered.
    engine: Option<String>,
}

/// `POST /api/games/{id}/engine`: the engine's move and analysis for the side to move; played
/// unless `"play": false`. Answers `{"move", "analysis", "game"}`.
async fn engine(State(s): Shared, Path(id): Path<String>, bytes: Bytes) -> ApiResult<Response> {
    let req: AskEngine = body(&bytes)?;
    let game = s.games.get(&id)?;
    let (pos, version, name) = {
        let g = lock(&game);
        let pos = g
            .game
            .current()
            .filter(|_| g.game.outcome().is_none())
            .ok_or_else(|| ApiError::conflict("the game is over"))?;
        let name = match (&req.engine, &g.opponent) {
            (Some(n), _) => n.clone(),
            (None, Opponent::Engine { name, .. }) => name.clone(),
            (None, Opponent::Humans) => s
                .engines
                .offered(pos.variant())
                .into_iter()
                .next()
                .ok_or_else(|| {
                    ApiError::bad(format!("no engine is offered for {}", pos.variant()))
                })?,
        };
        (pos, g.version, name)
    };
    let chosen = s.engines.choose(pos.variant(), &name, pos).await?;
    let mover = pos.to_move();
    let note = EngineNote {
        engine: name,
        side: mover.letter(),
        win_probability: chosen.analysis.win_probability(),
        analysis: chosen.analysis,
    };
    let mut g = lock(&game);
    if req.play.unwrap_or(true) {
        if g.version != version {
            return Err(ApiError::conflict(
                "the game changed while the engine was thinking; ask again",
            ));
        }
        g.push(chosen.mv, Some(note.clone()));
    }
    Ok(Json(serde_json::json!({
        "move": chosen.mv.notation(mover),
        "analysis": note,
        "game": game_view(&id, &g),
    }))
    .into_response())
}

/// `POST /api/games/{id}/undo`: back to the previous turn of a person.
async fn undo(State(s): Shared, Path(id): Path<String>) -> ApiResult<Response> {
    let game = s.games.get(&id)?;
    let mut g = lock(&game);
    if g.undo() == 0 {
        return Err(ApiError::conflict("nothing to undo"));
    }
    Ok(Json(game_view(&id, &g)).into_response())
}

/// `GET /api/games/{id}/steps/{ply}`: move `ply` (1-based) told step by step.
async fn steps(State(s): Shared, Path((id, ply)): Path<(String, String)>) -> ApiResult<Response> {
    let game = s.games.get(&id)?;
    let g = lock(&game);
    let n = g.game.moves().len();
    let i = ply
        .parse::<usize>()
        .ok()
        .filter(|p| (1..=n).contains(p))
        .ok_or_else(|| {
            ApiError::new(
                StatusCode::NOT_FOUND,
                format!(
                    "no ply `{}`: this game has plies 1..={n}",
                    ply.chars().take(20).collect::<String>()
                ),
            )
        })?;
    let (before, steps, mover) = step_view_of(&g, i - 1).ok_or_else(|| {
        ApiError::new(StatusCode::INTERNAL_SERVER_ERROR, "cannot trace that move")
    })?;
    Ok(Json(
        serde_json::json!({ "ply": i, "by": mover.letter(), "before": before, "steps": steps }),
    )
    .into_response())
}

/// `GET /api/games/{id}/record`: the game record, the same JSON `bao play` saves.
async fn record(State(s): Shared, Path(id): Path<String>) -> ApiResult<Response> {
    let game = s.games.get(&id)?;
    let g = lock(&game);
    let record = g.game.record(g.player_names().to_vec());
    let text = serde_json::to_string_pretty(&record)
        .map_err(|e| ApiError::new(StatusCode::INTERNAL_SERVER_ERROR, e.to_string()))?;
    let file = format!(
        "attachment; filename=\"bao-{}-{}.json\"",
        record.variant,
        &id[..8.min(id.len())]
    );
    Ok((
        [
            (header::CONTENT_TYPE, "application/json".to_string()),
            (header::CONTENT_DISPOSITION, file),
        ],
        text,
    )
        .into_response())
}
