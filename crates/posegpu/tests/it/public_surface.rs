//! One path per public item: reading `lib.rs` and every public module, each name the crate
//! exports (a `pub use` of the root or of a public module, or an item a public module defines)
//! is reachable by one path. The runtime's types are re-exported at the root from private
//! modules; the tools' types live in their public module only.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// `dir/name.rs` or `dir/name/mod.rs`, and the directory its submodules live in.
fn module_file(dir: &Path, name: &str) -> (PathBuf, PathBuf) {
    let flat = dir.join(format!("{name}.rs"));
    if flat.exists() {
        (flat, dir.join(name))
    } else {
        (dir.join(name).join("mod.rs"), dir.join(name))
    }
}

/// The leaf names of a `use` tree (`a::{b, c::{d as e}}` gives `b`, `e`).
fn leaves(tree: &str) -> Vec<String> {
    let tree = tree.trim();
    if let Some(open) = tree.find('{') {
        let inner = &tree[open + 1..tree.rfind('}').unwrap_or(tree.len())];
        let (mut depth, mut start, mut out) = (0, 0, Vec::new());
        for (i, c) in inner.char_indices() {
            match c {
                '{' => depth += 1,
                '}' => depth -= 1,
                ',' if depth == 0 => {
                    out.extend(leaves(&inner[start..i]));
                    start = i + 1;
                }
                _ => {}
            }
        }
        out.extend(leaves(&inner[start..]));
        return out;
    }
    let last = tree.rsplit(" as ").next().unwrap_or(tree);
    let name = last.rsplit("::").next().unwrap_or(last).trim();
    if name.is_empty() {
        Vec::new()
    } else {
        vec![name.to_string()]
    }
}

/// Every name `file` (the module at `path`) exports, into `out` (name → paths), its public
/// submodules read in turn. Only items at the file's top level count (test modules are
/// indented).
fn exports(file: &Path, dir: &Path, path: &str, out: &mut BTreeMap<String, Vec<String>>) {
    let text = std::fs::read_to_string(file).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
    let code: String = text
        .lines()
        .filter(|l| !l.trim_start().starts_with("//"))
        .map(|l| format!("{l}\n"))
        .collect();
    let mut rest = code.as_str();
    while let Some(at) = rest.find("\npub ") {
        rest = &rest[at + 5..];
        let word: String = rest.chars().take_while(|c| c.is_alphanumeric()).collect();
        let after = rest[word.len()..].trim_start();
        let name: String = after
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect();
        match word.as_str() {
            "use" => {
                let tree = &after[..after.find(';').unwrap_or(after.len())];
                if tree.trim() == "glam" {
                    continue;
                }
                for leaf in leaves(tree) {
                    out.entry(leaf).or_default().push(path.to_string());
                }
            }
            "mod" => {
                let (child, child_dir) = module_file(dir, &name);
                exports(&child, &child_dir, &format!("{path}::{name}"), out);
            }
            "fn" | "struct" | "enum" | "trait" | "const" | "static" | "type" => {
                out.entry(name).or_default().push(path.to_string());
            }
            _ => {}
        }
    }
}

#[test]
fn every_public_item_has_one_path() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut names = BTreeMap::new();
    exports(&src.join("lib.rs"), &src, "posegpu", &mut names);
    assert!(
        names.len() > 100,
        "the reader found only {} names",
        names.len()
    );
    for must in [
        "AnimLibrary",
        "GpuEvaluator",
        "Transform",
        "RetargetPlan",
        "load_gltf",
    ] {
        assert!(names.contains_key(must), "{must} is not found exported");
    }
    let twice: Vec<String> = names
        .iter()
        .filter(|(_, paths)| paths.len() > 1)
        .map(|(name, paths)| format!("{name}: {}", paths.join(", ")))
        .collect();
    assert!(
        twice.is_empty(),
        "names exported by more than one path: {twice:#?}"
    );
}

#[test]
fn the_reader_sees_nested_use_trees_and_renames() {
    assert_eq!(
        leaves("a::{b, c::{d as e, f}, g::h}"),
        ["b", "e", "f", "h"].map(String::from)
    );
    assert_eq!(leaves("crate::gpu::PassTimer"), ["PassTimer"]);
}
