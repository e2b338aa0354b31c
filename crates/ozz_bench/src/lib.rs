//! posegpu's CPU twin against ozz-animation-rs on ozz's playback sample (`data/`): the same
//! skeleton and clip, the same crowd, stage by stage.
//!
//! - [`OzzData`] loads `data/skeleton.ozz` and `data/animation.ozz` through ozz-animation-rs;
//!   [`to_posegpu`] converts them into posegpu's model: the skeleton joint for joint (ozz stores
//!   joints parents-first, as posegpu does), and the clip track for track, its keys read out of
//!   ozz's runtime layout (each key's value decompressed by ozz-animation-rs, its time the
//!   clip's timepoint times its duration), so both sample the very same keys.
//! - The crowd ([`instance_time`]): instance `i` plays clip `i % clips` (here the one clip),
//!   looping, at `fract(i * 0.618034) * duration + t`, as posegpu's own benches deal it.
//! - [`OzzCrowd`] runs ozz-animation-rs's `SamplingJob` and `LocalToModelJob` per instance (each
//!   instance keeps its own `SamplingContext`, as ozz means it to, so forward playback reuses
//!   its decompressed keys), over instances with rayon; [`PosegpuCrowd`] runs posegpu's
//!   `CpuEvaluator` on one `PoseBatch`.
//! - [`compare`] measures how far apart their model-space matrices are.

use std::path::{Path, PathBuf};

use glam_ozz::Mat4 as OzzMat4;
use ozz_animation_rs::{Animation, LocalToModelJobRef, SamplingContext, SamplingJobRef};
use ozz_animation_rs::{SoaTransform, SKELETON_NO_PARENT};
use posegpu::glam::{Mat4, Quat, Vec3, Vec4};
use posegpu::{
    map_time, AnimLibrary, Bone, BoneTrack, Channel, Clip, ClipSample, CpuEvaluator, Interpolation,
    PoseBatch, Poses, Skeleton, Transform, Xform,
};
use rayon::prelude::*;

/// The folder of the two data files (`data/` beside this crate's manifest).
pub fn data_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("data")
}

/// ozz's playback sample, as ozz-animation-rs loads it.
pub struct OzzData {
    /// `skeleton.ozz`.
    pub skeleton: ozz_animation_rs::Skeleton,
    /// `animation.ozz`.
    pub animation: Animation,
}

impl OzzData {
    /// Loads `skeleton.ozz` and `animation.ozz` from `dir`.
    pub fn load(dir: &Path) -> Result<Self, String> {
        let skeleton = ozz_animation_rs::Skeleton::from_path(dir.join("skeleton.ozz"))
            .map_err(|e| format!("{}: {e}", dir.join("skeleton.ozz").display()))?;
        let animation = Animation::from_path(dir.join("animation.ozz"))
            .map_err(|e| format!("{}: {e}", dir.join("animation.ozz").display()))?;
        if animation.num_tracks() != skeleton.num_joints() {
            return Err(format!(
                "the animation has {} tracks, the skeleton {} joints",
                animation.num_tracks(),
                skeleton.num_joints()
            ));
        }
        Ok(Self {
            skeleton,
            animation,
        })
    }

    /// [`OzzData::load`] from [`data_dir`].
    pub fn load_default() -> Result<Self, String> {
        Self::load(&data_dir())
    }

    /// The clip's duration in seconds.
    pub fn duration(&self) -> f32 {
        self.animation.duration()
    }
}

fn vec3(v: glam_ozz::Vec3) -> Vec3 {
    Vec3::from_array(v.to_array())
}

fn quat(q: glam_ozz::Quat) -> Quat {
    Quat::from_array(q.to_array())
}

