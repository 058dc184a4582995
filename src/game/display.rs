//! Text rendering of a position: North on top, holes labelled, hands, nyumba and takasia.

use std::fmt;

use super::position::Position;

impl fmt::Display for Position {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let _ = f;
        todo!()
    }
}
