//! The passes of one frame, in order: computed once by [`FramePlan::new`] from the library,
//! what the frame's batch holds ([`FrameShape`]) and the options, and followed by every
//! backend. The CPU evaluator runs an instance's passes back to back, the GPU evaluator and
//! crowd record them, and the traffic replay replays them. The stage order and the fuse rule
//! are written here and nowhere else.

use crate::batch::PoseBatch;
use crate::layout::{BONE_BLOCK, FUSED_BONES, WORKGROUP_SIZE};
use crate::library::AnimLibrary;

/// A compute stage: one WGSL file (`shaders/<name>.wgsl`) and its CPU twin
/// (`cpu/<name>.rs`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Stage {
    /// A crowd's players step by `dt` and write the frame's samples.
    Advance,
    /// A crowd's root-motion bone's motion, through its axis mask and mode.
    RootMotion,
    /// Each clip sample's key search, made once for all its bones.
    Resolve,
    /// Clips sampled, retargeted and blended, local layers applied: the locals.
    Sample,
    /// Sampling and the hierarchy in one workgroup pass.
    Fused,
    /// Mesh-space layers and blends, parents first.
    Layers,
    /// A transition's decaying offsets.
    Inertialize,
    /// Two-bone chains toward goals, after retargeting.
    Ik,
    /// Component space and skinning matrices, parents first.
    Hierarchy,
    /// Morph weights and other float tracks.
    Curves,
}

impl Stage {
    /// Every stage, in the order a frame runs those it has.
    pub const ALL: [Stage; 10] = [
        Stage::Advance,
        Stage::RootMotion,
        Stage::Resolve,
        Stage::Sample,
        Stage::Fused,
        Stage::Layers,
        Stage::Inertialize,
        Stage::Ik,
        Stage::Hierarchy,
        Stage::Curves,
    ];

    /// The stage's file stem: `shaders/<name>.wgsl` and `cpu/<name>.rs`.
    pub const fn name(self) -> &'static str {
        match self {
            Stage::Advance => "advance",
            Stage::RootMotion => "root_motion",
            Stage::Resolve => "resolve",
            Stage::Sample => "sample",
            Stage::Fused => "fused",
            Stage::Layers => "layers",
            Stage::Inertialize => "inertialize",
            Stage::Ik => "ik",
            Stage::Hierarchy => "hierarchy",
            Stage::Curves => "curves",
        }
    }

    /// The buffers the stage binds, in binding order (group 0). A test checks them against
    /// the names the shader declares.
    pub(crate) const fn bindings(self) -> &'static [Binding] {
        use Binding::*;
        match self {
            Stage::Advance => &[
                CrowdParams,
                Structure,
                Players,
                Frame,
                Finished,
                NotifyTable,
                Events,
            ],
            Stage::RootMotion => &[
                CrowdParams,
                Structure,
                ClipTable,
                Times,
                Values,
                Retarget,
                Players,
                Motion,
            ],
            Stage::Resolve => &[Params, Frame, ClipTable, Times, Values, Retarget],
            Stage::Sample => &[
                Params, Frame, ClipTable, Times, Values, Retarget, Locals, Deltas,
            ],
            Stage::Fused => &[
                Params, Frame, ClipTable, Times, Values, Retarget, KeptLocals, Built, Skinning,
            ],
            Stage::Layers => &[Params, Frame, Parents, Locals, Deltas],
            // Inertialization's state sits where sampling binds the deltas.
            Stage::Inertialize => &[
                Params, Frame, ClipTable, Times, Values, Retarget, Locals, Inertia,
            ],
            Stage::Ik => &[
                Params, Frame, ClipTable, Times, Values, Retarget, Locals, IkChains,
            ],
            Stage::Hierarchy => &[Params, Parents, InverseBind, KeptLocals, Built, Skinning],
            Stage::Curves => &[
                Params, Frame, ClipTable, Times, Values, Retarget, CurveTable, Curves,
            ],
        }
    }
}

