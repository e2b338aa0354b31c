//! `posegpu render`: a skinned crowd drawn headless from the evaluator's skinning buffers, to
//! one PNG or a numbered sequence.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use posegpu::render::{
    grid_placements, placements_buffer, rest_skinning, Camera, CrowdRenderer, DrawChunk,
    RenderTarget, SkinnedMesh, BACKGROUND, COLOR_FORMAT,
};
use posegpu::{
    AnimLibrary, Clip, ClipId, ClipSample, Error, GpuEvaluator, GpuOptions, PoseBatch, RootLock,
};

use crate::layer::LayerArgs;
use crate::method::{BakeArg, IkArgs, RestArg, Runtime};
use crate::util::open_gpu;

#[derive(clap::Args)]
pub struct RenderArgs {
    /// A skinned glTF model (default: the procedural humanoid and its generated mesh); one
    /// without clips stands in its reference pose.
    #[arg(long)]
    model: Option<PathBuf>,
    /// Without --model: the procedural humanoid with IK-style feet (its feet children of its
    /// root, its clips keeping them on the shins), to look at retargeting onto such rigs.
    #[arg(long, conflicts_with = "model")]
    ik_style_feet: bool,
    /// Mesh nodes of the model not to draw, comma-separated (e.g. spare weapons).
    #[arg(long, value_delimiter = ',')]
    hide: Vec<String>,
    /// The clip every instance plays (default: the clips in turn); with --animation-from, a
    /// clip of SOURCE.
    #[arg(long)]
    animation: Option<String>,
    /// Play the clips of this file (.glb, .gltf, .bvh) on the model, retargeted: to look at
    /// a retargeting result in one command.
    #[arg(long, value_name = "SOURCE")]
    animation_from: Option<PathBuf>,
    /// With --animation-from: as `eval --rig` (absent: the character retargeting).
    #[arg(long, requires = "animation_from")]
    rig: Option<String>,
    #[command(flatten)]
    rest: RestArg,
    /// Instances, on a square grid.
    #[arg(long, default_value_t = 100, value_parser = crate::util::positive_count)]
    instances: usize,
    #[arg(long, default_value_t = 960)]
    width: u32,
    #[arg(long, default_value_t = 540)]
    height: u32,
    /// Frames; more than one writes OUT's stem with _0000, _0001, ... appended.
    #[arg(long, default_value_t = 1, value_parser = crate::util::positive_count)]
    frames: usize,
    /// Frames per second of animation time.
    #[arg(long, default_value_t = 30.0, value_parser = crate::util::positive_rate)]
    fps: f32,
    /// Animation time of the first frame, in seconds.
    #[arg(long, default_value_t = 0.4)]
    time: f32,
    #[arg(long, default_value = "render.png")]
    out: PathBuf,
    /// Where the camera looks from, by the model's own facing (a humanoid's, from its rest
    /// pose): `front` (in front, above and a little to its left) or `side` (from its left, at
    /// hip height: feet against the floor, strides in profile, walking toward the image's left).
    #[arg(long, value_enum, default_value = "front")]
    view: View,
    #[command(flatten)]
    layers: LayerArgs,
    #[command(flatten)]
    ik: IkArgs,
    #[command(flatten)]
    bake: BakeArg,
    #[command(flatten)]
    compress: crate::util::CompressArg,
}

/// `--view`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum View {
    Front,
    Side,
}

