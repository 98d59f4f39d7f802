//! The core's layers import one way. Every `crate::` path in the core's
//! non-test code (use lines, grouped uses, inline paths such as
//! `crate::request::PREFETCH_FAR`, and `super::` paths that climb to the
//! crate root) is checked against the layer table below: a module may use
//! its own layer and the layers below it, never one above. The top-level
//! modules form no cycle, and the binding (crates/tierlab-py) and the
//! core's examples reach the core only through `tierlab_core::prelude`.
//!
//! The table lives here, in one place; docs/architecture.md shows it (and
//! a test below checks that the page lists the same layers and modules).
//!
//! Test code may import any layer: `#[cfg(test)]` items, the files of
//! `#[cfg(test)] mod name;` declarations, and this crate's tests/ and
//! benches/ are not checked.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The layers, lowest first, each with its top-level modules (`VERSION`
/// is the crate root's one item below the face).
const LAYERS: &[(&str, &[&str])] = &[
    (
        "base",
        &[
            "units", "hash", "index", "request", "rng", "spec", "error", "VERSION",
        ],
    ),
    ("device", &["tech", "cost", "device"]),
    ("source", &["source"]),
    ("cache", &["policy", "admission", "tier", "hierarchy"]),
    ("time", &["time", "mrc"]),
    ("vm", &["vm"]),
    ("config", &["config"]),
    ("run", &["run", "stats"]),
    ("face", &["prelude"]),
];

fn src_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

fn layer_of(module: &str) -> Option<(usize, &'static str)> {
    LAYERS
        .iter()
        .enumerate()
        .find(|(_, (_, ms))| ms.contains(&module))
        .map(|(i, (l, _))| (i, *l))
}

/// The source with comments, string and char literals blanked (newlines
/// kept, so offsets still give line numbers).
fn blank(text: &str) -> Vec<u8> {
    let b = text.as_bytes();
    let mut out = b.to_vec();
    let mut i = 0;
    let wipe = |out: &mut Vec<u8>, from: usize, to: usize| {
        for c in &mut out[from..to] {
            if *c != b'\n' {
                *c = b' ';
            }
        }
    };
    while i < b.len() {
        match b[i] {
            b'/' if b.get(i + 1) == Some(&b'/') => {
                let end = b[i..]
                    .iter()
                    .position(|&c| c == b'\n')
                    .map_or(b.len(), |p| i + p);
                wipe(&mut out, i, end);
                i = end;
            }
            b'/' if b.get(i + 1) == Some(&b'*') => {
                let mut depth = 0;
                let mut j = i;
                while j < b.len() {
                    if b[j] == b'/' && b.get(j + 1) == Some(&b'*') {
                        depth += 1;
                        j += 2;
                    } else if b[j] == b'*' && b.get(j + 1) == Some(&b'/') {
                        depth -= 1;
                        j += 2;
                        if depth == 0 {
                            break;
                        }
                    } else {
                        j += 1;
                    }
                }
                wipe(&mut out, i, j);
                i = j;
            }
            b'r' if matches!(b.get(i + 1), Some(b'#') | Some(b'"'))
                && (i == 0 || !(b[i - 1].is_ascii_alphanumeric() || b[i - 1] == b'_')) =>
            {
                // A raw string r#"..."#: its end is the quote and as many #.
                let hashes = b[i + 1..].iter().take_while(|&&c| c == b'#').count();
                let open = i + 1 + hashes;
                if b.get(open) != Some(&b'"') {
                    i += 1;
                    continue;
                }
                let close: Vec<u8> = std::iter::once(b'"')
                    .chain(std::iter::repeat_n(b'#', hashes))
                    .collect();
                let end = b[open + 1..]
                    .windows(close.len())
                    .position(|w| w == close.as_slice())
                    .map_or(b.len(), |p| open + 1 + p + close.len());
                wipe(&mut out, i, end);
                i = end;
            }
            b'"' => {
                let mut j = i + 1;
                while j < b.len() && b[j] != b'"' {
                    j += if b[j] == b'\\' { 2 } else { 1 };
                }
                let end = (j + 1).min(b.len());
                wipe(&mut out, i, end);
                i = end;
            }
            b'\'' => {
                // A char literal ('x', '\n', '\u{..}'), not a lifetime ('a).
                let end = if b.get(i + 1) == Some(&b'\\') {
                    b[i + 2..]
                        .iter()
                        .position(|&c| c == b'\'')
                        .map(|p| i + 2 + p + 1)
                } else if b.get(i + 2) == Some(&b'\'') {
                    Some(i + 3)
                } else {
                    None
                };
                match end {
                    Some(e) => {
                        wipe(&mut out, i, e);
                        i = e;
                    }
                    None => i += 1,
                }
            }
            _ => i += 1,
        }
    }
    out
}

