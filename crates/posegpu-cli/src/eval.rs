//! `posegpu eval`: a model's animation at given times, as JSON (the contract in docs/guide/command-line.md).

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use glam::Vec2;
use posegpu::additive::{make_additive, AdditiveBase};
use posegpu::blend::clips::AimOffset;
use posegpu::blend::space::BlendGrid;
use posegpu::blend::space::BlendSpace;
use posegpu::procedural::{AIM_PITCHES, AIM_YAWS};
use posegpu::retarget::Rig;
use posegpu::{
    AdditiveSpace, AnimLibrary, Asset, Clip, ClipSample, CpuEvaluator, Error, GpuEvaluator,
    GpuOptions, LibraryBuilder, PoseBatch, Poses, Skeleton, Transform,
};
use serde::Serialize;

use crate::layer::{LayerArgs, Layered};
use crate::method::{BakeArg, IkArgs, RestArg, Runtime};
use crate::transition::{Play, TransitionArgs};
use crate::Backend;

#[derive(clap::Args)]
pub struct EvalArgs {
    /// A .glb/.gltf (the skeleton is the first skin) or .bvh file, or `humanoid` for the
    /// embedded procedural character (its clips and its nine `aim_*` poses).
    model: PathBuf,
    /// Clip name or index; default the first. A model without clips evaluates its reference pose.
    #[arg(long)]
    animation: Option<String>,
    /// Play a clip of this file (.glb/.gltf/.bvh) on MODEL, retargeted from its reference pose.
    #[arg(long, value_name = "SOURCE")]
    animation_from: Option<PathBuf>,
    /// How another file's clips play on MODEL. Absent: the character retargeting (humanoid
    /// roles, world frames, rest poses; any tool onto any tool). A rig JSON file that sets
    /// translation modes, the preset `humanoid`, or a mode name for every bone (`animation`,
    /// `skeleton`, `animation_scaled`, `animation_relative`, `orient_and_scale`): UE's per-bone
    /// modes, exactly. A rig file with only `bone_map`/`strip_prefixes` pairs bones for the
    /// character retargeting.
    #[arg(long)]
    rig: Option<String>,
    #[command(flatten)]
    rest: RestArg,
    /// Layer an additive built from this clip (of MODEL, or of --additive-from) on top.
    #[arg(long, value_name = "NAME", conflicts_with = "aim")]
    additive: Option<String>,
    /// The file the additive's clips come from (default MODEL).
    #[arg(long, value_name = "FILE")]
    additive_from: Option<PathBuf>,
    /// What the additive (or the aim poses) is measured against: `ref-pose`, `frame:N` (of the
    /// clip itself), `clip:NAME:frame:N` or `clip:NAME:scaled` (another clip of the same file).
    #[arg(long, value_name = "BASE", default_value = "ref-pose", value_parser = parse_base)]
    additive_base: BaseKind,
    /// Local deltas, or mesh-space rotation deltas (aim poses are always mesh).
    #[arg(long, value_name = "SPACE", default_value = "local")]
    additive_space: AdditiveSpace,
    /// Where the additive is sampled, in seconds (default: each of --times).
    #[arg(long, value_name = "T", allow_negative_numbers = true)]
    additive_time: Option<f32>,
    /// The additive's weight, or the aim offset's alpha (clamped to [0, 1]).
    #[arg(
        long,
        value_name = "A",
        default_value_t = 1.0,
        allow_negative_numbers = true
    )]
    alpha: f32,
    /// Aim offset: yaw and pitch (`--aim=30,-10`), in the units of --aim-yaws/--aim-pitches.
    #[arg(long, value_name = "YAW,PITCH", value_parser = parse_aim, allow_hyphen_values = true)]
    aim: Option<Vec2>,
    /// The aim poses, one per grid point, pitch-major (every yaw of the first pitch, then the
    /// next pitch); default the embedded humanoid's `aim_{yaw}_{pitch}` poses.
    #[arg(long, value_name = "NAMES", value_delimiter = ',', requires = "aim")]
    aim_poses: Option<Vec<String>>,
    /// The aim grid's yaw axis (default -90,0,90).
    #[arg(
        long,
        value_delimiter = ',',
        allow_hyphen_values = true,
        requires = "aim"
    )]
    aim_yaws: Option<Vec<f32>>,
    /// The aim grid's pitch axis (default -45,0,45).
    #[arg(
        long,
        value_delimiter = ',',
        allow_hyphen_values = true,
        requires = "aim"
    )]
    aim_pitches: Option<Vec<f32>>,
    /// Times in seconds, comma-separated (negative ones too: `--times -0.5,0,1.25`).
    #[arg(
        long,
        required = true,
        value_delimiter = ',',
        allow_hyphen_values = true
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
    #[command(flatten)]
    compress: crate::util::CompressArg,
    #[command(flatten)]
    layers: LayerArgs,
    #[command(flatten)]
    transition: TransitionArgs,
    #[command(flatten)]
    ik: IkArgs,
    #[command(flatten)]
    bake: BakeArg,
}

