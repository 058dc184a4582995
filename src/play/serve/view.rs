//! What the JSON API sends: a game as the page draws it (see docs/play.md#the-json-api).

use serde::Serialize;

use crate::game::json::StateJson;
use crate::game::trace::{Board, MoveTrace, Step};
use crate::game::{Dir, Hole, LegalMove, MoveKind, Position, Side, Variant};

use super::games::{EngineNote, LiveGame, Opponent};

/// One side's holes and hand, hole 1 first, counted from that side's left (as R13).
#[derive(Clone, Serialize)]
pub struct SideView {
    pub front: [u8; 8],
    pub back: [u8; 8],
    pub hand: u8,
    pub nyumba: bool,
}

/// A board to draw: both sides, plus the seeds the mover carries in the middle of a move.
#[derive(Clone, Serialize)]
pub struct BoardView {
    #[serde(rename = "S")]
    pub south: SideView,
    #[serde(rename = "N")]
    pub north: SideView,
    pub carried: u32,
}

impl BoardView {
    pub fn of_board(b: &Board) -> BoardView {
        let side = |s: Side| SideView {
            front: b.front(s),
            back: b.back(s),
            hand: b.hand[s.index()],
            nyumba: b.nyumba[s.index()],
        };
        BoardView {
            south: side(Side::South),
            north: side(Side::North),
            carried: b.carried,
        }
    }

    pub fn of_position(p: &Position) -> BoardView {
        let side = |s: Side| SideView {
            front: p.front(s),
            back: p.back(s),
            hand: p.hand(s),
            nyumba: p.nyumba_owned(s),
        };
        BoardView {
            south: side(Side::South),
            north: side(Side::North),
            carried: 0,
        }
    }
}

/// A legal move, with what the page needs to offer it by clicks.
#[derive(Serialize)]
pub struct LegalView {
    /// R12 notation, what `POST .../moves` takes.
    pub notation: String,
    /// The hole clicked first.
    pub hole: String,
    /// `L` or `R` (R12): the way along the row as the mover sees it; for a namua capture, the
    /// kichwa the captured seeds enter.
    pub way: &'static str,
    /// Whether this move goes on safari (R8); only moves where the choice arises have a twin.
    pub safari: bool,
    /// `namua-capture`, `namua-takasa`, `namua-tax`, `mtaji-capture` or `mtaji-takasa`.
    pub kind: &'static str,
    /// Seeds this move captures in all.
    pub captures: u8,
}

pub fn kind_name(kind: MoveKind) -> &'static str {
    match kind {
        MoveKind::NamuaCapture => "namua-capture",
        MoveKind::NamuaTakasa => "namua-takasa",
        MoveKind::NamuaTax => "namua-tax",
        MoveKind::MtajiCapture => "mtaji-capture",
        MoveKind::MtajiTakasa => "mtaji-takasa",
    }
}

pub fn legal_views(pos: &Position) -> Vec<LegalView> {
    let me = pos.to_move();
    pos.legal_moves()
        .iter()
        .map(|lm: &LegalMove| {
            let notation = lm.notation(me);
            LegalView {
                hole: lm.mv.hole.name(me),
                way: if notation.as_bytes()[2] == b'R' {
                    "R"
                } else {
                    "L"
                },
                safari: lm.mv.safari,
                kind: kind_name(lm.kind),
                captures: lm.captured,
                notation,
            }
        })
        .collect()
}

/// One step of a move, for stepping through it.
#[derive(Serialize)]
pub struct StepView {
    /// `hand`, `lap`, `capture`, `safari` or `end`.
    pub kind: &'static str,
    /// One sentence for a learner.
    pub text: String,
    /// The holes this step filled (a lap: every hole sown, in order; a hand seed: its hole).
    pub sown: Vec<String>,
    /// The hole a lap lifted its seeds from, or the captured hole.
    pub from: Option<String>,
    /// The board right after this step.
    pub board: BoardView,
}

pub fn step_views(trace: &MoveTrace) -> Vec<StepView> {
    let me = trace.mover;
    trace
        .steps
        .iter()
        .map(|s| {
            let (kind, sown, from) = match s.step {
                Step::HandSeed { hole } => ("hand", vec![hole.name(me)], None),
                Step::Lap {
                    lifted,
                    seeds,
                    dir,
                    first,
                    ..
                } => (
                    "lap",
                    lap_holes(first, dir, seeds).map(|h| h.name(me)).collect(),
                    lifted.map(|h| h.name(me)),
                ),
                Step::Capture { target, .. } => {
                    ("capture", Vec::new(), Some(target.name(me.opponent())))
                }
                Step::Safari => ("safari", Vec::new(), None),
                Step::End(_) => ("end", Vec::new(), None),
            };
            StepView {
                kind,
                text: s.step.describe(me),
                sown,
                from,
                board: BoardView::of_board(&s.board),
            }
        })
        .collect()
}

