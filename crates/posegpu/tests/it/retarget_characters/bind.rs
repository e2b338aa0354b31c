//! Characters whose node transforms are not their bind pose: the bind pose rebuilt from the
//! skin's inverse bind matrices, and retargeting from and onto such characters measured from it.

use std::path::PathBuf;

use glam::{Mat4, Quat, Vec3};
use posegpu::component_space;
use posegpu::procedural::{humanoid, humanoid_asset, humanoid_clips, humanoid_variant};
use posegpu::render::SkinnedMesh;
use posegpu::retarget::{bake_clip, BoneKind, PlanOptions, RetargetPlan};
use posegpu::{
    Asset, BindOrigin, BindSpace, BoneTrack, Channel, Clip, IkWeights, Interpolation, RestPose,
    Skeleton, Transform,
};

use crate::retarget_characters::data::*;
use crate::retarget_characters::pairs::{line, Pair, PAIRS};

#[test]
fn mech_bind_poses_are_their_inverse_bind_matrices() {
    // Mech_Mike's and Mech_Stan's nodes hang the arms and bend the shins; the bind pose put
    // through the nodes above the skeleton is each joint's inverted inverse bind matrix.
    for rel in [MECH_MIKE, MECH_STAN] {
        let a = asset(rel);
        let s = &a.skeleton;
        assert_eq!(s.bind_space(), Some(BindSpace::Scene), "{rel}");
        let cs = s.reference_component(RestPose::Bind);
        let mut checked = 0;
        for (b, ibm) in s.inverse_bind().iter().enumerate() {
            let (Some(ibm), BindOrigin::Skin | BindOrigin::Nodes) = (ibm, s.bind_origin()[b])
            else {
                continue;
            };
            let product = a.frame.above * cs[b].to_matrix() * *ibm;
            let err = (product - Mat4::IDENTITY).abs().to_cols_array();
            let worst = err.iter().copied().fold(0.0, f32::max);
            assert!(worst < 1e-4, "{rel} {}: {worst}", s.names()[b]);
            checked += 1;
        }
        assert_eq!(checked, s.len(), "{rel}: every bone has a matrix");
        let posed = s.posed_bones(1.0);
        let angle = |name: &str| {
            let b = s.find(name).unwrap();
            posed.iter().find(|p| p.0 == b).map_or(0.0, |p| p.1)
        };
        // The upper arms are 58° off, the forearms 33°, the shins 8-13° (Mech_Stan).
        assert!((angle("UpperArm.L") - 58.0).abs() < 1.0, "{rel}: {posed:?}");
        assert!((angle("LowerArm.R") - 32.7).abs() < 1.0, "{rel}: {posed:?}");
        assert!(angle("LowerLeg.L") > 5.0, "{rel}: {posed:?}");
    }
    // Files whose nodes are their bind pose are untouched, bit for bit.
    for rel in [KNIGHT, SUPERHERO, UAL, CESIUM] {
        let s = &asset(rel).skeleton;
        assert_eq!(s.bind_pose(), s.rest(), "{rel}");
    }
}

/// Turns bone `b` of `locals` by `turn` about its own joint, in component space.
fn turn(parents: &[i32], locals: &mut [Transform], b: usize, turn: Quat) {
    let cs = component_space(parents, locals);
    let parent = usize::try_from(parents[b]).map_or(Quat::IDENTITY, |p| cs[p].rotation);
    locals[b].rotation = (parent.inverse() * turn * cs[b].rotation).normalize();
}

