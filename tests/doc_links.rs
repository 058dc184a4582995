//! Every relative link in the repository's Markdown resolves: `[text](path)` to a file or
//! directory that exists, and `[text](path#anchor)` (or `(#anchor)` within a page) to a
//! heading of that page, by GitHub's heading slugs. References to a page's anchor written in
//! the source (`docs/PAGE.md#anchor`, `README.md#anchor` in comments and strings under `src/`)
//! are held to the same rule, so renaming a heading cannot leave a stale pointer behind.
//!
//! Runs from the crate root (cargo's working directory for integration tests). The pages are the
//! tracked `*.md` files (`git ls-files`), or, where git is not available, every `*.md` under the
//! crate root outside build, dependency and hidden directories.

use std::collections::{BTreeSet, HashMap};
use std::fs;
use std::path::{Component, Path, PathBuf};
use std::process::Command;

/// Directories never searched for pages when git cannot list them.
const SKIP_DIRS: &[&str] = &["target", "node_modules", "runs", "__pycache__"];

/// The Markdown files to check, relative to the crate root.
fn markdown_files() -> Vec<PathBuf> {
    let listed = Command::new("git")
        .args(["ls-files", "-z", "--", "*.md"])
        .output()
        .ok()
        .filter(|o| o.status.success());
    if let Some(out) = listed {
        let files: Vec<PathBuf> = out
            .stdout
            .split(|&b| b == 0)
            .filter(|s| !s.is_empty())
            .map(|s| PathBuf::from(String::from_utf8_lossy(s).into_owned()))
            .filter(|p| p.is_file())
            .collect();
        if !files.is_empty() {
            return files;
        }
    }
    let mut files = Vec::new();
    walk(Path::new("."), &mut |p| {
        if p.extension().is_some_and(|e| e == "md") {
            files.push(p.strip_prefix(".").unwrap_or(p).to_path_buf());
        }
    });
    files
}

/// Calls `visit` for every file under `dir`, skipping hidden, build and dependency directories.
fn walk(dir: &Path, visit: &mut dyn FnMut(&Path)) {
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    let mut paths: Vec<PathBuf> = entries.filter_map(|e| e.ok().map(|e| e.path())).collect();
    paths.sort();
    for path in paths {
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        if path.is_dir() {
            if name.starts_with('.') || SKIP_DIRS.contains(&name.as_str()) {
                continue;
            }
            walk(&path, visit);
        } else {
            visit(&path);
        }
    }
}

/// Whether a line opens or closes a fenced code block.
fn is_fence(line: &str) -> bool {
    let t = line.trim_start();
    t.starts_with("```") || t.starts_with("~~~")
}

/// GitHub's anchor for a heading's text: lowercase, spaces to '-', every other character that
/// is not a letter, a digit, '-' or '_' dropped.
fn slug(heading: &str) -> String {
    let mut out = String::new();
    for c in heading.trim().chars() {
        if c.is_alphanumeric() || c == '-' || c == '_' {
            out.extend(c.to_lowercase());
        } else if c == ' ' {
            out.push('-');
        }
    }
    out
}

/// The anchors a page's headings define (outside code blocks); a repeated slug gets `-1`,
/// `-2`, ... as on GitHub.
fn anchors_of(text: &str) -> BTreeSet<String> {
    let mut seen: HashMap<String, usize> = HashMap::new();
    let mut anchors = BTreeSet::new();
    let mut in_fence = false;
    for line in text.lines() {
        if is_fence(line) {
            in_fence = !in_fence;
            continue;
        }
        if in_fence {
            continue;
        }
        let hashes = line.chars().take_while(|&c| c == '#').count();
        if !(1..=6).contains(&hashes) {
            continue;
        }
        let rest = &line[hashes..];
        if !rest.starts_with(' ') && !rest.starts_with('\t') {
            continue;
        }
        // GitHub ignores closing hashes: `## Title ##`.
        let title = rest.trim().trim_end_matches('#').trim_end();
        let base = slug(title);
        let n = seen.entry(base.clone()).or_insert(0);
        let anchor = if *n == 0 { base } else { format!("{base}-{n}") };
        anchors.insert(anchor);
        *n += 1;
    }
    anchors
}