/// `--additive-base`, with clip names still unresolved.
#[derive(Clone, Debug, PartialEq)]
pub enum BaseKind {
    ReferencePose,
    Frame(usize),
    ClipFrame(String, usize),
    ClipScaled(String),
}

fn parse_aim(s: &str) -> Result<Vec2, String> {
    let values: Vec<f32> = s
        .split(',')
        .map(|v| v.trim().parse::<f32>())
        .collect::<Result<_, _>>()
        .map_err(|e| format!("'{s}': {e}"))?;
    match values[..] {
        [yaw, pitch] if yaw.is_finite() && pitch.is_finite() => Ok(Vec2::new(yaw, pitch)),
        _ => Err(format!("'{s}' is not two finite numbers YAW,PITCH")),
    }
}

fn parse_base(s: &str) -> Result<BaseKind, String> {
    let frame = |n: &str| {
        n.parse::<usize>()
            .map_err(|_| format!("'{n}' is not a frame number"))
    };
    if s == "ref-pose" {
        return Ok(BaseKind::ReferencePose);
    }
    if let Some(n) = s.strip_prefix("frame:") {
        return Ok(BaseKind::Frame(frame(n)?));
    }
    if let Some(rest) = s.strip_prefix("clip:") {
        if let Some(name) = rest.strip_suffix(":scaled") {
            return Ok(BaseKind::ClipScaled(name.to_string()));
        }
        if let Some((name, n)) = rest.rsplit_once(":frame:") {
            return Ok(BaseKind::ClipFrame(name.to_string(), frame(n)?));
        }
    }
    Err(format!(
        "'{s}' is not a base pose (ref-pose, frame:N, clip:NAME:frame:N, clip:NAME:scaled)"
    ))
}

#[derive(Serialize)]
struct Output<'a> {
    bones: &'a [String],
    parents: &'a [i32],
    /// The library's curves (morph-target weights, curves of the user's), in each frame's
    /// `curves` order; absent when there are none.
    #[serde(skip_serializing_if = "<[String]>::is_empty")]
    curves: &'a [String],
    frames: Vec<Frame>,
}

/// `[tx, ty, tz, qx, qy, qz, qw, sx, sy, sz]` per bone, and the curves' values.
#[derive(Serialize)]
struct Frame {
    time: f32,
    local: Vec<[f32; 10]>,
    component: Vec<[f32; 10]>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    curves: Vec<f32>,
}

