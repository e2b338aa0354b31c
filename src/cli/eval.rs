//! `posegpu eval`: a model's animation at given times, as JSON (the contract in the README).

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use posegpu::{
    AnimLibrary, Asset, Clip, CpuEvaluator, Error, GpuEvaluator, GpuOptions, Instance, Poses, Rig,
    Skeleton, Transform,
};
use serde::Serialize;

use crate::Backend;

#[derive(clap::Args)]
pub struct EvalArgs {
    /// A .glb/.gltf (the skeleton is the first skin) or .bvh file.
    model: PathBuf,
    /// Clip name or index; default the first. A model without clips evaluates its reference pose.
    #[arg(long)]
    animation: Option<String>,
    /// Play a clip of this file (.glb/.gltf/.bvh) on MODEL, retargeted from its reference pose.
    #[arg(long, value_name = "SOURCE")]
    animation_from: Option<PathBuf>,
    /// With --animation-from: a rig JSON file, the preset `humanoid` (the default), or a mode
    /// name for every bone (`animation`, `skeleton`, `animation_scaled`, `animation_relative`,
    /// `orient_and_scale`).
    #[arg(long, requires = "animation_from")]
    rig: Option<String>,
    /// Times in seconds, comma-separated (negative ones too: `--times=-0.5,0,1.25`).
    #[arg(
        long,
        required = true,
        value_delimiter = ',',
        allow_negative_numbers = true
    )]
    times: Vec<f32>,
    /// Where to evaluate.
    #[arg(long, value_enum, default_value = "cpu")]
    backend: Backend,
    /// Wrap times into the clip's range instead of clamping them.
    #[arg(long = "loop")]
    looping: bool,
    /// Write the JSON here instead of to standard output.
    #[arg(long)]
    out: Option<PathBuf>,
}

#[derive(Serialize)]
struct Output<'a> {
    bones: &'a [String],
    parents: &'a [i32],
    frames: Vec<Frame>,
}

/// `[tx, ty, tz, qx, qy, qz, qw, sx, sy, sz]` per bone.
#[derive(Serialize)]
struct Frame {
    time: f32,
    local: Vec<[f32; 10]>,
    component: Vec<[f32; 10]>,
}

pub fn run(args: &EvalArgs) -> Result<ExitCode, Error> {
    let asset = posegpu::import::load(&args.model)?;
    let lib = match &args.animation_from {
        Some(source) => retargeted(&asset.skeleton, source, args.rig.as_deref())?,
        None => own(asset, args.animation.as_deref())?,
    };
    let skeleton = lib.skeleton();
    let clip = match &args.animation {
        Some(name) => lib.find_clip(name)?,
        None => 0,
    };
    let instances: Vec<Instance> = args
        .times
        .iter()
        .map(|&t| Instance::new(clip as u32, t, args.looping))
        .collect();
    let poses = evaluate(&lib, &instances, args.backend)?;

    let frames = args
        .times
        .iter()
        .enumerate()
        .map(|(i, &time)| Frame {
            time,
            local: (0..skeleton.len())
                .map(|b| flat(&poses.local(i, b)))
                .collect(),
            component: (0..skeleton.len())
                .map(|b| flat(&poses.component(i, b)))
                .collect(),
        })
        .collect();
    let output = Output {
        bones: skeleton.names(),
        parents: skeleton.parents(),
        frames,
    };
    let json = serde_json::to_string(&output).expect("poses serialize");
    match &args.out {
        Some(path) => std::fs::write(path, json + "\n").map_err(|source| Error::Io {
            path: path.clone(),
            source,
        })?,
        None => {
            let mut out = std::io::stdout().lock();
            writeln!(out, "{json}").map_err(|source| Error::Io {
                path: "<stdout>".into(),
                source,
            })?;
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// The model's own clips, or its reference pose when it has none.
fn own(asset: Asset, animation: Option<&str>) -> Result<AnimLibrary, Error> {
    let clips = if asset.clips.is_empty() {
        if let Some(name) = animation {
            return Err(Error::UnknownAnimation {
                name: name.to_string(),
                available: "none: the model has no animations".into(),
            });
        }
        vec![Clip::from_pose(
            "reference pose",
            &asset.skeleton,
            asset.skeleton.rest(),
        )?]
    } else {
        asset.clips
    };
    AnimLibrary::new(&asset.skeleton, &clips)
}

/// The clips of `source` on `target`, through `rig` (the humanoid preset by default).
fn retargeted(target: &Skeleton, source: &Path, rig: Option<&str>) -> Result<AnimLibrary, Error> {
    let rig = Rig::from_arg(rig.unwrap_or("humanoid"))?;
    let asset = posegpu::import::load(source)?;
    if asset.clips.is_empty() {
        return Err(Error::UnknownAnimation {
            name: "(any)".into(),
            available: format!("none: {} has no animations", source.display()),
        });
    }
    let mut builder = AnimLibrary::builder(target);
    let id = builder.add_source(&source.display().to_string(), &asset.skeleton, None, &rig)?;
    builder.add_clips_from(id, &asset.clips)?;
    Ok(builder.build())
}

fn evaluate(lib: &AnimLibrary, instances: &[Instance], backend: Backend) -> Result<Poses, Error> {
    match backend {
        Backend::Cpu => {
            let mut poses = Poses::default();
            CpuEvaluator::new(lib).evaluate(instances, &mut poses)?;
            Ok(poses)
        }
        Backend::Gpu => {
            let ctx = super::open_gpu()?.ok_or(Error::NoAdapter)?;
            let mut gpu = GpuEvaluator::new(&ctx, lib, instances.len(), &GpuOptions::default())?;
            gpu.evaluate(instances)?;
            gpu.read_back()
        }
    }
}

fn flat(t: &Transform) -> [f32; 10] {
    let (p, q, s) = (t.translation, t.rotation, t.scale);
    [p.x, p.y, p.z, q.x, q.y, q.z, q.w, s.x, s.y, s.z]
}