/// ozz's skeleton and clip in posegpu's model: bone `j` is joint `j` (its inverse bind matrix
/// the inverse of its rest model matrix), the clip has every
/// joint's translation, rotation and scale keys (linear: ozz interpolates every track linearly,
/// rotations by nlerp).
pub fn to_posegpu(data: &OzzData) -> posegpu::Result<(Skeleton, Clip)> {
    let (sk, anim) = (&data.skeleton, &data.animation);
    let rest = sk.joint_rest_poses();
    let bones = (0..sk.num_joints())
        .map(|j| {
            let soa = &rest[j / 4];
            let lane = j % 4;
            let parent = sk.joint_parent(j);
            let name = sk
                .name_by_joint(j as i16)
                .map_or_else(|| format!("joint{j}"), str::to_string);
            let rest = Transform::new(
                vec3(soa.translation.vec3(lane)),
                quat(soa.rotation.quat(lane)),
                vec3(soa.scale.vec3(lane)),
            );
            let parent = (parent as i32 != SKELETON_NO_PARENT).then_some(parent as usize);
            Bone::new(name, parent, rest)
        })
        .collect::<Vec<_>>();
    // Inverse bind matrices: the inverse of each joint's rest model matrix (ozz's skeleton has
    // none; `OzzCrowd` uses the same for its skinning matrices).
    let parents: Vec<i32> = bones
        .iter()
        .map(|b| b.parent.map_or(-1, |p| p as i32))
        .collect();
    let rest: Vec<Transform> = bones.iter().map(|b| b.rest).collect();
    let rest_model = posegpu::component_space(&parents, &rest);
    let bones = bones
        .into_iter()
        .zip(&rest_model)
        .map(|(b, m)| Bone {
            inverse_bind: Some(m.to_matrix().inverse()),
            ..b
        })
        .collect();
    let skeleton = Skeleton::new(bones)?;
    let (n, duration, times) = (anim.num_tracks(), anim.duration(), anim.timepoints());
    let translations = read_tracks(anim, anim.translations(), &anim.translations_ctrl(), |k| {
        vec3(k.decompress())
    });
    let rotations = read_tracks(anim, anim.rotations(), &anim.rotations_ctrl(), |k| {
        quat(k.decompress())
    });
    let scales = read_tracks(anim, anim.scales(), &anim.scales_ctrl(), |k| {
        vec3(k.decompress())
    });
    fn channel<V: Copy>(keys: &[(u16, V)], times: &[f32], duration: f32) -> Channel<V> {
        let t = keys.iter().map(|(r, _)| times[*r as usize] * duration);
        let v = keys.iter().map(|(_, v)| *v);
        Channel::new(t.collect(), v.collect(), Interpolation::Linear)
    }
    let tracks = (0..n)
        .map(|j| BoneTrack {
            translation: Some(channel(&translations[j], times, duration)),
            rotation: Some(channel(&rotations[j], times, duration)),
            scale: Some(channel(&scales[j], times, duration)),
        })
        .collect();
    let name = match anim.name() {
        "" => "playback",
        name => name,
    };
    let clip = Clip::new(name, &skeleton, tracks)?;
    Ok((skeleton, clip))
}

/// Every track's keys (timepoint index, value), in time order, from ozz's runtime layout: keys
/// are sorted by the time they are first needed; keys `0..A` are the first key of tracks
/// `0..A` and `A..2A` their second (`A`: the tracks rounded up to a multiple of 4), and every
/// later key names its track through `previouses` (its distance back to the same track's
/// previous key).
fn read_tracks<K, V>(
    anim: &Animation,
    keys: &[K],
    ctrl: &ozz_animation_rs::animation::KeyframesCtrl<'_>,
    decode: impl Fn(&K) -> V,
) -> Vec<Vec<(u16, V)>> {
    let aligned = anim.num_aligned_tracks();
    let mut track_of = vec![0usize; keys.len()];
    let mut out: Vec<Vec<(u16, V)>> = (0..aligned).map(|_| Vec::new()).collect();
    for (k, key) in keys.iter().enumerate() {
        let track = if k < 2 * aligned {
            k % aligned
        } else {
            track_of[k - ctrl.previouses[k] as usize]
        };
        track_of[k] = track;
        out[track].push((ctrl.ratios[k], decode(key)));
    }
    out.truncate(anim.num_tracks());
    out
}

/// The library of the converted skeleton and clip.
pub fn posegpu_library(data: &OzzData) -> posegpu::Result<AnimLibrary> {
    let (skeleton, clip) = to_posegpu(data)?;
    AnimLibrary::new(&skeleton, &[clip])
}