/// The humanoid's nodes posed away from its T-pose: arms hanging, knees bent, the pelvis tilted
/// and lowered.
fn posed_nodes(s: &Skeleton) -> Vec<Transform> {
    let mut locals = s.rest().to_vec();
    let p = s.parents();
    let at = |n: &str| s.find(n).unwrap();
    let deg = f32::to_radians;
    locals[at("pelvis")].translation.y -= 0.12;
    turn(
        p,
        &mut locals,
        at("pelvis"),
        Quat::from_rotation_x(deg(12.0)),
    );
    for (side, x) in [("l", 1.0), ("r", -1.0)] {
        let n = |bone: &str| at(&format!("{bone}_{side}"));
        turn(
            p,
            &mut locals,
            n("upperarm"),
            Quat::from_rotation_z(-x * deg(70.0)),
        );
        turn(
            p,
            &mut locals,
            n("lowerarm"),
            Quat::from_rotation_y(x * deg(30.0)),
        );
        turn(
            p,
            &mut locals,
            n("thigh"),
            Quat::from_rotation_x(deg(-67.0)),
        );
        turn(p, &mut locals, n("calf"), Quat::from_rotation_x(deg(134.0)));
    }
    locals
}

/// Writes the humanoid as a skinned glTF: its nodes at `nodes`, below an armature node scaled
/// 0.01 and turned about up; its inverse bind matrices from its bind (T-)pose, in the space of
/// the skinned mesh's node, which is placed away from the origin with a scale of 2; the
/// humanoid's box mesh. Bone `singular`, if any, gets a zero matrix.
fn write_gltf(name: &str, s: &Skeleton, nodes: &[Transform], singular: Option<usize>) -> PathBuf {
    let armature = Mat4::from_scale_rotation_translation(
        Vec3::splat(0.01),
        Quat::from_rotation_y(0.5),
        Vec3::new(1.0, 0.0, 2.0),
    );
    let mesh = Mat4::from_scale_rotation_translation(
        Vec3::splat(2.0),
        Quat::from_rotation_y(-0.35),
        Vec3::new(0.5, 0.0, -0.3),
    );
    let n = s.len();
    let bind = s.rest_component();
    let in_mesh: Vec<Mat4> = bind
        .iter()
        .map(|t| mesh.inverse() * armature * t.to_matrix())
        .collect();
    let mut floats: Vec<f32> = in_mesh
        .iter()
        .enumerate()
        .flat_map(|(b, m)| match singular == Some(b) {
            true => Mat4::ZERO.to_cols_array(),
            false => m.inverse().to_cols_array(),
        })
        .collect();
    // The humanoid's box mesh, its bind-pose (component-space) vertices put in the mesh's space.
    let boxes = SkinnedMesh::humanoid(s);
    let to_mesh = mesh.inverse() * armature;
    let points: Vec<Vec3> = boxes
        .vertices
        .iter()
        .map(|v| to_mesh.transform_point3(Vec3::from(v.position)))
        .collect();
    let count = points.len();
    floats.extend(points.iter().flat_map(|p| p.to_array()));
    floats.extend(boxes.vertices.iter().flat_map(|v| v.weights));
    let mut bytes: Vec<u8> = floats.iter().flat_map(|f| f.to_le_bytes()).collect();
    bytes.extend(
        boxes
            .vertices
            .iter()
            .flat_map(|v| v.joints.map(|j| j as u16))
            .flat_map(u16::to_le_bytes),
    );
    bytes.extend(boxes.indices.iter().flat_map(|i| i.to_le_bytes()));
    let (min, max) = points.iter().fold(
        (Vec3::splat(f32::MAX), Vec3::splat(f32::MIN)),
        |(lo, hi), p| (lo.min(*p), hi.max(*p)),
    );
    let json_nodes: Vec<serde_json::Value> = std::iter::once(serde_json::json!({
        "name": "Armature",
        "matrix": armature.to_cols_array(),
        "children": (0..n).filter(|&b| s.parents()[b] < 0).map(|b| b + 1).collect::<Vec<_>>(),
    }))
    .chain((0..n).map(|b| {
        let t = &nodes[b];
        let children: Vec<usize> = (0..n)
            .filter(|&c| s.parents()[c] == b as i32)
            .map(|c| c + 1)
            .collect();
        let mut node = serde_json::json!({
            "name": s.names()[b],
            "translation": t.translation.to_array(),
            "rotation": t.rotation.to_array(),
        });
        if !children.is_empty() {
            node["children"] = serde_json::json!(children);
        }
        node
    }))
    .chain(std::iter::once(serde_json::json!({
        "name": "Body", "mesh": 0, "skin": 0, "matrix": mesh.to_cols_array(),
    })))
    .collect();
    let (ibm_len, pos_len, w_len, j_len) = (n * 64, count * 12, count * 16, count * 8);
    let idx_len = boxes.indices.len() * 4;
    let json = serde_json::json!({
        "asset": {"version": "2.0"},
        "scene": 0, "scenes": [{"nodes": [0, n + 1]}],
        "nodes": json_nodes,
        "skins": [{"joints": (1..=n).collect::<Vec<_>>(), "inverseBindMatrices": 0}],
        "meshes": [{"primitives": [{"indices": 4, "attributes":
            {"POSITION": 1, "WEIGHTS_0": 2, "JOINTS_0": 3}}]}],
        "buffers": [{"uri": format!("{name}.bin"), "byteLength": bytes.len()}],
        "bufferViews": [
            {"buffer": 0, "byteOffset": 0, "byteLength": ibm_len},
            {"buffer": 0, "byteOffset": ibm_len, "byteLength": pos_len},
            {"buffer": 0, "byteOffset": ibm_len + pos_len, "byteLength": w_len},
            {"buffer": 0, "byteOffset": ibm_len + pos_len + w_len, "byteLength": j_len},
            {"buffer": 0, "byteOffset": ibm_len + pos_len + w_len + j_len, "byteLength": idx_len},
        ],
        "accessors": [
            {"bufferView": 0, "componentType": 5126, "count": n, "type": "MAT4"},
            {"bufferView": 1, "componentType": 5126, "count": count, "type": "VEC3",
             "min": min.to_array(), "max": max.to_array()},
            {"bufferView": 2, "componentType": 5126, "count": count, "type": "VEC4"},
            {"bufferView": 3, "componentType": 5123, "count": count, "type": "VEC4"},
            {"bufferView": 4, "componentType": 5125, "count": boxes.indices.len(), "type": "SCALAR"},
        ],
    });
    // POSEGPU_WRITE_POSED=DIR keeps the files (to render them).
    let dir = std::env::var_os("POSEGPU_WRITE_POSED").map_or_else(
        || std::env::temp_dir().join(format!("posegpu-bind-{}", std::process::id())),
        PathBuf::from,
    );
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join(format!("{name}.bin")), bytes).unwrap();
    let path = dir.join(format!("{name}.gltf"));
    std::fs::write(&path, serde_json::to_string(&json).unwrap()).unwrap();
    path
}

