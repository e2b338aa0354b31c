//! The renderer draws what the CPU twin says: each instance's silhouette (pixel count,
//! bounding box, and the pixels themselves) against a CPU-skinned, CPU-rasterized reference;
//! meshes and draws that do not fit are typed errors.

use crate::common;

use common::{anim_data, gpu};
use glam::{Quat, Vec3, Vec4Swizzles};
use posegpu::playback::{Agent, Player};
use posegpu::render::{
    placements_buffer, rest_skinning, Camera, CrowdRenderer, DrawChunk, RenderTarget, SkinnedMesh,
    SkinnedVertex, COLOR_FORMAT,
};
use posegpu::{
    AnimLibrary, ClipSample, CpuEvaluator, Crowd, Error, GpuContext, GpuCrowd, GpuEvaluator,
    GpuOptions, Mat3x4, Outputs, PoseBatch, Poses, RootLock, SkinningLayout, Transform,
};

const W: u32 = 384;
const H: u32 = 128;
const TRANSPARENT: wgpu::Color = wgpu::Color::TRANSPARENT;

/// A row of instances along X, `spacing` apart.
fn row(count: usize, spacing: f32) -> Vec<Transform> {
    (0..count)
        .map(|i| {
            let x = (i as f32 - (count - 1) as f32 * 0.5) * spacing;
            Transform::new(Vec3::new(x, 0.0, 0.0), Quat::IDENTITY, Vec3::ONE)
        })
        .collect()
}

/// Pixel coverage per instance: instance `k`'s pixels are the covered ones in its column of
/// the picture (the instances stand far enough apart not to overlap).
struct Silhouettes {
    masks: Vec<Vec<bool>>,
}

impl Silhouettes {
    fn split(covered: &[bool], columns: &[(u32, u32)]) -> Self {
        let masks = columns
            .iter()
            .map(|&(x0, x1)| {
                (0..W * H)
                    .map(|p| covered[p as usize] && (x0..x1).contains(&(p % W)))
                    .collect()
            })
            .collect();
        Self { masks }
    }

    fn count(&self, k: usize) -> usize {
        self.masks[k].iter().filter(|&&c| c).count()
    }

    /// (x0, y0, x1, y1), inclusive.
    fn bbox(&self, k: usize) -> (u32, u32, u32, u32) {
        let mut b = (u32::MAX, u32::MAX, 0, 0);
        for (p, _) in self.masks[k].iter().enumerate().filter(|(_, &c)| c) {
            let (x, y) = (p as u32 % W, p as u32 / W);
            b = (b.0.min(x), b.1.min(y), b.2.max(x), b.3.max(y));
        }
        b
    }

    /// Pixels covered in one and not the other.
    fn differing(&self, other: &Self, k: usize) -> usize {
        self.masks[k]
            .iter()
            .zip(&other.masks[k])
            .filter(|(a, b)| a != b)
            .count()
    }
}

/// The CPU reference: every instance skinned by `skinning` (the CPU twin's matrices), placed,
/// projected and rasterized at pixel centres.
fn cpu_coverage(
    mesh: &SkinnedMesh,
    bones: usize,
    skinning: &[Mat3x4],
    placements: &[Transform],
    camera: &Camera,
) -> Vec<bool> {
    let mut covered = vec![false; (W * H) as usize];
    for (k, place) in placements.iter().enumerate() {
        let skinned = mesh.skin(&skinning[k * bones..(k + 1) * bones]);
        let screen: Vec<glam::Vec2> = skinned
            .iter()
            .map(|&p| {
                let world = place.translation + place.rotation * (place.scale * p);
                let clip = camera.view_proj * world.extend(1.0);
                let ndc = clip.xy() / clip.w;
                glam::Vec2::new(
                    (ndc.x + 1.0) * 0.5 * W as f32,
                    (1.0 - ndc.y) * 0.5 * H as f32,
                )
            })
            .collect();
        for t in mesh.indices.chunks_exact(3) {
            let [a, b, c] = [t[0], t[1], t[2]].map(|i| screen[i as usize]);
            let area = (b - a).perp_dot(c - a);
            if area.abs() < 1e-12 {
                continue;
            }
            let lo = a.min(b).min(c).max(glam::Vec2::ZERO);
            let hi = a.max(b).max(c).min(glam::Vec2::new(W as f32, H as f32));
            for y in lo.y.floor() as u32..(hi.y.ceil() as u32).min(H) {
                for x in lo.x.floor() as u32..(hi.x.ceil() as u32).min(W) {
                    let p = glam::Vec2::new(x as f32 + 0.5, y as f32 + 0.5);
                    let e = [
                        (b - a).perp_dot(p - a),
                        (c - b).perp_dot(p - b),
                        (a - c).perp_dot(p - c),
                    ];
                    let inside = e.iter().all(|&e| e * area.signum() >= 0.0);
                    if inside {
                        covered[(y * W + x) as usize] = true;
                    }
                }
            }
        }
    }
    covered
}

