//! The library's top-level modules form no cycle: reading the sources (comments and test code
//! left out), every `crate::module` a module names is a module below it, so the data model sits
//! at the bottom and the backends on top. The runtime names nothing of the authoring side (ozz's
//! runtime/offline split). Every shader but `common.wgsl` has a CPU twin of its stem and every
//! CPU stage file a shader, and the map (`docs/architecture.md`) names them all.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// The source with comments, string literals and `#[cfg(test)]` items removed.
fn code_only(src: &str) -> String {
    let mut out = String::new();
    let mut skip_depth: Option<usize> = None;
    let mut depth = 0usize;
    let mut pending_cfg_test = false;
    for line in src.lines() {
        let line = match line.find("//") {
            Some(i) => &line[..i],
            None => line,
        };
        let trimmed = line.trim();
        if trimmed.starts_with("#[cfg(test)]") {
            pending_cfg_test = true;
            continue;
        }
        let opens = line.matches('{').count();
        let closes = line.matches('}').count();
        if pending_cfg_test && skip_depth.is_none() && !trimmed.is_empty() {
            pending_cfg_test = false;
            if opens > closes {
                skip_depth = Some(depth);
            } else {
                // A one-line item (`mod tests;`, a `use`): dropped.
                continue;
            }
        }
        depth = depth + opens - closes.min(depth + opens);
        if let Some(d) = skip_depth {
            if depth <= d {
                skip_depth = None;
            }
            continue;
        }
        // String literals may name paths ("crate::x" in a message); drop their contents.
        let mut in_string = false;
        for c in line.chars() {
            if c == '"' {
                in_string = !in_string;
            } else if !in_string {
                out.push(c);
            }
        }
        out.push('\n');
    }
    out
}

/// Every `crate::name` in `code`.
fn crate_paths(code: &str) -> BTreeSet<String> {
    code.match_indices("crate::")
        .map(|(i, _)| {
            code[i + 7..]
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect()
        })
        .collect()
}

fn rust_files(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs")
            && path.file_name().is_some_and(|n| n != "tests.rs")
        {
            out.push(path);
        }
    }
}

/// Top-level module → the top-level modules its code names.
fn module_graph() -> BTreeMap<String, BTreeSet<String>> {
    let mut graph = named_graph();
    // Names that are re-exports at the root (crate::Transform) are not modules.
    let modules: BTreeSet<String> = graph.keys().cloned().collect();
    for deps in graph.values_mut() {
        deps.retain(|d| modules.contains(d));
    }
    graph
}

/// Top-level module → every `crate::name` its code names (modules and root re-exports).
fn named_graph() -> BTreeMap<String, BTreeSet<String>> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let mut graph: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for file in files {
        let rel = file.strip_prefix(&src).unwrap();
        let first = rel
            .components()
            .next()
            .unwrap()
            .as_os_str()
            .to_string_lossy();
        let module = first.trim_end_matches(".rs").to_string();
        if module == "lib" {
            continue;
        }
        let code = code_only(&std::fs::read_to_string(&file).unwrap());
        let deps = graph.entry(module.clone()).or_default();
        deps.extend(crate_paths(&code).into_iter().filter(|d| *d != module));
    }
    graph
}

/// The names `lib.rs` re-exports at the root (`pub use module::{A, B}`), each with the
/// top-level module it comes from.
fn root_reexports(lib_rs: &str) -> BTreeMap<String, String> {
    let code = code_only(lib_rs);
    let mut out = BTreeMap::new();
    for item in code.split(';') {
        let Some(path) = item.trim().strip_prefix("pub use ") else {
            continue;
        };
        let module = path.split("::").next().unwrap_or("").trim().to_string();
        let names = match (path.find('{'), path.rfind('}')) {
            (Some(open), Some(close)) => &path[open + 1..close],
            _ => path.rsplit("::").next().unwrap_or(""),
        };
        for name in names.split(',').map(str::trim).filter(|n| !n.is_empty()) {
            out.insert(name.to_string(), module.clone());
        }
    }
    out
}

/// The shared model, at the bottom: what both sides and the shaders agree on. The records and
/// constants the GPU reads (`layout`), the spec's per-bone math (`math`: the transform, deltas,
/// the blend rule, inertialization), the data model (`model`) and the errors.
const SHARED: &[&str] = &["layout", "math", "model", "error"];
/// The runtime: what plays a built library. ozz's runtime, apart from its offline tools.
const RUNTIME: &[&str] = &[
    "library",
    "batch",
    "pose",
    "gpu",
    "cpu",
    "drive",
    "frame_plan",
    "playback",
];
/// The authoring side: what builds a library's inputs (retargeting, importing, exporting,
/// compressing, procedural assets, additive clips, blend spaces), what draws its output, and
/// the tools that measure the runtime (`analysis`).
const AUTHORING: &[&str] = &[
    "retarget",
    "import",
    "export",
    "procedural",
    "render",
    "compress",
    "additive",
    "blend",
    "analysis",
];