/// A buffer a stage binds, named for what it holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum Binding {
    /// The evaluator's uniform (`Params`).
    Params,
    /// This frame's heads and entries.
    Frame,
    /// The library's clips, then their channels.
    ClipTable,
    /// Key times.
    Times,
    /// Key values.
    Values,
    /// Retarget caches and plans, then the skeleton section.
    Retarget,
    /// Each bone's parent.
    Parents,
    /// Each bone's inverse bind matrix.
    InverseBind,
    /// The IK chains.
    IkChains,
    /// The curve table.
    CurveTable,
    /// The locals sampling writes.
    Locals,
    /// The locals where they are kept as an output; a placeholder where they are not (the
    /// component transforms are then built in the locals' buffer).
    KeptLocals,
    /// Where the hierarchy writes the component transforms.
    Built,
    /// Skinning matrices.
    Skinning,
    /// Per-instance curve values.
    Curves,
    /// Delta slots of deferred layers.
    Deltas,
    /// Inertialization offsets, kept from frame to frame.
    Inertia,
    /// A crowd's uniform (`CrowdParams`).
    CrowdParams,
    /// A crowd's groups, tracks and montage segments.
    Structure,
    /// A crowd's players.
    Players,
    /// A crowd's root-motion deltas and placements.
    Motion,
    /// The instances whose non-looping track finished.
    Finished,
    /// The library's notifies.
    NotifyTable,
    /// The events players passed.
    Events,
}

impl Binding {
    /// The name the shaders declare the binding under.
    #[cfg(test)]
    pub(crate) const fn wgsl_name(self) -> &'static str {
        match self {
            Binding::Params => "params",
            Binding::Frame => "frame",
            Binding::ClipTable => "clip_table",
            Binding::Times => "times",
            Binding::Values => "values",
            Binding::Retarget => "retarget",
            Binding::Parents => "parents",
            Binding::InverseBind => "inverse_bind",
            Binding::IkChains => "ik",
            Binding::CurveTable => "curve_table",
            Binding::Locals | Binding::KeptLocals => "locals",
            Binding::Built => "component",
            Binding::Skinning => "skinning",
            Binding::Curves => "curves",
            Binding::Deltas => "deltas",
            Binding::Inertia => "inertia",
            Binding::CrowdParams => "crowd",
            Binding::Structure => "structure",
            Binding::Players => "players",
            Binding::Motion => "motion",
            Binding::Finished => "events",
            Binding::NotifyTable => "notify_table",
            Binding::Events => "passed",
        }
    }
}

/// One pass of a frame: a stage and the variant of it the frame needs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Pass {
    /// See [`Stage::Advance`].
    Advance,
    /// See [`Stage::RootMotion`].
    RootMotion,
    /// See [`Stage::Resolve`].
    Resolve,
    /// See [`Stage::Sample`].
    Sample {
        /// Every instance plays one clip and nothing else: the pipeline without blend and
        /// layer code.
        single_clips: bool,
    },
    /// See [`Stage::Fused`].
    Fused {
        /// As for [`Pass::Sample`].
        single_clips: bool,
    },
    /// See [`Stage::Layers`].
    Layers,
    /// See [`Stage::Inertialize`].
    Inertialize {
        /// A transition begins this frame: the pipeline that samples the old poses.
        starts: bool,
    },
    /// See [`Stage::Ik`].
    Ik,
    /// See [`Stage::Hierarchy`].
    Hierarchy,
    /// See [`Stage::Curves`].
    Curves,
}

impl Pass {
    /// The stage the pass runs.
    pub const fn stage(self) -> Stage {
        match self {
            Pass::Advance => Stage::Advance,
            Pass::RootMotion => Stage::RootMotion,
            Pass::Resolve => Stage::Resolve,
            Pass::Sample { .. } => Stage::Sample,
            Pass::Fused { .. } => Stage::Fused,
            Pass::Layers => Stage::Layers,
            Pass::Inertialize { .. } => Stage::Inertialize,
            Pass::Ik => Stage::Ik,
            Pass::Hierarchy => Stage::Hierarchy,
            Pass::Curves => Stage::Curves,
        }
    }

    /// The pass's label in GPU captures and reports.
    pub const fn label(self) -> &'static str {
        match self {
            Pass::Sample { single_clips: true } => "sample (single clips)",
            Pass::Fused { single_clips: true } => "fused (single clips)",
            Pass::Inertialize { starts: true } => "inertialize (starting)",
            _ => self.stage().name(),
        }
    }
}

/// How a pass is dispatched over a chunk of `n` instances.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Dispatch {
    /// `n * per_instance` invocations, in workgroups of 64.
    Invocations {
        /// Invocations per instance (bones, curves or 1).
        per_instance: u32,
    },
    /// One invocation per instance walking its bones, one dispatch per block of 4,096 bones
    /// (dispatch `b` has `b + 1` layers in z, of which the last works).
    BoneBlocks {
        /// Dispatches per chunk.
        blocks: u32,
    },
    /// Workgroups of whole instances.
    InstanceGroups {
        /// Instances per workgroup.
        instances: u32,
    },
}