/// The crowd drawn on the GPU from the evaluator's own buffers (split into chunks of a few
/// instances, so that per-chunk binding and placement offsets are exercised).
fn gpu_coverage(
    ctx: &GpuContext,
    lib: &AnimLibrary,
    mesh: &SkinnedMesh,
    batch: &PoseBatch,
    placements: &[Transform],
    camera: &Camera,
    outputs: Outputs,
) -> Vec<bool> {
    let options = GpuOptions {
        outputs,
        ..few_per_chunk()
    };
    let mut gpu = GpuEvaluator::new(ctx, lib, batch.len(), &options).unwrap();
    let placement_buffer = placements_buffer(ctx, placements).unwrap();
    gpu.write(batch).unwrap();
    let mut encoder = ctx.device.create_command_encoder(&Default::default());
    gpu.encode(&mut encoder);
    let chunks = DrawChunk::from_outputs(gpu.chunks(), &placement_buffer);
    draw(ctx, lib, mesh, camera, encoder, &chunks)
}

/// One workgroup per dimension: a few instances per chunk.
fn few_per_chunk() -> GpuOptions {
    GpuOptions {
        max_workgroups_per_dimension: Some(1),
        ..Default::default()
    }
}

/// Draws `chunks` after what `encoder` holds, in one submission; coverage is where the
/// picture is not the transparent clear colour.
fn draw(
    ctx: &GpuContext,
    lib: &AnimLibrary,
    mesh: &SkinnedMesh,
    camera: &Camera,
    mut encoder: wgpu::CommandEncoder,
    chunks: &[DrawChunk],
) -> Vec<bool> {
    assert!(chunks.len() > 1, "the test means to draw several chunks");
    let mut renderer = CrowdRenderer::new(ctx, mesh, lib.bone_count(), COLOR_FORMAT).unwrap();
    renderer.set_camera(camera);
    let target = RenderTarget::new(ctx, W, H).unwrap();
    renderer
        .draw(
            &mut encoder,
            target.color_view(),
            target.depth_view(),
            TRANSPARENT,
            chunks,
        )
        .unwrap();
    ctx.queue.submit([encoder.finish()]);
    let rgba = target.read_rgba(ctx).unwrap();
    rgba.chunks_exact(4).map(|p| p[3] > 0).collect()
}

/// Each instance's column: between the midpoints of neighbouring placements on screen.
fn columns(placements: &[Transform], camera: &Camera) -> Vec<(u32, u32)> {
    let xs: Vec<f32> = placements
        .iter()
        .map(|p| {
            let clip = camera.view_proj * (p.translation + Vec3::Y).extend(1.0);
            (clip.x / clip.w + 1.0) * 0.5 * W as f32
        })
        .collect();
    (0..xs.len())
        .map(|k| {
            let x0 = if k == 0 {
                0.0
            } else {
                0.5 * (xs[k - 1] + xs[k])
            };
            let x1 = xs.get(k + 1).map_or(W as f32, |x| 0.5 * (xs[k] + x));
            (x0.max(0.0) as u32, (x1 as u32).min(W))
        })
        .collect()
}

fn cpu_skinning(lib: &AnimLibrary, batch: &PoseBatch) -> Vec<Mat3x4> {
    let mut poses = Poses::default();
    CpuEvaluator::new(lib).evaluate(batch, &mut poses).unwrap();
    poses.skinning
}