fn is_ident(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'_'
}

/// The end of the item starting at `from`: after its first `;` at depth 0
/// or its first balanced `{...}`.
fn item_end(b: &[u8], from: usize) -> usize {
    let mut depth = 0usize;
    let mut i = from;
    while i < b.len() {
        match b[i] {
            b'{' => depth += 1,
            b'}' => {
                depth = depth.saturating_sub(1);
                if depth == 0 {
                    return i + 1;
                }
            }
            b';' if depth == 0 => return i + 1,
            _ => {}
        }
        i += 1;
    }
    b.len()
}

/// Blanks every `#[cfg(test)]` item; returns the names of test modules
/// declared as `#[cfg(test)] mod name;` (their files are test code).
fn drop_test_items(b: &mut [u8]) -> Vec<String> {
    const ATTR: &[u8] = b"#[cfg(test)]";
    let mut test_mods = Vec::new();
    let mut i = 0;
    while let Some(p) = b[i..].windows(ATTR.len()).position(|w| w == ATTR) {
        let at = i + p;
        let end = item_end(b, at + ATTR.len());
        let item = String::from_utf8_lossy(&b[at + ATTR.len()..end]).to_string();
        let words: Vec<&str> = item
            .split(|c: char| !(c.is_alphanumeric() || c == '_' || c == ';'))
            .filter(|w| !w.is_empty())
            .collect();
        if let Some(k) = words.iter().position(|w| *w == "mod") {
            if let Some(name) = words.get(k + 1) {
                if let Some(n) = name.strip_suffix(';') {
                    test_mods.push(n.to_string());
                }
            }
        }
        for c in &mut b[at..end] {
            if *c != b'\n' {
                *c = b' ';
            }
        }
        i = end;
    }
    test_mods
}

fn skip_ws(b: &[u8], mut i: usize) -> usize {
    while i < b.len() && b[i].is_ascii_whitespace() {
        i += 1;
    }
    i
}

fn ident_at(b: &[u8], i: usize) -> (String, usize) {
    let mut j = i;
    while j < b.len() && is_ident(b[j]) {
        j += 1;
    }
    (String::from_utf8_lossy(&b[i..j]).to_string(), j)
}

/// The first segments of the paths in a use group `{a, b::c, d::{e}}`
/// starting at the `{` at `open`.
fn group_heads(b: &[u8], open: usize) -> Vec<String> {
    let mut heads = Vec::new();
    let mut depth = 0;
    let mut expect = true;
    let mut i = open;
    while i < b.len() {
        match b[i] {
            b'{' => {
                depth += 1;
                if depth == 1 {
                    expect = true;
                }
            }
            b'}' => {
                depth -= 1;
                if depth == 0 {
                    break;
                }
            }
            b',' if depth == 1 => expect = true,
            c if depth == 1 && expect && is_ident(c) => {
                let (id, j) = ident_at(b, i);
                heads.push(id);
                expect = false;
                i = j;
                continue;
            }
            _ => {}
        }
        i += 1;
    }
    heads
}

/// One import: the top-level module it reaches, at a line.
struct Edge {
    line: usize,
    to: String,
}

/// The top-level modules a file's non-test code reaches by `crate::` and
/// by `super::` paths that climb to the crate root. `depth`: how many
/// `super` steps from the file's module reach the root.
fn edges(b: &[u8], depth: usize) -> Vec<Edge> {
    let mut out = Vec::new();
    let line_of = |i: usize| b[..i].iter().filter(|&&c| c == b'\n').count() + 1;
    let mut i = 0;
    while i < b.len() {
        if !is_ident(b[i]) || (i > 0 && (is_ident(b[i - 1]) || b[i - 1] == b':')) {
            i += 1;
            continue;
        }
        let (word, mut j) = ident_at(b, i);
        let start = i;
        i = j;
        let mut supers = 0;
        let rooted = if word == "crate" {
            true
        } else if word == "super" {
            supers = 1;
            // Count the further `::super` steps.
            loop {
                let k = skip_ws(b, j);
                if b[k..].starts_with(b"::") {
                    let k2 = skip_ws(b, k + 2);
                    let (w, e) = ident_at(b, k2);
                    if w == "super" {
                        supers += 1;
                        j = e;
                        continue;
                    }
                }
                break;
            }
            supers == depth
        } else {
            false
        };
        if !rooted || (word == "super" && supers != depth) {
            continue;
        }
        let k = skip_ws(b, j);
        if !b[k..].starts_with(b"::") {
            continue;
        }
        let k = skip_ws(b, k + 2);
        let heads = if b.get(k) == Some(&b'{') {
            group_heads(b, k)
        } else {
            vec![ident_at(b, k).0]
        };
        for h in heads {
            if !h.is_empty() && h != "self" {
                out.push(Edge {
                    line: line_of(start),
                    to: h,
                });
            }
        }
    }
    out
}

