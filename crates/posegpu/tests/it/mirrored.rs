//! Mirrored bones (negative scale components): the matrix path of `compose` and `relative`
//! (`docs/pose-math.md`, "Transforms") against the glTF matrix product and a float64 copy of
//! UE's matrix path, skeletons and keys with mirrored bones on the GPU against the CPU twin,
//! and glTF files with mirrored nodes. Retargeting from and onto mirrored characters:
//! `mirrored_retarget.rs`.

use crate::common;

use common::{cpu_eval, gpu, gpu_eval, spread_instances, TOLERANCE};
use glam::{DMat3, DMat4, DQuat, DVec3, Mat4, Quat, Vec3};
use posegpu::math::rows_to_mat4;
use posegpu::{
    AnimLibrary, Asset, Bone, BoneTrack, Clip, Deviation, FusePolicy, GpuOptions, Outputs,
    Skeleton, Transform,
};

use common::Lcg as Rng;

/// Draws for mirrored transforms.
impl Rng {
    fn vec3(&mut self, lo: f32, hi: f32) -> Vec3 {
        Vec3::new(self.range(lo, hi), self.range(lo, hi), self.range(lo, hi))
    }
    fn quat(&mut self) -> Quat {
        let axis = self.vec3(-1.0, 1.0).try_normalize().unwrap_or(Vec3::Y);
        Quat::from_axis_angle(axis, self.range(-3.1, 3.1))
    }
    /// Signs for the three axes from the bits of `pattern` (bit set: negative).
    fn signs(pattern: u32) -> Vec3 {
        Vec3::new(
            if pattern & 1 != 0 { -1.0 } else { 1.0 },
            if pattern & 2 != 0 { -1.0 } else { 1.0 },
            if pattern & 4 != 0 { -1.0 } else { 1.0 },
        )
    }
}

fn mat_close(a: Mat4, b: Mat4, eps: f32) -> bool {
    let size = b.to_cols_array().iter().fold(1.0f32, |m, v| m.max(v.abs()));
    a.abs_diff_eq(b, eps * size)
}

fn quat_close(a: Quat, b: Quat, eps: f32) -> bool {
    a.abs_diff_eq(b, eps) || a.abs_diff_eq(-b, eps)
}

/// Transforms whose scale has one magnitude on all three axes and the signs of `pattern`.
fn uniform(rng: &mut Rng, pattern: u32) -> Transform {
    let s = rng.range(0.5, 2.0);
    Transform::new(rng.vec3(-2.0, 2.0), rng.quat(), Rng::signs(pattern) * s)
}

#[test]
fn mirrored_compose_and_relative_are_the_gltf_matrix_product() {
    // Uniform magnitudes: compose is M_parent · M_child and relative M_b⁻¹ · M_a, as glTF
    // composes node matrices; relative undoes compose.
    let mut rng = Rng(7);
    let mut mirrored = 0;
    for k in 0..400 {
        let (pc, pp) = (k % 8, (k / 8) % 8);
        let child = uniform(&mut rng, pc);
        let parent = uniform(&mut rng, pp);
        let c = Transform::compose(&child, &parent);
        let product = parent.to_matrix() * child.to_matrix();
        assert!(
            mat_close(c.to_matrix(), product, 2e-5),
            "compose {child:?} under {parent:?}: {} vs {product}",
            c.to_matrix()
        );
        assert_eq!(c.scale, child.scale * parent.scale);
        let r = Transform::relative(&child, &parent);
        let inverse = parent.to_matrix().inverse() * child.to_matrix();
        assert!(
            mat_close(r.to_matrix(), inverse, 2e-5),
            "relative {child:?} to {parent:?}"
        );
        let back = Transform::relative(&c, &parent);
        assert!(
            quat_close(back.rotation, child.rotation, 2e-5),
            "relative(compose(a, b), b): {} vs {}",
            back.rotation,
            child.rotation
        );
        assert!(back.translation.abs_diff_eq(child.translation, 2e-5));
        assert!(back.scale.abs_diff_eq(child.scale, 1e-5));
        let inv = parent.inverse();
        assert!(mat_close(
            inv.to_matrix(),
            parent.to_matrix().inverse(),
            2e-5
        ));
        mirrored += usize::from(pc != 0 || pp != 0);
    }
    assert!(mirrored > 300);
}