/// A camera on a row of `n` instances `spacing` apart, with room in front for instances that
/// walk with their root motion.
fn row_camera(lib: &AnimLibrary, mesh: &SkinnedMesh, n: usize, spacing: f32) -> Camera {
    let (lo, hi) = mesh.bounds(&rest_skinning(lib.skeleton()));
    let reach = Vec3::new(spacing * (n - 1) as f32 * 0.5, 0.0, 0.0);
    let ahead = Vec3::new(0.0, 0.0, 1.5 * (hi - lo).max_element());
    Camera::framing(lo - reach, hi + reach + ahead, W as f32 / H as f32)
}

/// Renders `batch` on the GPU and checks every instance's silhouette against the CPU
/// reference, and that a wrong pose (the reference pose instead) would have been caught: with
/// every output in 3x4 rows, and with skinning matrices alone as 4x4 columns (built in place).
fn check_silhouettes(lib: &AnimLibrary, mesh: &SkinnedMesh, batch: &PoseBatch, spacing: f32) {
    let Some(ctx) = gpu() else { return };
    let placements = row(batch.len(), spacing);
    let camera = row_camera(lib, mesh, batch.len(), spacing);
    let skinning = cpu_skinning(lib, batch);
    let rest: Vec<Mat3x4> = (0..batch.len())
        .flat_map(|_| rest_skinning(lib.skeleton()))
        .collect();
    let wrong = [(rest.as_slice(), placements.as_slice())];
    let columns = Outputs::SKINNING.with_skinning(SkinningLayout::Columns4x4);
    for outputs in [Outputs::ALL, columns] {
        let drawn = gpu_coverage(&ctx, lib, mesh, batch, &placements, &camera, outputs);
        compare(lib, mesh, &camera, &drawn, (&skinning, &placements), &wrong);
    }
}

/// Each instance's silhouette in `drawn` against the CPU reference (`skinning` at
/// `placements`), and against each `wrong` reference, which must be far off.
fn compare(
    lib: &AnimLibrary,
    mesh: &SkinnedMesh,
    camera: &Camera,
    drawn: &[bool],
    (skinning, placements): (&[Mat3x4], &[Transform]),
    wrong: &[(&[Mat3x4], &[Transform])],
) {
    let bones = lib.bone_count();
    let n = placements.len();
    let cols = columns(placements, camera);
    let gpu = Silhouettes::split(drawn, &cols);
    let cpu = Silhouettes::split(
        &cpu_coverage(mesh, bones, skinning, placements, camera),
        &cols,
    );
    for k in 0..n {
        let (g, c) = (gpu.count(k), cpu.count(k));
        assert!(
            c > 50,
            "instance {k}: the reference silhouette is only {c} pixels"
        );
        let diff = gpu.differing(&cpu, k);
        println!(
            "instance {k}: GPU {g} px, CPU {c} px, {diff} differ; bbox GPU {:?} CPU {:?}",
            gpu.bbox(k),
            cpu.bbox(k)
        );
        // Rasterization rules differ only on pixel centres that lie on an edge.
        assert!(
            g.abs_diff(c) as f32 <= 0.02 * c as f32 + 4.0,
            "instance {k}: GPU {g} pixels, CPU {c}"
        );
        let (gb, cb) = (gpu.bbox(k), cpu.bbox(k));
        for (a, b) in [(gb.0, cb.0), (gb.1, cb.1), (gb.2, cb.2), (gb.3, cb.3)] {
            assert!(
                a.abs_diff(b) <= 1,
                "instance {k}: bbox GPU {gb:?}, CPU {cb:?}"
            );
        }
        assert!(
            diff as f32 <= 0.03 * c as f32 + 6.0,
            "instance {k}: {diff} of {c} pixels differ"
        );
    }
    // The same check against a wrong pose or placement fails by far.
    for (w, (skinning, placements)) in wrong.iter().enumerate() {
        let off = Silhouettes::split(
            &cpu_coverage(mesh, bones, skinning, placements, camera),
            &cols,
        );
        for k in 0..n {
            let (miss, diff, c) = (gpu.differing(&off, k), gpu.differing(&cpu, k), cpu.count(k));
            println!("instance {k}: wrong reference {w} differs by {miss} pixels");
            assert!(
                miss as f32 > 0.1 * c as f32 && miss > 4 * diff.max(5),
                "instance {k}: wrong reference {w} differs by only {miss} pixels (right: {diff})"
            );
        }
    }
}

