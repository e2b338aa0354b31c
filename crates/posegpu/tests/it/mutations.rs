//! A mutation campaign on the real files of `../shared/anim-data`: deterministic damage
//! (truncations, byte flips, JSON edits that keep the JSON valid but break the glTF, BVH line
//! and word edits), each copy loaded with `import::load`. For every one: no panic, no hang, and
//! either a typed error that names the file or an asset whose every number is finite; an edit
//! that changes no meaning (the JSON re-indented) loads the same as the original.
//!
//! `POSEGPU_MUTATIONS=N` runs N mutations of each kind per file instead of the default 3 (a
//! deeper campaign: `POSEGPU_MUTATIONS=50 cargo test --release --test mutations`), and
//! `POSEGPU_MUTATION_SEED` changes the seed, so fresh mutations nobody has seen can be tried.

use crate::common;

use std::path::Path;
use std::sync::mpsc;
use std::time::{Duration, Instant};

use serde_json::Value;

/// The files damaged: every format and tool of the data set, small and large.
const FILES: &[&str] = &[
    "bvh/cmu_walk_delfem2.bvh",
    "bvh/makehuman/zombieWalk1.bvh",
    "bvh/makehuman/tpose.bvh",
    "gltf/khronos/RiggedSimple.glb",
    "gltf/khronos/SimpleSkin.gltf",
    "gltf/khronos/CesiumMan.glb",
    "gltf/khronos/Fox.glb",
    "gltf/kaykit-rig-medium/manny_med_mod.gltf",
    "gltf/quaternius/Mech_Stan.glb",
    "gltf/kaykit-adventurers/Knight.glb",
];

/// Files of Debian's assimp-testmodels (installed by `scripts/setup`), damaged too where present.
const ASSIMP: &[&str] = &[
    "/usr/share/assimp/models/glTF2/simple_skin/simple_skin.gltf",
    "/usr/share/assimp/models/glTF2/glTF-Sample-Models/AnimatedMorphCube-glTF/AnimatedMorphCube.gltf",
    "/usr/share/assimp/models/BVH/01_01.bvh",
];

/// A load that takes longer than this is a hang.
const HANG: Duration = Duration::from_secs(20);

/// A small deterministic generator (64-bit LCG, high bits out).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        self.0 >> 33
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

