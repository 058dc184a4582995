//! A side's 16-hole sowing ring packed into one `u128` (byte `i` = ring hole `i`), so that a
//! whole lap is one addition (R3) and the rules' counting tests are a few bit operations.
//!
//! Seed counts never exceed 64 (R1), so adding per-byte increments never carries into the next
//! byte, and "count >= k" for every hole at once is one addition of `0x80 - k` per byte
//! (the top bit of each byte then says it, without carries either).

use super::types::Dir;

/// A ring of 16 hole counts, hole `i` in byte `i`.
pub(crate) type Ring = u128;

/// One seed in every hole.
const ONES: Ring = Ring::from_le_bytes([1; 16]);
/// The top bit of every byte.
const TOPS: Ring = ONES << 7;

/// `RUN[k]`: one seed in holes `0..k`.
const RUN: [Ring; 16] = {
    let mut t = [0; 16];
    let mut k = 1;
    while k < 16 {
        t[k] = ONES >> (8 * (16 - k));
        k += 1;
    }
    t
};

#[inline(always)]
pub(crate) fn load(holes: &[u8; 16]) -> Ring {
    Ring::from_le_bytes(*holes)
}

#[inline(always)]
pub(crate) fn store(ring: Ring) -> [u8; 16] {
    ring.to_le_bytes()
}

/// Seeds in hole `i`.
#[inline(always)]
pub(crate) fn at(ring: Ring, i: usize) -> u8 {
    (ring >> (8 * i)) as u8
}

/// The ring with hole `i` emptied.
#[inline(always)]
pub(crate) fn cleared(ring: Ring, i: usize) -> Ring {
    ring & !(0xff << (8 * i))
}

/// The ring with `n` seeds added to hole `i`.
#[inline(always)]
pub(crate) fn added(ring: Ring, i: usize, n: u8) -> Ring {
    ring + ((n as Ring) << (8 * i))
}

/// Sows a lap of `n` seeds starting after hole `from` in `dir` (R3): every hole gets
/// `n / 16`, the first `n % 16` holes one more. Returns the ring and the hole of the last seed.
#[inline(always)]
pub(crate) fn sow(ring: Ring, from: usize, n: u32, dir: Dir) -> (Ring, usize) {
    let rest = (n & 15) as usize;
    // The lowest ring index that gets an extra seed, and the last hole sown.
    let (first, last) = match dir {
        Dir::Clockwise => ((from + 1) & 15, (from + rest) & 15),
        Dir::Anticlockwise => {
            let l = (from + 16 - rest) & 15;
            (l, l)
        }
    };
    let laps = (n >> 4) as Ring * ONES;
    (ring + laps + RUN[rest].rotate_left(8 * first as u32), last)
}

/// Bit `i` set when hole `i` holds at least `k` seeds (`1 <= k <= 64`).
#[inline(always)]
pub(crate) fn at_least(ring: Ring, k: u8) -> u16 {
    top_bits((ring + (0x80 - k as Ring) * ONES) & TOPS)
}

/// Bit `i` set when hole `i` holds a seed.
#[inline(always)]
pub(crate) fn occupied(ring: Ring) -> u16 {
    at_least(ring, 1)
}

/// Gathers the top bit of each byte into a 16-bit mask (byte `i` to bit `i`).
#[inline(always)]
fn top_bits(tops: Ring) -> u16 {
    // Multiplying the 0/1 bytes of a half by this constant moves byte j's bit to bit 56 + j.
    const GATHER: u64 = 0x0102_0408_1020_4080;
    let lo = ((tops as u64) >> 7).wrapping_mul(GATHER) >> 56;
    let hi = (((tops >> 64) as u64) >> 7).wrapping_mul(GATHER) >> 56;
    (lo | hi << 8) as u16
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sow_slowly(holes: [u8; 16], from: usize, n: u32, dir: Dir) -> ([u8; 16], usize) {
        let mut h = holes;
        let mut pos = from;
        for _ in 0..n {
            pos = match dir {
                Dir::Clockwise => (pos + 1) & 15,
                Dir::Anticlockwise => (pos + 15) & 15,
            };
            h[pos] += 1;
        }
        (h, pos)
    }

    #[test]
    fn laps_equal_seed_by_seed_sowing() {
        let base: [u8; 16] = [3, 0, 1, 0, 7, 2, 0, 0, 1, 1, 0, 4, 0, 0, 9, 0];
        for from in 0..16 {
            for n in 0..=40 {
                for dir in [Dir::Clockwise, Dir::Anticlockwise] {
                    let (ring, last) = sow(load(&base), from, n, dir);
                    let (want, want_last) = sow_slowly(base, from, n, dir);
                    assert_eq!(store(ring), want, "from {from} n {n} {dir:?}");
                    if n > 0 {
                        assert_eq!(last, want_last, "from {from} n {n} {dir:?}");
                    }
                }
            }
        }
    }

    #[test]
    fn masks_count_holes() {
        let holes: [u8; 16] = [0, 1, 2, 5, 6, 15, 16, 64, 0, 0, 1, 2, 63, 7, 0, 3];
        let r = load(&holes);
        for k in [1u8, 2, 6, 16, 64] {
            let want = (0..16)
                .filter(|&i| holes[i] >= k)
                .fold(0u16, |m, i| m | 1 << i);
            assert_eq!(at_least(r, k), want, "k {k}");
        }
        for (i, &h) in holes.iter().enumerate() {
            assert_eq!(at(r, i), h);
            assert_eq!(at(cleared(r, i), i), 0);
            assert_eq!(at(added(r, i, 3), i), h + 3);
        }
    }
}
