//! Retargeting as objects: a character plan (its description, quality reports, baked clips),
//! and the offline conversion `posegpu retarget` runs (the character retargeting, or UE's
//! RemapTracksToNewSkeleton).

use std::fmt::Write;
use std::sync::Arc;

use posegpu::retarget::quality::{self, Stats};
use posegpu::retarget::{bake_clip, remap_clip, BoneMapping, PlanOptions, RetargetPlan, Rig};
use posegpu::{Clip, IkWeights, RestPose};
use pyo3::prelude::*;
use pyo3::types::PyDict;

use crate::asset::Asset;
use crate::errors::{arg_error, detached, guard};
use crate::library::{ik_arg, rest_arg, rig_arg};

/// The plan of one (source, target) pair of humanoids: built once, it drives every target
/// bone from the source's rotations from rest (any tool onto any tool). `rig` may pair bones
/// with its `bone_map`; `rest` is the pose both are measured from ("bind" by default, or
/// "nodes").
#[pyclass(name = "RetargetPlan", module = "posegpu", frozen)]
pub struct RetargetPlanPy {
    pub plan: Arc<RetargetPlan>,
    pub source: Py<Asset>,
    pub target: Py<Asset>,
}

/// `method`: true for UE's per-bone modes ("ue"), false for the character retargeting
/// ("character").
pub fn ue_method(method: &str) -> PyResult<bool> {
    match method {
        "character" => Ok(false),
        "ue" => Ok(true),
        _ => Err(arg_error(format!(
            "method: '{method}' is not 'character' or 'ue'"
        ))),
    }
}

/// Plan options from a rig's bone map and `rest`, which `rest` overrides.
pub fn plan_options(rig: Option<&Rig>, rest: Option<RestPose>) -> PlanOptions {
    let mut options = rig.map(PlanOptions::from_rig).unwrap_or_default();
    if let Some(rest) = rest {
        options.rest = rest;
    }
    options
}

fn optional_rig(rig: Option<&Bound<'_, PyAny>>) -> PyResult<Option<Rig>> {
    rig.filter(|r| !r.is_none()).map(rig_arg).transpose()
}

/// A clip of `asset` by index or name.
fn clip_index(asset: &posegpu::Asset, clip: &Bound<'_, PyAny>, name: &str) -> PyResult<usize> {
    let n = asset.clips.len();
    if let Ok(i) = clip.extract::<i64>() {
        return usize::try_from(i).ok().filter(|&i| i < n).ok_or_else(|| {
            arg_error(format!(
                "{name}: {i} is not a clip index (the asset has {n} clips)"
            ))
        });
    }
    let s: String = clip
        .extract()
        .map_err(|_| arg_error(format!("{name}: expected a clip index or name")))?;
    Clip::find(&asset.clips, &s).map_err(|e| arg_error(format!("{name}: {e}")))
}

#[pymethods]
impl RetargetPlanPy {
    #[new]
    #[pyo3(signature = (source, target, rig=None, rest=None))]
    fn new(
        py: Python<'_>,
        source: Py<Asset>,
        target: Py<Asset>,
        rig: Option<&Bound<'_, PyAny>>,
        rest: Option<&str>,
    ) -> PyResult<Self> {
        guard(|| {
            let options = plan_options(optional_rig(rig)?.as_ref(), rest_arg(rest)?);
            let (s, t) = (source.get().inner.clone(), target.get().inner.clone());
            let plan = detached(py, move || RetargetPlan::new(&s, &t, &options))?;
            Ok(Self {
                plan: Arc::new(plan),
                source,
                target,
            })
        })
    }

