//! glTF import: every real file loads with the expected skeleton and clips; broken files give
//! typed errors, never a panic.

use crate::common;

use std::f32::consts::FRAC_1_SQRT_2;
use std::path::{Path, PathBuf};

use posegpu::{AnimLibrary, ClipSample, Error, Interpolation};

fn load(rel: &str) -> posegpu::Asset {
    let path = common::anim_data().join(rel);
    posegpu::import::load(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

#[test]
fn real_files_have_the_documented_skeletons_and_clips() {
    // (file, joints, clips) from anim-data/README.md
    let expected = [
        ("gltf/quaternius/Mech_Mike.glb", 43, 18),
        ("gltf/quaternius/Mech_Stan.glb", 43, 18),
        ("gltf/khronos/CesiumMan.glb", 19, 1),
        ("gltf/khronos/RiggedFigure.glb", 19, 1),
        ("gltf/khronos/Fox.glb", 24, 3),
        ("gltf/khronos/RiggedSimple.glb", 2, 1),
        ("gltf/khronos/SimpleSkin.gltf", 2, 1),
        ("gltf/kaykit-adventurers/Knight.glb", 41, 76),
        ("gltf/kaykit-adventurers/Barbarian.glb", 41, 76),
        ("gltf/kaykit-rig-medium/Med_General.glb", 23, 15),
        ("gltf/kaykit-rig-medium/Med_MovementBasic.glb", 23, 11),
        ("gltf/kaykit-rig-medium/Med_MovementAdvanced.glb", 23, 13),
        ("gltf/kaykit-rig-medium/manny_med_mod.gltf", 21, 0),
    ];
    for (file, joints, clips) in expected {
        let asset = load(file);
        assert_eq!(asset.skeleton.len(), joints, "{file}: bones");
        assert_eq!(asset.clips.len(), clips, "{file}: clips");
        let parents = asset.skeleton.parents();
        assert!(
            parents.iter().enumerate().all(|(i, &p)| p < i as i32),
            "{file}: parents-first"
        );
        AnimLibrary::new(&asset.skeleton, &asset.clips).unwrap();
    }
}

#[test]
fn skin_joint_order_is_kept_as_a_mapping() {
    for file in [
        "gltf/khronos/Fox.glb",
        "gltf/quaternius/Mech_Mike.glb",
        "gltf/khronos/CesiumMan.glb",
    ] {
        let asset = load(file);
        let mut seen = asset.skeleton.source_index().to_vec();
        seen.sort();
        assert_eq!(
            seen,
            (0..asset.skeleton.len()).collect::<Vec<_>>(),
            "{file}: a permutation"
        );
    }
}

#[test]
fn interpolation_scale_and_late_first_keys_come_through() {
    let general = load("gltf/kaykit-rig-medium/Med_General.glb");
    let step = general.clips.iter().flat_map(|c| c.tracks()).flat_map(|t| {
        [
            t.translation.as_ref().map(|c| c.interpolation),
            t.rotation.as_ref().map(|c| c.interpolation),
        ]
    });
    assert!(
        step.flatten().any(|i| i == Interpolation::Step),
        "Med_General has STEP keys"
    );

    let spawn = general
        .clips
        .iter()
        .find(|c| c.name().ends_with("Spawn_Air"))
        .expect("Spawn_Air");
    let scaled = spawn
        .tracks()
        .iter()
        .filter_map(|t| t.scale.as_ref())
        .any(|c| {
            c.values
                .iter()
                .any(|s| (*s - glam::Vec3::ONE).abs().max_element() > 1e-3)
        });
    assert!(scaled, "Spawn_Air animates scale");

    let simple = load("gltf/khronos/RiggedSimple.glb");
    let first = simple.clips[0]
        .tracks()
        .iter()
        .filter_map(|t| t.rotation.as_ref())
        .map(|c| c.times[0]);
    assert!(
        first.into_iter().all(|t| (t - 1.0 / 24.0).abs() < 1e-4),
        "keys start at 1/24"
    );
}

#[test]
fn the_data_uri_file_loads_and_animates() {
    let asset = load("gltf/khronos/SimpleSkin.gltf");
    let lib = AnimLibrary::new(&asset.skeleton, &asset.clips).unwrap();
    let d = lib.clip_duration(0);
    let poses = common::cpu_eval(
        &lib,
        &[
            ClipSample::new(0, 0.0, false),
            ClipSample::new(0, d / 5.5, false),
        ],
    );
    assert_ne!(
        poses.local(0, 1).rotation,
        poses.local(1, 1).rotation,
        "the joint moves"
    );
}

fn copy_to_temp(name: &str, bytes: &[u8]) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("posegpu-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    std::fs::write(&path, bytes).unwrap();
    path
}

#[test]
fn truncated_and_corrupted_copies_give_errors_not_panics() {
    for file in [
        "gltf/quaternius/Mech_Mike.glb",
        "gltf/khronos/Fox.glb",
        "gltf/khronos/SimpleSkin.gltf",
    ] {
        let src = common::anim_data().join(file);
        let bytes = std::fs::read(&src).unwrap();
        let ext = src.extension().unwrap().to_str().unwrap();
        for cut in [
            0,
            11,
            20,
            bytes.len() / 10,
            bytes.len() / 2,
            bytes.len() - 1,
        ] {
            let path = copy_to_temp(&format!("cut{cut}.{ext}"), &bytes[..cut]);
            let err = posegpu::import::load(&path).expect_err("a truncated file must not load");
            assert!(
                matches!(err, Error::Gltf { .. }),
                "{file} cut at {cut}: {err}"
            );
        }
        // Flip bytes all over the file: it may load (padding, image bytes) but must not panic.
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        for round in 0..12 {
            let mut bad = bytes.clone();
            for _ in 0..8 {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                let i = (state % bad.len() as u64) as usize;
                bad[i] ^= (state >> 32) as u8 | 1;
            }
            let path = copy_to_temp(&format!("flip{round}.{ext}"), &bad);
            if let Ok(asset) = posegpu::import::load(&path) {
                AnimLibrary::new(&asset.skeleton, &asset.clips).unwrap();
            }
        }
    }
}

/// Debian's assimp-testmodels: deliberately broken glTF files.
#[test]
fn assimp_broken_gltf_set() {
    let root = Path::new("/usr/share/assimp/models/glTF2");
    if !root.is_dir() {
        assert!(
            std::env::var("CI").map_or(true, |v| v != "true"),
            "CI=true but assimp-testmodels is not installed"
        );
        eprintln!("skipping: assimp-testmodels not installed");
        return;
    }
    let mut tried = 0;
    for dir in [
        "wrongTypes",
        "IndexOutOfRange",
        "RecursiveNodes",
        "MissingBin",
        "TestNoRootNode",
    ] {
        let mut stack = vec![root.join(dir)];
        while let Some(d) = stack.pop() {
            for entry in std::fs::read_dir(&d).unwrap() {
                let path = entry.unwrap().path();
                if path.is_dir() {
                    stack.push(path);
                } else if matches!(
                    path.extension().and_then(|e| e.to_str()),
                    Some("gltf" | "glb")
                ) {
                    tried += 1;
                    match posegpu::import::load(&path) {
                        Ok(a) => eprintln!("{}: loaded {} bones", path.display(), a.skeleton.len()),
                        Err(e) => {
                            assert!(matches!(e, Error::Gltf { .. }), "{}: {e}", path.display());
                            eprintln!("{}: {e}", path.display());
                        }
                    }
                }
            }
        }
    }
    assert!(tried >= 5, "only {tried} files found");
}

#[test]
fn a_missing_file_and_an_unknown_extension() {
    let err = posegpu::import::load("/nonexistent/model.glb").unwrap_err();
    assert!(
        matches!(err, Error::Io { .. }) && err.to_string().contains("/nonexistent/model.glb"),
        "{err}"
    );
    let err = posegpu::import::load("model.fbx").unwrap_err();
    assert!(matches!(err, Error::UnknownFormat { .. }), "{err}");
}

/// A glTF whose skin lists a child joint before its parent, with a non-joint node between the
/// two joints, an armature node above them, a channel on a node outside the skeleton, and the
/// given interpolation on the joint's rotation channel.
fn synthetic_gltf(name: &str, interpolation: &str) -> PathBuf {
    let floats: Vec<f32> = [
        // inverse bind matrices (column-major): hand at (0,2,1), hips at (0,0,1)
        [
            1., 0., 0., 0., 0., 1., 0., 0., 0., 0., 1., 0., 0., -2., -1., 1.,
        ]
        .as_slice(),
        &[
            1., 0., 0., 0., 0., 1., 0., 0., 0., 0., 1., 0., 0., 0., -1., 1.,
        ],
        &[0., 1.],                                               // key times
        &[0., 0., 0., 1., 0., 0., FRAC_1_SQRT_2, FRAC_1_SQRT_2], // rotations: identity, Rz90
        &[0., 0., 0., 5., 0., 0.],                               // the prop's translations
    ]
    .concat();
    let bytes: Vec<u8> = floats.iter().flat_map(|f| f.to_le_bytes()).collect();
    let dir = std::env::temp_dir().join(format!("posegpu-synthetic-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join(format!("{name}.bin")), &bytes).unwrap();
    let json = format!(
        r#"{{
  "asset": {{"version": "2.0"}},
  "scene": 0, "scenes": [{{"nodes": [0, 4]}}],
  "nodes": [
    {{"name": "armature", "rotation": [0.7071068, 0, 0, 0.7071068], "children": [3]}},
    {{"name": "hand", "translation": [0, 1, 0]}},
    {{"name": "mid", "translation": [0, 1, 0], "children": [1]}},
    {{"name": "hips", "translation": [0, 0, 1], "children": [2]}},
    {{"name": "prop"}}
  ],
  "skins": [{{"joints": [1, 3], "inverseBindMatrices": 0}}],
  "buffers": [{{"uri": "{name}.bin", "byteLength": 192}}],
  "bufferViews": [
    {{"buffer": 0, "byteOffset": 0, "byteLength": 128}},
    {{"buffer": 0, "byteOffset": 128, "byteLength": 8}},
    {{"buffer": 0, "byteOffset": 136, "byteLength": 32}},
    {{"buffer": 0, "byteOffset": 168, "byteLength": 24}}
  ],
  "accessors": [
    {{"bufferView": 0, "componentType": 5126, "count": 2, "type": "MAT4"}},
    {{"bufferView": 1, "componentType": 5126, "count": 2, "type": "SCALAR", "min": [0], "max": [1]}},
    {{"bufferView": 2, "componentType": 5126, "count": 2, "type": "VEC4"}},
    {{"bufferView": 3, "componentType": 5126, "count": 2, "type": "VEC3"}}
  ],
  "animations": [{{
    "name": "wave",
    "samplers": [
      {{"input": 1, "output": 2, "interpolation": "{interpolation}"}},
      {{"input": 1, "output": 3}}
    ],
    "channels": [
      {{"sampler": 0, "target": {{"node": 1, "path": "rotation"}}}},
      {{"sampler": 1, "target": {{"node": 4, "path": "translation"}}}}
    ]
  }}]
}}"#
    );
    let path = dir.join(format!("{name}.gltf"));
    std::fs::write(&path, json).unwrap();
    path
}

#[test]
fn joints_are_reordered_with_their_tracks_and_binds() {
    let asset = posegpu::import::load(synthetic_gltf("reorder", "LINEAR")).unwrap();
    let s = &asset.skeleton;
    assert_eq!(
        s.names(),
        ["hips", "mid", "hand"],
        "parents-first, the non-joint node kept"
    );
    assert_eq!(s.parents(), [-1, 0, 1]);
    assert_eq!(
        s.source_index(),
        [1, 2, 0],
        "hips is skin joint 1, hand joint 0, mid no joint"
    );
    assert_eq!(
        asset.nodes.as_deref(),
        Some([3, 2, 1].as_slice()),
        "each bone's node, in the reordered bone order"
    );
    let lib = AnimLibrary::new(s, &asset.clips).unwrap();
    assert_eq!(lib.clip_names(), ["wave"]);
    let poses = common::cpu_eval(
        &lib,
        &[
            ClipSample::new(0, 0.0, false),
            ClipSample::new(0, 1.0, false),
        ],
    );
    // The armature's rotation is not applied: component space is the space above the hips.
    let hand = poses.component(1, 2);
    assert!(
        hand.translation
            .abs_diff_eq(glam::Vec3::new(0.0, 2.0, 1.0), 1e-6),
        "{}",
        hand.translation
    );
    assert!(hand.rotation.abs_diff_eq(
        glam::Quat::from_rotation_z(std::f32::consts::FRAC_PI_2),
        1e-6
    ));
    // The rest pose skins to identity: each joint got its own inverse bind matrix.
    for bone in 0..3 {
        let m = posegpu::math::rows_to_mat4(poses.skinning(0, bone));
        let expected = if bone == 1 {
            glam::Mat4::from_translation(glam::Vec3::new(0.0, 1.0, 1.0))
        } else {
            glam::Mat4::IDENTITY
        };
        assert!(m.abs_diff_eq(expected, 1e-6), "bone {bone}: {m}");
    }
    // The prop's channel was skipped; only the hand is animated.
    assert!(asset.clips[0].tracks()[2].rotation.is_some());
    assert!(asset.clips[0].tracks()[..2]
        .iter()
        .all(|t| !t.is_animated()));
}

/// Writes `json` (with `{bin}` standing for the buffer's file name) and `floats` as its buffer.
fn write_gltf(name: &str, json: &str, floats: &[f32]) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("posegpu-gltf-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let bytes: Vec<u8> = floats.iter().flat_map(|f| f.to_le_bytes()).collect();
    std::fs::write(dir.join(format!("{name}.bin")), &bytes).unwrap();
    let path = dir.join(format!("{name}.gltf"));
    let json = json
        .replace("{bin}", &format!("{name}.bin"))
        .replace("{len}", &bytes.len().to_string());
    std::fs::write(&path, json).unwrap();
    path
}

/// An animation library as such files ship: a node hierarchy (armature, hips, leg) and a clip,
/// no skin, no mesh; the leg's translation is a CUBICSPLINE channel (in-tangent, value,
/// out-tangent per key), and the one scene lists no nodes (allowed).
fn clip_only_cubic(name: &str) -> PathBuf {
    let floats = [
        0., 1., // key times
        0., 0., 0., 0., 0., 0., 3., 0., 0., // key 0: in, value 0, out (3, 0, 0)
        0., 0., 0., 1., 0., 0., 0., 0., 0., // key 1: in 0, value (1, 0, 0), out
    ];
    let json = r#"{
  "asset": {"version": "2.0"},
  "scenes": [{}],
  "nodes": [
    {"name": "Armature", "children": [1]},
    {"name": "Hips", "translation": [0, 1, 0], "children": [2]},
    {"name": "Leg", "translation": [0, -0.5, 0]},
    {"name": "Lamp"}
  ],
  "buffers": [{"uri": "{bin}", "byteLength": {len}}],
  "bufferViews": [
    {"buffer": 0, "byteOffset": 0, "byteLength": 8},
    {"buffer": 0, "byteOffset": 8, "byteLength": 72}
  ],
  "accessors": [
    {"bufferView": 0, "componentType": 5126, "count": 2, "type": "SCALAR", "min": [0], "max": [1]},
    {"bufferView": 1, "componentType": 5126, "count": 6, "type": "VEC3"}
  ],
  "animations": [{
    "name": "kick",
    "samplers": [{"input": 0, "output": 1, "interpolation": "CUBICSPLINE"}],
    "channels": [
      {"sampler": 0, "target": {"node": 2, "path": "translation"}},
      {"sampler": 0, "target": {"node": 1, "path": "scale"}}
    ]
  }]
}"#;
    write_gltf(name, json, &floats)
}

#[test]
fn a_clip_only_file_gives_the_hierarchy_its_clips_animate() {
    let asset = posegpu::import::load(clip_only_cubic("clip_only")).unwrap();
    // The deepest node above both animated nodes (Hips) and all under it; the armature above
    // places it in the world, the lamp beside it is not part of it.
    assert_eq!(asset.skeleton.names(), ["Hips", "Leg"]);
    assert_eq!(asset.nodes.as_deref(), Some([1, 2].as_slice()));
    assert_eq!(asset.clips.len(), 1);
    assert!(asset.skeleton.inverse_bind().iter().all(Option::is_none));
}

#[test]
fn cubic_spline_channels_are_baked_within_the_tolerance() {
    // Hermite from 0 (out-tangent 3) to 1 (in-tangent 0) over one second:
    // p(s) = 3 (s³ − 2s² + s) + (−2s³ + 3s²) = s³ − 3s² + 3s.
    let asset = posegpu::import::load(clip_only_cubic("cubic")).unwrap();
    let clip = &asset.clips[0];
    let leg = asset.skeleton.find("Leg").unwrap();
    let track = &clip.tracks()[leg];
    let channel = track.translation.as_ref().unwrap();
    assert!(channel.times.len() > 2, "the curve needs keys in between");
    assert_eq!(channel.interpolation, Interpolation::Linear);
    for k in 0..=20 {
        let s = k as f32 / 20.0;
        let want = s * s * s - 3.0 * s * s + 3.0 * s;
        let have = clip.pose_at(asset.skeleton.rest(), s)[leg].translation.x;
        assert!(
            (have - want).abs() <= posegpu::import::CUBIC_TOLERANCE,
            "at {s}: {have} vs {want}"
        );
    }
    // A CUBICSPLINE output without three values per key is refused by name.
    let json = std::fs::read_to_string(clip_only_cubic("cubic_short"))
        .unwrap()
        .replace(r#""count": 6"#, r#""count": 4"#);
    let path = std::env::temp_dir()
        .join(format!("posegpu-gltf-{}", std::process::id()))
        .join("cubic_short.gltf");
    std::fs::write(&path, json).unwrap();
    let err = posegpu::import::load(&path).unwrap_err().to_string();
    assert!(
        err.contains("CUBICSPLINE needs 3 values per key") && err.contains("kick"),
        "{err}"
    );
}

#[test]
fn indices_types_and_ranges_are_checked_before_the_gltf_crate_reads_them() {
    // Each edit keeps the JSON valid and breaks the glTF: a typed error that names the field,
    // never a panic, never a wrapped index, never a silent repair.
    let base = std::fs::read_to_string(synthetic_gltf("indices", "LINEAR")).unwrap();
    let dir = std::env::temp_dir().join(format!("posegpu-synthetic-{}", std::process::id()));
    let cases = [
        (
            r#""joints": [1, 3]"#,
            r#""joints": [1, 4294967297]"#,
            "skins[0].joints[1]",
        ),
        (
            r#""children": [3]"#,
            r#""children": [30]"#,
            "nodes[0].children[0]",
        ),
        (
            r#""path": "rotation""#,
            r#""path": "bogus""#,
            "'bogus' is not a glTF animation path",
        ),
        (
            r#""node": 4, "path""#,
            r#""node": 9, "path""#,
            "channels[1].target.node",
        ),
        (
            r#""inverseBindMatrices": 0"#,
            r#""inverseBindMatrices": 7"#,
            "inverseBindMatrices",
        ),
        (
            r#""version": "2.0""#,
            r#""version": "1.0""#,
            "glTF 1.0 is not supported",
        ),
        // Key times read from the prop's [0, 0]: equal times.
        (
            r#"{"buffer": 0, "byteOffset": 128, "byteLength": 8}"#,
            r#"{"buffer": 0, "byteOffset": 168, "byteLength": 8}"#,
            "key times must increase strictly",
        ),
        // Rotations read from the inverse bind matrix: [0, -2, -1, 1] is not unit.
        (
            r#"{"buffer": 0, "byteOffset": 136, "byteLength": 32}"#,
            r#"{"buffer": 0, "byteOffset": 48, "byteLength": 32}"#,
            "is not a unit quaternion",
        ),
        (
            r#""count": 2, "type": "SCALAR""#,
            r#""count": 2, "type": "VEC2""#,
            "key times: accessor 1 is VEC2",
        ),
        (
            r#"{"sampler": 1, "target": {"node": 4, "path": "translation"}}"#,
            r#"{"sampler": 1, "target": {"node": 1, "path": "rotation"}}"#,
            "node 1's rotation is animated twice",
        ),
        (
            r#"{"buffer": 0, "byteOffset": 136, "byteLength": 32}"#,
            r#"{"buffer": 0, "byteOffset": 136, "byteLength": 16}"#,
            "need more than its buffer view's 16 bytes",
        ),
        (
            r#""byteLength": 192}]"#,
            r#""byteLength": 100}]"#,
            "lie past its buffer's 100",
        ),
        (
            r#""children": [3]"#,
            r#""children": [0]"#,
            "node 0 lists itself as its own child",
        ),
        (
            r#""translation": [0, 0, 1], "children": [2]"#,
            r#""matrix": [0,0,0,0, 0,0,0,0, 0,0,0,0, 0,0,0,0], "children": [2]"#,
            "node 3 'hips': its matrix is singular",
        ),
    ];
    for (i, (from, to, says)) in cases.iter().enumerate() {
        assert!(base.contains(from), "{from}");
        let path = dir.join(format!("indices_{i}.gltf"));
        std::fs::write(&path, base.replace(from, to)).unwrap();
        let err = posegpu::import::load(&path).unwrap_err();
        assert!(matches!(err, Error::Gltf { .. }), "{err}");
        let msg = err.to_string();
        assert!(
            msg.contains(says) && msg.contains("indices_"),
            "{to}: {msg}"
        );
    }
    // Accessors removed while the file still refers to them.
    let start = base.find(r#""accessors""#).unwrap();
    let end = start + base[start..].find("\n  ]").unwrap() + 4;
    let path = dir.join("no_accessors.gltf");
    std::fs::write(
        &path,
        format!("{}\"accessors\": []{}", &base[..start], &base[end..]),
    )
    .unwrap();
    let msg = posegpu::import::load(&path).unwrap_err().to_string();
    assert!(msg.contains("accessors (the file has 0)"), "{msg}");
}

#[test]
fn a_draco_compressed_file_still_gives_its_skeleton_and_clips() {
    // The meshes and their accessors (no buffer view: their data is in the Draco stream) are
    // dropped, the other accessors renumbered; reading the meshes says why it cannot.
    let base = std::fs::read_to_string(synthetic_gltf("draco", "LINEAR")).unwrap();
    let mut json: serde_json::Value = serde_json::from_str(&base).unwrap();
    let shift = |v: &mut serde_json::Value| *v = (v.as_u64().unwrap() + 1).into();
    shift(&mut json["skins"][0]["inverseBindMatrices"]);
    for sampler in json["animations"][0]["samplers"].as_array_mut().unwrap() {
        shift(&mut sampler["input"]);
        shift(&mut sampler["output"]);
    }
    json["accessors"].as_array_mut().unwrap().insert(
        0,
        serde_json::json!({"componentType": 5126, "count": 3, "type": "VEC3"}),
    );
    json["extensionsUsed"] = serde_json::json!(["KHR_draco_mesh_compression"]);
    json["extensionsRequired"] = serde_json::json!(["KHR_draco_mesh_compression"]);
    json["meshes"] = serde_json::json!([{"primitives": [{"attributes": {"POSITION": 0},
        "extensions": {"KHR_draco_mesh_compression": {"bufferView": 0, "attributes": {"POSITION": 0}}}}]}]);
    json["nodes"][4]["mesh"] = 0.into();
    let path = std::env::temp_dir()
        .join(format!("posegpu-synthetic-{}", std::process::id()))
        .join("draco.gltf");
    std::fs::write(&path, json.to_string()).unwrap();
    let asset = posegpu::import::load(&path).unwrap();
    assert_eq!(asset.skeleton.names(), ["hips", "mid", "hand"]);
    assert_eq!(asset.clips.len(), 1);
    let reference = posegpu::import::load(synthetic_gltf("draco_plain", "LINEAR")).unwrap();
    // The inverse binds and the samplers were renumbered right.
    assert_eq!(
        asset.skeleton.inverse_bind(),
        reference.skeleton.inverse_bind()
    );
    assert_eq!(asset.clips, reference.clips);
    // assimp's real Draco file is a static model: refused for that, not for its accessors.
    let real = Path::new("/usr/share/assimp/models/glTF2/draco/2CylinderEngine.gltf");
    if real.exists() {
        let msg = posegpu::import::load(real).unwrap_err().to_string();
        assert!(msg.contains("no skin and no animated node"), "{msg}");
    }
}

#[test]
fn a_file_past_the_size_limit_is_refused_before_it_is_read() {
    let limit = posegpu::import::DEFAULT_MAX_FILE_BYTES;
    assert!(limit >= 1 << 30);
    // An endless input stops at the limit: /dev/zero named .glb, with a small limit.
    if Path::new("/dev/zero").exists() {
        let dir = std::env::temp_dir().join(format!("posegpu-zero-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let link = dir.join("zero.glb");
        let _ = std::fs::remove_file(&link);
        std::os::unix::fs::symlink("/dev/zero", &link).unwrap();
        // The child's name in this binary: its module path without the crate's.
        let child = format!("{}::zero_child", module_path!().split_once("::").unwrap().1);
        let out = std::process::Command::new(std::env::current_exe().unwrap())
            .args(["--exact", &child, "--nocapture", "--include-ignored"])
            .env("POSEGPU_MAX_FILE_BYTES", "1000000")
            .env("POSEGPU_ZERO_FILE", &link)
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success() && text.contains("larger than 1000000 bytes"),
            "{text}"
        );
    }
}

/// Run by the test above in a child process (the limit is read from the environment).
#[test]
#[ignore = "run by a_file_past_the_size_limit_is_refused_before_it_is_read"]
fn zero_child() {
    let Some(path) = std::env::var_os("POSEGPU_ZERO_FILE") else {
        return;
    };
    let err = posegpu::import::load(PathBuf::from(path)).unwrap_err();
    assert!(matches!(err, Error::FileTooLarge { .. }), "{err}");
    println!("{err}");
}

#[test]
fn the_world_above_the_skeleton_and_its_skinned_bones() {
    // Asset::frame: glTF is Y-up; the nodes above the top joint say where that is in component
    // space. CesiumMan's node above turns Z-up into Y-up; Rig_Medium's armature turns +90°
    // about X (component up −Z). Skin weights name the bones that deform the mesh.
    let up = |rel: &str| load(rel).frame.up_in_component().unwrap();
    assert!(up("gltf/khronos/CesiumMan.glb").abs_diff_eq(glam::Vec3::Z, 1e-5));
    assert!(up("gltf/quaternius/Mech_Stan.glb").abs_diff_eq(glam::Vec3::Y, 1e-5));
    assert!(up("gltf/kaykit-rig-medium/Med_MovementBasic.glb").abs_diff_eq(-glam::Vec3::Z, 1e-5));
    let mech = load("gltf/quaternius/Mech_Stan.glb");
    let skinned = mech.frame.skinned.as_ref().unwrap();
    let bone = |name: &str| mech.skeleton.find(name).unwrap();
    assert!(skinned[bone("LowerLeg.L")] && skinned[bone("Head")]);
    assert!(
        !skinned[bone("Foot.L")],
        "Mech's feet are IK targets, weighted to nothing"
    );
    // A file without a mesh skinned by its skin says nothing about weights.
    assert!(load("gltf/kaykit-rig-medium/Med_MovementBasic.glb")
        .frame
        .skinned
        .is_none());
    // BVH fixes no up axis.
    let bvh = posegpu::import::load(common::anim_data().join("bvh/cmu_walk_delfem2.bvh")).unwrap();
    assert_eq!(bvh.frame, posegpu::AssetFrame::UNKNOWN);
}

/// A rigid mesh under a joint deforms with it as skin weights would (a robot's foot plate):
/// the foot, whose plate hangs below a pivot node that is no joint, counts as deforming; the
/// hips, with no mesh below them but through the foot joint, do not; a mesh outside the
/// skeleton counts for no bone.
#[test]
fn a_rigid_mesh_under_a_joint_counts_as_deforming() {
    let floats = [0., 0., 0., 1., 0., 0., 0., 1., 0.];
    let json = r#"{
  "asset": {"version": "2.0"},
  "scene": 0, "scenes": [{"nodes": [0, 5]}],
  "nodes": [
    {"name": "hips", "children": [1]},
    {"name": "knee", "translation": [0, -1, 0], "children": [2]},
    {"name": "foot", "translation": [0, -1, 0], "children": [3]},
    {"name": "foot_pivot", "children": [4]},
    {"name": "foot_plate", "mesh": 0},
    {"name": "ground", "mesh": 0}
  ],
  "skins": [{"joints": [0, 1, 2]}],
  "meshes": [{"primitives": [{"attributes": {"POSITION": 0}}]}],
  "buffers": [{"uri": "{bin}", "byteLength": {len}}],
  "bufferViews": [{"buffer": 0, "byteOffset": 0, "byteLength": 36}],
  "accessors": [
    {"bufferView": 0, "componentType": 5126, "count": 3, "type": "VEC3",
     "min": [0, 0, 0], "max": [1, 1, 0]}
  ]
}"#;
    let asset = posegpu::import::load(write_gltf("rigid_foot", json, &floats)).unwrap();
    let deforms = asset.frame.skinned.expect("a mesh rides on the skeleton");
    let bone = |name: &str| asset.skeleton.find(name).unwrap();
    assert!(deforms[bone("foot")], "{deforms:?}");
    assert!(
        !deforms[bone("hips")] && !deforms[bone("knee")],
        "{deforms:?}"
    );
}

/// Standard base64 with padding (the test's own, to write data URIs).
fn base64(bytes: &[u8]) -> String {
    const ABC: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::new();
    for c in bytes.chunks(3) {
        let n = (u32::from(c[0]) << 16)
            | (u32::from(*c.get(1).unwrap_or(&0)) << 8)
            | u32::from(*c.get(2).unwrap_or(&0));
        for k in 0..4 {
            let pad = k > c.len();
            out.push(if pad {
                '='
            } else {
                ABC[(n >> (18 - 6 * k)) as usize & 63] as char
            });
        }
    }
    out
}

#[test]
fn buffers_load_from_files_and_data_uris_and_bad_ones_are_named() {
    let path = synthetic_gltf("buffers", "LINEAR");
    let bin = std::fs::read(path.with_extension("bin")).unwrap();
    let json = std::fs::read_to_string(&path).unwrap();
    let from_file = posegpu::import::load(&path).unwrap();
    let variant = |what: &str, uri: &str, length: usize| {
        let text = json
            .replace("\"uri\": \"buffers.bin\"", &format!("\"uri\": \"{uri}\""))
            .replace(
                "\"byteLength\": 192}]",
                &format!("\"byteLength\": {length}}}]"),
            );
        let p = path.with_file_name(format!("buffers_{what}.gltf"));
        std::fs::write(&p, text).unwrap();
        p
    };
    // The same bytes as a data URI load the same skeleton and clip.
    let uri = format!("data:application/octet-stream;base64,{}", base64(&bin));
    let inline = posegpu::import::load(variant("inline", &uri, 192)).unwrap();
    assert_eq!(inline.skeleton.rest(), from_file.skeleton.rest());
    assert_eq!(inline.clips[0].tracks(), from_file.clips[0].tracks());
    // What cannot be loaded is named, with the buffer.
    for (what, uri, length, says) in [
        (
            "remote",
            "https://example.com/b.bin",
            192,
            "only relative file URIs",
        ),
        ("missing", "nowhere.bin", 192, "nowhere.bin"),
        (
            "short",
            "buffers.bin",
            400,
            "192 bytes where the file declares 400",
        ),
        (
            "plain",
            "data:application/octet-stream,abc",
            192,
            "not base64",
        ),
        (
            "mangled",
            "data:application/octet-stream;base64,@@@@",
            192,
            "malformed data URI",
        ),
    ] {
        let p = variant(what, uri, length);
        let e = posegpu::import::load(&p).unwrap_err().to_string();
        assert!(e.contains("buffer 0") && e.contains(says), "{what}: {e}");
        assert!(e.contains(&p.display().to_string()), "{what}: {e}");
    }
}
