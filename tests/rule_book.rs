//! The rule book (docs/RULES.md) has a section for every rule the code and tests cite.
//!
//! A section is a line starting with `## R<n>.`; a citation is a capital `R` followed by
//! digits, with no letter, digit or underscore just before the `R` and no letter or digit just
//! after the digits.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

/// The numbers of the sections of the rule book: lines that start with `## R<n>.`.
fn sections(book: &str) -> BTreeSet<u32> {
    let mut found = BTreeSet::new();
    for line in book.lines() {
        let Some(rest) = line.strip_prefix("## R") else {
            continue;
        };
        let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
        if digits > 0 && rest.as_bytes().get(digits) == Some(&b'.') {
            found.extend(rest[..digits].parse::<u32>().ok());
        }
    }
    found
}

/// Whether `b` can be part of a word before a citation (so that `TR5` or `x_R5` is not one).
fn is_word_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_'
}

/// The rule numbers cited in `text`.
fn citations(text: &str) -> BTreeSet<u32> {
    let bytes = text.as_bytes();
    let mut found = BTreeSet::new();
    let mut i = 0;
    while i < bytes.len() {
        let starts = bytes[i] == b'R' && (i == 0 || !is_word_byte(bytes[i - 1]));
        if !starts {
            i += 1;
            continue;
        }
        // Digits run from i + 1 up to (not including) j.
        let mut j = i + 1;
        while j < bytes.len() && bytes[j].is_ascii_digit() {
            j += 1;
        }
        let ends = j == bytes.len() || !bytes[j].is_ascii_alphanumeric();
        if j > i + 1 && ends {
            found.extend(text[i + 1..j].parse::<u32>().ok());
        }
        // j > i always, and the byte at j (if any) is not a digit, so nothing is skipped.
        i = j;
    }
    found
}

/// Every `.rs` file under `dir`, recursively (symbolic links are not followed).
fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let entries = fs::read_dir(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
    for entry in entries {
        let entry = entry.unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
        let kind = entry
            .file_type()
            .unwrap_or_else(|e| panic!("{}: {e}", entry.path().display()));
        let path = entry.path();
        if kind.is_dir() {
            rust_files(&path, out);
        } else if kind.is_file() && path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

#[test]
fn the_scanner_finds_citations_and_nothing_else() {
    let text = "R5, (R10) R12: see R3..R4; x_R7 TR8 R9x R2b R alone, R11_ and R1";
    let expected: BTreeSet<u32> = [1, 3, 4, 5, 10, 11, 12].into_iter().collect();
    assert_eq!(citations(text), expected);
    // Numbers with no section are reported as they are (built here so that this file does
    // not cite them itself).
    let odd = format!("R{} and R{}.", 0, 99);
    let expected: BTreeSet<u32> = [0, 99].into_iter().collect();
    assert_eq!(citations(&odd), expected);
    assert!(citations("").is_empty());

    let book = "# Title\n## R1. One\ntext R7\n## R12. Twelve\n##R3. no\n## R4 no dot\n## R. no\n";
    let expected: BTreeSet<u32> = [1, 12].into_iter().collect();
    assert_eq!(sections(book), expected);
}

#[test]
fn every_cited_rule_has_a_section() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let book_path = root.join("docs").join("RULES.md");
    let book = fs::read_to_string(book_path).expect("docs/RULES.md is readable");
    let heads = sections(&book);
    for n in 1..=13 {
        assert!(
            heads.contains(&n),
            "docs/RULES.md has no section heading `## R{n}.`"
        );
    }

    let mut files = Vec::new();
    for dir in ["src", "tests"] {
        rust_files(&root.join(dir), &mut files);
    }
    files.sort();

    // Rule number -> the files citing it.
    let mut cited: BTreeMap<u32, Vec<String>> = BTreeMap::new();
    // Rule numbers cited outside this file, so that the count below cannot be met by it.
    let mut elsewhere: BTreeSet<u32> = BTreeSet::new();
    for file in &files {
        let text = fs::read_to_string(file).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
        let name = file
            .strip_prefix(root)
            .unwrap_or(file)
            .display()
            .to_string();
        let found = citations(&text);
        if !file.ends_with(Path::new("tests").join("rule_book.rs")) {
            elsewhere.extend(found.iter().copied());
        }
        for n in found {
            cited.entry(n).or_default().push(name.clone());
        }
    }

    let mut missing = Vec::new();
    for (n, names) in &cited {
        if !heads.contains(n) {
            missing.push(format!("R{n} (cited in {})", names.join(", ")));
        }
    }
    assert!(
        missing.is_empty(),
        "rules cited with no section in docs/RULES.md: {}",
        missing.join("; ")
    );
    assert!(
        elsewhere.len() >= 10,
        "only {} distinct rules cited in {} files under src/ and tests/ ({:?}): is the scan \
         reading the right files?",
        elsewhere.len(),
        files.len(),
        elsewhere
    );
}