pub fn run(args: &RenderArgs) -> Result<ExitCode, Error> {
    let (asset, mesh) = match &args.model {
        Some(path) => {
            let asset = posegpu::import::load(path)?;
            let hide: Vec<&str> = args.hide.iter().map(String::as_str).collect();
            let mesh = posegpu::import::load_gltf_mesh(path, &asset, &hide)?;
            (asset, mesh)
        }
        None => {
            let asset = if args.ik_style_feet {
                posegpu::procedural::humanoid_ik_feet_asset()
            } else {
                posegpu::procedural::humanoid_asset()
            };
            // The humanoid's own mesh: the same bones and binds, each shin's box down to its
            // foot's joint, wherever the foot hangs.
            let mesh = SkinnedMesh::humanoid(&posegpu::procedural::humanoid());
            (asset, mesh)
        }
    };
    // A model without clips stands in its reference pose.
    let clips = if asset.clips.is_empty() {
        vec![Clip::from_pose(
            "reference pose",
            &asset.skeleton,
            asset.skeleton.rest(),
        )?]
    } else {
        asset.clips.clone()
    };
    let mut builder = AnimLibrary::builder(&asset.skeleton);
    builder.compress(args.compress.compression()?);
    builder.add_clips(&clips)?;
    // The clips the crowd plays: the model's own, or (with --animation-from) the source's,
    // which the library holds after the model's.
    let source = match &args.animation_from {
        Some(path) => {
            let source = posegpu::import::load(path)?;
            let runtime = Runtime::from_arg(args.rig.as_deref(), args.rest)?;
            let name = path.display().to_string();
            runtime.add_source(&mut builder, &name, &source, &asset, args.bake.bake)?;
            Some(source)
        }
        None => None,
    };
    let (first, played) = match &source {
        Some(source) => (clips.len(), &source.clips),
        None => (0, &clips),
    };
    let clip = args
        .animation
        .as_deref()
        .map(|name| Clip::find(played, name))
        .transpose()?;
    let played_count = played.len();
    let layered = args.layers.add(&mut builder, &clips, false)?;
    let lib = builder.build();
    let count = args.instances;
    let ctx = open_gpu()?.ok_or(Error::NoAdapter)?;
    posegpu::render::check_placements(&ctx, count)?;
    println!("adapter: {}", ctx.describe());
    let target = RenderTarget::new(&ctx, args.width, args.height)?;
    let mut gpu = GpuEvaluator::new(&ctx, &lib, count, &GpuOptions::default())?;
    let mut renderer = CrowdRenderer::new(&ctx, &mesh, lib.bone_count(), COLOR_FORMAT)?;

    // Instances stand on a grid a little wider apart than the mesh is across.
    let (lo, hi) = mesh.bounds(&rest_skinning(&asset.skeleton));
    let spacing = (hi.x - lo.x).max(hi.z - lo.z).max(1e-3) * 1.15;
    let placements = grid_placements(count, spacing);
    let placement_buffer = placements_buffer(&ctx, &placements)?;
    let (grid_lo, grid_hi) = placements.iter().fold((lo, hi), |(a, b), p| {
        (a.min(lo + p.translation), b.max(hi + p.translation))
    });
    let aspect = args.width as f32 / args.height as f32;

    let frames = args.frames;
    let mut batch = PoseBatch::with_capacity(count, 1);
    let fill = |batch: &mut PoseBatch, frame: usize| {
        let time = args.time + frame as f32 / args.fps;
        batch.clear();
        for (i, instance) in
            crate::workload::crowd_of(&lib, first..first + played_count, count, time)
                .into_iter()
                .enumerate()
        {
            let (clip, t) = match clip {
                Some(c) => (ClipId((first + c) as u32), time + i as f32 * 0.137),
                None => (instance.clip, instance.time),
            };
            // Own clips play in place (the root at its reference pose): each instance stays on
            // its grid cell. A retargeted clip drives the target's root through the plan (a
            // character's root need not be its hips), so locking bone 0 would tear it from its
            // children: it moves as the source does.
            let lock = args.animation_from.is_none().then_some(RootLock::RefPose);
            let sample = ClipSample::new(clip, t, true).with_root_lock(lock);
            let instance = layered.push(&args.layers, batch.push_blend(&[sample]), t, true);
            if let Some(ik) = args.ik.live(args.animation_from.is_some()) {
                instance.ik(ik);
            }
        }
    };
    let (mut view_lo, mut view_hi) = (grid_lo, grid_hi);
    if args.animation_from.is_some() {
        // Frame where the retargeted crowd goes: the rest bounds moved with each instance's
        // mean joint (CPU twin), over every frame drawn. Only joints that skin the mesh count:
        // IK controls and sockets the retargeting leaves at rest would hold the mean back.
        let skinned: Vec<usize> = match &asset.frame.skinned {
            Some(s) if s.iter().any(|&k| k) => (0..s.len()).filter(|&b| s[b]).collect(),
            _ => (0..lib.bone_count()).collect(),
        };
        let rest = asset.skeleton.rest_component();
        let rest_mean = mean(skinned.iter().map(|&b| rest[b].translation));
        let cpu = posegpu::CpuEvaluator::new(&lib);
        let mut poses = posegpu::Poses::default();
        for frame in 0..frames {
            fill(&mut batch, frame);
            cpu.evaluate(&batch, &mut poses)?;
            for (i, p) in placements.iter().enumerate() {
                let at = mean(skinned.iter().map(|&b| poses.component(i, b).translation));
                // Component space → the model's: the nodes above the skeleton (an armature's
                // 0.01 scale) scale the travel as they scale the mesh.
                let shift = mesh.root.transform_vector3(at - rest_mean) + p.translation;
                if shift.is_finite() {
                    view_lo = view_lo.min(lo + shift);
                    view_hi = view_hi.max(hi + shift);
                }
            }
        }
    }
    let (left, forward) = facing(&asset);
    let direction = match args.view {
        View::Front => left * 0.35 + glam::Vec3::Y * 0.5 + forward,
        View::Side => left + glam::Vec3::Y * 0.05,
    };
    renderer.set_camera(&Camera::framing_from(view_lo, view_hi, aspect, direction));

    for frame in 0..frames {
        fill(&mut batch, frame);
        gpu.write(&batch)?;
        let mut encoder = ctx.device.create_command_encoder(&Default::default());
        gpu.encode(&mut encoder);
        let chunks = DrawChunk::from_outputs(gpu.chunks(), &placement_buffer);
        renderer.draw(
            &mut encoder,
            target.color_view(),
            target.depth_view(),
            BACKGROUND,
            &chunks,
        )?;
        ctx.queue.submit([encoder.finish()]);
        let path = frame_path(&args.out, (frames > 1).then_some(frame));
        std::fs::write(&path, crate::picture::target_png(&target, &ctx)?).map_err(|source| {
            Error::Io {
                path: path.clone(),
                source,
            }
        })?;
        println!("{}", path.display());
    }
    println!(
        "{count} instances of {} bones, {} triangles each, {frames} frame(s) at {}x{}",
        lib.bone_count(),
        mesh.indices.len() / 3,
        args.width,
        args.height
    );
    Ok(ExitCode::SUCCESS)
}

