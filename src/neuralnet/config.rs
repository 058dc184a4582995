//! Network architecture: how many residual blocks, how wide, how big the heads are.
//!
//! A config is either a named preset or explicit fields, and a preset can be refined:
//!
//! ```toml
//! [network]
//! preset = "small"      # tiny | small | large; optional
//! blocks = 8            # any field given overrides the preset's value
//! ```
//!
//! Without `preset` every field must be given (`aux_heads` and `move_features` aside, off
//! unless set). Checkpoint sidecars store the resolved, explicit
//! form (no `preset` key), so a checkpoint never depends on what the presets say today.

use serde::{Deserialize, Serialize};

use crate::game::features::Encoding;

/// Names of the built-in presets, smallest first.
pub const PRESETS: [&str; 3] = ["tiny", "small", "large"];

/// The resolved architecture of a residual policy/value network (see [`super::model`]).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(try_from = "RawNetConfig")]
pub struct NetConfig {
    /// Residual blocks (two 3x3 convolutions each) after the input convolution.
    pub blocks: usize,
    /// Channels of the trunk.
    pub channels: usize,
    /// Channels of the policy head's 1x1 convolution before its linear layer.
    pub policy_channels: usize,
    /// Channels of the value head's 1x1 convolution.
    pub value_channels: usize,
    /// Width of the value head's hidden linear layer.
    pub value_hidden: usize,
    /// Auxiliary training heads (KataGo's idea, Bao's targets): the final seed margin, read off
    /// the value head's hidden layer, and the opponent's reply, read off the policy head's
    /// features. They only shape the trunk during training: search never evaluates them.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub aux_heads: bool,
    /// Input planes per move from the move generator (legal, seeds captured, immediate win:
    /// [`Encoding::BoardAndMoves`]) besides the board.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub move_features: bool,
    /// The same planes for the opponent's moves, as if it were to move (its threats:
    /// [`Encoding::BoardMovesAndThreats`]). Needs `move_features`.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub threat_features: bool,
}

/// What TOML may say: a preset and/or explicit fields. Unknown keys are refused.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawNetConfig {
    preset: Option<String>,
    blocks: Option<usize>,
    channels: Option<usize>,
    policy_channels: Option<usize>,
    value_channels: Option<usize>,
    value_hidden: Option<usize>,
    aux_heads: Option<bool>,
    move_features: Option<bool>,
    threat_features: Option<bool>,
}

impl TryFrom<RawNetConfig> for NetConfig {
    type Error = anyhow::Error;

    fn try_from(raw: RawNetConfig) -> anyhow::Result<NetConfig> {
        let base = raw.preset.as_deref().map(NetConfig::preset).transpose()?;
        let pick = |given: Option<usize>, from_preset: Option<usize>, name: &str| {
            given.or(from_preset).ok_or_else(|| {
                anyhow::anyhow!("network config: `{name}` is missing (give it, or a `preset`)")
            })
        };
        let config = NetConfig {
            blocks: pick(raw.blocks, base.as_ref().map(|b| b.blocks), "blocks")?,
            channels: pick(raw.channels, base.as_ref().map(|b| b.channels), "channels")?,
            policy_channels: pick(
                raw.policy_channels,
                base.as_ref().map(|b| b.policy_channels),
                "policy_channels",
            )?,
            value_channels: pick(
                raw.value_channels,
                base.as_ref().map(|b| b.value_channels),
                "value_channels",
            )?,
            value_hidden: pick(
                raw.value_hidden,
                base.as_ref().map(|b| b.value_hidden),
                "value_hidden",
            )?,
            aux_heads: raw.aux_heads.unwrap_or(false),
            move_features: raw.move_features.unwrap_or(false),
            threat_features: raw.threat_features.unwrap_or(false),
        };
        config.validate()?;
        Ok(config)
    }
}

impl NetConfig {
    /// A built-in preset: `tiny` (tests), `small` (the default), `large`.
    pub fn preset(name: &str) -> anyhow::Result<NetConfig> {
        let (blocks, channels, policy_channels, value_channels, value_hidden) = match name {
            "tiny" => (1, 16, 4, 2, 32),
            "small" => (6, 64, 4, 2, 128),
            "large" => (12, 128, 8, 4, 256),
            other => anyhow::bail!(
                "unknown network preset `{other}` (known: {})",
                PRESETS.join(", ")
            ),
        };
        Ok(NetConfig {
            blocks,
            channels,
            policy_channels,
            value_channels,
            value_hidden,
            aux_heads: false,
            move_features: false,
            threat_features: false,
        })
    }

    /// Refuses sizes that cannot build a network or are almost surely typos.
    pub fn validate(&self) -> anyhow::Result<()> {
        let check = |value: usize, name: &str, max: usize| {
            anyhow::ensure!(
                (1..=max).contains(&value),
                "network config: `{name}` = {value} is out of range 1..={max}"
            );
            Ok(())
        };
        anyhow::ensure!(
            self.blocks <= 80,
            "network config: `blocks` = {} is out of range 0..=80",
            self.blocks
        );
        check(self.channels, "channels", 1024)?;
        check(self.policy_channels, "policy_channels", 256)?;
        check(self.value_channels, "value_channels", 256)?;
        check(self.value_hidden, "value_hidden", 4096)?;
        anyhow::ensure!(
            self.move_features || !self.threat_features,
            "network config: `threat_features` needs `move_features = true` (the threat planes \
             follow the move planes)"
        );
        Ok(())
    }

    /// `6x64` style: blocks x channels (`+moves` with move features, `+threats` with the
    /// opponent's, `+aux` with auxiliary heads).
    pub fn short_name(&self) -> String {
        let moves = match (self.move_features, self.threat_features) {
            (true, true) => "+moves+threats",
            (true, false) => "+moves",
            (false, _) => "",
        };
        let aux = if self.aux_heads { "+aux" } else { "" };
        format!("{}x{}{moves}{aux}", self.blocks, self.channels)
    }

    /// The input planes this network reads.
    pub fn encoding(&self) -> Encoding {
        match (self.move_features, self.threat_features) {
            (true, true) => Encoding::BoardMovesAndThreats,
            (true, false) => Encoding::BoardAndMoves,
            // `validate` refuses threats without moves; such a config reads the board alone.
            (false, _) => Encoding::Board,
        }
    }
}

impl Default for NetConfig {
    /// The `small` preset.
    fn default() -> NetConfig {
        NetConfig::preset("small").expect("`small` is a built-in preset")
    }
}