#[test]
fn a_mirrored_parent_turns_its_child_as_the_matrix_does() {
    // Hand-computed: a parent mirrored in X, a child turned 90° about Z. The matrix product
    // diag(-1,1,1)·Rz90 maps X to (0,1,0) and Y to (1,0,0); with S = (-1,1,1) the rotation takes
    // X to (0,-1,0) and Y to X: R = Rz(-90°), where the TRS formula would keep Rz(90°).
    let parent = Transform::new(Vec3::ZERO, Quat::IDENTITY, Vec3::new(-1.0, 1.0, 1.0));
    let child = Transform::new(
        Vec3::X,
        Quat::from_rotation_z(90f32.to_radians()),
        Vec3::ONE,
    );
    let c = Transform::compose(&child, &parent);
    assert!(c.translation.abs_diff_eq(Vec3::new(-1.0, 0.0, 0.0), 1e-6));
    assert_eq!(c.scale, Vec3::new(-1.0, 1.0, 1.0));
    assert!(
        quat_close(c.rotation, Quat::from_rotation_z(-90f32.to_radians()), 1e-6),
        "{}",
        c.rotation
    );
}

#[test]
fn the_fast_path_is_the_trs_formula_bit_for_bit() {
    let mut rng = Rng(3);
    for _ in 0..200 {
        let a = Transform::new(rng.vec3(-2.0, 2.0), rng.quat(), rng.vec3(0.0, 2.0));
        let b = Transform::new(rng.vec3(-2.0, 2.0), rng.quat(), rng.vec3(0.0, 2.0));
        let c = Transform::compose(&a, &b);
        assert_eq!(c.rotation, b.rotation * a.rotation);
        let r = Transform::relative(&a, &b);
        assert_eq!(r.rotation, b.rotation.conjugate() * a.rotation);
    }
}

// A float64 copy of UE's matrix path (FTransform::ConstructTransformFromMatrixWithDesiredScale
// with FMatrix::RemoveScaling and FQuat(FMatrix)), written independently of posegpu's: index
// loops over a row-major 3x3 where posegpu unrolls the columns.

fn ue_quat_from_matrix(m: [[f64; 3]; 3]) -> DQuat {
    // m[r][c], column vectors.
    let tr = m[0][0] + m[1][1] + m[2][2];
    if tr > 0.0 {
        let s = (tr + 1.0).sqrt();
        let k = 0.5 / s;
        return DQuat::from_xyzw(
            (m[2][1] - m[1][2]) * k,
            (m[0][2] - m[2][0]) * k,
            (m[1][0] - m[0][1]) * k,
            0.5 * s,
        )
        .normalize();
    }
    let mut i = 0;
    if m[1][1] > m[0][0] {
        i = 1;
    }
    if m[2][2] > m[i][i] {
        i = 2;
    }
    let j = (i + 1) % 3;
    let k = (j + 1) % 3;
    let s = (m[i][i] - m[j][j] - m[k][k] + 1.0).sqrt();
    let mut q = [0.0; 4];
    q[i] = 0.5 * s;
    let f = 0.5 / s;
    q[3] = (m[k][j] - m[j][k]) * f;
    q[j] = (m[j][i] + m[i][j]) * f;
    q[k] = (m[k][i] + m[i][k]) * f;
    DQuat::from_xyzw(q[0], q[1], q[2], q[3]).normalize()
}