/// The distinct holes a lap of `seeds` from `first` in `dir` fills, in sowing order.
fn lap_holes(first: Hole, dir: Dir, seeds: u32) -> impl Iterator<Item = Hole> {
    let n = seeds.min(16) as usize;
    (0..n).map(move |k| {
        let r = match dir {
            Dir::Clockwise => (first.ring() + k) % 16,
            Dir::Anticlockwise => (first.ring() + 16 - k % 16) % 16,
        };
        Hole::from_ring(r).expect("ring index below 16")
    })
}

/// A move in the move list.
#[derive(Serialize)]
pub struct PlyView {
    pub ply: usize,
    pub by: &'static str,
    pub notation: String,
}

/// The last move with its steps and, when an engine played it, what the engine thought.
#[derive(Serialize)]
pub struct LastView {
    pub ply: usize,
    pub by: &'static str,
    pub notation: String,
    /// The board before the move; then each step with the board after it.
    pub before: BoardView,
    pub steps: Vec<StepView>,
    pub engine: Option<EngineNote>,
}

#[derive(Serialize)]
pub struct OverView {
    pub winner: &'static str,
    pub reason: &'static str,
}

#[derive(Serialize)]
pub struct PlayersView {
    #[serde(rename = "S")]
    pub south: String,
    #[serde(rename = "N")]
    pub north: String,
}

/// A game as `GET /api/games/{id}` and every changing call return it.
#[derive(Serialize)]
pub struct GameView {
    pub id: String,
    pub variant: Variant,
    /// The R13 state of the position to move from; `null` once a move won mid-move.
    pub position: Option<StateJson>,
    /// The board to draw: the position, or the board where a winning move ended.
    pub board: BoardView,
    /// `S` or `N`; `null` once the game is over.
    pub to_move: Option<&'static str>,
    /// The takasia'd hole of the side to move (R9), if any.
    pub takasia: Option<String>,
    pub over: Option<OverView>,
    pub players: PlayersView,
    /// The engine playing in this game and its side; `null` between two people.
    pub engine: Option<String>,
    pub engine_side: Option<&'static str>,
    pub moves: Vec<PlyView>,
    /// Legal moves of the side to move (empty once the game is over).
    pub legal: Vec<LegalView>,
    pub last: Option<LastView>,
    /// Changes with every move or undo.
    pub version: u64,
}

pub fn game_view(id: &str, live: &LiveGame) -> GameView {
    let game = &live.game;
    let over = game.outcome();
    let current = game.current();
    let moves: Vec<PlyView> = game
        .moves()
        .iter()
        .enumerate()
        .map(|(i, lm)| PlyView {
            ply: i + 1,
            by: game.mover(i).letter(),
            notation: lm.notation(game.mover(i)),
        })
        .collect();
    let last = game.moves().len().checked_sub(1).and_then(|i| {
        step_view_of(live, i).map(|(before, steps, _)| LastView {
            ply: i + 1,
            before,
            by: game.mover(i).letter(),
            notation: moves[i].notation.clone(),
            steps,
            engine: live.notes.get(i).cloned().flatten(),
        })
    });
    let board = match (current, last.as_ref().and_then(|l| l.steps.last())) {
        (None, Some(step)) => step.board.clone(),
        _ => BoardView::of_position(&game.shown()),
    };
    let names = live.player_names();
    let (engine, engine_side) = match &live.opponent {
        Opponent::Humans => (None, None),
        Opponent::Engine { name, side } => (Some(name.clone()), Some(side.letter())),
    };
    GameView {
        id: id.to_string(),
        variant: game.shown().variant(),
        position: current.map(|p| p.to_state_json()),
        board,
        to_move: current
            .filter(|_| over.is_none())
            .map(|p| p.to_move().letter()),
        takasia: current.and_then(|p| p.takasia().map(|h| h.name(p.to_move()))),
        over: over.map(|o| OverView {
            winner: o.winner.letter(),
            reason: o.reason.name(),
        }),
        players: PlayersView {
            south: names[0].clone(),
            north: names[1].clone(),
        },
        engine,
        engine_side,
        moves,
        legal: current
            .filter(|_| over.is_none())
            .map(|p| legal_views(&p))
            .unwrap_or_default(),
        last,
        version: live.version,
    }
}

/// Move `i` (0-based) of a game: the board before it, its steps, its mover.
pub fn step_view_of(live: &LiveGame, i: usize) -> Option<(BoardView, Vec<StepView>, Side)> {
    let game = &live.game;
    let (pos, lm) = (game.positions().get(i)?, game.moves().get(i)?);
    let trace = pos.trace(lm.mv).ok()?;
    Some((
        BoardView::of_board(&trace.before),
        step_views(&trace),
        trace.mover,
    ))
}
