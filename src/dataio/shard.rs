//! Training-sample shards: a small binary format written by self-play, read by the trainer.
//!
//! Samples store the compact position ([`Position::to_bytes`]) rather than network features,
//! so the trainer encodes (and mirrors) at training time and an encoding change does not
//! invalidate data. All integers and floats are little-endian.
//!
//! ```text
//! header (64 bytes + name)
//!   0  magic            8 bytes  "BAOSHARD"
//!   8  format version   u32      FORMAT_VERSION
//!  12  encoding version u32      features::ENCODING_VERSION of the writer
//!  16  variant          u8       0 kiswahili, 1 kujifunza
//!  17  reserved         3 bytes  zero
//!  20  record size      u32      RECORD_LEN
//!  24  count            u64      samples
//!  32  generation       u32      model generation that played the games
//!  36  name length      u32      bytes of the model name that follows the header
//!  40  reserved         24 bytes zero
//!  64  model name       UTF-8
//! records, `count` times, RECORD_LEN (332) bytes each
//!   0  position         38 bytes Position::to_bytes
//!  38  flags            u8       bit 0: full search (playout cap randomization)
//!                                bit 1: byte 39 holds the reply; bit 2: bytes 324.. the margin
//!  39  reply            u8       the opponent's reply: the action played next (aux target)
//!  40  legal mask       u64      bit a = action a legal
//!  48  policy           64 x f32 search policy target by action
//! 304  z                f32      game result for the side to move: 1 win, -1 loss, 0 unfinished
//! 308  q                f32      root search value for the side to move (trainer may mix)
//! 312  game id          u64
//! 320  ply              u32      plies played before this position
//! 324  margin           f32      final seed margin / 64 for the side to move (aux target)
//! 328  reserved         4 bytes  zero
//! trailer
//!      checksum         u32      CRC-32 of every byte before it
//! ```
//!
//! The auxiliary targets (reply, margin) sit in bytes that format 1 left zero, flagged by bits
//! 1 and 2, so shards written before them read as samples without them: the format version
//! did not change, and a network without auxiliary heads ignores them.

use std::path::{Path, PathBuf};

use anyhow::{bail, ensure, Context};

use crate::game::features::ENCODING_VERSION;
use crate::game::{Position, Variant, ACTIONS, PACKED_LEN};

pub const MAGIC: &[u8; 8] = b"BAOSHARD";
pub const FORMAT_VERSION: u32 = 1;
pub const HEADER_LEN: usize = 64;
pub const RECORD_LEN: usize = 332;
/// File name extension of shards.
pub const EXTENSION: &str = "shard";

/// One training sample.
#[derive(Clone, Debug, PartialEq)]
pub struct Sample {
    pub position: [u8; PACKED_LEN],
    pub legal: u64,
    pub policy: [f32; ACTIONS],
    /// Game result for the side to move (0 for unfinished games).
    pub z: f32,
    /// Root search value for the side to move.
    pub q: f32,
    pub game_id: u64,
    pub ply: u32,
    /// Searched with the full simulation count (a policy target to train on).
    pub full_search: bool,
    /// The opponent's reply (the action played from the next position, in the opponent's
    /// frame): the target of the reply-policy head. `None` when the game ended here, or in
    /// shards written before it was recorded.
    pub reply: Option<u8>,
    /// The game's final seed margin for the side to move, over 64 (in `[-1, 1]`): the target of
    /// the seed-margin head. `None` in shards written before it was recorded.
    pub margin: Option<f32>,
}

impl Sample {
    /// The position, decoded.
    pub fn position(&self) -> anyhow::Result<Position> {
        Position::from_bytes(&self.position).context("sample holds an invalid packed position")
    }

    fn write_to(&self, out: &mut Vec<u8>) {
        let start = out.len();
        out.extend_from_slice(&self.position);
        out.push(
            self.full_search as u8
                | (self.reply.is_some() as u8) << 1
                | (self.margin.is_some() as u8) << 2,
        );
        out.push(self.reply.unwrap_or(0));
        out.extend_from_slice(&self.legal.to_le_bytes());
        for p in &self.policy {
            out.extend_from_slice(&p.to_le_bytes());
        }
        out.extend_from_slice(&self.z.to_le_bytes());
        out.extend_from_slice(&self.q.to_le_bytes());
        out.extend_from_slice(&self.game_id.to_le_bytes());
        out.extend_from_slice(&self.ply.to_le_bytes());
        out.extend_from_slice(&self.margin.unwrap_or(0.0).to_le_bytes());
        out.extend_from_slice(&[0; 4]);
        debug_assert_eq!(out.len() - start, RECORD_LEN);
    }