#[test]
fn every_module_is_on_one_side() {
    let graph = module_graph();
    let sides = [
        ("shared", SHARED),
        ("runtime", RUNTIME),
        ("authoring", AUTHORING),
    ];
    for m in graph.keys() {
        let on: Vec<&str> = sides
            .iter()
            .filter(|(_, ms)| ms.contains(&m.as_str()))
            .map(|(side, _)| *side)
            .collect();
        assert_eq!(
            on.len(),
            1,
            "src/{m} is on {on:?}: put it in exactly one of SHARED, RUNTIME, AUTHORING"
        );
    }
    // The shared model names nothing above it.
    for m in SHARED {
        let above: Vec<_> = graph[*m]
            .iter()
            .filter(|d| !SHARED.contains(&d.as_str()))
            .collect();
        assert!(above.is_empty(), "the shared module {m} names {above:?}");
    }
    // docs/architecture.md says the same.
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let map = std::fs::read_to_string(root.join("../../docs/architecture.md")).unwrap();
    for (side, ms) in sides {
        // The list item: its first line and those indented under it.
        let start = map
            .find(&format!("\n- **{side}**"))
            .unwrap_or_else(|| panic!("docs/architecture.md has no '- **{side}**' item"));
        let item = &map[start + 1..];
        let next_item = item[1..].find("\n- ").map(|i| i + 1);
        let end = next_item.into_iter().chain(item.find("\n\n")).min();
        let line = &item[..end.unwrap_or(item.len())];
        for m in ms {
            assert!(
                line.contains(&format!("`{m}`")),
                "docs/architecture.md's {side} item lacks `{m}`"
            );
        }
    }
}

#[test]
fn the_runtime_names_none_of_the_authoring_modules() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let reexports = root_reexports(&std::fs::read_to_string(src.join("lib.rs")).unwrap());
    // Every name resolved to its module, a root re-export (crate::Rig) to the one it is from.
    let mut graph = named_graph();
    let modules: BTreeSet<String> = graph.keys().cloned().collect();
    for deps in graph.values_mut() {
        *deps = deps
            .iter()
            .map(|d| reexports.get(d).unwrap_or(d).clone())
            .filter(|d| modules.contains(d))
            .collect();
    }
    for m in SHARED.iter().chain(RUNTIME).chain(AUTHORING) {
        assert!(graph.contains_key(*m), "no module {m} under src/");
    }
    // Everything the runtime reaches, through the modules it names (the data model, blending,
    // playback...), with the path that reached it.
    let mut reached: BTreeMap<String, Vec<String>> = RUNTIME
        .iter()
        .map(|m| (m.to_string(), vec![m.to_string()]))
        .collect();
    let mut queue: Vec<String> = RUNTIME.iter().map(|m| m.to_string()).collect();
    while let Some(m) = queue.pop() {
        for d in &graph[&m] {
            if !reached.contains_key(d) {
                let mut path = reached[&m].clone();
                path.push(d.clone());
                reached.insert(d.clone(), path);
                queue.push(d.clone());
            }
        }
    }
    let leaks: Vec<String> = AUTHORING
        .iter()
        .filter_map(|a| reached.get(*a))
        .map(|path| path.join(" -> "))
        .collect();
    assert!(
        leaks.is_empty(),
        "the runtime reaches the authoring side (test code aside): {leaks:#?}"
    );
}

#[test]
fn root_reexports_are_read_with_their_modules() {
    let found = root_reexports(
        "pub mod a;\n// pub use c::Z;\npub use a::{X, Y};\npub use b::c::{Z,\n    W};\n\
         pub use d::V;\n#[cfg(test)]\npub use e::U;\n",
    );
    let expected: BTreeMap<String, String> = [("X", "a"), ("Y", "a"), ("Z", "b"), ("W", "b")]
        .into_iter()
        .chain([("V", "d")])
        .map(|(n, m)| (n.to_string(), m.to_string()))
        .collect();
    assert_eq!(found, expected);
}

#[test]
fn the_module_graph_has_no_cycle() {
    let graph = module_graph();
    // Kahn's algorithm: peel off modules that depend on nothing left.
    let mut left = graph.clone();
    let mut order = Vec::new();
    while !left.is_empty() {
        let ready: Vec<String> = left
            .iter()
            .filter(|(_, deps)| deps.iter().all(|d| !left.contains_key(d)))
            .map(|(m, _)| m.clone())
            .collect();
        assert!(
            !ready.is_empty(),
            "a cycle among the modules {:?} (each with what it names): {:#?}",
            left.keys().collect::<Vec<_>>(),
            left
        );
        for m in ready {
            left.remove(&m);
            order.push(m);
        }
    }
    // The layering the architecture promises: the data model imports no backend.
    for bottom in ["math", "error", "model"] {
        for backend in ["cpu", "gpu", "library", "batch", "render", "import"] {
            assert!(
                !graph[bottom].contains(backend),
                "{bottom} names {backend}: {:?}",
                graph[bottom]
            );
        }
    }
    assert!(!graph["layout"].contains("gpu") && !graph["layout"].contains("cpu"));
    eprintln!("modules, bottom first: {}", order.join(" < "));
}

