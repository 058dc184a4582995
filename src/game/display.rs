//! Text rendering of a position as South sees the board: North on top, every hole labelled.
//!
//! ```text
//!   North  hand 22  nyumba a5 owned
//!      b8  b7  b6  b5  b4  b3  b2  b1
//!       0   0   0   0   0   0   0   0
//!       0   2   2  [6]  0   0   0   0
//!      a8  a7  a6  a5  a4  a3  a2  a1
//!     --------------------------------
//!      A1  A2  A3  A4  A5  A6  A7  A8
//!       0   0   0   0  [6]  2   2   0
//!       0   0   0   0   0   0   0   0
//!      B1  B2  B3  B4  B5  B6  B7  B8
//! > South  hand 22  nyumba A5 owned
//! ```
//!
//! An owned nyumba is shown in `[ ]`, the takasia'd hole in `( )`; `>` marks the side to move.

use std::fmt::{self, Write};

use super::position::{Position, NYUMBA};
use super::types::{Hole, Side, Variant};

impl Position {
    fn cell(&self, side: Side, hole: Hole) -> String {
        let c = self.seeds(side, hole);
        if side == self.to_move && self.takasia() == Some(hole) {
            format!("({c})")
        } else if hole.ring() == NYUMBA && self.nyumba_owned(side) {
            format!("[{c}]")
        } else {
            c.to_string()
        }
    }

    fn side_line(&self, side: Side) -> String {
        let mark = if side == self.to_move { "> " } else { "  " };
        let name = if side == Side::South {
            "South"
        } else {
            "North"
        };
        let mut line = format!("{mark}{name}");
        if self.variant == Variant::Kiswahili {
            let _ = write!(line, "  hand {}", self.hand(side));
            if self.nyumba_owned(side) {
                let _ = write!(
                    line,
                    "  nyumba {} owned",
                    Hole::front(5).expect("hole 5").name(side)
                );
            }
        }
        line
    }
}

impl fmt::Display for Position {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let row = |f: &mut fmt::Formatter<'_>, cells: Vec<String>| -> fmt::Result {
            let mut line = String::from("   ");
            for c in cells {
                let _ = write!(line, "{c:>4}");
            }
            writeln!(f, "{}", line.trim_end())
        };
        let numbers = |desc: bool| -> Vec<u8> {
            if desc {
                (1..=8).rev().collect()
            } else {
                (1..=8).collect()
            }
        };
        let (n, s) = (Side::North, Side::South);
        let hole =
            |front: bool, k: u8| if front { Hole::front(k) } else { Hole::back(k) }.expect("1..=8");
        writeln!(f, "{}", self.side_line(n))?;
        for front in [false, true] {
            let labels: Vec<String> = numbers(true)
                .into_iter()
                .map(|k| hole(front, k).name(n))
                .collect();
            let cells: Vec<String> = numbers(true)
                .into_iter()
                .map(|k| self.cell(n, hole(front, k)))
                .collect();
            if front {
                row(f, cells)?;
                row(f, labels)?;
            } else {
                row(f, labels)?;
                row(f, cells)?;
            }
        }
        writeln!(f, "    {}", "-".repeat(32))?;
        for front in [true, false] {
            let labels: Vec<String> = numbers(false)
                .into_iter()
                .map(|k| hole(front, k).name(s))
                .collect();
            let cells: Vec<String> = numbers(false)
                .into_iter()
                .map(|k| self.cell(s, hole(front, k)))
                .collect();
            if front {
                row(f, labels)?;
                row(f, cells)?;
            } else {
                row(f, cells)?;
                row(f, labels)?;
            }
        }
        write!(f, "{}", self.side_line(s))
    }
}
