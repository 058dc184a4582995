//! The player spec syntax shared by `bao eval`, `bao play` and `bao engine`.
//!
//! ```text
//! random[:seed=N]
//! greedy[:seed=N]
//! alphabeta[:depth=D][:ms=MS][:tt=MB]        depth mode, time mode, or both (first limit wins)
//! mcts[:sims=N][:ms=MS][:c=C][:seed=N]       UCT with random rollouts, no network
//! net:PATH[:sims=N][:ms=MS][:KEY=VALUE...][:device=D][:precision=P][:backend=B][:seed=N][:prove=F[:guard=M]][:leaf_ab=D[:leaf_ab_weight=W]]
//!                                            sims=0 plays the raw policy
//! ext:"COMMAND LINE"[:name=NAME][:sims=N][:depth=D][:ms=MS][:timeout=MS]
//!                                            an engine speaking `bao engine`'s protocol
//! ```
//!
//! `ms=MS` is a thinking time per move, on the thread's CPU clock unless the caller asks for
//! wall time (see [`crate::search::clock`]); with both a count and a time, the first limit
//! reached ends the search. A `net:` player's other `KEY=VALUE` options are search settings
//! (any key of the `[search]` config section: `c_puct=2.5`, `algorithm=gumbel`,
//! `leaves_per_step=16`, ...; `cpuct` is kept as another name for `c_puct`), checked exactly as
//! a config is, and applied over the settings the checkpoint was trained with. So a search
//! experiment is a list of specs that differ in one option. `device=cuda:N` names a GPU (the
//! `:N` stays with the device); `precision=int8|bf16|f32` names the number format
//! positions are judged in (see [`crate::neuralnet::Precision`]; without it, the lowest the
//! Rust pass runs on this CPU, see [`super::net::default_precision`]); `backend=torch` runs
//! the forward pass in libtorch where the Rust one would run by default (see
//! [`crate::neuralnet::Backend`]).
//!
//! Options are `key=value` segments after `:`; a spec's [`Display`](std::fmt::Display) is its
//! canonical text (options in a fixed order), which is also the player's name in tables.

use std::fmt;
use std::path::PathBuf;
use std::str::FromStr;

use crate::neuralnet::{Backend, DeviceChoice, Precision};
use crate::search::alphabeta::leaf_ab::LeafAlphaBeta;
use crate::search::alphabeta::AlphaBetaParams;
use crate::search::SearchParams;

/// Why a spec was refused; the message names the part that is wrong.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "bad player spec `{}`: {}",
    crate::util::quote::clip(.spec, 160),
    crate::util::quote::clip(.reason, crate::util::quote::MESSAGE_CHARS)
)]
pub struct SpecError {
    pub spec: String,
    pub reason: String,
}

/// A parsed player spec (see the module docs for the syntax).
#[derive(Clone, Debug, PartialEq)]
pub enum PlayerSpec {
    Random { seed: Option<u64> },
    Greedy { seed: Option<u64> },
    AlphaBeta(AlphaBetaParams),
    Mcts(RolloutParams),
    Net(NetParams),
    Ext(ExtParams),
}

/// UCT with random rollouts (OpenSpiel's `mcts` baseline with a random-rollout evaluator).
#[derive(Clone, Debug, PartialEq, Default)]
pub struct RolloutParams {
    pub sims: Option<u32>,
    /// Thinking time per move, in milliseconds.
    pub ms: Option<u64>,
    pub c: Option<f32>,
    pub seed: Option<u64>,
}

impl RolloutParams {
    pub const DEFAULT_SIMS: u32 = 1000;
    /// OpenSpiel's default UCT constant.
    pub const DEFAULT_C: f32 = 2.0;
    /// Simulations a move: the spec's, else the default unless a time limits the search.
    pub fn sims(&self) -> u32 {
        self.sims.unwrap_or(if self.ms.is_some() {
            u32::MAX
        } else {
            Self::DEFAULT_SIMS
        })
    }
    pub fn c(&self) -> f32 {
        self.c.unwrap_or(Self::DEFAULT_C)
    }
}