/// `out`, or for frame `k` of a sequence `out`'s stem with `_{k:04}` appended.
fn frame_path(out: &Path, frame: Option<usize>) -> PathBuf {
    let Some(k) = frame else {
        return out.to_path_buf();
    };
    let stem = out.file_stem().and_then(|s| s.to_str()).unwrap_or("frame");
    let ext = out.extension().and_then(|s| s.to_str()).unwrap_or("png");
    out.with_file_name(format!("{stem}_{k:04}.{ext}"))
}

/// The model's left and forward across the drawn world's floor (+Y up): a humanoid's own, from
/// its rest pose (CesiumMan faces +X), or glTF's convention (facing +Z) for other models.
fn facing(asset: &posegpu::Asset) -> (glam::Vec3, glam::Vec3) {
    let conventional = (glam::Vec3::X, glam::Vec3::Z);
    let Ok(c) = posegpu::retarget::Character::measure(asset) else {
        return conventional;
    };
    let to_world = glam::Mat3::from_mat4(asset.frame.above);
    let across = |v: glam::Vec3| (to_world * v).with_y(0.0).try_normalize();
    match (across(-c.body.right), across(c.body.forward)) {
        (Some(left), Some(forward)) => (left, forward),
        _ => conventional,
    }
}

/// The mean of some points (the origin for none).
fn mean(points: impl Iterator<Item = glam::Vec3>) -> glam::Vec3 {
    let (sum, n) = points.fold((glam::Vec3::ZERO, 0u32), |(s, n), p| (s + p, n + 1));
    sum / n.max(1) as f32
}

#[cfg(test)]
mod tests {
    use super::*;

    fn facing_of(rel: &str) -> (glam::Vec3, glam::Vec3) {
        let data = crate::test_common::anim_data();
        facing(&posegpu::import::load(data.join(rel)).unwrap())
    }

    #[test]
    fn views_follow_the_models_own_facing() {
        // The Knight faces +Z, as glTF has it; CesiumMan's turned armature faces along X. Either
        // way the side view looks across the stride, square to the way the model faces.
        let (left, forward) = facing_of("gltf/kaykit-adventurers/Knight.glb");
        assert!(forward.dot(glam::Vec3::Z) > 0.99 && left.dot(glam::Vec3::X) > 0.99);
        let (left, forward) = facing_of("gltf/khronos/CesiumMan.glb");
        assert!(forward.x.abs() > 0.99, "{forward}");
        assert!(left.dot(forward).abs() < 1e-4 && left.y == 0.0);
        // Not a humanoid: glTF's convention.
        assert_eq!(
            facing_of("gltf/khronos/Fox.glb"),
            (glam::Vec3::X, glam::Vec3::Z)
        );
    }
}