#[test]
fn the_checker_sees_a_cycle_through_code_but_not_through_comments_or_tests() {
    let code = code_only(
        "use crate::gpu::X; // crate::render\n\
         /// [`crate::import::load`]\n\
         let s = \"crate::export\";\n\
         #[cfg(test)]\n\
         mod tests {\n    use crate::cpu::Y;\n    fn f() { if true { crate::pose::z(); } }\n}\n\
         fn g() { crate::batch::h(); }\n",
    );
    let found = crate_paths(&code);
    let expected: BTreeSet<String> = ["gpu", "batch"].iter().map(|s| s.to_string()).collect();
    assert_eq!(found, expected);
}

#[test]
fn the_architecture_map_names_every_stage_and_twin() {
    // docs/architecture.md is the map a newcomer reads to find where a stage goes: a CPU twin
    // or a shader it does not name is a stage the map has lost.
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let map = std::fs::read_to_string(root.join("../../docs/architecture.md")).unwrap();
    let mut missing = Vec::new();
    for (dir, ext) in [("src/cpu", "rs"), ("shaders", "wgsl")] {
        for entry in std::fs::read_dir(root.join(dir)).unwrap() {
            let path = entry.unwrap().path();
            if path.extension().is_some_and(|e| e == ext) {
                let name = path.file_name().unwrap().to_string_lossy().into_owned();
                if !map.contains(&name) {
                    missing.push(format!("{dir}/{name}"));
                }
            }
        }
    }
    assert!(
        missing.is_empty(),
        "docs/architecture.md does not name {missing:?}"
    );
}

/// The files of `src/cpu/` that are no stage's twin, and why.
const NOT_A_STAGE: [(&str, &str); 2] = [
    (
        "mod",
        "the CPU evaluator, which runs the twins in the GPU's order",
    ),
    (
        "crowd",
        "the CPU crowd stepper, which runs advance.rs and root_motion.rs",
    ),
];

/// Shaders that read a state rather than run a stage, whose CPU twin lives with that state.
const TWIN_WITH_ITS_STATE: [(&str, &str); 1] = [("playback", "src/playback/state.rs")];

/// A line for every shader stem but `common` and [`TWIN_WITH_ITS_STATE`]'s with no CPU stem of
/// its name, and every CPU stem outside [`NOT_A_STAGE`] with no shader.
fn unpaired(shaders: &BTreeSet<String>, cpu: &BTreeSet<String>) -> Vec<String> {
    let elsewhere = |s: &str| TWIN_WITH_ITS_STATE.iter().any(|(n, _)| *n == s);
    let no_twin = shaders
        .iter()
        .filter(|s| *s != "common" && !elsewhere(s) && !cpu.contains(*s))
        .map(|s| format!("shaders/{s}.wgsl has no src/cpu/{s}.rs"));
    let no_shader = cpu
        .iter()
        .filter(|s| !NOT_A_STAGE.iter().any(|(n, _)| n == s) && !shaders.contains(*s))
        .map(|s| format!("src/cpu/{s}.rs has no shaders/{s}.wgsl"));
    no_twin.chain(no_shader).collect()
}

#[test]
fn every_shader_has_a_cpu_twin_of_its_stem_and_every_twin_a_shader() {
    // A reader finds a stage's CPU code by its shader's name and back: every WGSL file but
    // common.wgsl (the types and math every stage shares) has cpu/<stem>.rs, or, for a shader
    // that reads a state (playback.wgsl), a twin beside that state.
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let stems = |dir: &str, ext: &str| -> BTreeSet<String> {
        std::fs::read_dir(root.join(dir))
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|e| e == ext))
            .map(|p| p.file_stem().unwrap().to_string_lossy().into_owned())
            .collect()
    };
    let (shaders, cpu) = (stems("shaders", "wgsl"), stems("src/cpu", "rs"));
    let unpaired = unpaired(&shaders, &cpu);
    assert!(unpaired.is_empty(), "{unpaired:#?}");
    // A stale exception would hide a stage file that lost its shader.
    for (name, why) in NOT_A_STAGE {
        assert!(cpu.contains(name), "src/cpu/{name}.rs ({why}) is gone");
    }
    // A twin kept with its state says which shader it is the twin of.
    for (shader, twin) in TWIN_WITH_ITS_STATE {
        let text = std::fs::read_to_string(root.join(twin)).unwrap();
        assert!(shaders.contains(shader), "shaders/{shader}.wgsl is gone");
        assert!(text.contains(&format!("`shaders/{shader}.wgsl`")), "{twin}");
    }
}

#[test]
fn the_twin_checker_reports_a_shader_or_a_twin_alone() {
    let set = |names: &[&str]| names.iter().map(|s| s.to_string()).collect::<BTreeSet<_>>();
    let shaders = set(&["common", "sample", "pose"]);
    let cpu = set(&["mod", "crowd", "sample", "evaluator"]);
    assert_eq!(
        unpaired(&shaders, &cpu),
        [
            "shaders/pose.wgsl has no src/cpu/pose.rs",
            "src/cpu/evaluator.rs has no shaders/evaluator.wgsl",
        ]
    );
}