/// A network player; `sims = 0` plays the argmax of the raw policy.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct NetParams {
    pub path: PathBuf,
    pub sims: Option<u32>,
    /// Thinking time per move, in milliseconds.
    pub ms: Option<u64>,
    /// Search settings over the checkpoint's own, in the order given (validated at parse).
    pub search: Vec<(String, String)>,
    pub device: Option<DeviceChoice>,
    /// The number format the network judges positions in (f32 when absent).
    pub precision: Option<Precision>,
    /// The code that runs the forward pass (`auto` when absent).
    pub backend: Option<Backend>,
    pub seed: Option<u64>,
    /// `prove=F`: the share (0 < F < 1) of a timed move's budget given first to an alpha-beta
    /// proof; a proven win is played at once, otherwise the network searches the rest. Where
    /// proofs come cheap (Kujifunza, late Kiswahili) a proven value is never given away.
    pub prove: Option<f32>,
    /// `guard=M` (needs `prove=F`): when the network's move differs from the root alpha-beta's
    /// and the alpha-beta scores it more than M centi-seeds worse at the same depth, the
    /// alpha-beta's move is played instead (a blunder check; see `SearchPlayer`).
    pub guard: Option<u32>,
    /// `leaf_ab=D`: every position the network judges also gets a D-ply alpha-beta score mixed
    /// into its value ([`super::leaf_ab`]).
    pub leaf_ab: Option<u32>,
    /// `leaf_ab_weight=W`: the alpha-beta's share of the mixed value (0 < W < 1; needs
    /// `leaf_ab`; [`LeafAlphaBeta::DEFAULT_WEIGHT`] when absent).
    pub leaf_ab_weight: Option<f32>,
}

impl NetParams {
    pub const DEFAULT_SIMS: u32 = 200;
    /// Most simulations of a timed search without a count of its own: far more than any
    /// budget affords, and a bound on the tree's memory.
    pub const MAX_TIMED_SIMS: u32 = 10_000_000;
    /// Simulations a move: the spec's, else the default unless a time limits the search.
    pub fn sims(&self) -> u32 {
        self.sims.unwrap_or(if self.ms.is_some() {
            Self::MAX_TIMED_SIMS
        } else {
            Self::DEFAULT_SIMS
        })
    }
    /// The alpha-beta mixed into each judged position's value, if any; an error names a depth
    /// or weight out of range, or a weight without a depth.
    pub fn leaf_alpha_beta(&self) -> Result<Option<LeafAlphaBeta>, String> {
        match (self.leaf_ab, self.leaf_ab_weight) {
            (Some(depth), weight) => LeafAlphaBeta::new(depth, weight).map(Some),
            (None, Some(_)) => Err(
                "`leaf_ab_weight` needs `leaf_ab=D`, the depth of the alpha-beta it weighs".into(),
            ),
            (None, None) => Ok(None),
        }
    }
}

/// An external engine process driven through the engine protocol.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct ExtParams {
    /// The command line, split on whitespace (double quotes inside group words).
    pub command: String,
    pub name: Option<String>,
    pub sims: Option<u32>,
    pub depth: Option<u32>,
    pub ms: Option<u64>,
    /// The most milliseconds any answer may take (a `go`'s beyond its movetime); the defaults
    /// are in [`super::external`].
    pub timeout: Option<u64>,
}

impl FromStr for PlayerSpec {
    type Err = SpecError;