/// The procedural humanoid written twice, loaded: nodes posed away from the bind pose, and
/// nodes at it; both with the same matrices.
fn posed_and_bound() -> (Asset, Asset) {
    let s = humanoid();
    let posed = posegpu::import::load(write_gltf("posed", &s, &posed_nodes(&s), None)).unwrap();
    let bound = posegpu::import::load(write_gltf("bound", &s, s.rest(), None)).unwrap();
    (posed, bound)
}

/// The humanoid's walk as keys on every bone of `skeleton` (as exporters write clips), from
/// poses sampled on the procedural humanoid.
fn walk_on(skeleton: &Skeleton) -> Clip {
    let source = humanoid_asset();
    let walk = source.clips.iter().find(|c| c.name() == "walk").unwrap();
    let times: Vec<f32> = (0..=24)
        .map(|k| k as f32 * walk.duration() / 24.0)
        .collect();
    let poses: Vec<Vec<Transform>> = times
        .iter()
        .map(|&t| walk.pose_at(source.skeleton.rest(), t))
        .collect();
    let tracks = (0..skeleton.len())
        .map(|b| BoneTrack {
            translation: Some(Channel::new(
                times.clone(),
                poses.iter().map(|p| p[b].translation).collect(),
                Interpolation::Linear,
            )),
            rotation: Some(Channel::new(
                times.clone(),
                poses.iter().map(|p| p[b].rotation).collect(),
                Interpolation::Linear,
            )),
            scale: None,
        })
        .collect();
    Clip::new("walk", skeleton, tracks).unwrap()
}