fn ue_from_matrix(m: DMat4, desired: DVec3) -> (DQuat, DVec3, DVec3) {
    let mut cols = [
        m.x_axis.truncate(),
        m.y_axis.truncate(),
        m.z_axis.truncate(),
    ];
    for (i, c) in cols.iter_mut().enumerate() {
        let sq = c.length_squared();
        if sq >= 1e-8 {
            *c /= sq.sqrt();
        }
        if desired[i] < 0.0 {
            *c = -*c;
        }
    }
    let r = DMat3::from_cols(cols[0], cols[1], cols[2]);
    let rows = [r.row(0), r.row(1), r.row(2)];
    let m3 = rows.map(|v| [v.x, v.y, v.z]);
    (ue_quat_from_matrix(m3), m.w_axis.truncate(), desired)
}

fn dmat(t: &Transform) -> DMat4 {
    DMat4::from_scale_rotation_translation(
        t.scale.as_dvec3(),
        t.rotation.as_dquat(),
        t.translation.as_dvec3(),
    )
}

fn assert_ue(got: &Transform, (r, t, s): (DQuat, DVec3, DVec3), what: &str) {
    let r = r.as_quat();
    assert!(
        quat_close(got.rotation, r, 2e-5),
        "{what}: R {} vs {r}",
        got.rotation
    );
    assert!(
        got.translation
            .abs_diff_eq(t.as_vec3(), 2e-5 * t.length().max(1.0) as f32),
        "{what}: T {} vs {t}",
        got.translation
    );
    assert!(got.scale.abs_diff_eq(s.as_vec3(), 1e-5), "{what}: S");
}

#[test]
fn non_uniform_mirrored_scales_follow_ues_matrix_path() {
    // Every child is mirrored (the fast path is the TRS formula, not UE's matrix path).
    let mut rng = Rng(11);
    let mut far_from_trs = 0;
    for k in 0..400 {
        let child = Transform::new(
            rng.vec3(-2.0, 2.0),
            rng.quat(),
            rng.vec3(0.5, 2.0) * Rng::signs(1 + k % 7),
        );
        let parent = Transform::new(
            rng.vec3(-2.0, 2.0),
            rng.quat(),
            rng.vec3(0.5, 2.0) * Rng::signs((k / 7) % 8),
        );
        let c = Transform::compose(&child, &parent);
        let m = dmat(&parent) * dmat(&child);
        let desired = (child.scale * parent.scale).as_dvec3();
        assert_ue(&c, ue_from_matrix(m, desired), &format!("compose {k}"));
        let r = Transform::relative(&child, &parent);
        let m = dmat(&parent).inverse() * dmat(&child);
        let desired = (child.scale / parent.scale).as_dvec3();
        assert_ue(&r, ue_from_matrix(m, desired), &format!("relative {k}"));
        far_from_trs += usize::from(!quat_close(
            c.rotation,
            parent.rotation * child.rotation,
            1e-2,
        ));
    }
    // The matrix path matters: most mirrored cases are far from the TRS rotation.
    assert!(far_from_trs > 200, "{far_from_trs}");
}

/// `asset` with mirrored bones: about a third of the rest poses get a random sign pattern on
/// their scale (other bones' rest kept), and the scale keys of about a third of the bones are
/// negated on some axes (whole channels, so that no key interpolates through zero).
pub fn mirrored(asset: &Asset, seed: u64) -> Asset {
    let mut rng = Rng(seed);
    let s = &asset.skeleton;
    let bones = (0..s.len())
        .map(|i| {
            let mut rest = s.rest()[i];
            if rng.next() < 0.35 {
                rest.scale *= Rng::signs(1 + (rng.next() * 7.0) as u32 % 7);
            }
            Bone {
                name: s.names()[i].clone(),
                parent: s.parent(i),
                rest,
                inverse_bind: s.inverse_bind()[i],
            }
        })
        .collect();
    let skeleton = Skeleton::new(bones).unwrap();
    let clips = asset
        .clips
        .iter()
        .map(|c| {
            let tracks = c
                .tracks()
                .iter()
                .map(|t| {
                    let mut t: BoneTrack = t.clone();
                    if let Some(ch) = &mut t.scale {
                        if rng.next() < 0.35 {
                            let signs = Rng::signs(1 + (rng.next() * 7.0) as u32 % 7);
                            ch.values.iter_mut().for_each(|v| *v *= signs);
                        }
                    }
                    t
                })
                .collect();
            Clip::new(c.name(), &skeleton, tracks).unwrap()
        })
        .collect();
    Asset {
        skeleton,
        clips,
        nodes: None,
        frame: asset.frame.clone(),
    }
}