    fn from_str(text: &str) -> Result<PlayerSpec, SpecError> {
        let text = text.trim();
        let fail = |reason: String| SpecError {
            spec: text.to_string(),
            reason,
        };
        let (kind, rest) = match text.split_once(':') {
            Some((k, r)) => (k, Some(r)),
            None => (text, None),
        };
        match kind {
            "random" | "greedy" => {
                let mut seed = None;
                for (k, v) in options(rest, kind, &fail)? {
                    match k {
                        "seed" => seed = Some(number(k, v, &fail)?),
                        _ => return Err(unknown(kind, k, "seed", &fail)),
                    }
                }
                Ok(if kind == "random" { PlayerSpec::Random { seed } } else { PlayerSpec::Greedy { seed } })
            }
            "alphabeta" | "ab" => {
                let mut p = AlphaBetaParams::default();
                for (k, v) in options(rest, "alphabeta", &fail)? {
                    match k {
                        "depth" => {
                            let d: u32 = number(k, v, &fail)?;
                            if d == 0 || d > AlphaBetaParams::MAX_DEPTH {
                                return Err(fail(format!(
                                    "depth={d} is out of range 1..={}",
                                    AlphaBetaParams::MAX_DEPTH
                                )));
                            }
                            p.depth = Some(d);
                        }
                        "ms" => p.ms = Some(positive(k, v, &fail)?),
                        "tt" => p.tt_mb = Some(positive(k, v, &fail)?),
                        _ => return Err(unknown("alphabeta", k, "depth, ms, tt", &fail)),
                    }
                }
                Ok(PlayerSpec::AlphaBeta(p))
            }
            "mcts" => {
                let mut p = RolloutParams::default();
                for (k, v) in options(rest, kind, &fail)? {
                    match k {
                        "sims" => p.sims = Some(positive(k, v, &fail)?),
                        "ms" => p.ms = Some(positive(k, v, &fail)?),
                        "c" => p.c = Some(positive_f32(k, v, &fail)?),
                        "seed" => p.seed = Some(number(k, v, &fail)?),
                        _ => return Err(unknown(kind, k, "sims, ms, c, seed", &fail)),
                    }
                }
                Ok(PlayerSpec::Mcts(p))
            }
            "net" => {
                let rest = rest.filter(|r| !r.is_empty()).ok_or_else(|| {
                    fail("a network player needs a checkpoint path: net:PATH[:sims=N]".into())
                })?;
                // The path runs up to the first `:key=` segment, so paths may contain `:`.
                let segments: Vec<&str> = rest.split(':').collect();
                let cut = segments.iter().skip(1).position(|s| s.contains('=')).map_or(segments.len(), |i| i + 1);
                let path = segments[..cut].join(":");
                if path.contains('=') {
                    return Err(fail(format!("`{path}` is not a checkpoint path (net:PATH comes first)")));
                }
                let mut p = NetParams { path: PathBuf::from(path), ..NetParams::default() };
                // `device=cuda:N`: the `:N` belongs to the device, not a new option.
                let mut opts: Vec<String> = Vec::new();
                for seg in &segments[cut..] {
                    match opts.last_mut() {
                        Some(last) if last == "device=cuda" && !seg.is_empty() && seg.bytes().all(|b| b.is_ascii_digit()) => {
                            last.push(':');
                            last.push_str(seg);
                        }
                        _ => opts.push(seg.to_string()),
                    }
                }
                for (k, v) in options_of(opts.iter().map(String::as_str), kind, &fail)? {
                    match k {
                        "sims" => p.sims = Some(number(k, v, &fail)?),
                        "ms" => p.ms = Some(positive(k, v, &fail)?),
                        "device" => p.device = Some(v.parse().map_err(|e: String| fail(e))?),
                        "precision" => p.precision = Some(v.parse().map_err(|e: String| fail(e))?),
                        "backend" => p.backend = Some(v.parse().map_err(|e: String| fail(e))?),
                        "seed" => p.seed = Some(number(k, v, &fail)?),
                        "prove" => p.prove = Some(share(k, v, &fail)?),
                        "guard" => p.guard = Some(positive(k, v, &fail)?),
                        "leaf_ab" => p.leaf_ab = Some(number(k, v, &fail)?),
                        "leaf_ab_weight" => {
                            p.leaf_ab_weight = Some(v.parse().map_err(|_| fail(format!("`{k}={v}`: `{v}` is not a number")))?)
                        }
                        "cpuct" => p.search.push(("c_puct".into(), v.into())),
                        _ => p.search.push((k.into(), v.into())),
                    }
                }
                p.leaf_alpha_beta().map_err(&fail)?;
                if p.guard.is_some() && p.prove.is_none() {
                    return Err(fail("`guard` checks the network's move with the root alpha-beta of `prove=F`; give `prove` too".into()));
                }
                // Search settings are checked now, as a config's would be, so a typo fails
                // before any game is played.
                SearchParams::default()
                    .with_overrides(p.search.iter().map(|(k, v)| (k.as_str(), v.as_str())))
                    .map_err(|e| fail(format!("{e:#} (net: options are sims, ms, device, precision, backend, seed, prove, guard, leaf_ab, leaf_ab_weight and [search] keys)")))?;
                let mut keys: Vec<&str> = p.search.iter().map(|(k, _)| k.as_str()).collect();
                keys.sort_unstable();
                if let Some(w) = keys.windows(2).find(|w| w[0] == w[1]) {
                    return Err(fail(format!("search option `{}` given twice", w[0])));
                }
                Ok(PlayerSpec::Net(p))
            }
            "ext" => {
                let rest = rest.unwrap_or("").trim();
                let (command, opts) = if let Some(quoted) = rest.strip_prefix('"') {
                    let end = quoted
                        .find('"')
                        .ok_or_else(|| fail("the engine command has no closing `\"`".into()))?;
                    let after = &quoted[end + 1..];
                    let opts = match after {
                        "" => None,
                        a => Some(a.strip_prefix(':').ok_or_else(|| {
                            fail(format!("expected `:key=value` after the quoted command, found `{a}`"))
                        })?),
                    };
                    (quoted[..end].to_string(), opts)
                } else {
                    (rest.to_string(), None)
                };
                if command.trim().is_empty() {
                    return Err(fail("ext needs a command line: ext:\"COMMAND ARGS\"".into()));
                }
                let mut p = ExtParams { command, ..ExtParams::default() };
                for (k, v) in options(opts, kind, &fail)? {
                    match k {
                        "name" => p.name = Some(v.to_string()),
                        "sims" => p.sims = Some(number(k, v, &fail)?),
                        "depth" => p.depth = Some(positive(k, v, &fail)?),
                        "ms" => p.ms = Some(positive(k, v, &fail)?),
                        "timeout" => p.timeout = Some(positive(k, v, &fail)?),
                        _ => return Err(unknown(kind, k, "name, sims, depth, ms, timeout", &fail)),
                    }
                }
                Ok(PlayerSpec::Ext(p))
            }
            "" => Err(fail("empty player spec".into())),
            other => Err(fail(format!(
                "unknown player kind `{other}` (expected random, greedy, alphabeta, mcts, net or ext)"
            ))),
        }
    }
}