fn per_kind() -> usize {
    std::env::var("POSEGPU_MUTATIONS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(3)
}

fn seed() -> u64 {
    std::env::var("POSEGPU_MUTATION_SEED")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(0x5eed)
}

/// A `.glb`'s JSON chunk and binary chunk.
fn split_glb(bytes: &[u8]) -> (Vec<u8>, Vec<u8>) {
    let u32_at = |i: usize| u32::from_le_bytes(bytes[i..i + 4].try_into().unwrap()) as usize;
    let json_len = u32_at(12);
    let json = bytes[20..20 + json_len].to_vec();
    let rest = 20 + json_len;
    let bin = if bytes.len() > rest + 8 {
        bytes[rest + 8..rest + 8 + u32_at(rest)].to_vec()
    } else {
        Vec::new()
    };
    (json, bin)
}

/// A `.glb` from a JSON chunk and a binary chunk (each padded to 4 bytes, as the format says).
fn join_glb(json: &[u8], bin: &[u8]) -> Vec<u8> {
    let mut json = json.to_vec();
    while !json.len().is_multiple_of(4) {
        json.push(b' ');
    }
    let mut bin = bin.to_vec();
    while !bin.len().is_multiple_of(4) {
        bin.push(0);
    }
    let total = 12 + 8 + json.len() + if bin.is_empty() { 0 } else { 8 + bin.len() };
    let mut out = Vec::with_capacity(total);
    out.extend(b"glTF");
    out.extend(2u32.to_le_bytes());
    out.extend((total as u32).to_le_bytes());
    out.extend((json.len() as u32).to_le_bytes());
    out.extend(b"JSON");
    out.extend(&json);
    if !bin.is_empty() {
        out.extend((bin.len() as u32).to_le_bytes());
        out.extend(b"BIN\0");
        out.extend(&bin);
    }
    out
}

/// Every number and every string in `v`, as JSON pointers.
fn leaves(v: &Value, at: String, numbers: &mut Vec<String>, strings: &mut Vec<String>) {
    match v {
        Value::Number(_) => numbers.push(at),
        Value::String(_) => strings.push(at),
        Value::Array(a) => {
            // Long arrays (matrices, data URIs are strings) are sampled, not listed whole.
            for (i, x) in a.iter().enumerate().take(32) {
                leaves(x, format!("{at}/{i}"), numbers, strings);
            }
        }
        Value::Object(o) => {
            for (k, x) in o {
                leaves(x, format!("{at}/{k}"), numbers, strings);
            }
        }
        _ => {}
    }
}

/// The JSON edits: each keeps the JSON valid and (most) break the glTF.
fn json_edits(json: &Value, rng: &mut Rng, n: usize) -> Vec<(String, Value)> {
    let (mut numbers, mut strings) = (Vec::new(), Vec::new());
    leaves(json, String::new(), &mut numbers, &mut strings);
    let mut out = Vec::new();
    let keys = [
        "accessors",
        "bufferViews",
        "buffers",
        "nodes",
        "skins",
        "animations",
        "meshes",
        "scenes",
    ];
    for _ in 0..n {
        let mut v = json.clone();
        let key = keys[rng.below(keys.len())];
        v.as_object_mut().unwrap().remove(key);
        out.push((format!("without {key}"), v));
        for (what, new) in [
            ("4294967297", Value::from(4_294_967_297u64)),
            ("-1", Value::from(-1)),
            ("1e39", serde_json::from_str("1e39").unwrap()),
            ("0", Value::from(0)),
        ] {
            let mut v = json.clone();
            let at = &numbers[rng.below(numbers.len())];
            *v.pointer_mut(at).unwrap() = new;
            out.push((format!("{at} = {what}"), v));
        }
        let mut v = json.clone();
        let at = &strings[rng.below(strings.len())];
        *v.pointer_mut(at).unwrap() = Value::from("bogus");
        out.push((format!("{at} = \"bogus\""), v));
    }
    out
}

/// The BVH edits: lines deleted, doubled or emptied, numbers made unreadable or huge.
fn bvh_edits(text: &str, rng: &mut Rng, n: usize) -> Vec<(String, String)> {
    let lines: Vec<&str> = text.lines().collect();
    let mut out = Vec::new();
    let edit = |k: usize, line: Option<String>| {
        let mut l: Vec<String> = lines.iter().map(|s| s.to_string()).collect();
        match line {
            Some(new) => l[k] = new,
            None => {
                l.remove(k);
            }
        }
        l.join("\n")
    };
    for _ in 0..n {
        let k = rng.below(lines.len());
        out.push((format!("line {} deleted", k + 1), edit(k, None)));
        let k = rng.below(lines.len());
        let doubled = format!("{}\n{}", lines[k], lines[k]);
        out.push((format!("line {} doubled", k + 1), edit(k, Some(doubled))));
        let k = rng.below(lines.len());
        out.push((
            format!("line {} emptied", k + 1),
            edit(k, Some(String::new())),
        ));
        for word in ["nan", "1e39", "-", "4294967297", "Xrotation"] {
            let k = rng.below(lines.len());
            let mut words: Vec<&str> = lines[k].split_whitespace().collect();
            if words.is_empty() {
                continue;
            }
            let w = rng.below(words.len());
            words[w] = word;
            let line = words.join(" ");
            out.push((
                format!("line {} word {} = {word}", k + 1, w + 1),
                edit(k, Some(line)),
            ));
        }
    }
    out
}

/// Byte-level damage: truncations and single byte flips.
fn byte_edits(bytes: &[u8], rng: &mut Rng, n: usize) -> Vec<(String, Vec<u8>)> {
    let mut out = Vec::new();
    for cut in [0, 11, bytes.len() / 3, bytes.len() - 1] {
        out.push((format!("cut at {cut}"), bytes[..cut].to_vec()));
    }
    for _ in 0..4 * n {
        let (at, x) = (rng.below(bytes.len()), 1 + rng.below(255) as u8);
        let mut b = bytes.to_vec();
        b[at] ^= x;
        out.push((format!("byte {at} ^= {x:#04x}"), b));
    }
    out
}

/// What a load gave, reduced to what the test compares.
#[derive(Debug, PartialEq)]
enum Outcome {
    Loaded(String),
    Failed(String),
}

/// Loads `path` on a thread: a panic or a hang fails the test, naming the mutation.
fn load(path: &Path, what: &str) -> Outcome {
    let (tx, rx) = mpsc::channel();
    let p = path.to_path_buf();
    std::thread::spawn(move || {
        let r = std::panic::catch_unwind(|| posegpu::import::load(&p));
        let _ = tx.send(r);
    });
    let start = Instant::now();
    let result = rx
        .recv_timeout(HANG)
        .unwrap_or_else(|_| panic!("{what}: no answer after {:?} (a hang)", start.elapsed()));
    match result {
        Err(_) => panic!("{what}: the loader panicked"),
        Ok(Err(e)) => {
            let msg = e.to_string();
            let name = path.file_name().unwrap().to_string_lossy();
            assert!(
                msg.contains(name.as_ref()),
                "{what}: the error does not name the file: {msg}"
            );
            assert!(
                !msg.contains("panicked"),
                "{what}: a reader panicked: {msg}"
            );
            Outcome::Failed(msg)
        }
        Ok(Ok(asset)) => {
            let s = &asset.skeleton;
            let finite = s.rest().iter().all(|t| t.is_finite())
                && asset.clips.iter().all(|c| {
                    let d = c.duration();
                    d.is_finite()
                        && [0.0, 0.5 * d, d]
                            .iter()
                            .all(|&t| c.pose_at(s.rest(), t).iter().all(|x| x.is_finite()))
                });
            assert!(finite, "{what}: loaded with a number that is not finite");
            let first = asset.clips.first().map(|c| {
                let p = c.pose_at(s.rest(), 0.5 * c.duration());
                format!("{:?}", p.first())
            });
            Outcome::Loaded(format!(
                "{:?} {} clips {first:?}",
                s.names(),
                asset.clips.len()
            ))
        }
    }
}

#[test]
fn damaged_copies_of_every_real_file_give_errors_or_clean_assets() {
    let dir = std::env::temp_dir().join(format!("posegpu-mutations-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let n = per_kind();
    let (mut loaded, mut refused) = (0, 0);
    let files: Vec<(String, std::path::PathBuf)> = FILES
        .iter()
        .map(|rel| (rel.to_string(), common::anim_data().join(rel)))
        .chain(
            ASSIMP
                .iter()
                .map(|p| (p.to_string(), std::path::PathBuf::from(p)))
                .filter(|(_, p)| p.exists()),
        )
        .collect();
    for (f, (rel, src)) in files.iter().enumerate() {
        let rel = rel.as_str();
        let bytes = std::fs::read(src).unwrap();
        let ext = src.extension().unwrap().to_string_lossy().into_owned();
        // A .gltf's external buffers go beside each copy.
        if ext == "gltf" {
            let json: Value = serde_json::from_slice(&bytes).unwrap();
            for b in json["buffers"].as_array().into_iter().flatten() {
                if let Some(uri) = b["uri"].as_str().filter(|u| !u.starts_with("data:")) {
                    std::fs::copy(src.with_file_name(uri), dir.join(uri)).unwrap();
                }
            }
        }
        let mut rng = Rng(seed() ^ ((f as u64 + 1) * 0x9e37_79b9));
        let original = load(src, rel);
        let mut copies: Vec<(String, Vec<u8>)> = byte_edits(&bytes, &mut rng, n);
        match ext.as_str() {
            "bvh" => {
                let text = String::from_utf8(bytes.clone()).unwrap();
                copies.extend(
                    bvh_edits(&text, &mut rng, n)
                        .into_iter()
                        .map(|(w, t)| (w, t.into_bytes())),
                );
            }
            _ => {
                let (json, bin) = if ext == "glb" {
                    split_glb(&bytes)
                } else {
                    (bytes.clone(), Vec::new())
                };
                let value: Value = serde_json::from_slice(&json).unwrap();
                let pack = |v: &Value, pretty: bool| {
                    let j = if pretty {
                        serde_json::to_vec_pretty(v).unwrap()
                    } else {
                        serde_json::to_vec(v).unwrap()
                    };
                    if ext == "glb" {
                        join_glb(&j, &bin)
                    } else {
                        j
                    }
                };
                // No meaning changed: the same asset (or a refusal where the original is one).
                let path = dir.join(format!("same{f}.{ext}"));
                std::fs::write(&path, pack(&value, true)).unwrap();
                let again = load(&path, &format!("{rel} re-indented"));
                if let Outcome::Loaded(_) = original {
                    assert_eq!(again, original, "{rel}");
                } else {
                    assert!(matches!(again, Outcome::Failed(_)), "{rel}");
                }
                copies.extend(
                    json_edits(&value, &mut rng, n)
                        .into_iter()
                        .map(|(w, v)| (w, pack(&v, false))),
                );
            }
        }
        for (k, (what, content)) in copies.iter().enumerate() {
            let path = dir.join(format!("m{f}_{k}.{ext}"));
            std::fs::write(&path, content).unwrap();
            match load(&path, &format!("{rel}: {what}")) {
                Outcome::Loaded(_) => loaded += 1,
                Outcome::Failed(_) => refused += 1,
            }
        }
    }
    eprintln!("{refused} damaged copies refused with a typed error, {loaded} loaded clean");
    assert!(refused > loaded, "most damage must be caught");
    let _ = std::fs::remove_dir_all(&dir);
}