/// Every non-test source file of the core: (path relative to src, its
/// top-level module, super steps from its module to the root, text
/// blanked with its test items dropped).
fn core_files() -> Vec<(String, String, usize, Vec<u8>)> {
    let src = src_dir();
    let mut files = Vec::new();
    let mut stack = vec![src.clone()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|x| x == "rs") {
                files.push(p);
            }
        }
    }
    files.sort();
    // Parse each once; collect the test modules declared in it.
    let mut parsed = Vec::new();
    let mut test_files: BTreeSet<PathBuf> = BTreeSet::new();
    for p in &files {
        let mut b = blank(&std::fs::read_to_string(p).unwrap());
        let mods = drop_test_items(&mut b);
        let dir = if p
            .file_name()
            .is_some_and(|n| n == "mod.rs" || n == "lib.rs")
        {
            p.parent().unwrap().to_path_buf()
        } else {
            p.with_extension("")
        };
        for m in mods {
            test_files.insert(dir.join(format!("{m}.rs")));
            test_files.insert(dir.join(&m).join("mod.rs"));
        }
        parsed.push((p.clone(), b));
    }
    let mut out = Vec::new();
    for (p, b) in parsed {
        if test_files.contains(&p) {
            continue;
        }
        let rel = p
            .strip_prefix(&src)
            .unwrap()
            .to_string_lossy()
            .replace('\\', "/");
        if rel == "lib.rs" {
            continue;
        }
        let parts: Vec<&str> = rel.split('/').collect();
        let top = parts[0].trim_end_matches(".rs").to_string();
        // The module's path below the root: a/b/c.rs is a::b::c, a/mod.rs is a.
        let mut segs = parts.len();
        if rel.ends_with("/mod.rs") {
            segs -= 1;
        }
        out.push((rel, top, segs, b));
    }
    out
}

/// Every forbidden edge: "file:line: module (layer) imports target (layer)".
fn violations() -> (Vec<String>, BTreeMap<String, BTreeSet<String>>) {
    let mut bad = Vec::new();
    let mut graph: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (rel, top, depth, b) in core_files() {
        let Some((from_rank, from_layer)) = layer_of(&top) else {
            bad.push(format!(
                "src/{rel}: top-level module `{top}` is not in the layer table (tests/layers.rs)"
            ));
            continue;
        };
        for e in edges(&b, depth) {
            if e.to == top {
                continue;
            }
            match layer_of(&e.to) {
                None => bad.push(format!(
                    "src/{rel}:{}: `crate::{}` is not a module of the layer table (tests/layers.rs)",
                    e.line, e.to
                )),
                Some((to_rank, to_layer)) => {
                    graph.entry(top.clone()).or_default().insert(e.to.clone());
                    if to_rank > from_rank {
                        bad.push(format!(
                            "src/{rel}:{}: `{top}` ({from_layer}) imports `{}` ({to_layer}), a layer above it",
                            e.line, e.to
                        ));
                    }
                }
            }
        }
    }
    (bad, graph)
}

#[test]
fn every_import_goes_down_the_layer_table() {
    let (bad, _) = violations();
    assert!(
        bad.is_empty(),
        "imports the layer table forbids:\n{}",
        bad.join("\n")
    );
}

