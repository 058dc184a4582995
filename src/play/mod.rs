//! Playing: everything that chooses moves ([`players`], one spec syntax), a game in progress
//! and its saved form ([`game`]), and the front ends built on them: the terminal game
//! ([`terminal`]), the web server ([`serve`]) and the engine protocol ([`engine`]).

pub mod engine;
pub mod game;
pub mod players;
pub mod serve;
pub mod terminal;
