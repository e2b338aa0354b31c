//! The CPU backend: the twins of the GPU stages, and an evaluator that runs them on every core.
//! It is the test oracle for the GPU and the fallback where there is no adapter.
//!
//! One file per shader, of the same name: `clip.rs` ↔ `clip.wgsl`, `local_pose.rs` (an
//! instance's local pose at each bone, shared by `sample.rs` and `fused.rs`), `sample.rs`,
//! `layers.rs`, `inertialize.rs`, `ik.rs`, `hierarchy.rs`, `fused.rs`, `curves.rs`,
//! `advance.rs`, `root_motion.rs`, `resolve.rs` (each sample's key search, which the twin's
//! sampling makes at the sample's first bone instead), `playback.rs` (the crowd state both read; not the public
//! `crate::playback`), `skin.rs`; and the crowd that steps players on the CPU ([`Crowd`]). The
//! evaluator runs each instance's stages back to back, as the fused pass does where the frame
//! plan fuses, up to the hierarchy, which it walks for four instances at once (one per SIMD
//! lane).

mod advance;
mod clip;
mod crowd;
mod curves;
pub(crate) mod fused;
mod hierarchy;
mod ik;
mod inertialize;
mod layers;
mod local_pose;
pub(crate) mod packed;
pub(crate) mod resolve;
mod root_motion;
mod sample;
#[cfg(feature = "render")]
mod skin;

#[cfg(test)]
pub(crate) use clip::retarget_bone;
pub(crate) use clip::{sample_bone, KeySearch};
pub use root_motion::ClipMotion;
#[cfg(feature = "render")]
pub(crate) use skin::skin_vertex;

use rayon::prelude::*;

use crate::batch::{FrameInput, PoseBatch};
use crate::error::Result;
use crate::frame_plan::{FrameOptions, FramePlan, Pass, Stage};
use crate::layout::Xform;
use crate::library::{AnimLibrary, ClipId};
use crate::model::map_time;
use crate::pose::Poses;
use crate::Transform;
use hierarchy::LANES;

/// Instances per parallel task: large enough to amortise scheduling, small enough to balance.
const INSTANCES_PER_TASK: usize = 64;

/// The evaluator runs each instance's passes back to back, fused where the plan allows (the
/// hierarchy four instances at a time); the single-threaded one runs separate passes over the
/// whole batch.
const FUSED: FrameOptions = FrameOptions::fusing(true);
const SEPARATE: FrameOptions = FrameOptions::fusing(false);

/// Evaluates sampling and the hierarchy on the CPU, instance by instance, over all cores.
pub struct CpuEvaluator<'a> {
    lib: &'a AnimLibrary,
}

impl<'a> CpuEvaluator<'a> {
    /// An evaluator of `lib`'s clips (it allocates nothing until it evaluates).
    pub fn new(lib: &'a AnimLibrary) -> Self {
        Self { lib }
    }

    /// Evaluates every instance of `frame` (a [`PoseBatch`] or [`ClipSample`](crate::ClipSample)s) into `out`
    /// (resized to fit), over all cores.
    pub fn evaluate(&self, frame: &(impl FrameInput + ?Sized), out: &mut Poses) -> Result<()> {
        self.evaluate_batch(&frame.batch(), out)
    }

    fn evaluate_batch(&self, batch: &PoseBatch, out: &mut Poses) -> Result<()> {
        batch.validate(self.lib)?;
        let bones = self.lib.bone_count();
        out.resize(bones, self.lib.curve_names().len(), batch.len());
        out.keep_inertia(batch.has_inertia());
        let curve_count = self.lib.curve_names().len();
        if curve_count > 0 {
            out.curves
                .par_chunks_mut(curve_count)
                .zip(batch.heads.par_iter())
                .for_each(|(values, head)| {
                    curves::run_instance(self.lib, &batch.entries, head, values)
                });
        }
        let chunk = INSTANCES_PER_TASK * bones;
        let plan = FramePlan::of_batch(self.lib, batch, &FUSED);
        let (fused, walks_hierarchy) = (plan.is_fused(), plan.runs(Stage::Hierarchy));
        // The inertialization state of each task's instances, where the batch has any.
        let inertia: Vec<Option<&mut [Xform]>> = if batch.has_inertia() {
            out.inertia.chunks_mut(chunk).map(Some).collect()
        } else {
            (0..batch.len().div_ceil(INSTANCES_PER_TASK))
                .map(|_| None)
                .collect()
        };
        (0..batch.len())
            .into_par_iter()
            .step_by(INSTANCES_PER_TASK)
            .zip(out.locals.par_chunks_mut(chunk))
            .zip(out.component.par_chunks_mut(chunk))
            .zip(out.skinning.par_chunks_mut(chunk))
            .zip(inertia)
            // A scratch per run of tasks a worker takes (rayon's `for_each_init`), not per
            // task: its records and decoded keys serve all their instances.
            .for_each_init(
                local_pose::Scratch::default,
                |scratch, ((((first, l), c), s), mut inertia)| {
                    let mut deltas = Vec::new();
                    let group = LANES * bones;
                    let groups = l.chunks_mut(group).zip(c.chunks_mut(group));
                    for (g, ((l, c), s)) in groups.zip(s.chunks_mut(group)).enumerate() {
                        let first = first + g * LANES;
                        if fused {
                            fused::run_group(self.lib, batch, first, (l, c, s), scratch);
                            continue;
                        }
                        // The plan's passes back to back, instance by instance (the curves,
                        // which read only the frame, ran above), then the group's hierarchy.
                        for (j, l) in l.chunks_mut(bones).enumerate() {
                            let at = (g * LANES + j) * bones;
                            let state = inertia.as_deref_mut().map(|s| &mut s[at..at + bones]);
                            let instance = (first + j, l, state);
                            self.local_passes(&plan, batch, instance, &mut deltas, scratch);
                        }
                        if walks_hierarchy {
                            let bind = |b: usize| self.lib.data().inverse_bind[b];
                            let poses = &mut scratch.poses;
                            hierarchy::run_group(self.lib, (&*l, c, s), bind, poses);
                        }
                    }
                },
            );
        Ok(())
    }

