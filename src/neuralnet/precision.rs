//! The number format a network judges positions in: full `f32`, or `bf16` or `int8` for
//! inference.
//!
//! Why bf16: on CPUs with bf16 matrix units (Intel AMX, AVX512-BF16) oneDNN's bf16
//! convolutions run the campaign network 1.7-2.5x faster at batch 128 and up, and lockstep
//! self-play 1.4x (docs/measurements.md; `bao bench net --precision f32,bf16` measures the
//! machine at hand), for values within about 0.02 of f32's. At a player's batches (8 leaves)
//! libtorch's bf16 is slower than its f32, but the Rust pass in bf16 ([`super::native`], on
//! AVX-512 BF16, detected at run time) judges them 2.7 times as fast as in f32, within the
//! accuracy gates of [`super::agreement`]; so a `net:` player judges in bf16 by default where
//! that pass runs and int8 does not (`play::players::net::default_precision`), and in f32
//! where neither runs (where there is no bf16 unit, bf16 is emulated and slower). Training
//! and checkpoints stay f32: a bf16 copy is made for inference only, and it refuses to be
//! saved, copied, grown or trained (see [`super::Network::set_inference_precision`]); the Rust
//! pass rounds its own copy of the f32 weights at load.
//!
//! Why int8: `VPDPBUSD` (AVX-512 VNNI) does four 8-bit multiply-adds per 32-bit lane where
//! `VDPBF16PS` does two, so the Rust pass in int8 ([`super::native`]'s `int8` module: weights
//! quantised per output channel at load, activations per channel with scales calibrated on
//! positions) does the trunk's convolutions in half the instructions of bf16. It exists in the
//! Rust pass only: libtorch refuses an int8 network, and where the CPU lacks VNNI an int8
//! request judges in f32 (the network stays f32 for libtorch's calls too). It must pass the
//! same gates as bf16 ([`super::agreement`]); where it runs it is a `net:` player's default,
//! having won at equal time against bf16 (docs/measurements.md, "int8 in the Rust pass").

use std::str::FromStr;

/// The number format of a network's weights and activations at inference.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize,
)]
#[serde(rename_all = "lowercase")]
pub enum Precision {
    /// 32-bit floats: what training uses and checkpoints hold.
    #[default]
    F32,
    /// bfloat16 weights and activations (outputs are returned as f32).
    Bf16,
    /// 8-bit integer weights and activations in the Rust pass's trunk, i32 sums, f32 outside
    /// it (the Rust pass only: see the module docs).
    Int8,
}

impl Precision {
    /// The torch element type of a network converted to this precision; `None` for int8,
    /// which libtorch does not run (see [`super::Network::set_inference_precision`]).
    pub fn torch_kind(self) -> Option<tch::Kind> {
        match self {
            Precision::F32 => Some(tch::Kind::Float),
            Precision::Bf16 => Some(tch::Kind::BFloat16),
            Precision::Int8 => None,
        }
    }
}

impl FromStr for Precision {
    type Err = String;
    fn from_str(s: &str) -> Result<Precision, String> {
        match s {
            "f32" => Ok(Precision::F32),
            "bf16" => Ok(Precision::Bf16),
            "int8" => Ok(Precision::Int8),
            _ => Err(format!(
                "unknown precision `{s}` (expected `f32`, `bf16` or `int8`)"
            )),
        }
    }
}

impl std::fmt::Display for Precision {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Precision::F32 => "f32",
            Precision::Bf16 => "bf16",
            Precision::Int8 => "int8",
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_unknown_ones_are_named() {
        for p in [Precision::F32, Precision::Bf16, Precision::Int8] {
            assert_eq!(p.to_string().parse::<Precision>(), Ok(p));
            // Configs spell it as the specs do.
            let toml = toml::to_string(&std::collections::BTreeMap::from([("p", p)])).unwrap();
            assert_eq!(toml.trim(), format!("p = \"{p}\""));
        }
        let err = "fp16".parse::<Precision>().unwrap_err();
        assert!(
            err.contains("`fp16`") && err.contains("bf16") && err.contains("int8"),
            "{err}"
        );
    }
}