/// Parses a comma-separated list of specs; commas inside double quotes do not split.
pub fn parse_list(text: &str) -> Result<Vec<PlayerSpec>, SpecError> {
    let mut parts = Vec::new();
    let mut current = String::new();
    let mut quoted = false;
    for c in text.chars() {
        match c {
            '"' => {
                quoted = !quoted;
                current.push(c);
            }
            ',' if !quoted => parts.push(std::mem::take(&mut current)),
            _ => current.push(c),
        }
    }
    parts.push(current);
    parts.iter().map(|p| p.parse()).collect()
}

fn options<'a>(
    rest: Option<&'a str>,
    kind: &str,
    fail: &dyn Fn(String) -> SpecError,
) -> Result<Vec<(&'a str, &'a str)>, SpecError> {
    match rest {
        Some(rest) => options_of(rest.split(':'), kind, fail),
        None => Ok(Vec::new()),
    }
}

/// [`options`] over segments already split.
fn options_of<'a>(
    segments: impl Iterator<Item = &'a str>,
    kind: &str,
    fail: &dyn Fn(String) -> SpecError,
) -> Result<Vec<(&'a str, &'a str)>, SpecError> {
    let mut seen: Vec<&str> = Vec::new();
    segments
        .map(|seg| {
            let (k, v) = seg
                .split_once('=')
                .filter(|(k, v)| !k.is_empty() && !v.is_empty())
                .ok_or_else(|| {
                    fail(format!(
                        "option `{seg}` of {kind} is not of the form key=value"
                    ))
                })?;
            if seen.contains(&k) {
                return Err(fail(format!("option `{k}` given twice")));
            }
            seen.push(k);
            Ok((k, v))
        })
        .collect()
}