    /// Decodes record `index`; refuses auxiliary targets out of range.
    fn read_from(b: &[u8], index: usize) -> anyhow::Result<Sample> {
        let f32_at = |o: usize| f32::from_le_bytes(b[o..o + 4].try_into().expect("4 bytes"));
        let mut position = [0u8; PACKED_LEN];
        position.copy_from_slice(&b[..PACKED_LEN]);
        let flags = b[38];
        let reply = (flags & 2 != 0).then_some(b[39]);
        if let Some(r) = reply {
            ensure!(
                (r as usize) < ACTIONS,
                "sample {index}: reply action {r} is out of range 0..{ACTIONS}"
            );
        }
        let margin = (flags & 4 != 0).then(|| f32_at(324));
        if let Some(m) = margin {
            ensure!(
                (-1.0..=1.0).contains(&m),
                "sample {index}: seed margin {m} is outside [-1, 1]"
            );
        }
        Ok(Sample {
            position,
            full_search: flags & 1 != 0,
            reply,
            margin,
            legal: u64::from_le_bytes(b[40..48].try_into().expect("8 bytes")),
            policy: std::array::from_fn(|a| f32_at(48 + 4 * a)),
            z: f32_at(304),
            q: f32_at(308),
            game_id: u64::from_le_bytes(b[312..320].try_into().expect("8 bytes")),
            ply: u32::from_le_bytes(b[320..324].try_into().expect("4 bytes")),
        })
    }
}

/// What a shard says about itself.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ShardHeader {
    pub format_version: u32,
    pub encoding_version: u32,
    pub variant: Variant,
    pub count: u64,
    pub generation: u32,
    pub model: String,
}

/// A whole shard in memory.
#[derive(Clone, Debug, PartialEq)]
pub struct Shard {
    pub header: ShardHeader,
    pub samples: Vec<Sample>,
}

/// Encodes a shard to bytes (see module docs).
pub fn encode_shard(variant: Variant, generation: u32, model: &str, samples: &[Sample]) -> Vec<u8> {
    let name = model.as_bytes();
    let mut out = Vec::with_capacity(HEADER_LEN + name.len() + samples.len() * RECORD_LEN + 4);
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&FORMAT_VERSION.to_le_bytes());
    out.extend_from_slice(&ENCODING_VERSION.to_le_bytes());
    out.push(variant as u8);
    out.extend_from_slice(&[0; 3]);
    out.extend_from_slice(&(RECORD_LEN as u32).to_le_bytes());
    out.extend_from_slice(&(samples.len() as u64).to_le_bytes());
    out.extend_from_slice(&generation.to_le_bytes());
    out.extend_from_slice(&(name.len() as u32).to_le_bytes());
    out.extend_from_slice(&[0; 24]);
    out.extend_from_slice(name);
    for s in samples {
        s.write_to(&mut out);
    }
    let crc = crc32fast::hash(&out);
    out.extend_from_slice(&crc.to_le_bytes());
    out
}

/// The sample count a shard's header promises, read from its first bytes alone (a ranged
/// read of an object, say); `None` when they are too short or lack the shard magic.
pub fn header_count(header: &[u8]) -> Option<u64> {
    if header.get(..8)? != MAGIC {
        return None;
    }
    header.get(24..32)?.try_into().ok().map(u64::from_le_bytes)
}

/// Decodes a shard from bytes; errors say what is wrong (`what` names the source).
pub fn decode_shard(bytes: &[u8], what: &str) -> anyhow::Result<Shard> {
    ensure!(
        bytes.len() >= HEADER_LEN + 4,
        "{what}: truncated ({} bytes, not a shard)",
        bytes.len()
    );
    ensure!(
        &bytes[..8] == MAGIC,
        "{what}: not a sample shard (bad magic)"
    );
    let u32_at = |o: usize| u32::from_le_bytes(bytes[o..o + 4].try_into().expect("4 bytes"));
    let format_version = u32_at(8);
    ensure!(
        format_version == FORMAT_VERSION,
        "{what}: shard format version {format_version}, this build reads {FORMAT_VERSION}"
    );
    let encoding_version = u32_at(12);
    let variant = match bytes[16] {
        0 => Variant::Kiswahili,
        1 => Variant::Kujifunza,
        v => bail!("{what}: unknown variant code {v}"),
    };
    ensure!(
        u32_at(20) as usize == RECORD_LEN,
        "{what}: record size {} != {RECORD_LEN}",
        u32_at(20)
    );
    let count = header_count(bytes).expect("length and magic checked above");
    let generation = u32_at(32);
    let name_len = u32_at(36) as usize;
    let expected = (count as u128) * RECORD_LEN as u128 + (HEADER_LEN + name_len + 4) as u128;
    ensure!(
        bytes.len() as u128 == expected,
        "{what}: truncated or padded: {} bytes, header promises {expected} ({count} samples)",
        bytes.len()
    );
    let body = bytes.len() - 4;
    let stored = u32::from_le_bytes(bytes[body..].try_into().expect("4 bytes"));
    ensure!(
        crc32fast::hash(&bytes[..body]) == stored,
        "{what}: checksum mismatch (corrupt shard)"
    );
    let model = std::str::from_utf8(&bytes[HEADER_LEN..HEADER_LEN + name_len])
        .with_context(|| format!("{what}: model name is not UTF-8"))?
        .to_owned();
    let samples = bytes[HEADER_LEN + name_len..body]
        .chunks_exact(RECORD_LEN)
        .enumerate()
        .map(|(i, b)| Sample::read_from(b, i).with_context(|| format!("{what}: corrupt record")))
        .collect::<anyhow::Result<_>>()?;
    Ok(Shard {
        header: ShardHeader {
            format_version,
            encoding_version,
            variant,
            count,
            generation,
            model,
        },
        samples,
    })
}