/// Instance `i`'s play time at crowd time `t` (seconds, not yet wrapped): phases spread over
/// the clip by the golden ratio.
pub fn instance_time(i: usize, duration: f32, t: f32) -> f32 {
    (i as f32 * 0.618_034).fract() * duration + t
}

/// posegpu's crowd at time `t`: every instance its clip (here the only one), looping.
pub fn posegpu_instances(n: usize, duration: f32, t: f32) -> Vec<ClipSample> {
    (0..n)
        .map(|i| ClipSample::new(0, instance_time(i, duration, t), true))
        .collect()
}

/// One instance of ozz's crowd: its sampling context (the keys it decompressed so far), its
/// local pose (SoA, as the sampling job writes it) and its model-space matrices.
pub struct OzzInstance {
    ctx: SamplingContext,
    /// The local pose, four joints per `SoaTransform`.
    pub locals: Vec<SoaTransform>,
    /// Model-space matrices, one per joint.
    pub models: Vec<OzzMat4>,
    /// Skinning matrices (model times inverse bind), one per joint, where
    /// [`OzzCrowd::frame_skinned`] wrote them.
    pub skinning: Vec<OzzMat4>,
}

/// ozz-animation-rs's crowd: the jobs run per instance, in parallel over instances (rayon's
/// current pool).
pub struct OzzCrowd<'a> {
    data: &'a OzzData,
    /// The instances.
    pub instances: Vec<OzzInstance>,
    /// Each instance's time ratio for the next sampling (set by [`OzzCrowd::set_time`]).
    pub ratios: Vec<f32>,
    /// The inverse of each joint's rest model matrix (posegpu's inverse bind matrices for a
    /// skeleton without any: its bind pose is its rest pose).
    pub inverse_bind: Vec<OzzMat4>,
    /// True once [`OzzCrowd::frame_skinned`] has written the skinning matrices.
    pub skinned: bool,
}

impl<'a> OzzCrowd<'a> {
    /// `n` instances, each with a fresh context.
    pub fn new(data: &'a OzzData, n: usize) -> Self {
        let (soa, joints) = (data.skeleton.num_soa_joints(), data.skeleton.num_joints());
        let instances = (0..n)
            .map(|_| OzzInstance {
                ctx: SamplingContext::from_animation(&data.animation),
                locals: vec![SoaTransform::default(); soa],
                models: vec![OzzMat4::IDENTITY; joints],
                skinning: vec![OzzMat4::IDENTITY; joints],
            })
            .collect();
        // The rest pose through the local-to-model job, inverted.
        let mut rest = vec![OzzMat4::IDENTITY; joints];
        let mut job = LocalToModelJobRef::default();
        job.set_skeleton(&data.skeleton);
        job.set_input(data.skeleton.joint_rest_poses());
        job.set_output(&mut rest);
        job.run().expect("ozz local-to-model job");
        Self {
            data,
            instances,
            ratios: vec![0.0; n],
            inverse_bind: rest.iter().map(OzzMat4::inverse).collect(),
            skinned: false,
        }
    }

    /// Sets each instance's ratio for crowd time `t` (wrapped into the clip, as posegpu wraps a
    /// looping sample).
    pub fn set_time(&mut self, t: f32) {
        let d = self.data.duration();
        for (i, r) in self.ratios.iter_mut().enumerate() {
            *r = map_time(instance_time(i, d, t), d, true) / d;
        }
    }

    /// The sampling stage: every instance's `SamplingJob`.
    pub fn sample(&mut self) {
        let anim = &self.data.animation;
        self.instances
            .par_iter_mut()
            .zip(self.ratios.par_iter())
            .for_each(|(inst, &ratio)| sample(anim, inst, ratio));
    }

    /// The hierarchy stage: every instance's `LocalToModelJob`.
    pub fn local_to_model(&mut self) {
        self.skinned = false;
        let sk = &self.data.skeleton;
        self.instances
            .par_iter_mut()
            .for_each(|inst| local_to_model(sk, inst));
    }

    /// The whole frame: each instance sampled, then its model matrices.
    pub fn frame(&mut self) {
        self.run_frame(false);
    }