#[test]
fn top_level_modules_form_no_cycle() {
    let (_, graph) = violations();
    // Depth-first search; a grey node met again closes a cycle.
    fn visit(
        n: &str,
        g: &BTreeMap<String, BTreeSet<String>>,
        state: &mut BTreeMap<String, u8>,
        path: &mut Vec<String>,
    ) -> Option<Vec<String>> {
        match state.get(n) {
            Some(1) => {
                let at = path.iter().position(|p| p == n).unwrap();
                let mut c = path[at..].to_vec();
                c.push(n.to_string());
                return Some(c);
            }
            Some(2) => return None,
            _ => {}
        }
        state.insert(n.to_string(), 1);
        path.push(n.to_string());
        for m in g.get(n).into_iter().flatten() {
            if let Some(c) = visit(m, g, state, path) {
                return Some(c);
            }
        }
        path.pop();
        state.insert(n.to_string(), 2);
        None
    }
    let mut state = BTreeMap::new();
    for n in graph.keys() {
        if let Some(c) = visit(n, &graph, &mut state, &mut Vec::new()) {
            panic!(
                "the top-level modules import each other in a cycle: {}",
                c.join(" -> ")
            );
        }
    }
}

#[test]
fn every_top_level_module_is_in_the_table() {
    let lib = std::fs::read_to_string(src_dir().join("lib.rs")).unwrap();
    let b = blank(&lib);
    let text = String::from_utf8_lossy(&b);
    let mods: Vec<&str> = text
        .lines()
        .filter_map(|l| l.trim().strip_prefix("pub mod "))
        .map(|m| m.trim_end_matches(';').trim())
        .collect();
    assert!(mods.len() > 10, "lib.rs's modules were not found: {mods:?}");
    let missing: Vec<&&str> = mods.iter().filter(|m| layer_of(m).is_none()).collect();
    assert!(missing.is_empty(), "not in the layer table: {missing:?}");
}

/// The binding and the core's examples use the prelude and nothing deeper.
#[test]
fn the_binding_and_examples_use_only_the_prelude() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files: Vec<PathBuf> = Vec::new();
    for d in [root.join("../tierlab-py/src"), root.join("examples")] {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.extension().is_some_and(|x| x == "rs") {
                files.push(p);
            }
        }
    }
    assert!(files.len() >= 3, "{files:?}");
    let mut bad = Vec::new();
    for p in files {
        let b = blank(&std::fs::read_to_string(&p).unwrap());
        let needle = b"tierlab_core";
        let mut i = 0;
        while let Some(k) = b[i..].windows(needle.len()).position(|w| w == needle) {
            let at = i + k;
            i = at + needle.len();
            if at > 0 && is_ident(b[at - 1]) {
                continue;
            }
            let j = skip_ws(&b, i);
            if !b[j..].starts_with(b"::") {
                continue;
            }
            let k2 = skip_ws(&b, j + 2);
            let heads = if b.get(k2) == Some(&b'{') {
                group_heads(&b, k2)
            } else {
                vec![ident_at(&b, k2).0]
            };
            for h in heads {
                if h != "prelude" {
                    let line = b[..at].iter().filter(|&&c| c == b'\n').count() + 1;
                    bad.push(format!("{}:{line}: tierlab_core::{h}", p.display()));
                }
            }
        }
    }
    assert!(
        bad.is_empty(),
        "deep paths into the core (use tierlab_core::prelude):\n{}",
        bad.join("\n")
    );
}

/// docs/architecture.md shows the same table: each layer, top first, with
/// its modules.
#[test]
fn architecture_page_shows_the_table() {
    let page = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/architecture.md"),
    )
    .unwrap();
    for (layer, mods) in LAYERS {
        let row = page
            .lines()
            .find(|l| l.starts_with(&format!("| {layer} |")))
            .unwrap_or_else(|| panic!("docs/architecture.md has no row `| {layer} |`"));
        for m in mods.iter() {
            assert!(
                row.contains(&format!("`{m}`")),
                "docs/architecture.md's {layer} row lacks `{m}`: {row}"
            );
        }
    }
}

/// The parser itself: grouped uses, inline paths, super paths to the
/// root, comments and strings ignored, test items dropped.
#[test]
fn the_parser_finds_every_form_of_path() {
    let text = r#"
use crate::a::B;
use crate::{c, d::{E, F}};
fn f() { crate::g::H; let s = "crate::nope"; } // crate::nope
/* crate::nope */
#[cfg(test)]
mod tests { use crate::nope; }
fn k() { super::super::i::J; super::l; }
"#;
    let mut b = blank(text);
    drop_test_items(&mut b);
    let got: Vec<(usize, String)> = edges(&b, 2).into_iter().map(|e| (e.line, e.to)).collect();
    let want: Vec<(usize, String)> = vec![
        (2, "a".into()),
        (3, "c".into()),
        (3, "d".into()),
        (4, "g".into()),
        (8, "i".into()),
    ];
    assert_eq!(got, want);
}