fn negative_count(asset: &Asset) -> (usize, usize) {
    let rest = asset
        .skeleton
        .rest()
        .iter()
        .filter(|r| r.scale.min_element() < 0.0)
        .count();
    let keys = asset
        .clips
        .iter()
        .flat_map(|c| c.tracks())
        .filter_map(|t| t.scale.as_ref())
        .filter(|ch| ch.values.iter().any(|v| v.min_element() < 0.0))
        .count();
    (rest, keys)
}

#[test]
fn a_mirrored_skeleton_on_the_cpu_is_its_matrix_chain() {
    // Uniform magnitudes everywhere: every component-space matrix is the product of the local
    // matrices up its chain, and the skinning matrix that times the inverse bind.
    let mut rng = Rng(5);
    let count = 24;
    let bones: Vec<Bone> = (0..count)
        .map(|i| {
            let parent = (i > 0).then(|| (rng.next() * i as f32) as usize % i);
            let pattern = (rng.next() * 8.0) as u32 % 8;
            let mut rest = uniform(&mut rng, pattern);
            rest.scale = rest.scale.signum() * rng.range(0.8, 1.25);
            let mut b = Bone::new(format!("b{i}"), parent, rest);
            b.inverse_bind = Some(Mat4::from_translation(Vec3::new(0.1, -0.2, 0.3)));
            b
        })
        .collect();
    let skeleton = Skeleton::new(bones).unwrap();
    let clip = Clip::from_pose("rest", &skeleton, skeleton.rest()).unwrap();
    let lib = AnimLibrary::new(&skeleton, &[clip]).unwrap();
    let poses = cpu_eval(&lib, &[posegpu::ClipSample::new(0, 0.0, false)]);
    let mut world = vec![Mat4::IDENTITY; count];
    for i in 0..count {
        let local = skeleton.rest()[i].to_matrix();
        world[i] = match skeleton.parent(i) {
            Some(p) => world[p] * local,
            None => local,
        };
        let cs = poses.component(0, i).to_matrix();
        assert!(
            mat_close(cs, world[i], 1e-4),
            "bone {i}: {cs} vs {}",
            world[i]
        );
        let skin = rows_to_mat4(poses.skinning(0, i));
        let want = world[i] * skeleton.inverse_bind()[i].unwrap();
        assert!(mat_close(skin, want, 1e-4), "skinning {i}");
    }
}

#[test]
fn mirrored_skeletons_and_keys_match_the_cpu_on_the_gpu() {
    let Some(ctx) = gpu() else { return };
    for (seed, bones) in [(1, 17), (2, 67), (3, 150)] {
        let asset = mirrored(&posegpu::procedural::random_asset(seed, bones, 3), seed);
        let (rest, keys) = negative_count(&asset);
        assert!(
            rest > bones / 5 && keys > 0,
            "{rest} mirrored rests, {keys} channels"
        );
        let lib = AnimLibrary::new(&asset.skeleton, &asset.clips).unwrap();
        let instances = spread_instances(&lib, 5);
        let cpu = cpu_eval(&lib, &instances);
        for passes in [FusePolicy::Fused, FusePolicy::Separate] {
            let options = GpuOptions {
                outputs: Outputs::ALL,
                passes,
                ..Default::default()
            };
            let out = gpu_eval(&ctx, &lib, &instances, &options);
            assert!(!out.component.is_empty() && !out.skinning.is_empty());
            let d = Deviation::between(&out, &cpu).relative(lib.skeleton().extent());
            assert!(d <= TOLERANCE, "{bones} bones, {passes:?}: deviation {d:e}");
        }
        // The CPU twin is not the TRS formula here: the matrix path changed the poses.
        let plain = posegpu::procedural::random_asset(seed, bones, 3);
        let plain_lib = AnimLibrary::new(&plain.skeleton, &plain.clips).unwrap();
        let other = cpu_eval(&plain_lib, &instances);
        assert!(Deviation::between(&other, &cpu).rotation > 0.1);
    }
    let humanoid = mirrored(&posegpu::procedural::humanoid_asset(), 9);
    let lib = AnimLibrary::new(&humanoid.skeleton, &humanoid.clips).unwrap();
    common::assert_gpu_matches_cpu(&ctx, &lib, &spread_instances(&lib, 7), "humanoid");
}