#[test]
fn humanoid_crowd_matches_cpu_skinned_silhouettes() {
    let asset = posegpu::procedural::humanoid_asset();
    let lib = AnimLibrary::new(&asset.skeleton, &asset.clips).unwrap();
    let mesh = SkinnedMesh::humanoid(&asset.skeleton);
    let mut batch = PoseBatch::new();
    // Walk, run, wave and idle at different phases; one playing walk with its root motion.
    for (i, (clip, time)) in [
        ("walk", 0.3),
        ("run", 0.2),
        ("wave", 1.1),
        ("idle", 0.7),
        ("walk", 0.8),
    ]
    .into_iter()
    .enumerate()
    {
        let clip = lib.find_clip(clip).unwrap();
        let lock = (i != 4).then_some(RootLock::RefPose);
        batch.push_blend(&[ClipSample::new(clip, time, true).with_root_lock(lock)]);
    }
    check_silhouettes(&lib, &mesh, &batch, 2.6);
}

#[test]
fn cesium_man_matches_cpu_skinned_silhouettes() {
    let path = anim_data().join("gltf/khronos/CesiumMan.glb");
    let asset = posegpu::import::load(&path).unwrap();
    let mesh = posegpu::import::load_gltf_mesh(&path, &asset, &[]).unwrap();
    assert_eq!(mesh.indices.len() % 3, 0);
    let lib = AnimLibrary::new(&asset.skeleton, &asset.clips).unwrap();
    let mut batch = PoseBatch::new();
    for time in [0.2, 0.6, 1.3, 1.7] {
        batch.push_clip(0, time, true);
    }
    let (lo, hi) = mesh.bounds(&rest_skinning(lib.skeleton()));
    check_silhouettes(&lib, &mesh, &batch, (hi - lo).max_element() * 1.3);
}

/// A crowd walking with root motion, drawn from the crowd's own placement records on the GPU
/// (`DrawChunk::from_crowd`), lands where the CPU twin's placements put it.
#[test]
fn a_crowd_is_drawn_where_its_root_motion_took_it() {
    let Some(ctx) = gpu() else { return };
    let asset = posegpu::procedural::humanoid_asset();
    let lib = AnimLibrary::new(&asset.skeleton, &asset.clips).unwrap();
    let mesh = SkinnedMesh::humanoid(&asset.skeleton);
    let (walk, run) = (
        lib.find_clip("walk").unwrap(),
        lib.find_clip("run").unwrap(),
    );
    let spacing = 2.6;
    let start = row(4, spacing);
    let mut cpu = Crowd::new(&lib);
    for (i, place) in start.iter().enumerate() {
        let clip = if i % 2 == 0 { walk } else { run };
        let player = Player::new(clip).starting_at(0.1 * i as f32).looping(true);
        let agent = Agent::new(player).with_root_motion(Some(RootLock::RefPose));
        let k = cpu.add(&agent).unwrap();
        cpu.set_placement(k, *place).unwrap();
    }
    let mut gpu = GpuCrowd::new(&ctx, &lib, &cpu, &few_per_chunk()).unwrap();
    for dt in [0.1, 0.15, 0.2] {
        cpu.advance(&lib, dt).unwrap();
        gpu.advance(dt).unwrap();
    }
    let moved = cpu.placements().to_vec();
    assert!(
        moved
            .iter()
            .zip(&start)
            .all(|(m, s)| m.translation.distance(s.translation) > 0.3),
        "every instance should have walked"
    );
    let camera = row_camera(&lib, &mesh, moved.len(), spacing);
    let encoder = ctx.device.create_command_encoder(&Default::default());
    let drawn = draw(
        &ctx,
        &lib,
        &mesh,
        &camera,
        encoder,
        &DrawChunk::from_crowd(&gpu),
    );
    let skinning = cpu_skinning(&lib, &cpu.batch());
    // Wrong: the poses at the starting placements (the motion records ignored).
    let wrong = [(skinning.as_slice(), start.as_slice())];
    compare(&lib, &mesh, &camera, &drawn, (&skinning, &moved), &wrong);
}

