//! The board layout the low-precision trunks share. A position's channel group (a bf16 pair,
//! an int8 quad) packed in one 32-bit lane a cell takes [`PAD_CELLS`] lanes: [`PAD_BEFORE`]
//! zero lanes, the board's 32 cells, and 16 zero lanes more. A 3x3 tap reads at most 9 cells
//! before or after the board, so it reads zeros past the top and bottom rows instead of
//! branching; [`column_mask`] keeps it from wrapping around a row's ends.

use crate::game::features::COLS;

/// Lanes a channel group of one position takes.
pub(super) const PAD_CELLS: usize = 64;
/// Zero lanes before the board's first cell.
pub(super) const PAD_BEFORE: usize = 16;

/// Lanes of a 16-cell half board that a tap with column offset `dx` may read: the cells whose
/// column plus `dx` stays on the board.
pub(super) const fn column_mask(dx: isize) -> u16 {
    let mut m = 0u16;
    let mut lane = 0;
    while lane < 16 {
        let x = (lane % COLS) as isize + dx;
        if x >= 0 && x < COLS as isize {
            m |= 1 << lane;
        }
        lane += 1;
    }
    m
}