    /// Instance `i`'s passes of `plan` before the hierarchy, on its `locals` (and its
    /// inertialization `state`, where the batch has transitions): sampling, layers,
    /// inertialization and IK, each where the plan runs it.
    fn local_passes(
        &self,
        plan: &FramePlan,
        batch: &PoseBatch,
        (i, locals, mut state): (usize, &mut [Xform], Option<&mut [Xform]>),
        deltas: &mut Vec<Xform>,
        scratch: &mut local_pose::Scratch,
    ) {
        let (lib, head) = (self.lib, &batch.heads[i]);
        deltas.resize(head.slots as usize * lib.bone_count(), Xform::default());
        for planned in plan.passes() {
            match planned.pass {
                Pass::Sample { .. } => {
                    local_pose::sample_instance(lib, batch, i, locals, deltas, scratch)
                }
                Pass::Layers => layers::run_instance(lib, &batch.entries, head, locals, deltas),
                Pass::Inertialize { .. } => {
                    if let Some(state) = state.as_deref_mut() {
                        inertialize::run_instance(lib, &batch.entries, head, locals, state);
                    }
                }
                Pass::Ik => ik::run_instance(lib, &batch.entries, head, locals),
                Pass::Fused { .. }
                | Pass::Hierarchy
                | Pass::Curves
                | Pass::Advance
                | Pass::RootMotion
                | Pass::Resolve => {}
            }
        }
    }

    /// The same on the calling thread only, stage after stage over the whole batch (for
    /// single-core measurements).
    pub fn evaluate_single_thread(
        &self,
        frame: &(impl FrameInput + ?Sized),
        out: &mut Poses,
    ) -> Result<()> {
        let batch = &*frame.batch();
        batch.validate(self.lib)?;
        let bones = self.lib.bone_count();
        out.resize(bones, self.lib.curve_names().len(), batch.len());
        out.keep_inertia(batch.has_inertia());
        let mut deltas = vec![Xform::default(); batch.slot_count() as usize * bones];
        for planned in FramePlan::of_batch(self.lib, batch, &SEPARATE).passes() {
            match planned.pass {
                Pass::Sample { .. } => sample::run(self.lib, batch, &mut out.locals, &mut deltas),
                Pass::Layers => layers::run(self.lib, batch, &mut out.locals, &mut deltas),
                Pass::Inertialize { .. } => {
                    let parts = out
                        .locals
                        .chunks_exact_mut(bones)
                        .zip(out.inertia.chunks_exact_mut(bones));
                    for (head, (l, state)) in batch.heads.iter().zip(parts) {
                        inertialize::run_instance(self.lib, &batch.entries, head, l, state);
                    }
                }
                Pass::Ik => ik::run(self.lib, batch, &mut out.locals),
                Pass::Hierarchy => {
                    hierarchy::run(self.lib, &out.locals, &mut out.component, &mut out.skinning)
                }
                Pass::Curves => curves::run(self.lib, batch, &mut out.curves),
                // The twin's sampling makes each sample's search at its first bone.
                Pass::Fused { .. } | Pass::Advance | Pass::RootMotion | Pass::Resolve => {}
            }
        }
        Ok(())
    }

    /// The sampling stage alone (clips sampled, retargeted and blended, local layers applied):
    /// every instance's local transforms, instance-major, into `locals` (resized to fit), on
    /// the calling thread. For measurements, and for hosts that run their own hierarchy; a
    /// batch with mesh-space layers or IK layers is refused, as those need their own stages.
    pub fn sample_locals(&self, batch: &PoseBatch, locals: &mut Vec<Xform>) -> Result<()> {
        batch.validate(self.lib)?;
        if batch.has_mesh_layers() || batch.has_ik() {
            return Err(crate::Error::BadRequest {
                what: "sample_locals runs neither the layer nor the IK stage: the batch has \
                       mesh-space or IK layers"
                    .into(),
            });
        }
        locals.resize(batch.len() * self.lib.bone_count(), Xform::default());
        sample::run(self.lib, batch, locals, &mut []);
        Ok(())
    }

    /// The local transform of `bone` (of the library's skeleton) in `clip` at `time`, clamped
    /// or wrapped, as the sampling stage computes it: retargeted when the clip comes from
    /// another skeleton; an additive clip gives its delta.
    pub fn sample_bone(
        &self,
        clip: impl Into<ClipId>,
        bone: usize,
        time: f32,
        looping: bool,
    ) -> Result<Transform> {
        let clip = clip.into();
        if clip.index() >= self.lib.clip_count()
            || bone >= self.lib.bone_count()
            || !time.is_finite()
        {
            return Err(crate::Error::BadRequest {
                what: format!(
                    "clip {}, bone {bone} at time {time}: the library has {} clips and {} bones",
                    clip.0,
                    self.lib.clip_count(),
                    self.lib.bone_count()
                ),
            });
        }
        let t = map_time(time, self.lib.clip_duration(clip), looping);
        Ok(sample_bone(
            self.lib,
            clip.index(),
            bone,
            t,
            &mut KeySearch::default(),
        ))
    }
}