/// The worst distance, over `times` and the bones `compare` keeps, between the joints two plans
/// give from the same source poses (in hip heights of the plans' target).
fn worst_gap(
    a: &RetargetPlan,
    b: &RetargetPlan,
    parents: &[i32],
    poses: &[Vec<Transform>],
    compare: impl Fn(usize) -> bool,
) -> f32 {
    let h = a.target().body.hip_height;
    poses
        .iter()
        .flat_map(|p| {
            let x = component_space(parents, &a.apply_with_ik(p, IkWeights::FEET));
            let y = component_space(parents, &b.apply_with_ik(p, IkWeights::FEET));
            (0..x.len())
                .filter(|&i| compare(i))
                .map(move |i| (x[i].translation - y[i].translation).length() / h)
                .collect::<Vec<_>>()
        })
        .fold(0.0, f32::max)
}

#[test]
fn a_character_posed_away_from_its_bind_pose_retargets_as_if_it_were_not() {
    let (posed, bound) = posed_and_bound();
    let (ps, bs) = (&posed.skeleton, &bound.skeleton);
    // The matrices are in the mesh node's space (scale 2, away from the origin), under an
    // armature scaled 0.01: the bind pose comes back, and the nodes at it are left alone.
    assert_eq!(ps.bind_space(), Some(BindSpace::MeshNode));
    assert_eq!(bs.bind_pose(), bs.rest());
    assert!(bs.posed_bones(0.1).is_empty());
    for b in 0..ps.len() {
        let (k, r) = (ps.bind_pose()[b], bs.rest()[b]);
        assert!(
            k.rotation.angle_between(r.rotation) < 1e-3
                && (k.translation - r.translation).length() < 1e-4,
            "{}: {k:?} against {r:?}",
            ps.names()[b]
        );
    }
    let posed_names: Vec<&str> = ps
        .posed_bones(1.0)
        .iter()
        .map(|&(b, _)| ps.names()[b].as_str())
        .collect();
    for name in ["pelvis", "upperarm_l", "lowerarm_r", "thigh_l", "calf_r"] {
        assert!(posed_names.contains(&name), "{name} in {posed_names:?}");
    }

    // Onto it: a variant's walk plays on the posed file as on the bound one.
    let mut source = humanoid_asset();
    source.skeleton = humanoid_variant(3);
    source.clips = humanoid_clips(&source.skeleton);
    let walk = source.clips.iter().find(|c| c.name() == "walk").unwrap();
    let poses: Vec<Vec<Transform>> = (0..16)
        .map(|k| walk.pose_at(source.skeleton.rest(), k as f32 * walk.duration() / 16.0))
        .collect();
    let options = PlanOptions::default();
    let onto_posed = RetargetPlan::new(&source, &posed, &options).unwrap();
    let onto_bound = RetargetPlan::new(&source, &bound, &options).unwrap();
    assert!(
        (onto_posed.hip_height_ratio() - onto_bound.hip_height_ratio()).abs()
            < 1e-4 * onto_bound.hip_height_ratio()
    );
    let moved = |b: usize| onto_posed.bones()[b].kind != BoneKind::Reference;
    let gap = worst_gap(&onto_posed, &onto_bound, ps.parents(), &poses, moved);
    assert!(gap < 1e-3, "onto: {gap} hip heights");
    // Measured from its nodes instead, the posed file plays otherwise: the test can fail.
    let from_nodes = PlanOptions {
        rest: RestPose::Nodes,
        ..PlanOptions::default()
    };
    let onto_nodes = RetargetPlan::new(&source, &posed, &from_nodes).unwrap();
    let off = worst_gap(&onto_nodes, &onto_bound, ps.parents(), &poses, moved);
    assert!(off > 0.05, "with --rest nodes: {off} hip heights");

    // The offline conversion keys only the bones the plan moves; the others keep their nodes.
    let baked = bake_clip(&onto_posed, &source, walk, ps, IkWeights::NONE).unwrap();
    for (b, track) in baked.tracks().iter().enumerate() {
        if !moved(b) {
            assert!(!track.is_animated(), "{} keyed", ps.names()[b]);
        }
    }
    for p in poses.iter().take(4) {
        let t = poses.iter().position(|q| q == p).unwrap() as f32 * walk.duration() / 16.0;
        let played = component_space(ps.parents(), &baked.pose_at(ps.rest(), t));
        let planned = component_space(ps.parents(), &onto_posed.apply(p));
        for b in 0..ps.len() {
            let d = (played[b].translation - planned[b].translation).length();
            assert!(d < 1e-3, "{} at {t}: {d}", ps.names()[b]);
        }
    }

    // From it: its walk plays on another character as the bound file's does.
    let (mut posed, mut bound) = (posed, bound);
    posed.clips = vec![walk_on(&posed.skeleton)];
    bound.clips = vec![walk_on(&bound.skeleton)];
    let mut target = humanoid_asset();
    target.skeleton = humanoid_variant(7);
    let from_posed = RetargetPlan::new(&posed, &target, &options).unwrap();
    let from_bound = RetargetPlan::new(&bound, &target, &options).unwrap();
    let clip = &posed.clips[0];
    let poses: Vec<Vec<Transform>> = (0..16)
        .map(|k| clip.pose_at(posed.skeleton.rest(), k as f32 * clip.duration() / 16.0))
        .collect();
    let gap = worst_gap(
        &from_posed,
        &from_bound,
        target.skeleton.parents(),
        &poses,
        |_| true,
    );
    assert!(gap < 1e-3, "from: {gap} hip heights");
}