/// A glTF chain written here: a root, a node mirrored by its TRS scale (-1, 1, 1), a node whose
/// matrix has a negative determinant (scale magnitude 1.5), a leaf whose scale is keyed from
/// (1, 1, 1) to (-1, 1, -1) (STEP). Returns the path and the nodes' local matrices at key 0 and
/// key 1.
fn mirrored_gltf(dir: &std::path::Path) -> (std::path::PathBuf, [Mat4; 4], Mat4) {
    let root = Transform::new(
        Vec3::new(0.0, 1.0, 0.0),
        Quat::from_rotation_y(0.4),
        Vec3::ONE,
    );
    let mirror = Transform::new(
        Vec3::new(0.5, 0.0, 0.0),
        Quat::from_rotation_z(30f32.to_radians()),
        Vec3::new(-1.0, 1.0, 1.0),
    );
    let flip = Mat4::from_translation(Vec3::new(0.0, 0.4, 0.1))
        * Mat4::from_quat(Quat::from_axis_angle(
            Vec3::new(1.0, 2.0, 3.0).normalize(),
            0.7,
        ))
        * Mat4::from_scale(Vec3::new(1.5, -1.5, 1.5));
    let leaf = Transform::new(
        Vec3::new(0.2, 0.3, 0.0),
        // Oblique axes: a reflection changes these rotations (not one about X under X's).
        Quat::from_axis_angle(Vec3::new(-2.0, 1.0, 0.5).normalize(), 0.5),
        Vec3::ONE,
    );
    let keyed = Transform {
        scale: Vec3::new(-1.0, 1.0, -1.0),
        ..leaf
    };
    let floats = [0.0f32, 1.0, 1.0, 1.0, 1.0, -1.0, 1.0, -1.0];
    let bytes: Vec<u8> = floats.iter().flat_map(|f| f.to_le_bytes()).collect();
    std::fs::create_dir_all(dir).unwrap();
    std::fs::write(dir.join("mirrored.bin"), &bytes).unwrap();
    let trs = |t: &Transform| {
        serde_json::json!({
            "translation": t.translation.to_array(),
            "rotation": t.rotation.to_array(),
            "scale": t.scale.to_array(),
        })
    };
    let mut nodes = vec![trs(&root), trs(&mirror), serde_json::json!({}), trs(&leaf)];
    nodes[2]["matrix"] = serde_json::json!(flip.to_cols_array());
    for (i, name) in ["root", "mirror", "flip", "leaf"].iter().enumerate() {
        nodes[i]["name"] = (*name).into();
        if i < 3 {
            nodes[i]["children"] = serde_json::json!([i + 1]);
        }
    }
    let json = serde_json::json!({
        "asset": {"version": "2.0"},
        "scene": 0, "scenes": [{"nodes": [0]}],
        "nodes": nodes,
        "skins": [{"joints": [0, 1, 2, 3]}],
        "buffers": [{"uri": "mirrored.bin", "byteLength": 32}],
        "bufferViews": [
            {"buffer": 0, "byteOffset": 0, "byteLength": 8},
            {"buffer": 0, "byteOffset": 8, "byteLength": 24}
        ],
        "accessors": [
            {"bufferView": 0, "componentType": 5126, "count": 2, "type": "SCALAR",
             "min": [0.0], "max": [1.0]},
            {"bufferView": 1, "componentType": 5126, "count": 2, "type": "VEC3"}
        ],
        "animations": [{
            "name": "flip",
            "samplers": [{"input": 0, "output": 1, "interpolation": "STEP"}],
            "channels": [{"sampler": 0, "target": {"node": 3, "path": "scale"}}]
        }]
    });
    let path = dir.join("mirrored.gltf");
    std::fs::write(&path, json.to_string()).unwrap();
    let locals = [root.to_matrix(), mirror.to_matrix(), flip, leaf.to_matrix()];
    (path, locals, keyed.to_matrix())
}