    /// What `posegpu info TARGET --against SOURCE` prints: each character's humanoid roles
    /// and why, the target's IK-style feet, then per target bone its counterpart(s) and how it
    /// moves.
    fn describe(&self) -> PyResult<String> {
        guard(|| {
            let (source, target) = (&self.source.get(), &self.target.get());
            let mut out = String::new();
            for (asset, character) in [(source, self.plan.source()), (target, self.plan.target())] {
                let roles = character.humanoid.describe(&asset.inner.skeleton);
                let _ = writeln!(out, "{}: {roles}", asset.label);
            }
            let names = target.inner.skeleton.names();
            for h in self.plan.foot_holds() {
                let _ = writeln!(
                    out,
                    "{}: IK-style foot '{}' (shin '{}'): {h}",
                    target.label, names[h.foot], names[h.shin]
                );
            }
            let _ = write!(
                out,
                "{} driven by {}:\n{}",
                target.label,
                source.label,
                self.plan
                    .describe(&source.inner.skeleton, &target.inner.skeleton)
            );
            Ok(out)
        })
    }

    /// Target height over source height (hip heights): how strides and heights scale.
    #[getter]
    fn hip_height_ratio(&self) -> f32 {
        self.plan.hip_height_ratio()
    }

    /// Per target bone: {"bone", "source" (a source bone name or None), "kind" ("mapped",
    /// "share", "ref"), "driven" (its translation follows the source), "reason"}.
    #[getter]
    fn bones<'py>(&self, py: Python<'py>) -> PyResult<Vec<Bound<'py, PyDict>>> {
        guard(|| {
            let t = self.target.get().inner.skeleton.names();
            let s = self.source.get().inner.skeleton.names();
            self.plan
                .bones()
                .iter()
                .enumerate()
                .map(|(b, info)| {
                    let d = PyDict::new(py);
                    d.set_item("bone", &t[b])?;
                    d.set_item("source", info.source.map(|i| s[i].clone()))?;
                    d.set_item("kind", info.kind.name())?;
                    d.set_item("driven", info.driven)?;
                    d.set_item("reason", &info.reason)?;
                    Ok(d)
                })
                .collect()
        })
    }

    /// How closely source clip `clip` (an index or name of the source's clips) follows the
    /// source in the world once retargeted, over `frames` frames with IK weights `ik`
    /// (default feet 1, hands 0): what `posegpu retarget --report` prints.
    #[pyo3(signature = (clip, frames=400, ik=None))]
    fn quality(
        &self,
        py: Python<'_>,
        clip: &Bound<'_, PyAny>,
        frames: usize,
        ik: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<QualityReport> {
        guard(|| {
            let index = clip_index(&self.source.get().inner, clip, "clip")?;
            quality_report(py, self, index, frames, ik_arg(ik)?)
        })
    }

    /// The source's clips (all, or those named or numbered in `clips`) converted onto the
    /// target once, with IK at `ik`'s weights (default feet 1): a new asset with the target's
    /// skeleton (and its glTF file's meshes for `save_glb`).
    #[pyo3(signature = (clips=None, ik=None))]
    fn bake(
        &self,
        py: Python<'_>,
        clips: Option<&Bound<'_, PyAny>>,
        ik: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Asset> {
        guard(|| {
            let (source, target) = (self.source.get(), self.target.get());
            let chosen = chosen_clips(&source.inner, clips)?;
            let ik = ik_arg(ik)?;
            let (plan, s, t) = (
                self.plan.clone(),
                source.inner.clone(),
                target.inner.clone(),
            );
            let baked = detached(py, move || {
                chosen
                    .iter()
                    .map(|&c| bake_clip(&plan, &s, &s.clips[c], &t.skeleton, ik))
                    .collect::<posegpu::Result<Vec<_>>>()
            })?;
            Ok(onto(target, baked, &source.label))
        })
    }

    fn __repr__(&self) -> String {
        format!(
            "<posegpu.RetargetPlan {} -> {}>",
            self.source.get().label,
            self.target.get().label
        )
    }
}

/// `clips=None` (every clip) or a list of indices or names.
fn chosen_clips(asset: &posegpu::Asset, clips: Option<&Bound<'_, PyAny>>) -> PyResult<Vec<usize>> {
    match clips.filter(|c| !c.is_none()) {
        None => Ok((0..asset.clips.len()).collect()),
        Some(list) => {
            if list.extract::<String>().is_ok() || list.extract::<i64>().is_ok() {
                return Ok(vec![clip_index(asset, list, "clips")?]);
            }
            list.try_iter()
                .map_err(|_| arg_error("clips: expected None, a clip, or a list of clips"))?
                .enumerate()
                .map(|(i, c)| clip_index(asset, &c?, &format!("clips[{i}]")))
                .collect()
        }
    }
}

/// `clips` on `target`'s skeleton: an asset that writes over the target's glTF file.
fn onto(target: &Asset, clips: Vec<Clip>, from: &str) -> Asset {
    let t = &target.inner;
    Asset::new(
        posegpu::Asset {
            skeleton: t.skeleton.clone(),
            clips,
            nodes: t.nodes.clone(),
            frame: t.frame.clone(),
        },
        target.template.clone(),
        format!("{} retargeted from {from}", target.label),
    )
}

/// Converts clips of `source` onto `target` as `posegpu retarget` does: `character` through
/// a plan (IK at `ik`), or `ue` (UE's RemapTracksToNewSkeleton, bones matched by name).
pub fn convert(
    source: &posegpu::Asset,
    target: &posegpu::Asset,
    clips: &[usize],
    ue: bool,
    rig: &Rig,
    ik: IkWeights,
) -> posegpu::Result<Vec<Clip>> {
    if ue {
        let mapping = BoneMapping::new(&source.skeleton, &target.skeleton, rig)?;
        if mapping.matched_count() == 0 {
            return Err(posegpu::Error::Rig {
                origin: "method='ue'".into(),
                message: "no target bone matches a source bone by name; pair them with a rig's \
                          bone_map (or use method='character')"
                    .into(),
            });
        }
        let rest = rig.rest.unwrap_or(RestPose::Nodes);
        let (s, t) = (
            source.skeleton.with_rest_as(rest),
            target.skeleton.with_rest_as(rest),
        );
        return clips
            .iter()
            .map(|&c| remap_clip(&source.clips[c], &s, &t, &mapping))
            .collect();
    }
    let plan = RetargetPlan::new(source, target, &PlanOptions::from_rig(rig))?;
    clips
        .iter()
        .map(|&c| bake_clip(&plan, source, &source.clips[c], &target.skeleton, ik))
        .collect()
}

/// Converts `source`'s clips (all, or `clips`) onto `target` once, as `posegpu retarget`
/// does: `method="character"` (the default: any humanoid onto any humanoid, IK at `ik`'s
/// weights, feet on by default) or `"ue"` (UE's RemapTracksToNewSkeleton, for skeletons whose
/// bone names match). `rig` pairs bones (`bone_map`, `strip_prefixes`); `rest` chooses the
/// pose both are measured from. Returns an asset with the target's skeleton; `save_glb`
/// writes it over the target's glTF file.
#[pyfunction]
#[pyo3(signature = (source, target, clips=None, method="character", rig=None, rest=None, ik=None))]
#[allow(clippy::too_many_arguments)]
pub fn retarget(
    py: Python<'_>,
    source: Py<Asset>,
    target: Py<Asset>,
    clips: Option<&Bound<'_, PyAny>>,
    method: &str,
    rig: Option<&Bound<'_, PyAny>>,
    rest: Option<&str>,
    ik: Option<&Bound<'_, PyAny>>,
) -> PyResult<Asset> {
    guard(|| {
        let ue = ue_method(method)?;
        let mut rig = optional_rig(rig)?.unwrap_or_default();
        rig.rest = rest_arg(rest)?.or(rig.rest);
        let ik = ik_arg(ik)?;
        let (s, t) = (source.get(), target.get());
        let chosen = chosen_clips(&s.inner, clips)?;
        if chosen.is_empty() {
            return Err(arg_error(format!("source: {} has no clips", s.label)));
        }
        let (sa, ta) = (s.inner.clone(), t.inner.clone());
        let clips = detached(py, move || convert(&sa, &ta, &chosen, ue, &rig, ik))?;
        Ok(onto(t, clips, &s.label))
    })
}

/// The quality report of the plan's source clip `clip` at `frames` frames.
pub fn quality_report(
    py: Python<'_>,
    plan: &RetargetPlanPy,
    clip: usize,
    frames: usize,
    ik: IkWeights,
) -> PyResult<QualityReport> {
    if frames < 2 {
        return Err(arg_error(format!("frames: {frames} is fewer than 2")));
    }
    let (s, t, p) = (
        plan.source.get().inner.clone(),
        plan.target.get().inner.clone(),
        plan.plan.clone(),
    );
    let report = detached(py, move || {
        let c = &s.clips[clip];
        let times = quality::frame_times(c, frames);
        quality::measure(&s, &t, &p, c, &times, ik)
    })?;
    Ok(QualityReport { report })
}

/// How closely a retargeted clip follows its source in the world: per limb segment the
/// direction error in degrees, pelvis and feet heights, travel and sliding, in hip heights
/// (each a dict of mean, p95, max and count). `str()` is the table `posegpu retarget --report`
/// prints.
#[pyclass(module = "posegpu", frozen)]
pub struct QualityReport {
    pub report: quality::QualityReport,
}

fn stats<'py>(py: Python<'py>, s: &Stats) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("mean", s.mean)?;
    d.set_item("p95", s.p95)?;
    d.set_item("max", s.max)?;
    d.set_item("count", s.count)?;
    Ok(d)
}