impl Dispatch {
    /// The workgroups for `n` instances, and the dispatches (z from 1 to this).
    pub(crate) fn workgroups(self, n: u64) -> (u64, u32) {
        let size = u64::from(WORKGROUP_SIZE);
        match self {
            Dispatch::Invocations { per_instance } => {
                ((n * u64::from(per_instance)).div_ceil(size), 1)
            }
            Dispatch::BoneBlocks { blocks } => (n.div_ceil(size), blocks),
            Dispatch::InstanceGroups { instances } => (n.div_ceil(u64::from(instances)), 1),
        }
    }
}

/// What a frame holds that decides its passes: [`FrameShape::of`] a batch, or what a crowd
/// that writes its own frames knows of them.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct FrameShape {
    /// Every instance plays one clip and nothing else.
    pub(crate) single_clips: bool,
    /// Some instance has a mesh-space layer.
    pub(crate) mesh_layers: bool,
    /// Some instance has an inertialized transition under way.
    pub(crate) inertia: bool,
    /// Some instance's inertialized transition begins.
    pub(crate) inertia_starts: bool,
    /// Some instance has an IK layer.
    pub(crate) ik: bool,
    /// Some sample locks its root.
    pub(crate) root_locks: bool,
    /// Some layer weighs more than 1.
    pub(crate) heavy_layers: bool,
}

impl FrameShape {
    /// The shape of `batch`.
    pub(crate) fn of(batch: &PoseBatch) -> Self {
        Self {
            single_clips: batch.is_single_clips(),
            mesh_layers: batch.has_mesh_layers(),
            inertia: batch.has_inertia(),
            inertia_starts: batch.has_inertia_start(),
            ik: batch.has_ik(),
            root_locks: batch.has_root_locks(),
            heavy_layers: batch.has_heavy_layers(),
        }
    }
}

/// When a library's IK chains give the IK pass work.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum IkChains {
    /// The library has none.
    None,
    /// For instances with an IK layer.
    WithLayers,
    /// Every frame: feet that stay on their shins ([`crate::layout::IK_ATTACHED`]) are moved
    /// there, IK layer or not.
    Always,
}

/// The choices a backend makes for its frames.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct FrameOptions {
    /// Frames that can run as the fused pass do.
    pub(crate) fuse: bool,
    /// A crowd steps its players first; `Some(true)` when some instance extracts root motion.
    pub(crate) crowd: Option<bool>,
    /// The poses a fused workgroup holds (`GpuOptions::fused_poses`).
    pub(crate) fused_poses: u32,
}

impl FrameOptions {
    /// Frames that fuse where they can (`fuse`), no crowd, the default fused workgroup.
    pub(crate) const fn fusing(fuse: bool) -> Self {
        Self {
            fuse,
            crowd: None,
            fused_poses: FUSED_BONES,
        }
    }
}

impl Default for FrameOptions {
    fn default() -> Self {
        Self::fusing(false)
    }
}

pub(crate) use crate::layout::fused_group_instances;

/// One pass of a plan and how it is dispatched.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct PlannedPass {
    /// The pass.
    pub(crate) pass: Pass,
    /// Its dispatch shape.
    pub(crate) dispatch: Dispatch,
}

/// The passes of a frame, in order.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct FramePlan {
    passes: Vec<PlannedPass>,
}

impl FramePlan {
    /// The most passes a plan has: a crowd's two, then the samples' resolution, sampling,
    /// layers, inertialization, IK, the hierarchy and the curves.
    pub(crate) const MOST_PASSES: u32 = 9;

    /// The passes a frame of `shape` runs on `lib` under `options`:
    ///
    /// - a crowd's advance, then its root motion where some instance extracts it;
    /// - each sample's key search, resolved once for all its bones;
    /// - the fused pass, where `options.fuse`, no stage between sampling and the hierarchy has
    ///   work (mesh-space layers, inertialization, IK with the library's chains, or feet the
    ///   library keeps on their shins) and the
    ///   skeleton fits the pass's workgroup memory (320 bones);
    /// - else sampling, the layer, inertialization and IK passes where they have work, and the
    ///   hierarchy;
    /// - then the curves, where the library has any.
    pub(crate) fn new(lib: &AnimLibrary, shape: &FrameShape, options: &FrameOptions) -> Self {
        let bones = lib.bone_count() as u32;
        let curves = lib.curve_names().len() as u32;
        let ik = &lib.data().ik;
        let chains = match (ik.is_empty(), crate::drive::ik::attaches_feet(ik)) {
            (true, _) => IkChains::None,
            (false, false) => IkChains::WithLayers,
            (false, true) => IkChains::Always,
        };
        Self::build(bones, curves, chains, shape, options)
    }