/// A line with its inline code spans removed, except that a span inside a link's text keeps
/// the link intact: "[`a`](b)" becomes "[](b)".
fn without_code_spans(line: &str) -> String {
    let mut out = String::new();
    let mut in_code = false;
    for c in line.chars() {
        if c == '`' {
            in_code = !in_code;
        } else if !in_code {
            out.push(c);
        }
    }
    out
}

/// The targets of the inline links `](target)` of a page, with their line numbers, outside
/// code blocks and code spans.
fn link_targets(text: &str) -> Vec<(usize, String)> {
    let mut links = Vec::new();
    let mut in_fence = false;
    for (i, raw) in text.lines().enumerate() {
        if is_fence(raw) {
            in_fence = !in_fence;
            continue;
        }
        if in_fence {
            continue;
        }
        let line = without_code_spans(raw);
        let mut rest = line.as_str();
        while let Some(at) = rest.find("](") {
            let after = &rest[at + 2..];
            let end = after
                .find(|c: char| c == ')' || c.is_whitespace())
                .unwrap_or(after.len());
            let target = after[..end].trim_start_matches('<').trim_end_matches('>');
            if !target.is_empty() {
                links.push((i + 1, target.to_string()));
            }
            rest = &after[end..];
        }
    }
    links
}

/// `base.join(rel)` with `.` and `..` resolved lexically (the crate root is the top).
fn resolve(base: &Path, rel: &str) -> PathBuf {
    let mut parts: Vec<String> = Vec::new();
    for comp in base.join(rel).components() {
        match comp {
            Component::CurDir => {}
            Component::ParentDir => {
                parts.pop();
            }
            Component::Normal(s) => parts.push(s.to_string_lossy().into_owned()),
            Component::RootDir | Component::Prefix(_) => {}
        }
    }
    parts.iter().collect()
}

/// Anchors of the page at `path`, read once.
fn anchors_cached<'a>(
    cache: &'a mut HashMap<PathBuf, BTreeSet<String>>,
    path: &Path,
) -> &'a BTreeSet<String> {
    cache
        .entry(path.to_path_buf())
        .or_insert_with(|| anchors_of(&fs::read_to_string(path).unwrap_or_default()))
}

/// Checks `page#anchor` (page relative to the crate root), pushing what is wrong.
fn check_anchor(
    cache: &mut HashMap<PathBuf, BTreeSet<String>>,
    page: &Path,
    anchor: &str,
    at: &str,
    problems: &mut Vec<String>,
) {
    if page.extension().is_none_or(|e| e != "md") {
        problems.push(format!(
            "{at}: anchor #{anchor} on {}, which is not a Markdown page",
            page.display()
        ));
        return;
    }
    if !anchors_cached(cache, page).contains(anchor) {
        problems.push(format!(
            "{at}: {} has no heading with the anchor #{anchor}",
            page.display()
        ));
    }
}

#[test]
fn relative_links_in_markdown_resolve() {
    let pages = markdown_files();
    assert!(
        pages.iter().any(|p| p == Path::new("README.md")),
        "README.md not found from {} (run from the crate root)",
        std::env::current_dir().unwrap().display()
    );
    let mut cache = HashMap::new();
    let mut problems = Vec::new();
    let mut checked = 0;
    for page in &pages {
        let text = fs::read_to_string(page).unwrap();
        let dir = page.parent().unwrap_or(Path::new(""));
        for (line, target) in link_targets(&text) {
            let lower = target.to_ascii_lowercase();
            if lower.starts_with("http://")
                || lower.starts_with("https://")
                || lower.starts_with("mailto:")
            {
                continue;
            }
            checked += 1;
            let at = format!("{}:{line}", page.display());
            let (path, anchor) = match target.split_once('#') {
                Some((p, a)) => (p, Some(a)),
                None => (target.as_str(), None),
            };
            let resolved = if path.is_empty() {
                page.clone()
            } else {
                resolve(dir, path)
            };
            if !resolved.exists() {
                problems.push(format!(
                    "{at}: link to {target}: {} does not exist",
                    resolved.display()
                ));
                continue;
            }
            if let Some(anchor) = anchor.filter(|a| !a.is_empty()) {
                check_anchor(&mut cache, &resolved, anchor, &at, &mut problems);
            }
        }
    }
    assert!(
        checked > 0,
        "no relative links found in {} pages",
        pages.len()
    );
    assert!(
        problems.is_empty(),
        "{} broken links:\n{}",
        problems.len(),
        problems.join("\n")
    );
}

