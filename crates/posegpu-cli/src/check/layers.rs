//! The layer stages of `posegpu check`: additive layers, aim offsets, masked layered blends,
//! inertialized transitions and curves, on the procedural humanoid.

use glam::Vec2;
use posegpu::additive::{make_additive, AdditiveBase};
use posegpu::blend::clips::AimOffset;
use posegpu::blend::space::BlendGrid;
use posegpu::procedural::{humanoid_aim_poses, humanoid_asset, AIM_PITCHES, AIM_YAWS};
use posegpu::{
    AdditiveSpace, AnimLibrary, Channel, Clip, ClipSample, CpuEvaluator, Error, GpuEvaluator,
    GpuOptions, InertialStart, Interpolation, MaskBranch, PoseBatch, Poses,
};

use super::poses::{both, spread, worst};
use super::{Checker, Measured};

/// The humanoid's clips and additive versions of the last two (against their first frame),
/// in `space`; the index of the first additive.
fn with_additives(space: AdditiveSpace) -> Result<(AnimLibrary, u32), Error> {
    let asset = humanoid_asset();
    let mut clips = asset.clips.clone();
    let first = clips.len() as u32;
    for clip in &asset.clips[asset.clips.len() - 2..] {
        let name = format!("{} additive", clip.name());
        let base = AdditiveBase::Frame(0);
        clips.push(make_additive(&name, &asset.skeleton, clip, base, space)?);
    }
    Ok((AnimLibrary::new(&asset.skeleton, &clips)?, first))
}

/// `n` instances, each a clip under one or two additive layers of `space` at partial and full
/// weights.
fn additive_batch(n: usize, space: AdditiveSpace) -> Result<(AnimLibrary, PoseBatch), Error> {
    let (lib, first) = with_additives(space)?;
    let mut batch = PoseBatch::with_capacity(n, 4);
    for (i, s) in spread(&lib, n, |_| None).iter().enumerate() {
        let layer = ClipSample::new(first + (i % 2) as u32, s.time * 1.3, true);
        let weight = [0.7, 1.0, 0.25][i % 3];
        let layers = batch
            .push_blend(std::slice::from_ref(s))
            .additive(space, weight, &[layer]);
        if i % 4 == 0 {
            let other = ClipSample::new(first + 1 - (i % 2) as u32, s.time * 0.5, false);
            layers.additive(space, 0.5, &[other]);
        }
    }
    Ok((lib, batch))
}

/// A clip under additive layers of `space`.
pub(super) fn additive(c: &Checker, stage: &str, space: AdditiveSpace) -> Result<Measured, Error> {
    let (lib, batch) = additive_batch(c.instances, space)?;
    both(c, stage, &lib, &batch, &GpuOptions::default())
}

/// The mesh-space additive batch (the chunking stage's).
pub(super) fn mesh_batch(n: usize) -> Result<(AnimLibrary, PoseBatch), Error> {
    additive_batch(n, AdditiveSpace::Mesh)
}

/// The humanoid's nine aim poses as mesh-space additives over a yaw-pitch grid, aimed
/// anywhere (past the grid too) at any alpha.
pub(super) fn aim_offset(c: &Checker) -> Result<Measured, Error> {
    let asset = humanoid_asset();
    let skeleton = &asset.skeleton;
    let mut clips = asset.clips.clone();
    let first = clips.len() as u32;
    for pose in humanoid_aim_poses(skeleton)? {
        let name = format!("{} additive", pose.name());
        let (base, mesh) = (AdditiveBase::ReferencePose, AdditiveSpace::Mesh);
        clips.push(make_additive(&name, skeleton, &pose, base, mesh)?);
    }
    let lib = AnimLibrary::new(skeleton, &clips)?;
    let grid = BlendGrid::new(&AIM_YAWS, &AIM_PITCHES)?;
    let aim = AimOffset::new(&lib, grid.into(), (first..first + 9).collect())?;
    let mut batch = PoseBatch::with_capacity(c.instances, 6);
    for (i, s) in spread(&lib, c.instances, |_| None).iter().enumerate() {
        let f = i as f32;
        let target = Vec2::new((f * 0.77).sin() * 120.0, (f * 0.31).cos() * 60.0);
        batch
            .push_blend(std::slice::from_ref(s))
            .aim(&aim, target, 0.0, (f * 0.13).fract() * 1.2);
    }
    both(c, "aim offset", &lib, &batch, &GpuOptions::default())
}