/// Reads and checks one shard file.
pub fn read_shard(path: &Path) -> anyhow::Result<Shard> {
    let bytes =
        std::fs::read(path).with_context(|| format!("cannot read shard {}", path.display()))?;
    decode_shard(&bytes, &path.display().to_string())
}

/// The shard files of a directory (not recursive), sorted by name.
pub fn list_shards(dir: &Path) -> anyhow::Result<Vec<PathBuf>> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).with_context(|| format!("cannot list {}", dir.display()))? {
        let path = entry
            .with_context(|| format!("cannot list {}", dir.display()))?
            .path();
        if path.extension().is_some_and(|e| e == EXTENSION) && path.is_file() {
            out.push(path);
        }
    }
    out.sort();
    Ok(out)
}

/// Collects samples and writes them as numbered shards `PREFIX-NNNNNN.shard` in a directory.
pub struct ShardWriter {
    dir: PathBuf,
    prefix: String,
    variant: Variant,
    generation: u32,
    model: String,
    shard_size: usize,
    next_index: u32,
    buffer: Vec<Sample>,
    written: Vec<PathBuf>,
}

impl ShardWriter {
    /// A writer into `dir` (created if missing). Numbering continues after any file named
    /// `PREFIX-NNNNNN.*` already there, so earlier output is never overwritten.
    pub fn new(
        dir: &Path,
        prefix: &str,
        variant: Variant,
        generation: u32,
        model: &str,
        shard_size: usize,
    ) -> anyhow::Result<ShardWriter> {
        ensure!(shard_size > 0, "shard size must be > 0");
        std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
        let mut next_index = 0;
        for entry in
            std::fs::read_dir(dir).with_context(|| format!("cannot list {}", dir.display()))?
        {
            let entry = entry.with_context(|| format!("cannot list {}", dir.display()))?;
            let name = entry.file_name();
            let name = name.to_str().unwrap_or("");
            let stem = name.split('.').next().unwrap_or("");
            if let Some(n) = stem.strip_prefix(prefix).and_then(|r| r.strip_prefix('-')) {
                if let Ok(n) = n.parse::<u32>() {
                    next_index = next_index.max(n + 1);
                }
            }
        }
        Ok(ShardWriter {
            dir: dir.to_owned(),
            prefix: prefix.to_owned(),
            variant,
            generation,
            model: model.to_owned(),
            shard_size,
            next_index,
            buffer: Vec::new(),
            written: Vec::new(),
        })
    }

    /// Adds a sample, writing a shard whenever `shard_size` have gathered; returns the path
    /// of a shard written.
    pub fn push(&mut self, sample: Sample) -> anyhow::Result<Option<PathBuf>> {
        self.buffer.push(sample);
        if self.buffer.len() >= self.shard_size {
            return self.flush();
        }
        Ok(None)
    }

    /// The number the next shard will get.
    pub fn next_index(&self) -> u32 {
        self.next_index
    }

    /// A path beside the shards for companion files: `DIR/PREFIX-NNNNNN.SUFFIX`.
    pub fn companion_path(&self, index: u32, suffix: &str) -> PathBuf {
        self.dir
            .join(format!("{}-{index:06}.{suffix}", self.prefix))
    }

    /// Writes what has gathered as one shard (nothing when empty).
    pub fn flush(&mut self) -> anyhow::Result<Option<PathBuf>> {
        if self.buffer.is_empty() {
            return Ok(None);
        }
        let path = self.dir.join(format!(
            "{}-{:06}.{EXTENSION}",
            self.prefix, self.next_index
        ));
        let bytes = encode_shard(self.variant, self.generation, &self.model, &self.buffer);
        super::atomic::write_bytes(&path, &bytes)?;
        self.next_index += 1;
        self.buffer.clear();
        self.written.push(path.clone());
        Ok(Some(path))
    }

    /// Samples not yet written.
    pub fn buffered(&self) -> usize {
        self.buffer.len()
    }

    /// Flushes and returns every shard written.
    pub fn finish(mut self) -> anyhow::Result<Vec<PathBuf>> {
        self.flush()?;
        Ok(self.written)
    }
}
