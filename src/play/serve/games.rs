//! The live games of a server: each behind its own lock, found by an unguessable id, capped in
//! number (the game idle longest gives way to a new one once it has been idle a while).

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use crate::game::{LegalMove, Side};
use crate::play::game::Game;
use crate::play::players::Analysis;

/// What an engine said about a move it played.
#[derive(Clone, Debug, serde::Serialize)]
pub struct EngineNote {
    /// The engine's spec text.
    pub engine: String,
    /// The side the engine judged for (the mover).
    pub side: &'static str,
    /// Its win probability for that side, when it gives a value.
    pub win_probability: Option<f32>,
    #[serde(flatten)]
    pub analysis: Analysis,
}

/// Who plays a game besides the person at the page.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Opponent {
    /// Two people at one page.
    Humans,
    /// An offered engine (its spec text) plays `side`.
    Engine { name: String, side: Side },
}

/// One game and what the page shows beside the board.
pub struct LiveGame {
    pub game: Game,
    pub opponent: Opponent,
    /// Per move played, the engine's note when an engine played it.
    pub notes: Vec<Option<EngineNote>>,
    /// Bumped by every change, so that an engine's answer is applied only to the position it
    /// was asked about.
    pub version: u64,
    touched: Instant,
}

impl LiveGame {
    pub fn new(game: Game, opponent: Opponent) -> LiveGame {
        LiveGame {
            game,
            opponent,
            notes: Vec::new(),
            version: 0,
            touched: Instant::now(),
        }
    }

    pub fn push(&mut self, lm: LegalMove, note: Option<EngineNote>) {
        self.game.push(lm);
        self.notes.push(note);
        self.version += 1;
    }

    /// Takes back to the previous turn of a person: one move between two people; against an
    /// engine, back past the engine's reply to the person's own last move. Returns how many
    /// moves were taken back (0: nothing of a person's to take back, nothing changed).
    pub fn undo(&mut self) -> usize {
        let person_to_move = |g: &Game| match &self.opponent {
            Opponent::Humans => true,
            Opponent::Engine { side, .. } => g.current().is_some_and(|p| p.to_move() != *side),
        };
        let mut trial = self.game.clone();
        let mut n = 0;
        while trial.pop().is_some() {
            n += 1;
            if person_to_move(&trial) {
                self.game = trial;
                self.notes.truncate(self.game.moves().len());
                self.version += 1;
                return n;
            }
        }
        0
    }

    /// The names of the players, South first (as a record stores them; `bao play` also
    /// writes `human`).
    pub fn player_names(&self) -> [String; 2] {
        match &self.opponent {
            Opponent::Humans => ["human".into(), "human".into()],
            Opponent::Engine {
                name,
                side: Side::South,
            } => [name.clone(), "human".into()],
            Opponent::Engine {
                name,
                side: Side::North,
            } => ["human".into(), name.clone()],
        }
    }
}

/// Why a game could not be found or created.
#[derive(Debug, thiserror::Error)]
pub enum GamesError {
    #[error("no game `{0}` (it never existed, or was closed)")]
    Unknown(String),
    #[error("this server holds {0} live games, its maximum, and none has been idle long enough to close; try again later")]
    Full(usize),
}

/// All live games.
pub struct Games {
    map: Mutex<HashMap<String, Arc<Mutex<LiveGame>>>>,
    max: usize,
    /// A game idle this long may be closed to make room for a new one.
    idle: Duration,
}

impl Games {
    pub fn new(max: usize, idle: Duration) -> Games {
        Games {
            map: Mutex::new(HashMap::new()),
            max: max.max(1),
            idle,
        }
    }

    pub fn max(&self) -> usize {
        self.max
    }

    pub fn len(&self) -> usize {
        lock(&self.map).len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Adds a game under a fresh random id, closing the longest-idle game first when full.
    pub fn insert(&self, game: LiveGame) -> Result<(String, Arc<Mutex<LiveGame>>), GamesError> {
        let mut map = lock(&self.map);
        if map.len() >= self.max {
            let oldest = map
                .iter()
                .map(|(id, g)| (lock(g).touched, id.clone()))
                .min()
                .filter(|(touched, _)| touched.elapsed() >= self.idle);
            match oldest {
                Some((_, id)) => {
                    map.remove(&id);
                }
                None => return Err(GamesError::Full(self.max)),
            }
        }
        let id = format!("{:032x}", rand::random::<u128>());
        let game = Arc::new(Mutex::new(game));
        map.insert(id.clone(), game.clone());
        Ok((id, game))
    }

    /// The game with this id, marked as used now.
    pub fn get(&self, id: &str) -> Result<Arc<Mutex<LiveGame>>, GamesError> {
        let game = lock(&self.map)
            .get(id)
            .cloned()
            .ok_or_else(|| GamesError::Unknown(id.chars().take(64).collect()))?;
        lock(&game).touched = Instant::now();
        Ok(game)
    }

    pub fn remove(&self, id: &str) -> Result<(), GamesError> {
        lock(&self.map)
            .remove(id)
            .map(|_| ())
            .ok_or_else(|| GamesError::Unknown(id.chars().take(64).collect()))
    }
}

/// Locks, ignoring poisoning: every change to a game is made whole under its lock before
/// anything can panic, so a poisoned lock still guards a consistent value.
pub fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}