    /// [`FramePlan::new`] for a library of `bones` bones and `curves` curves, whose IK chains
    /// are `chains`.
    fn build(
        bones: u32,
        curves: u32,
        chains: IkChains,
        shape: &FrameShape,
        options: &FrameOptions,
    ) -> Self {
        let ik = match chains {
            IkChains::None => false,
            IkChains::WithLayers => shape.ik,
            IkChains::Always => true,
        };
        let fused =
            options.fuse && bones <= FUSED_BONES && !shape.mesh_layers && !shape.inertia && !ik;
        let single_clips = shape.single_clips;
        let per = |per_instance| Dispatch::Invocations { per_instance };
        let blocks = Dispatch::BoneBlocks {
            blocks: bones.div_ceil(BONE_BLOCK).max(1),
        };
        let mut passes = Vec::new();
        let mut push = |pass, dispatch| passes.push(PlannedPass { pass, dispatch });
        if let Some(root_motion) = options.crowd {
            push(Pass::Advance, per(1));
            if root_motion {
                push(Pass::RootMotion, per(1));
            }
        }
        push(Pass::Resolve, per(1));
        if fused {
            let instances = fused_group_instances(bones, options.fused_poses);
            push(
                Pass::Fused { single_clips },
                Dispatch::InstanceGroups { instances },
            );
        } else {
            push(Pass::Sample { single_clips }, per(bones));
            if shape.mesh_layers {
                push(Pass::Layers, blocks);
            }
            if shape.inertia {
                let starts = shape.inertia_starts;
                push(Pass::Inertialize { starts }, per(bones));
            }
            if ik {
                push(Pass::Ik, per(1));
            }
            push(Pass::Hierarchy, blocks);
        }
        if curves > 0 {
            push(Pass::Curves, per(curves));
        }
        Self { passes }
    }

    /// The plan of `batch`'s frame.
    pub(crate) fn of_batch(lib: &AnimLibrary, batch: &PoseBatch, options: &FrameOptions) -> Self {
        Self::new(lib, &FrameShape::of(batch), options)
    }

    /// The passes, in order, with their dispatch shapes.
    pub(crate) fn passes(&self) -> &[PlannedPass] {
        &self.passes
    }

    /// Whether the plan runs a pass of `stage`.
    pub(crate) fn runs(&self, stage: Stage) -> bool {
        self.passes.iter().any(|p| p.pass.stage() == stage)
    }

    /// Whether sampling and the hierarchy run as the fused pass.
    pub(crate) fn is_fused(&self) -> bool {
        self.runs(Stage::Fused)
    }
}

/// GPU time of each pass a frame ran, from timestamp queries, in the plan's order.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct PassTimes {
    passes: Vec<(Pass, f64)>,
}

impl PassTimes {
    /// Times of `plan`'s passes, from one span per pass in order.
    pub(crate) fn new(plan: &FramePlan, spans: &[f64]) -> Self {
        let passes = plan
            .passes
            .iter()
            .map(|p| p.pass)
            .zip(spans.iter().copied());
        Self {
            passes: passes.collect(),
        }
    }

    /// Each pass that ran and its time, in nanoseconds.
    pub fn passes(&self) -> &[(Pass, f64)] {
        &self.passes
    }

    /// The time of `stage`'s pass, in nanoseconds; 0 when it did not run.
    pub fn ns(&self, stage: Stage) -> f64 {
        let of = self.passes.iter().filter(|(p, _)| p.stage() == stage);
        of.map(|(_, t)| t).sum()
    }

    /// The sum of the passes, in nanoseconds.
    pub fn total_ns(&self) -> f64 {
        self.passes.iter().map(|(_, t)| t).sum()
    }