/// A rigidly attached glTF mesh (the Knight's helmet under its head bone) lands, at the rest
/// pose, where the file's own node transforms put it.
#[test]
fn rigid_attachments_sit_where_the_file_puts_them() {
    let path = anim_data().join("gltf/kaykit-adventurers/Knight.glb");
    let asset = posegpu::import::load(&path).unwrap();
    let others: Vec<&str> = vec![
        "1H_Sword_Offhand",
        "Badge_Shield",
        "Rectangle_Shield",
        "Round_Shield",
        "Spike_Shield",
        "1H_Sword",
        "2H_Sword",
        "Knight_Cape",
        "Knight_ArmLeft",
        "Knight_ArmRight",
        "Knight_Body",
        "Knight_Head",
        "Knight_LegLeft",
        "Knight_LegRight",
    ];
    let helmet = posegpu::import::load_gltf_mesh(&path, &asset, &others).unwrap();
    let lib = AnimLibrary::new(&asset.skeleton, &asset.clips).unwrap();
    let posed = helmet.skin(&rest_skinning(lib.skeleton()));

    // The file's view: the helmet node's global transform times its vertices.
    let (doc, buffers, _) = gltf::import(&path).unwrap();
    let mut parent = vec![None; doc.nodes().len()];
    for n in doc.nodes() {
        for c in n.children() {
            parent[c.index()] = Some(n.index());
        }
    }
    let node = doc
        .nodes()
        .find(|n| n.name() == Some("Knight_Helmet"))
        .unwrap();
    let mut global = glam::Mat4::IDENTITY;
    let mut at = Some(node.index());
    while let Some(i) = at {
        let local =
            glam::Mat4::from_cols_array_2d(&doc.nodes().nth(i).unwrap().transform().matrix());
        global = local * global;
        at = parent[i];
    }
    let prim = node.mesh().unwrap().primitives().next().unwrap();
    let reader = prim.reader(|b| Some(&buffers[b.index()]));
    let expected: Vec<Vec3> = reader.read_positions().unwrap().map(Vec3::from).collect();
    assert_eq!(posed.len(), expected.len());
    let (lo, hi) = helmet.bounds(&rest_skinning(lib.skeleton()));
    let size = (hi - lo).length();
    for (p, e) in posed.iter().zip(&expected) {
        let e = global.transform_point3(*e);
        assert!(p.distance(e) < 1e-4 * size.max(1.0), "{p} vs {e}");
    }
}

#[test]
fn hiding_a_mesh_node_that_does_not_exist_is_an_error() {
    let path = anim_data().join("gltf/kaykit-adventurers/Knight.glb");
    let asset = posegpu::import::load(&path).unwrap();
    let all = posegpu::import::load_gltf_mesh(&path, &asset, &[]).unwrap();
    let fewer = posegpu::import::load_gltf_mesh(&path, &asset, &["2H_Sword"]).unwrap();
    assert!(fewer.vertices.len() < all.vertices.len());
    match posegpu::import::load_gltf_mesh(&path, &asset, &["Excalibur"]) {
        Err(Error::Mesh { what }) => {
            assert!(
                what.contains("Excalibur") && what.contains("2H_Sword"),
                "{what}"
            )
        }
        other => panic!("expected a mesh error, got {other:?}"),
    }
}

fn one_triangle() -> SkinnedMesh {
    let v = |x: f32| SkinnedVertex {
        position: [x, 1.0, 0.0],
        normal: [0.0, 0.0, 1.0],
        joints: [0, 0, 0, 0],
        weights: [1.0, 0.0, 0.0, 0.0],
    };
    SkinnedMesh {
        vertices: vec![v(0.0), v(1.0), v(0.5)],
        indices: vec![0, 1, 2],
        root: glam::Mat4::IDENTITY,
    }
}