/// Layered blends of another clip over the upper body (a mask with a blend depth), in `space`.
pub(super) fn masked(c: &Checker, stage: &str, space: AdditiveSpace) -> Result<Measured, Error> {
    let asset = humanoid_asset();
    let mut builder = AnimLibrary::builder(&asset.skeleton);
    builder.add_clips(&asset.clips)?;
    let upper = builder.add_mask("upper", &[MaskBranch::new("spine_02", 2)])?;
    let arm = builder.add_mask("left arm", &[MaskBranch::new("clavicle_l", 0)])?;
    let lib = builder.build();
    let mut batch = PoseBatch::with_capacity(c.instances, 5);
    for (i, s) in spread(&lib, c.instances, |_| None).iter().enumerate() {
        let wave = ClipSample::new(3, s.time + 0.2, true);
        let run = ClipSample::new(2, s.time * 0.8, true);
        batch
            .push_blend(std::slice::from_ref(s))
            .blend(space, [1.0, 0.6, 0.3][i % 3], &[wave])
            .with_mask(upper)
            .blend(space, 0.5, &[run])
            .with_mask(arm);
    }
    both(c, stage, &lib, &batch, &GpuOptions::default())
}

/// Instances switching from walk to idle by inertialization, each at its own phase, frame
/// after frame on one evaluator (the offsets persist on the GPU and in the CPU's poses).
pub(super) fn inertialized(c: &Checker) -> Result<Measured, Error> {
    const DT: f32 = 1.0 / 30.0;
    let asset = humanoid_asset();
    let lib = AnimLibrary::new(&asset.skeleton, &asset.clips)?;
    let (walk, idle) = (lib.find_clip("walk")?, lib.find_clip("idle")?);
    let frame = |k: usize| {
        let mut batch = PoseBatch::with_capacity(c.instances, 3);
        for i in 0..c.instances {
            let s = i as f32 * 0.011;
            let elapsed = k as f32 * DT;
            let start = (k == 0).then(|| InertialStart {
                now: ClipSample::new(walk, s, true),
                before: ClipSample::new(walk, s - DT, true),
                dt: DT,
                interrupted: (i % 5 == 0).then_some(0.1),
            });
            batch
                .push_clip(idle, 0.2 + s + elapsed, true)
                .inertialize(0.3, elapsed, start);
        }
        batch
    };
    let cpu = CpuEvaluator::new(&lib);
    let mut gpu = GpuEvaluator::new(&c.ctx, &lib, c.instances, &GpuOptions::default())?;
    let mut want = Poses::default();
    let mut out: Option<Measured> = None;
    for k in 0..12 {
        let batch = frame(k);
        cpu.evaluate(&batch, &mut want)?;
        gpu.evaluate(&batch)?;
        let got = gpu.read_back()?;
        let m = Measured {
            instances: batch.len(),
            bones: lib.bone_count(),
            deviation: c.compare("inertialized", &lib, got, &want),
            tolerance: super::tolerance(lib.skeleton()),
            note: None,
        };
        out = Some(worst(out, m));
    }
    Ok(out.expect("frames ran"))
}

/// Float curves (morph-target weights, LINEAR and STEP) on the humanoid's clips, blended and
/// layered as the pose is.
pub(super) fn curves(c: &Checker) -> Result<Measured, Error> {
    let asset = humanoid_asset();
    let linear = |times: &[f32], values: &[f32]| {
        Channel::new(times.to_vec(), values.to_vec(), Interpolation::Linear)
    };
    let mut clips: Vec<Clip> = asset.clips.clone();
    clips[0] = clips[0]
        .clone()
        .with_curve("smile", linear(&[0.0, 0.5, 2.0], &[0.0, 1.0, 0.2]))?;
    clips[1] = clips[1]
        .clone()
        .with_curve("smile", linear(&[0.0, 1.0], &[0.5, 0.9]))?
        .with_curve(
            "blink",
            Channel::new(
                vec![0.0, 0.4, 0.6],
                vec![0.0, 1.0, 0.0],
                Interpolation::Step,
            ),
        )?;
    clips[2] = clips[2]
        .clone()
        .with_curve("blink", linear(&[0.3], &[0.7]))?;
    let additive = make_additive(
        "wave additive",
        &asset.skeleton,
        &clips[3],
        AdditiveBase::Frame(0),
        AdditiveSpace::Local,
    )?
    .with_curve("smile", linear(&[0.0, 1.0], &[0.1, 0.3]))?;
    clips.push(additive);
    let lib = AnimLibrary::new(&asset.skeleton, &clips)?;
    let mut batch = PoseBatch::with_capacity(c.instances, 4);
    for (i, s) in spread(&lib, c.instances, |_| None).iter().enumerate() {
        let other = ClipSample::new((s.clip.0 + 1) % 3, s.time, true);
        let layers = batch.push_blend(&[s.with_weight(0.6), other.with_weight(0.4)]);
        if i % 2 == 0 {
            layers.additive(
                AdditiveSpace::Local,
                0.8,
                &[ClipSample::new(4, s.time, true)],
            );
        }
    }
    both(c, "curves", &lib, &batch, &GpuOptions::default())
}