    /// The whole frame and skinning matrices, as posegpu's frame gives them: each instance
    /// sampled, its model matrices, then each model matrix times its joint's inverse bind
    /// matrix (what ozz's skinning job takes).
    pub fn frame_skinned(&mut self) {
        self.run_frame(true);
    }

    /// Each instance sampled and its model matrices, then its skinning matrices where `skin`.
    fn run_frame(&mut self, skin: bool) {
        let (anim, sk, inverse_bind) = (
            &self.data.animation,
            &self.data.skeleton,
            &self.inverse_bind,
        );
        self.instances
            .par_iter_mut()
            .zip(self.ratios.par_iter())
            .for_each(|(inst, &ratio)| {
                sample(anim, inst, ratio);
                local_to_model(sk, inst);
                if skin {
                    let skinning = inst.skinning.iter_mut().zip(&inst.models);
                    for ((s, m), b) in skinning.zip(inverse_bind) {
                        *s = *m * *b;
                    }
                }
            });
        self.skinned = skin;
    }
}

fn sample(anim: &Animation, inst: &mut OzzInstance, ratio: f32) {
    let mut job = SamplingJobRef::default();
    job.set_animation(anim);
    job.set_context(&mut inst.ctx);
    job.set_output(&mut inst.locals);
    job.set_ratio(ratio);
    job.run().expect("ozz sampling job");
}

fn local_to_model(sk: &ozz_animation_rs::Skeleton, inst: &mut OzzInstance) {
    let mut job = LocalToModelJobRef::default();
    job.set_skeleton(sk);
    job.set_input(&inst.locals);
    job.set_output(&mut inst.models);
    job.run().expect("ozz local-to-model job");
}

/// posegpu's crowd: one batch for the whole frame (what `CpuEvaluator::evaluate` takes), and
/// the same instances cut into one batch per thread for the sampling stage alone
/// (`CpuEvaluator::sample_locals` runs on the calling thread).
pub struct PosegpuCrowd<'a> {
    lib: &'a AnimLibrary,
    n: usize,
    /// The frame's batch.
    pub batch: PoseBatch,
    parts: Vec<PoseBatch>,
    part_locals: Vec<Vec<Xform>>,
    /// The frame's poses (locals, component-space transforms, skinning matrices).
    pub poses: Poses,
}

impl<'a> PosegpuCrowd<'a> {
    /// `n` instances; the sampling stage alone runs as `parts` batches in parallel.
    pub fn new(lib: &'a AnimLibrary, n: usize, parts: usize) -> Self {
        let parts = parts.clamp(1, n.max(1));
        Self {
            lib,
            n,
            batch: PoseBatch::new(),
            parts: (0..parts).map(|_| PoseBatch::new()).collect(),
            part_locals: vec![Vec::new(); parts],
            poses: Poses::default(),
        }
    }

    /// Builds the batches for crowd time `t` (not part of any stage's time: ozz's side of it
    /// is [`OzzCrowd::set_time`]).
    pub fn set_time(&mut self, t: f32) {
        let instances = posegpu_instances(self.n, self.lib.clip_duration(0), t);
        self.batch = PoseBatch::from_instances(&instances);
        let per = self.n.div_ceil(self.parts.len()).max(1);
        for (part, chunk) in self.parts.iter_mut().zip(instances.chunks(per)) {
            *part = PoseBatch::from_instances(chunk);
        }
    }

    /// The sampling stage: each part's `sample_locals`, in parallel (rayon's current pool).
    pub fn sample(&mut self) {
        let cpu = CpuEvaluator::new(self.lib);
        self.parts
            .par_iter()
            .zip(self.part_locals.par_iter_mut())
            .for_each(|(batch, locals)| cpu.sample_locals(batch, locals).expect("sample_locals"));
    }

    /// The whole frame: `CpuEvaluator::evaluate` (sampling, hierarchy and skinning matrices,
    /// per instance, over rayon's current pool).
    pub fn frame(&mut self) {
        CpuEvaluator::new(self.lib)
            .evaluate(&self.batch, &mut self.poses)
            .expect("evaluate");
    }