/// The `docs/PAGE.md#anchor` and `README.md#anchor` references in one file's text, with their
/// line numbers: (page relative to the crate root, anchor).
fn page_anchor_refs(text: &str) -> Vec<(usize, String, String)> {
    let is_path_char = |c: char| c.is_ascii_alphanumeric() || "_./-".contains(c);
    let is_anchor_char = |c: char| c.is_ascii_alphanumeric() || c == '-' || c == '_';
    let mut refs = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let mut from = 0;
        while let Some(found) = line[from..].find(".md#") {
            let md_end = from + found + ".md".len();
            let start = line[..md_end]
                .char_indices()
                .rev()
                .take_while(|&(_, c)| is_path_char(c))
                .last()
                .map_or(md_end, |(j, _)| j);
            let path = &line[start..md_end];
            let anchor: String = line[md_end + 1..]
                .chars()
                .take_while(|&c| is_anchor_char(c))
                .collect();
            from = md_end + 1;
            let page = if let Some(at) = path.find("docs/") {
                &path[at..]
            } else if ["README.md", "./README.md", "../README.md"].contains(&path) {
                "README.md"
            } else {
                continue;
            };
            if !anchor.is_empty() {
                refs.push((i + 1, page.to_string(), anchor));
            }
        }
    }
    refs
}

#[test]
fn doc_anchors_cited_in_the_source_resolve() {
    let mut files = Vec::new();
    walk(Path::new("src"), &mut |p| files.push(p.to_path_buf()));
    assert!(
        !files.is_empty(),
        "no files under src/ (run from the crate root)"
    );
    let mut cache = HashMap::new();
    let mut problems = Vec::new();
    for file in &files {
        let Ok(text) = fs::read_to_string(file) else {
            continue;
        };
        for (line, page, anchor) in page_anchor_refs(&text) {
            let at = format!("{}:{line}", file.display());
            let page = PathBuf::from(page);
            if !page.is_file() {
                problems.push(format!("{at}: {}#{anchor}: no such page", page.display()));
                continue;
            }
            check_anchor(&mut cache, &page, &anchor, &at, &mut problems);
        }
    }
    assert!(
        problems.is_empty(),
        "{} stale page references:\n{}",
        problems.len(),
        problems.join("\n")
    );
}

#[test]
fn slugs_follow_github() {
    assert_eq!(slug("The equal-time ladder"), "the-equal-time-ladder");
    assert_eq!(
        slug("Alpha-beta at the leaves (`net:...:leaf_ab=D`)"),
        "alpha-beta-at-the-leaves-netleaf_abd"
    );
    assert_eq!(slug("R1. The board, the holes"), "r1-the-board-the-holes");
    assert_eq!(slug("2026-12-05"), "2026-12-05");
    let anchors = anchors_of("# A\n\n## A\n```\n# not a heading\n```\n### B ###\n");
    assert_eq!(
        anchors.into_iter().collect::<Vec<_>>(),
        ["a", "a-1", "b"].map(String::from)
    );
    assert_eq!(
        link_targets("see [`x`](docs/a.md#b) and `[no](c.md)`, [y](<d.md>)\n```\n[z](e)\n```"),
        [(1, "docs/a.md#b".to_string()), (1, "d.md".to_string())]
    );
    assert_eq!(
        page_anchor_refs("// see docs/training.md#labels and README.md#what, not x.md#y"),
        [
            (1, "docs/training.md".to_string(), "labels".to_string()),
            (1, "README.md".to_string(), "what".to_string())
        ]
    );
}