#[pymethods]
impl QualityReport {
    /// Frames measured.
    #[getter]
    fn frames(&self) -> usize {
        self.report.frames
    }

    /// True when every aim is met (directions, pelvis, ankle lift, contact, travel).
    #[getter]
    fn meets_aim(&self) -> bool {
        self.report.meets_aim()
    }

    /// One line: direction mean/p95/max in degrees, then heights and travel in % of hip
    /// height, then sliding.
    fn summary(&self) -> String {
        self.report.summary()
    }

    /// Per limb segment: {"limb", "side" (None for the torso), "degrees": stats}.
    #[getter]
    fn limbs<'py>(&self, py: Python<'py>) -> PyResult<Vec<Bound<'py, PyDict>>> {
        self.report
            .limbs
            .iter()
            .map(|l| {
                let d = PyDict::new(py);
                d.set_item("limb", l.limb.name())?;
                d.set_item("side", l.side.map(|s| s.name()))?;
                d.set_item("degrees", stats(py, &l.degrees)?)?;
                Ok(d)
            })
            .collect()
    }

    /// Everything as plain Python values: frames, meets_aim, overall, hips_height,
    /// feet_height, contact_height, travel (stats), source_sliding, target_sliding,
    /// source_ik_gap, ik_gap (stats or None), limbs, summary.
    fn to_dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let r = &self.report;
        let d = PyDict::new(py);
        d.set_item("frames", r.frames)?;
        d.set_item("meets_aim", r.meets_aim())?;
        d.set_item("overall", stats(py, &r.overall)?)?;
        d.set_item("hips_height", stats(py, &r.hips_height)?)?;
        d.set_item("feet_height", stats(py, &r.feet_height)?)?;
        d.set_item("contact_height", stats(py, &r.contact_height)?)?;
        d.set_item("travel", stats(py, &r.travel)?)?;
        d.set_item("source_sliding", r.source_sliding)?;
        d.set_item("target_sliding", r.target_sliding)?;
        let gap = |g: &Option<Stats>| g.as_ref().map(|s| stats(py, s)).transpose();
        d.set_item("source_ik_gap", gap(&r.source_ik_gap)?)?;
        d.set_item("ik_gap", gap(&r.ik_gap)?)?;
        d.set_item("limbs", self.limbs(py)?)?;
        d.set_item("summary", r.summary())?;
        Ok(d)
    }

    fn __str__(&self) -> String {
        self.report.to_string()
    }

    fn __repr__(&self) -> String {
        format!("<posegpu.QualityReport {}>", self.report.summary())
    }
}