fn number<T: FromStr>(
    key: &str,
    value: &str,
    fail: &dyn Fn(String) -> SpecError,
) -> Result<T, SpecError> {
    value.parse().map_err(|_| {
        fail(format!(
            "`{key}={value}`: `{value}` is not a valid non-negative integer"
        ))
    })
}

fn positive<T: FromStr + PartialEq + Default>(
    key: &str,
    value: &str,
    fail: &dyn Fn(String) -> SpecError,
) -> Result<T, SpecError> {
    let n: T = number(key, value, fail)?;
    if n == T::default() {
        return Err(fail(format!("`{key}={value}`: must be at least 1")));
    }
    Ok(n)
}

fn positive_f32(
    key: &str,
    value: &str,
    fail: &dyn Fn(String) -> SpecError,
) -> Result<f32, SpecError> {
    match value.parse::<f32>() {
        Ok(x) if x.is_finite() && x > 0.0 => Ok(x),
        _ => Err(fail(format!("`{key}={value}`: expected a positive number"))),
    }
}

/// A share strictly between 0 and 1.
fn share(key: &str, value: &str, fail: &dyn Fn(String) -> SpecError) -> Result<f32, SpecError> {
    match value.parse::<f32>() {
        Ok(x) if x > 0.0 && x < 1.0 => Ok(x),
        _ => Err(fail(format!(
            "`{key}={value}`: expected a share of the time between 0 and 1, e.g. 0.3"
        ))),
    }
}

fn unknown(kind: &str, key: &str, known: &str, fail: &dyn Fn(String) -> SpecError) -> SpecError {
    fail(format!(
        "unknown option `{key}` for {kind} (expected {known})"
    ))
}

/// A spec in a config file (`[eval] baselines`) is its text, parsed (and refused) like one
/// given on the command line.
///
/// It is written as given, with no default limit filled in, so that it parses back to itself:
/// a config re-serialized to apply `--set` overrides must keep "no limit" (which a gauntlet or
/// `--movetime` fills with its own time), not turn it into the fixed default budget.
impl serde::Serialize for PlayerSpec {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(&Literal(self))
    }
}

/// A spec's text as given (see [`PlayerSpec`]'s `Serialize`).
struct Literal<'a>(&'a PlayerSpec);

impl fmt::Display for Literal<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.write(f, false)
    }
}

impl<'de> serde::Deserialize<'de> for PlayerSpec {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<PlayerSpec, D::Error> {
        String::deserialize(d)?
            .parse()
            .map_err(serde::de::Error::custom)
    }
}

/// The canonical spec, as tables and results name a player: a spec with no limit shows the
/// default one it plays with (`alphabeta:depth=10`, `net:M:sims=200`).
impl fmt::Display for PlayerSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.write(f, true)
    }
}