#[test]
fn bad_meshes_are_typed_errors_naming_the_fault() {
    assert!(one_triangle().validate(1).is_ok());
    type Break = fn(&mut SkinnedMesh);
    let cases: [(&str, Break); 6] = [
        ("bone 1", |m| m.vertices[0].joints[0] = 1),
        ("weights", |m| {
            m.vertices[1].weights = [f32::NAN, 0.0, 0.0, 0.0]
        }),
        ("weights", |m| m.vertices[2].weights = [0.0; 4]),
        ("index 7", |m| m.indices[2] = 7),
        ("whole number", |m| m.indices.push(0)),
        ("not finite", |m| m.vertices[0].position[1] = f32::INFINITY),
    ];
    for (needle, break_it) in cases {
        let mut mesh = one_triangle();
        break_it(&mut mesh);
        match mesh.validate(1) {
            Err(Error::Mesh { what }) => assert!(what.contains(needle), "{needle}: {what}"),
            other => panic!("{needle}: expected a mesh error, got {other:?}"),
        }
    }
}

#[test]
fn draws_and_targets_that_do_not_fit_are_typed_errors() {
    let Some(ctx) = gpu() else { return };
    let asset = posegpu::procedural::humanoid_asset();
    let lib = AnimLibrary::new(&asset.skeleton, &asset.clips).unwrap();
    let mesh = SkinnedMesh::humanoid(&asset.skeleton);
    // A mesh naming bones the skeleton lacks is refused before anything is uploaded.
    let mut far = one_triangle();
    far.vertices[0].joints[0] = 500;
    assert!(matches!(
        CrowdRenderer::new(&ctx, &far, lib.bone_count(), COLOR_FORMAT),
        Err(Error::Mesh { .. })
    ));
    assert!(matches!(
        RenderTarget::new(&ctx, 0, 10),
        Err(Error::Render { .. })
    ));
    let limit = ctx.device.limits().max_texture_dimension_2d;
    match RenderTarget::new(&ctx, limit + 1, 4) {
        Err(e @ Error::TooLarge { limit_name, .. }) => {
            assert_eq!(limit_name, "max_texture_dimension_2d");
            assert!(e.to_string().contains("pixels"), "{e}");
        }
        other => panic!("expected TooLarge, got {:?}", other.err()),
    }
    let nan = Transform::new(Vec3::NAN, Quat::IDENTITY, Vec3::ONE);
    assert!(matches!(
        placements_buffer(&ctx, &[nan]),
        Err(Error::Render { .. })
    ));

    // Placements for 3 instances, a draw of 4: refused, and the renderer still draws after.
    let mut gpu = GpuEvaluator::new(&ctx, &lib, 4, &GpuOptions::default()).unwrap();
    gpu.evaluate(&common::crowd(&lib, 4, 0.0)).unwrap();
    let mut renderer = CrowdRenderer::new(&ctx, &mesh, lib.bone_count(), COLOR_FORMAT).unwrap();
    let target = RenderTarget::new(&ctx, 64, 64).unwrap();
    let three = placements_buffer(&ctx, &row(3, 2.0)).unwrap();
    let mut encoder = ctx.device.create_command_encoder(&Default::default());
    let chunks = DrawChunk::from_outputs(gpu.chunks(), &three);
    match renderer.draw(
        &mut encoder,
        target.color_view(),
        target.depth_view(),
        TRANSPARENT,
        &chunks,
    ) {
        Err(Error::Render { what }) => assert!(what.contains("placement 3"), "{what}"),
        other => panic!("expected a render error, got {other:?}"),
    }
    let four = placements_buffer(&ctx, &row(4, 2.0)).unwrap();
    let chunks = DrawChunk::from_outputs(gpu.chunks(), &four);
    renderer
        .draw(
            &mut encoder,
            target.color_view(),
            target.depth_view(),
            TRANSPARENT,
            &chunks,
        )
        .unwrap();
    ctx.queue.submit([encoder.finish()]);
    let covered = target
        .read_rgba(&ctx)
        .unwrap()
        .chunks_exact(4)
        .filter(|p| p[3] > 0)
        .count();
    assert!(covered > 0, "nothing was drawn after the refused draw");
}