    /// Adds `other`'s times, pass by pass (for totals over frames).
    pub fn accumulate(&mut self, other: &PassTimes) {
        for &(pass, t) in &other.passes {
            match self.passes.iter_mut().find(|(p, _)| *p == pass) {
                Some((_, total)) => *total += t,
                None => self.passes.push((pass, t)),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gpu::shaders;

    #[test]
    fn every_stage_binds_what_its_shader_declares_in_binding_order() {
        for stage in Stage::ALL {
            let module = shaders::tests::module(shaders::shader(stage));
            let mut declared: Vec<(u32, String)> = module
                .global_variables
                .iter()
                .filter_map(|(_, v)| {
                    let b = v.binding.as_ref()?;
                    (b.group == 0).then(|| (b.binding, v.name.clone().unwrap_or_default()))
                })
                .collect();
            declared.sort();
            let names: Vec<&str> = declared.iter().map(|(_, n)| n.as_str()).collect();
            let planned: Vec<&str> = stage.bindings().iter().map(|b| b.wgsl_name()).collect();
            assert_eq!(names, planned, "{}.wgsl", stage.name());
        }
    }

    fn library(bones: usize, curves: bool) -> AnimLibrary {
        let asset = crate::procedural::random_asset(3, bones, 2);
        let mut clips = asset.clips;
        if curves {
            let channel = crate::model::Channel::new(
                vec![0.0],
                vec![0.5],
                crate::model::Interpolation::Linear,
            );
            clips[0] = clips[0].clone().with_curve("smile", channel).unwrap();
        }
        AnimLibrary::new(&asset.skeleton, &clips).unwrap()
    }

    fn stages(plan: &FramePlan) -> Vec<Stage> {
        plan.passes().iter().map(|p| p.pass.stage()).collect()
    }

    #[test]
    fn the_fuse_rule_and_the_stage_order() {
        use Stage::*;
        let lib = library(20, false);
        let fuse = FrameOptions::fusing(true);
        let separate = FrameOptions::default();
        let plain = FrameShape {
            single_clips: true,
            ..FrameShape::default()
        };
        assert_eq!(
            stages(&FramePlan::new(&lib, &plain, &fuse)),
            [Resolve, Fused]
        );
        assert_eq!(
            stages(&FramePlan::new(&lib, &plain, &separate)),
            [Resolve, Sample, Hierarchy]
        );
        let everything = FrameShape {
            single_clips: false,
            mesh_layers: true,
            inertia: true,
            inertia_starts: true,
            ik: true,
            root_locks: true,
            heavy_layers: true,
        };
        // IK runs only where the library has chains; the random asset has none.
        let crowd = FrameOptions {
            crowd: Some(true),
            ..FrameOptions::fusing(true)
        };
        let plan = FramePlan::new(&lib, &everything, &crowd);
        assert_eq!(
            stages(&plan),
            [
                Advance,
                RootMotion,
                Resolve,
                Sample,
                Layers,
                Inertialize,
                Hierarchy
            ]
        );
        let most = FrameShape {
            ik: true,
            ..everything
        };
        let longest = FramePlan::build(20, 1, IkChains::WithLayers, &most, &crowd);
        assert_eq!(longest.passes().len(), FramePlan::MOST_PASSES as usize);
        assert!(plan.passes().contains(&PlannedPass {
            pass: Pass::Inertialize { starts: true },
            dispatch: Dispatch::Invocations { per_instance: 20 },
        }));
        // Past the fused pass's workgroup memory, and with curves.
        let big = library(FUSED_BONES as usize + 1, true);
        assert_eq!(
            stages(&FramePlan::new(&big, &plain, &fuse)),
            [Resolve, Sample, Hierarchy, Curves]
        );
        let groups = FramePlan::new(&lib, &plain, &fuse).passes()[1].dispatch;
        assert_eq!(groups, Dispatch::InstanceGroups { instances: 16 });
        assert_eq!(groups.workgroups(33), (3, 1));
        // A workgroup of more poses takes more instances.
        let wide = FrameOptions {
            fused_poses: 1000,
            ..fuse
        };
        let groups = FramePlan::new(&lib, &plain, &wide).passes()[1].dispatch;
        assert_eq!(groups, Dispatch::InstanceGroups { instances: 50 });
    }

    #[test]
    fn times_are_keyed_by_pass() {
        let lib = library(20, true);
        let plan = FramePlan::new(&lib, &FrameShape::default(), &FrameOptions::default());
        let mut times = PassTimes::new(&plan, &[0.5, 1.0, 2.0, 4.0]);
        assert_eq!(times.ns(Stage::Resolve), 0.5);
        assert_eq!(times.ns(Stage::Hierarchy), 2.0);
        assert_eq!(times.ns(Stage::Fused), 0.0);
        times.accumulate(&times.clone());
        assert_eq!(times.total_ns(), 15.0);
        assert_eq!(times.passes()[3], (Pass::Curves, 8.0));
    }
}