impl PlayerSpec {
    /// The spec's text; `canonical`: with the default limit written out where none is set.
    fn write(&self, f: &mut fmt::Formatter<'_>, canonical: bool) -> fmt::Result {
        fn opt<T: fmt::Display>(
            f: &mut fmt::Formatter<'_>,
            key: &str,
            v: &Option<T>,
        ) -> fmt::Result {
            match v {
                Some(v) => write!(f, ":{key}={v}"),
                None => Ok(()),
            }
        }
        match self {
            PlayerSpec::Random { seed } => {
                f.write_str("random")?;
                opt(f, "seed", seed)
            }
            PlayerSpec::Greedy { seed } => {
                f.write_str("greedy")?;
                opt(f, "seed", seed)
            }
            PlayerSpec::AlphaBeta(p) => {
                f.write_str("alphabeta")?;
                if canonical && p.depth.is_none() && p.ms.is_none() {
                    write!(f, ":depth={}", AlphaBetaParams::DEFAULT_DEPTH)?;
                }
                opt(f, "depth", &p.depth)?;
                opt(f, "ms", &p.ms)?;
                opt(f, "tt", &p.tt_mb)
            }
            PlayerSpec::Mcts(p) => {
                f.write_str("mcts")?;
                if canonical && p.ms.is_none() {
                    write!(f, ":sims={}", p.sims())?;
                } else {
                    opt(f, "sims", &p.sims)?;
                }
                opt(f, "ms", &p.ms)?;
                opt(f, "c", &p.c)?;
                opt(f, "seed", &p.seed)
            }
            PlayerSpec::Net(p) => {
                write!(f, "net:{}", p.path.display())?;
                if canonical && p.ms.is_none() {
                    write!(f, ":sims={}", p.sims())?;
                } else {
                    opt(f, "sims", &p.sims)?;
                }
                opt(f, "ms", &p.ms)?;
                for (k, v) in &p.search {
                    write!(f, ":{k}={v}")?;
                }
                opt(f, "device", &p.device)?;
                opt(f, "precision", &p.precision)?;
                opt(f, "backend", &p.backend)?;
                opt(f, "seed", &p.seed)?;
                opt(f, "prove", &p.prove)?;
                opt(f, "guard", &p.guard)?;
                opt(f, "leaf_ab", &p.leaf_ab)?;
                opt(f, "leaf_ab_weight", &p.leaf_ab_weight)
            }
            PlayerSpec::Ext(p) => {
                write!(f, "ext:\"{}\"", p.command)?;
                opt(f, "name", &p.name)?;
                opt(f, "sims", &p.sims)?;
                opt(f, "depth", &p.depth)?;
                opt(f, "ms", &p.ms)?;
                opt(f, "timeout", &p.timeout)
            }
        }
    }
}

impl PlayerSpec {
    /// The name shown in tables: the canonical spec, or an external engine's `name=`.
    pub fn display_name(&self) -> String {
        match self {
            PlayerSpec::Ext(ExtParams { name: Some(n), .. }) => n.clone(),
            other => other.to_string(),
        }
    }

    /// This spec with a thinking time of `ms` per move when it sets no limit of its own
    /// (`bao eval --movetime`): searching players without `sims`/`depth`/`ms` get `ms=`;
    /// players that do not search, raw-policy networks (`sims=0`) and specs with a limit stay.
    pub fn with_default_movetime(&self, ms: u64) -> PlayerSpec {
        let mut spec = self.clone();
        match &mut spec {
            PlayerSpec::Random { .. } | PlayerSpec::Greedy { .. } => {}
            PlayerSpec::AlphaBeta(p) if p.depth.is_none() && p.ms.is_none() => p.ms = Some(ms),
            PlayerSpec::Mcts(p) if p.sims.is_none() && p.ms.is_none() => p.ms = Some(ms),
            PlayerSpec::Net(p) if p.sims.is_none() && p.ms.is_none() => p.ms = Some(ms),
            PlayerSpec::Ext(p) if p.sims.is_none() && p.depth.is_none() && p.ms.is_none() => {
                p.ms = Some(ms)
            }
            _ => {}
        }
        spec
    }

    /// Whether this is the Elo anchor (`random`, any seed).
    pub fn is_random(&self) -> bool {
        matches!(self, PlayerSpec::Random { .. })
    }
}