/// Evaluates `asset`'s first clip at 0 and 1 s (CPU, and the GPU where there is one) and checks
/// every bone's component matrix and skinning matrix against the product of `locals` (the
/// leaf's at 1 s being `leaf_keyed`).
fn check_chain(asset: &Asset, locals: &[Mat4; 4], leaf_keyed: Mat4, what: &str) {
    let s = &asset.skeleton;
    let names = ["root", "mirror", "flip", "leaf"];
    let index: Vec<usize> = names.iter().map(|n| s.find(n).unwrap()).collect();
    let lib = AnimLibrary::new(s, &asset.clips).unwrap();
    let instances = [
        posegpu::ClipSample::new(0, 0.0, false),
        posegpu::ClipSample::new(0, 1.0, false),
    ];
    let cpu = cpu_eval(&lib, &instances);
    let mut sides = vec![("CPU", cpu.clone())];
    if let Some(ctx) = gpu() {
        let out = gpu_eval(&ctx, &lib, &instances, &GpuOptions::default());
        sides.push(("GPU", out));
    }
    for (side, poses) in &sides {
        for (k, _) in instances.iter().enumerate() {
            let mut world = Mat4::IDENTITY;
            for (j, &b) in index.iter().enumerate() {
                let local = if j == 3 && k == 1 {
                    leaf_keyed
                } else {
                    locals[j]
                };
                world *= local;
                let cs = poses.component(k, b).to_matrix();
                assert!(
                    mat_close(cs, world, 1e-5),
                    "{what} {side}: {} at key {k}: {cs} vs {world}",
                    names[j]
                );
                let skin = rows_to_mat4(poses.skinning(k, b));
                assert!(mat_close(skin, world, 1e-5), "{what} {side}: skinning");
            }
        }
    }
}

#[test]
fn a_gltf_with_mirrored_nodes_imports_evaluates_and_exports() {
    let dir = std::env::temp_dir().join(format!("posegpu-mirrored-{}", std::process::id()));
    let (path, locals, leaf_keyed) = mirrored_gltf(&dir);
    let asset = posegpu::import::load(&path).unwrap();
    let s = &asset.skeleton;
    // The TRS node comes through as given; the matrix node decomposes into a negative scale.
    let mirror = s.rest()[s.find("mirror").unwrap()];
    assert_eq!(mirror.scale, Vec3::new(-1.0, 1.0, 1.0));
    let flip = s.rest()[s.find("flip").unwrap()];
    assert!(
        flip.scale.min_element() < 0.0 && flip.scale.abs().abs_diff_eq(Vec3::splat(1.5), 1e-5),
        "{flip:?}"
    );
    assert!(mat_close(flip.to_matrix(), locals[2], 1e-6));
    check_chain(&asset, &locals, leaf_keyed, "imported");
    // Written back (TRS nodes, the negative scales kept) and read again: the same poses.
    let out = dir.join("mirrored_out.glb");
    posegpu::export::write_glb(&out, s, &asset.clips, None).unwrap();
    let back = posegpu::import::load(&out).unwrap();
    let flip_back = back.skeleton.rest()[back.skeleton.find("flip").unwrap()];
    assert!(flip_back.scale.min_element() < 0.0, "{flip_back:?}");
    check_chain(&back, &locals, leaf_keyed, "exported");
    std::fs::remove_dir_all(&dir).ok();
}
