//! Seed derivation. Every random stream of a run (a self-play game, a tournament game, a
//! generation's minibatches, torch's initial weights) is derived from the run's one seed here,
//! so streams are independent of each other and of thread scheduling, and a resumed or
//! repeated run draws exactly the numbers the first one did.

/// SplitMix64's finaliser: a bijective mix of 64 bits (neighbouring inputs give unrelated
/// outputs, which plain `seed + i` would not).
pub fn mix(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// The seed of stream `index` of a job seeded with `seed`.
pub fn derive(seed: u64, index: u64) -> u64 {
    mix(seed ^ mix(index))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn derived_seeds_are_stable_and_distinct() {
        // Pinned: changing the derivation would silently change every seeded run.
        assert_eq!(mix(0), 0xe220_a839_7b1d_cdaf);
        let seeds: std::collections::HashSet<u64> = (0..4)
            .flat_map(|s| (0..1000).map(move |i| derive(s, i)))
            .collect();
        assert_eq!(seeds.len(), 4000);
        assert_eq!(derive(7, 3), derive(7, 3));
    }
}
