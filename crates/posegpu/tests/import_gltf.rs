//! glTF import: every real file loads with the expected skeleton and clips; broken files give
//! typed errors, never a panic.

mod common;

use std::f32::consts::FRAC_1_SQRT_2;
use std::path::{Path, PathBuf};

use posegpu::{AnimLibrary, Error, Instance, Interpolation};

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
            Instance::new(0, 0.0, false),
            Instance::new(0, d / 5.5, false),
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
        &[Instance::new(0, 0.0, false), Instance::new(0, 1.0, false)],
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

#[test]
fn cubic_spline_channels_are_refused_by_name() {
    let err = posegpu::import::load(synthetic_gltf("cubic", "CUBICSPLINE")).unwrap_err();
    assert!(
        matches!(err, Error::UnsupportedInterpolation { .. }),
        "{err}"
    );
    let msg = err.to_string();
    assert!(
        msg.contains("CUBICSPLINE") && msg.contains("wave") && msg.contains("hand"),
        "{msg}"
    );
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