pub fn run(args: &EvalArgs) -> Result<ExitCode, Error> {
    let compression = args.compress.compression()?;
    let model = load_model(&args.model)?;
    let mut builder = AnimLibrary::builder(&model.skeleton);
    builder.compress(compression);
    // With --animation-from, --animation names a clip of SOURCE, not of MODEL.
    let own_name = match args.animation_from {
        Some(_) => None,
        None => args.animation.as_deref(),
    };
    let own = own_clips(&model, own_name)?;
    builder.add_clips(&own)?;
    let mut clip_count = own.len();

    // The clip played, and the one --transition-to switches to, from the same file.
    let to = args.transition.transition_to.as_deref();
    let (base, to) = match &args.animation_from {
        Some(path) => {
            let source = load_with_clips(path)?;
            let runtime = Runtime::from_arg(args.rig.as_deref(), args.rest)?;
            let name = path.display().to_string();
            runtime.add_source(&mut builder, &name, &source, &model, args.bake.bake)?;
            clip_count += source.clips.len();
            let to = to.map(|n| Clip::find(&source.clips, n)).transpose()?;
            let first = own.len();
            (
                first + find(&source.clips, args.animation.as_deref())?,
                to.map(|i| first + i),
            )
        }
        None => {
            let to = to.map(|n| Clip::find(&own, n)).transpose()?;
            (find(&own, args.animation.as_deref())?, to)
        }
    };

    let additive = args.additive.is_some() || args.aim.is_some();
    let layered = args.layers.add(&mut builder, &own, additive)?;
    let layer = if additive {
        Some(add_layer(args, &model, &mut builder, clip_count)?)
    } else {
        None
    };
    let lib = builder.build();
    let aim = match &layer {
        Some(Layer::Aim(grid, clips, at)) => {
            Some((AimOffset::new(&lib, grid.clone(), clips.clone())?, *at))
        }
        _ => None,
    };
    let poses = match to {
        Some(to) => {
            if additive || layered.clip.is_some() {
                return Err(Error::Playback {
                    what: "--transition-to plays clips without layers: drop --additive, --aim \
                           and --layer"
                        .into(),
                });
            }
            let play = Play {
                from: base as u32,
                to: to as u32,
                looping: args.looping,
                ik: args.ik.live(args.animation_from.is_some()),
                backend: args.backend,
            };
            args.transition.poses(&lib, &play, &args.times)?
        }
        None => layered_poses(args, &lib, base, &layered, layer.as_ref(), aim.as_ref())?,
    };
    let skeleton = lib.skeleton();
    // JSON has no infinity: a pose that overflowed (translations or scales near f32's range
    // in the file) is an error, not a `null` in the output.
    for (i, &time) in args.times.iter().enumerate() {
        for b in 0..skeleton.len() {
            if !(poses.local(i, b).is_finite() && poses.component(i, b).is_finite()) {
                return Err(Error::BadInstance {
                    instance: i,
                    what: format!(
                        "bone {b} '{}' at time {time}: the pose is not finite (the file's \
                         values overflow f32 when composed)",
                        skeleton.names()[b]
                    ),
                });
            }
        }
    }

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
            curves: (0..poses.curve_count).map(|c| poses.curve(i, c)).collect(),
        })
        .collect();
    let output = Output {
        bones: skeleton.names(),
        parents: skeleton.parents(),
        curves: lib.curve_names(),
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

/// A model file, or the embedded humanoid with its aim poses.
fn load_model(path: &Path) -> Result<Asset, Error> {
    if path.as_os_str() == "humanoid" {
        let mut asset = posegpu::procedural::humanoid_asset();
        let aim = posegpu::procedural::humanoid_aim_poses(&asset.skeleton)?;
        asset.clips.extend(aim);
        return Ok(asset);
    }
    posegpu::import::load(path)
}

/// The model's own clips, or its reference pose when it has none.
fn own_clips(asset: &Asset, animation: Option<&str>) -> Result<Vec<Clip>, Error> {
    if !asset.clips.is_empty() {
        return Ok(asset.clips.clone());
    }
    if let Some(name) = animation {
        return Err(Error::UnknownAnimation {
            name: name.to_string(),
            available: "none: the model has no animations".into(),
        });
    }
    Ok(vec![Clip::from_pose(
        "reference pose",
        &asset.skeleton,
        asset.skeleton.rest(),
    )?])
}

/// A file that must have clips.
fn load_with_clips(path: &Path) -> Result<Asset, Error> {
    let asset = posegpu::import::load(path)?;
    if asset.clips.is_empty() {
        return Err(Error::UnknownAnimation {
            name: "(any)".into(),
            available: format!("none: {} has no animations", path.display()),
        });
    }
    Ok(asset)
}

/// The clip named `name` (default the first).
fn find(clips: &[Clip], name: Option<&str>) -> Result<usize, Error> {
    name.map_or(Ok(0), |n| Clip::find(clips, n))
}

/// What is layered over the base.
enum Layer {
    Additive {
        clip: u32,
        space: AdditiveSpace,
    },
    /// The grid, its pose clips (an [`AimOffset`] once the library is built), the aim.
    Aim(BlendSpace, Vec<u32>, Vec2),
}

/// Builds the additive clip (or the aim poses) from MODEL or --additive-from, adds it to the
/// library (through --rig when it comes from another skeleton) and says how to layer it.
fn add_layer(
    args: &EvalArgs,
    model: &Asset,
    builder: &mut LibraryBuilder,
    first: usize,
) -> Result<Layer, Error> {
    let from = match &args.additive_from {
        Some(path) => Some((path, load_with_clips(path)?)),
        None => None,
    };
    let source = from.as_ref().map_or(model, |(_, a)| a);
    let (skeleton, clips) = (&source.skeleton, &source.clips);
    let base_clip = |name: &str| Clip::find(clips, name).map(|i| &clips[i]);
    let base = match &args.additive_base {
        BaseKind::ReferencePose => AdditiveBase::ReferencePose,
        BaseKind::Frame(n) => AdditiveBase::Frame(*n),
        BaseKind::ClipFrame(name, n) => AdditiveBase::ClipFrame(base_clip(name)?, *n),
        BaseKind::ClipScaled(name) => AdditiveBase::ClipScaled(base_clip(name)?),
    };
    let (names, space) = match (&args.additive, &args.aim_poses) {
        (Some(name), _) => (vec![name.clone()], args.additive_space),
        (None, Some(poses)) => (poses.clone(), AdditiveSpace::Mesh),
        (None, None) => (default_aim_poses(), AdditiveSpace::Mesh),
    };
    let mut additives = Vec::new();
    for name in &names {
        let clip = &clips[Clip::find(clips, name)?];
        let label = format!("{name} (additive)");
        additives.push(make_additive(&label, skeleton, clip, base, space)?);
    }
    match &from {
        Some((path, asset)) if !same_skeleton(&asset.skeleton, &model.skeleton) => {
            // Additive deltas retarget through UE's modes (the rules the spec gives them).
            let rig = args.rig.as_deref().ok_or_else(|| Error::Additive {
                clip: names[0].clone(),
                what: format!(
                    "{} has another skeleton than {}: give --rig to retarget the additive",
                    path.display(),
                    args.model.display()
                ),
            })?;
            let name = path.display().to_string();
            let rig = args.rest.apply(Rig::from_arg(rig)?);
            let id = builder.add_source(&name, skeleton, None, &rig)?;
            builder.add_clips_from(id, &additives)?;
        }
        _ => {
            builder.add_clips(&additives)?;
        }
    }
    let first = first as u32;
    let Some(at) = &args.aim else {
        return Ok(Layer::Additive { clip: first, space });
    };
    let yaws = args.aim_yaws.clone().unwrap_or(AIM_YAWS.to_vec());
    let pitches = args.aim_pitches.clone().unwrap_or(AIM_PITCHES.to_vec());
    let grid = BlendGrid::new(&yaws, &pitches)?.into();
    let clips = (first..first + names.len() as u32).collect();
    Ok(Layer::Aim(grid, clips, *at))
}

fn default_aim_poses() -> Vec<String> {
    AIM_PITCHES
        .iter()
        .flat_map(|p| AIM_YAWS.iter().map(move |y| format!("aim_{y}_{p}")))
        .collect()
}

/// The same bones in the same order, with the same parents and reference pose (within 1e-4 of
/// the skeleton's size, and 1e-4 in rotation).
fn same_skeleton(a: &Skeleton, b: &Skeleton) -> bool {
    let tolerance = 1e-4 * a.extent().max(1e-6);
    a.names() == b.names()
        && a.parents() == b.parents()
        && a.rest().iter().zip(b.rest()).all(|(x, y)| {
            x.translation.abs_diff_eq(y.translation, tolerance)
                && x.rotation.dot(y.rotation).abs() >= 1.0 - 1e-4
                && x.scale.abs_diff_eq(y.scale, 1e-4)
        })
}

/// The poses at `args.times`, one instance each: the base, the layered blend, the additive or
/// aim offset, and IK for a retarget clip.
fn layered_poses(
    args: &EvalArgs,
    lib: &AnimLibrary,
    base: usize,
    layered: &Layered,
    layer: Option<&Layer>,
    aim: Option<&(AimOffset, Vec2)>,
) -> Result<Poses, Error> {
    let mut batch = PoseBatch::with_capacity(args.times.len(), 4);
    for &t in &args.times {
        let mut instance = batch.push_clip(base as u32, t, args.looping);
        instance = layered.push(&args.layers, instance, t, args.looping);
        match layer {
            None => {}
            Some(Layer::Additive { clip, space }) => {
                let time = args.additive_time.unwrap_or(t);
                let sample = ClipSample::new(*clip, time, args.looping);
                instance = layered.masked(instance.additive(*space, args.alpha, &[sample]));
            }
            Some(Layer::Aim(..)) => {
                if let Some((aim, at)) = aim {
                    let time = args.additive_time.unwrap_or(0.0);
                    instance = layered.masked(instance.aim(aim, *at, time, args.alpha));
                }
            }
        }
        // IK after retargeting, last: the library runs it for character sources and clips baked
        // from them only.
        if let Some(ik) = args.ik.live(args.animation_from.is_some()) {
            instance.ik(ik);
        }
    }
    evaluate(lib, &batch, args.backend)
}

fn evaluate(lib: &AnimLibrary, batch: &PoseBatch, backend: Backend) -> Result<Poses, Error> {
    match backend {
        Backend::Cpu => {
            let mut poses = Poses::default();
            CpuEvaluator::new(lib).evaluate(batch, &mut poses)?;
            Ok(poses)
        }
        Backend::Gpu => {
            let ctx = crate::util::open_gpu()?.ok_or(Error::NoAdapter)?;
            let mut gpu = GpuEvaluator::new(&ctx, lib, batch.len(), &GpuOptions::default())?;
            gpu.evaluate(batch)?;
            gpu.read_back()
        }
    }
}

fn flat(t: &Transform) -> [f32; 10] {
    let (p, q, s) = (t.translation, t.rotation, t.scale);
    [p.x, p.y, p.z, q.x, q.y, q.z, q.w, s.x, s.y, s.z]
}