/// Setting one parameter of a spec (sweeps, tuning): the parameters a player has are those of
/// its search: any `[search]` key of a network player (over the settings its checkpoint
/// records), `c` and `sims` of `mcts`, `depth` of `alphabeta`.
impl PlayerSpec {
    /// This spec with `key=value` (replacing the key where the spec sets it), checked as the
    /// spec text would be; an error names the key when the player has no such parameter.
    pub fn with_parameter(&self, key: &str, value: &str) -> Result<PlayerSpec, SpecError> {
        let fail = |reason: String| SpecError {
            spec: self.to_string(),
            reason,
        };
        let mut spec = self.clone();
        match &mut spec {
            PlayerSpec::Net(p) => {
                let known = toml::Table::try_from(SearchParams::default())
                    .map(|t| t.contains_key(key))
                    .unwrap_or(false);
                if !known {
                    return Err(fail(format!(
                        "a network player has no search parameter `{key}` (its parameters are the [search] keys)"
                    )));
                }
                p.search.retain(|(k, _)| k != key);
                p.search.push((key.to_string(), value.to_string()));
            }
            PlayerSpec::Mcts(p) if key == "c" || key == "sims" => {
                if key == "c" {
                    p.c = Some(positive_f32(key, value, &fail)?);
                } else {
                    p.sims = Some(positive(key, value, &fail)?);
                }
            }
            PlayerSpec::AlphaBeta(p) if key == "depth" => p.depth = Some(positive(key, value, &fail)?),
            _ => {
                return Err(fail(format!(
                    "this player has no parameter `{key}` (network players take [search] keys, mcts `c` and `sims`, alphabeta `depth`)"
                )))
            }
        }
        // Checked as text, as a spec a user typed is.
        spec.to_string().parse()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(s: &str) -> PlayerSpec {
        s.parse().unwrap_or_else(|e| panic!("{e}"))
    }

    #[test]
    fn parses_every_kind_and_round_trips() {
        for s in [
            "random",
            "greedy:seed=3",
            "alphabeta:depth=4",
            "alphabeta:ms=200",
            "alphabeta:depth=8:ms=50:tt=4",
            "mcts:sims=1000",
            "net:models/kujifunza.safetensors:sims=200",
            "net:models/k.safetensors:sims=0:device=cpu",
            "net:models/k.safetensors:ms=200:c_puct=2.5:algorithm=gumbel",
            "net:models/k.safetensors:sims=800:ms=50:leaves_per_step=16:device=cuda:1:seed=3",
            "net:models/k.safetensors:ms=200:leaves_per_step=16:device=cuda:1:precision=bf16",
            "net:models/k.safetensors:ms=200:device=cpu:backend=torch",
            "mcts:ms=20",
            "ext:\"bao engine greedy\"",
            "ext:\"bao engine alphabeta:depth=2\":name=ab2:ms=100",
        ] {
            assert_eq!(p(s).to_string(), s, "canonical form of {s}");
            assert_eq!(p(&p(s).to_string()), p(s));
        }
        assert_eq!(p("alphabeta").to_string(), "alphabeta:depth=10");
        assert_eq!(p("mcts").to_string(), "mcts:sims=1000");
        assert_eq!(
            p("net:x.safetensors").to_string(),
            "net:x.safetensors:sims=200"
        );
    }

    /// A config re-serialized to apply `--set` overrides must read its specs back unchanged:
    /// a spec with no limit stays without one, so a gauntlet's or `--movetime`'s time still
    /// applies (it once came back as the default budget, and a resumed gauntlet played
    /// `alphabeta:depth=10` instead of `alphabeta:ms=200`).
    #[test]
    fn serializes_as_given_and_parses_back_to_itself() {
        #[derive(serde::Serialize, serde::Deserialize)]
        struct Config {
            players: Vec<PlayerSpec>,
        }
        let specs = [
            "alphabeta",
            "mcts",
            "net:x.safetensors",
            "alphabeta:depth=4",
            "net:x.safetensors:ms=5",
        ];
        let config = Config {
            players: specs.iter().map(|s| p(s)).collect(),
        };
        let text = toml::to_string(&config).unwrap();
        assert!(text.contains("\"alphabeta\""), "{text}");
        let back: Config = toml::from_str(&text).unwrap();
        assert_eq!(back.players, config.players);
        let timed: Vec<String> = back
            .players
            .iter()
            .map(|s| s.with_default_movetime(200).to_string())
            .collect();
        assert_eq!(
            timed,
            [
                "alphabeta:ms=200",
                "mcts:ms=200",
                "net:x.safetensors:ms=200",
                "alphabeta:depth=4",
                "net:x.safetensors:ms=5"
            ]
        );
    }

    #[test]
    fn net_paths_may_contain_colons() {
        let PlayerSpec::Net(n) = p("net:C:/models/a.safetensors:sims=5") else {
            panic!()
        };
        assert_eq!(n.path, PathBuf::from("C:/models/a.safetensors"));
        assert_eq!(n.sims, Some(5));
    }

    #[test]
    fn errors_name_the_bad_part() {
        let err = |s: &str| s.parse::<PlayerSpec>().unwrap_err().to_string();
        assert!(
            err("alphabeta:depht=4").contains("unknown option `depht`"),
            "{}",
            err("alphabeta:depht=4")
        );
        assert!(err("alphabeta:depth=x").contains("`depth=x`"));
        assert!(err("alphabeta:depth=0").contains("out of range"));
        assert!(err("mcts:sims=0").contains("at least 1"));
        assert!(err("mcts:sims").contains("`sims`"));
        assert!(err("minimax").contains("unknown player kind `minimax`"));
        assert!(err("net").contains("checkpoint path"));
        assert!(err("ext:\"bao engine").contains("closing"));
        assert!(err("random:seed=1:seed=2").contains("twice"));
    }

    #[test]
    fn net_options_cover_time_search_settings_and_gpus() {
        let PlayerSpec::Net(n) =
            p("net:m.safetensors:ms=200:cpuct=2.5:algorithm=gumbel:device=cuda:0")
        else {
            panic!()
        };
        assert_eq!((n.ms, n.sims()), (Some(200), NetParams::MAX_TIMED_SIMS));
        assert_eq!(
            n.search,
            vec![
                ("c_puct".into(), "2.5".into()),
                ("algorithm".into(), "gumbel".into())
            ]
        );
        assert_eq!(n.device, Some(DeviceChoice::CudaIndex(0)));
        let err = |s: &str| s.parse::<PlayerSpec>().unwrap_err().to_string();
        assert!(
            err("net:m.safetensors:c_puct=nan").contains("c_puct"),
            "{}",
            err("net:m.safetensors:c_puct=nan")
        );
        assert!(err("net:m.safetensors:c_puct=-1").contains("c_puct"));
        assert!(err("net:m.safetensors:leaves_per_step=0").contains("leaves_per_step"));
        assert!(err("net:m.safetensors:c_pucr=1").contains("unknown search parameter `c_pucr`"));
        assert!(err("net:m.safetensors:cpuct=1:c_puct=2").contains("twice"));
        assert!(err("net:m.safetensors:device=cuda:x").contains("device"));
        assert!(err("net:m.safetensors:device=tpu").contains("unknown device `tpu`"));
        let PlayerSpec::Net(n) = p("net:m.safetensors:precision=bf16") else {
            panic!()
        };
        assert_eq!(n.precision, Some(Precision::Bf16));
        let PlayerSpec::Net(n) = p("net:m.safetensors:ms=200:precision=int8") else {
            panic!()
        };
        assert_eq!(n.precision, Some(Precision::Int8));
        assert!(err("net:m.safetensors:precision=fp16").contains("unknown precision `fp16`"));
        let PlayerSpec::Net(n) = p("net:m.safetensors:backend=native") else {
            panic!()
        };
        assert_eq!(n.backend, Some(Backend::Native));
        assert!(err("net:m.safetensors:backend=onnx").contains("unknown backend `onnx`"));
    }

    #[test]
    fn default_movetime_applies_only_without_a_limit() {
        let t = |s: &str| p(s).with_default_movetime(50).to_string();
        assert_eq!(t("alphabeta"), "alphabeta:ms=50");
        assert_eq!(t("alphabeta:depth=4"), "alphabeta:depth=4");
        assert_eq!(t("mcts"), "mcts:ms=50");
        assert_eq!(t("net:m.safetensors"), "net:m.safetensors:ms=50");
        assert_eq!(t("net:m.safetensors:sims=0"), "net:m.safetensors:sims=0");
        assert_eq!(t("net:m.safetensors:ms=10"), "net:m.safetensors:ms=10");
        assert_eq!(t("random"), "random");
        assert_eq!(t("ext:\"x\""), "ext:\"x\":ms=50");
    }

    #[test]
    fn lists_split_outside_quotes_only() {
        let list = parse_list("random,ext:\"prog --a,b\",greedy").unwrap();
        assert_eq!(list.len(), 3);
        assert_eq!(
            list[1],
            PlayerSpec::Ext(ExtParams {
                command: "prog --a,b".into(),
                ..Default::default()
            })
        );
    }
}