#[test]
fn a_singular_matrix_keeps_its_node_and_the_rest_comes_back() {
    let s = humanoid();
    let hand = s.find("hand_l").unwrap();
    let a =
        posegpu::import::load(write_gltf("singular", &s, &posed_nodes(&s), Some(hand))).unwrap();
    let k = &a.skeleton;
    assert_eq!(k.bind_origin()[hand], BindOrigin::Singular);
    assert_eq!(k.bind_pose()[hand], k.rest()[hand]);
    // The bones around it still come from their own matrices.
    for name in ["lowerarm_l", "index_01_l"] {
        let b = s.find(name).unwrap();
        let (got, want) = (k.bind_pose()[b], s.rest()[b]);
        assert_ne!(k.bind_origin()[b], BindOrigin::Singular, "{name}");
        assert!(got.rotation.dot(want.rotation).abs() > 1.0 - 1e-6, "{name}");
    }
    RetargetPlan::new(&humanoid_asset(), &a, &PlanOptions::default()).unwrap();
}

#[test]
#[ignore = "prints BENCHMARKS.md's table: cargo test --release --test it \
            bind_against_nodes -- --ignored --nocapture"]
fn bind_against_nodes_on_every_pair_with_posed_nodes() {
    // Every cross-tool pair with a character whose nodes are posed away from its bind pose,
    // measured from the nodes and from the bind pose in one run, without IK and with feet IK.
    println!("| pair | rest | IK | dir mean° | dir p95° | dir max° | pelvis h %H | ankle lift %H | contact %H | travel %H | IK gap %H | slide src/tgt H/s | worst segment mean/p95 |");
    println!("|---|---|---|---|---|---|---|---|---|---|---|---|---|");
    let posed = |rel: &str| {
        let s = &asset(rel).skeleton;
        s.bind_pose() != s.rest()
    };
    for Pair(src, clip, tgt, ..) in PAIRS {
        if !posed(src) && !posed(tgt) {
            continue;
        }
        for rest in [RestPose::Nodes, RestPose::Bind] {
            for (ik, ik_name) in [(IkWeights::NONE, "none"), (IkWeights::FEET, "feet")] {
                let options = PlanOptions {
                    rest,
                    ..PlanOptions::default()
                };
                let (label, q) = run_pair_with(src, *clip, tgt, 60, ik, &options);
                let row = line(&label, &q);
                let (pair, rest_of_row) = row[2..].split_once(" | ").unwrap();
                println!("| {pair} | {} | {ik_name} | {rest_of_row}", rest.name());
            }
        }
    }
}