    /// The whole frame on the calling thread, pass after pass (`evaluate_single_thread`).
    pub fn frame_single_thread(&mut self) {
        CpuEvaluator::new(self.lib)
            .evaluate_single_thread(&self.batch, &mut self.poses)
            .expect("evaluate_single_thread");
    }

    /// The locals the sampling stage wrote, instance-major over all parts.
    pub fn sampled_locals(&self) -> impl Iterator<Item = &Xform> {
        self.part_locals.iter().flatten()
    }
}

/// The skeleton's size: the largest distance of a joint from the origin in the rest pose
/// (posegpu's `Skeleton::extent`, which its own tolerances are relative to).
pub fn extent(lib: &AnimLibrary) -> f32 {
    lib.skeleton().extent()
}

/// How far apart two crowds' model-space matrices are.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Agreement {
    /// The largest difference of a rotation-scale entry (the upper 3x3; unitless).
    pub linear: f32,
    /// The largest difference of a translation component, in the skeleton's units.
    pub translation: f32,
    /// `translation` relative to the skeleton's size ([`extent`]).
    pub translation_relative: f32,
    /// The largest difference of a local (sampled) transform component: translation relative
    /// to the skeleton's size, rotation as a quaternion component (up to sign), scale.
    pub local: f32,
    /// The largest difference of a skinning-matrix entry (where ozz's crowd has them:
    /// [`OzzCrowd::frame_skinned`]), relative to the skeleton's size in the translation column.
    pub skinning: f32,
    /// Matrices compared.
    pub matrices: usize,
}

impl Agreement {
    /// The largest of the unitless figures (3x3 entries, relative translations, locals).
    pub fn worst(&self) -> f32 {
        self.linear
            .max(self.translation_relative)
            .max(self.local)
            .max(self.skinning)
    }
}

/// Compares ozz's model matrices and sampled locals with posegpu's component-space transforms
/// and locals (`poses` from a frame of the same instances at the same time).
pub fn compare(ozz: &OzzCrowd<'_>, poses: &Poses, extent: f32) -> Agreement {
    let mut a = Agreement::default();
    let bones = poses.bone_count;
    for (i, inst) in ozz.instances.iter().enumerate() {
        for (b, m) in inst.models.iter().enumerate() {
            let ours: Mat4 = poses.component(i, b).to_matrix();
            let theirs = Mat4::from_cols_array(&m.to_cols_array());
            for c in 0..3 {
                let d = (ours.col(c) - theirs.col(c)).truncate().abs().max_element();
                a.linear = a.linear.max(d);
            }
            let d = (ours.col(3) - theirs.col(3)).truncate().abs().max_element();
            a.translation = a.translation.max(d);
            a.matrices += 1;
            let (soa, lane) = (&inst.locals[b / 4], b % 4);
            let ours = poses.local(i, b);
            let t = (ours.translation - vec3(soa.translation.vec3(lane))).abs();
            let (p, q) = (
                Vec4::from(ours.rotation),
                Vec4::from(quat(soa.rotation.quat(lane))),
            );
            let r = (p - q).abs().max_element().min((p + q).abs().max_element());
            let s = (ours.scale - vec3(soa.scale.vec3(lane)))
                .abs()
                .max_element();
            a.local = a.local.max(t.max_element() / extent).max(r).max(s);
            if ozz.skinned {
                // posegpu's rows of the affine 3x4 against ozz's columns.
                let (ours, theirs) = (poses.skinning(i, b), inst.skinning[b].to_cols_array());
                for row in 0..3 {
                    for col in 0..4 {
                        let d = (ours[row * 4 + col] - theirs[col * 4 + row]).abs();
                        let d = if col == 3 { d / extent } else { d };
                        a.skinning = a.skinning.max(d);
                    }
                }
            }
        }
        debug_assert_eq!(inst.models.len(), bones);
    }
    a.translation_relative = a.translation / extent;
    a
}

/// The median of `v` (sorted in place); 0 for none.
pub fn median(v: &mut [f64]) -> f64 {
    if v.is_empty() {
        return 0.0;
    }
    v.sort_by(f64::total_cmp);
    let m = v.len() / 2;
    if v.len() % 2 == 1 {
        v[m]
    } else {
        (v[m - 1] + v[m]) / 2.0
    }
}
