//! Sample shards and game records: round trips and clear errors on damaged files.

use bao::dataio::records::{parse_records, read_records, write_records, GameRecord, GameResult};
use bao::dataio::shard::{
    decode_shard, encode_shard, header_count, list_shards, read_shard, Sample, ShardWriter,
    HEADER_LEN,
};
use bao::game::{After, Position, Variant, ACTIONS};

fn sample(k: u32) -> Sample {
    let pos = Position::start(Variant::Kiswahili);
    Sample {
        position: pos.to_bytes(),
        legal: pos.legal_moves().mask() | (k as u64) << 60,
        policy: std::array::from_fn(|a| (a as f32 + k as f32) / 1000.0),
        z: if k.is_multiple_of(2) { 1.0 } else { -1.0 },
        q: -0.25 * k as f32,
        game_id: 1_000_000_007 + k as u64,
        ply: k * 3,
        full_search: !k.is_multiple_of(3),
        reply: (!k.is_multiple_of(4)).then_some((k * 7 % 64) as u8),
        margin: (!k.is_multiple_of(5)).then_some(k as f32 / 64.0 - 0.1),
    }
}

#[test]
fn shards_round_trip() {
    let dir = tempfile::tempdir().unwrap();
    let mut w = ShardWriter::new(dir.path(), "sp", Variant::Kujifunza, 7, "net-g7", 4).unwrap();
    for k in 0..10 {
        w.push(sample(k)).unwrap();
    }
    let written = w.finish().unwrap();
    assert_eq!(written.len(), 3);
    assert_eq!(list_shards(dir.path()).unwrap(), written);
    let mut all = Vec::new();
    for p in &written {
        let s = read_shard(p).unwrap();
        assert_eq!(s.header.variant, Variant::Kujifunza);
        assert_eq!(s.header.generation, 7);
        assert_eq!(s.header.model, "net-g7");
        assert_eq!(s.header.count as usize, s.samples.len());
        all.extend(s.samples);
    }
    assert_eq!(all, (0..10).map(sample).collect::<Vec<_>>());
    assert_eq!(
        all[0].position().unwrap(),
        Position::start(Variant::Kiswahili)
    );
    // No temporary files left behind.
    assert!(std::fs::read_dir(dir.path()).unwrap().all(|e| !e
        .unwrap()
        .path()
        .to_string_lossy()
        .ends_with(".tmp")));

    // A second writer continues the numbering instead of overwriting.
    let mut w2 = ShardWriter::new(dir.path(), "sp", Variant::Kujifunza, 8, "net-g8", 4).unwrap();
    w2.push(sample(0)).unwrap();
    let more = w2.finish().unwrap();
    assert!(
        more[0].to_string_lossy().ends_with("sp-000003.shard"),
        "{more:?}"
    );
}

#[test]
fn damaged_shards_give_clear_errors() {
    let bytes = encode_shard(Variant::Kiswahili, 0, "uniform", &[sample(1), sample(2)]);
    assert_eq!(decode_shard(&bytes, "x").unwrap().samples.len(), 2);
    let err = |b: &[u8]| format!("{:#}", decode_shard(b, "x").unwrap_err());
    assert!(err(&bytes[..bytes.len() - 10]).contains("truncated"));
    assert!(err(&bytes[..20]).contains("truncated"));
    let mut flipped = bytes.clone();
    flipped[200] ^= 1;
    assert!(err(&flipped).contains("checksum"));
    let mut magic = bytes.clone();
    magic[0] = b'X';
    assert!(err(&magic).contains("magic"));
    let mut version = bytes.clone();
    version[8] = 99;
    assert!(err(&version).contains("version"));
    // The count alone, from a header's bytes (what `bao run status` reads of each object).
    assert_eq!(header_count(&bytes[..HEADER_LEN]), Some(2));
    assert_eq!(header_count(&bytes[..20]), None);
    assert_eq!(header_count(&magic[..HEADER_LEN]), None);
    let missing = read_shard(std::path::Path::new("/nonexistent/x.shard")).unwrap_err();
    assert!(format!("{missing:#}").contains("/nonexistent/x.shard"));
}

#[test]
fn records_round_trip_and_replay() {
    let start = Position::start(Variant::Kujifunza);
    let mut rec = GameRecord::new(&start);
    assert!(rec.start.is_none(), "standard start is not written out");
    let mut pos = start;
    for _ in 0..6 {
        let lm = pos.legal_moves().as_slice()[0];
        rec.push(&lm, pos.to_move());
        match lm.after {
            After::Position(p) => pos = p,
            After::Won(o) => {
                rec.finish_won(o);
                break;
            }
        }
    }
    if rec.result == GameResult::Unfinished {
        rec.finish_unfinished("ply-cap");
    }
    rec.verify().unwrap();
    let (positions, _) = rec.replay().unwrap();
    assert_eq!(positions[0], start);

    // A record starting elsewhere keeps its start state.
    let mut other = GameRecord::new(&pos);
    other.finish_unfinished("ply-cap");
    assert_eq!(other.start_position().unwrap(), pos);

    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("games.jsonl");
    write_records(&path, &[rec.clone(), other.clone()]).unwrap();
    assert_eq!(read_records(&path).unwrap(), vec![rec.clone(), other]);

    // An illegal move is reported with its ply.
    let mut bad = rec.clone();
    bad.moves[1] = bad.moves[0].clone();
    let e = format!("{:#}", bad.replay().unwrap_err());
    assert!(e.contains("ply 2"), "{e}");
    // Unknown fields and broken lines name the line.
    let e = format!(
        "{:#}",
        parse_records("\n{\"variant\":\"kujifunza\"}\n", "f").unwrap_err()
    );
    assert!(e.contains("f:2"), "{e}");
    let _ = ACTIONS;
}
