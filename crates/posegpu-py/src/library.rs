//! Libraries: a target skeleton's clips, and other characters' clips retargeted onto it (the
//! character retargeting by default, UE's per-bone modes through a rig), compressed or not.

use std::sync::Arc;

use numpy::PyArray1;
use posegpu::compress::{Compression, DEFAULT_TOLERANCE};
use posegpu::retarget::{PlanOptions, RetargetPlan, Rig};
use posegpu::{AnimLibrary, Clip, IkWeights, RestPose};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyString};

use crate::arrays::{clip_ref, f32_vector};
use crate::asset::Asset;
use crate::errors::{arg_error, detached, guard};
use crate::evaluate::resolve_clip;
use crate::retarget::{quality_report, QualityReport, RetargetPlanPy};

/// How another character's clips play on the target.
pub enum Runtime {
    /// The character retargeting (humanoid roles, world frames, rest poses).
    Character(PlanOptions),
    /// UE's per-bone translation modes, from a rig that sets them.
    Modes(Rig),
}

/// `rig` as `posegpu eval --rig` reads it: None (the character retargeting), a rig file, the
/// preset "humanoid", a mode name, or the rig's JSON as a dict; `rest` overrides the rig's.
pub fn runtime(rig: Option<&Bound<'_, PyAny>>, rest: Option<&str>) -> PyResult<Runtime> {
    let rest = rest_arg(rest)?;
    let Some(rig) = rig.filter(|r| !r.is_none()) else {
        let options = PlanOptions {
            rest: rest.unwrap_or_default(),
            ..PlanOptions::default()
        };
        return Ok(Runtime::Character(options));
    };
    let mut rig = rig_arg(rig)?;
    rig.rest = rest.or(rig.rest);
    // A rig with only a bone map pairs bones for the character retargeting (as the CLI does).
    Ok(if rig.sets_modes() {
        Runtime::Modes(rig)
    } else {
        Runtime::Character(PlanOptions::from_rig(&rig))
    })
}

/// `rest="bind"|"nodes"`.
pub fn rest_arg(rest: Option<&str>) -> PyResult<Option<RestPose>> {
    rest.map(|r| {
        r.parse::<RestPose>()
            .map_err(|_| arg_error(format!("rest: '{r}' is not 'bind' or 'nodes'")))
    })
    .transpose()
}

pub fn rig_arg(rig: &Bound<'_, PyAny>) -> PyResult<Rig> {
    let py = rig.py();
    if rig.is_instance_of::<PyDict>() {
        let text: String = py
            .import("json")?
            .call_method1("dumps", (rig,))
            .map_err(|e| arg_error(format!("rig: the dict is not JSON ({e})")))?
            .extract()?;
        return Rig::from_json(&text, "(dict)").map_err(crate::errors::to_py);
    }
    let text: String = if let Ok(s) = rig.cast::<PyString>() {
        s.extract::<String>()?
    } else {
        let path: std::path::PathBuf = rig.extract().map_err(|_| {
            arg_error("rig: expected None, a rig file path, 'humanoid', a mode name or a dict")
        })?;
        path.display().to_string()
    };
    Rig::from_arg(&text).map_err(crate::errors::to_py)
}

/// `ik=None | {"feet": w, "hands": w}`: None is the command line's default for retargeted
/// clips (feet 1, hands 0).
pub fn ik_arg(ik: Option<&Bound<'_, PyAny>>) -> PyResult<IkWeights> {
    let Some(ik) = ik.filter(|i| !i.is_none()) else {
        return Ok(IkWeights::FEET);
    };
    if ik.is_instance_of::<PyBool>() {
        let on: bool = ik.extract()?;
        return Ok(if on { IkWeights::FEET } else { IkWeights::NONE });
    }
    let dict = ik
        .cast::<PyDict>()
        .map_err(|_| arg_error("ik: expected None, a bool or a dict {'feet': w, 'hands': w}"))?;
    let mut w = IkWeights::NONE;
    for (key, value) in dict.iter() {
        let key: String = key
            .extract()
            .map_err(|_| arg_error("ik: keys are 'feet' and 'hands'"))?;
        let v: f32 = value
            .extract()
            .map_err(|_| arg_error(format!("ik['{key}']: expected a number")))?;
        if !(0.0..=1.0).contains(&v) {
            return Err(arg_error(format!(
                "ik['{key}'] is {v}: weights lie in 0..=1"
            )));
        }
        match key.as_str() {
            "feet" => w.feet = v,
            "hands" => w.hands = v,
            _ => return Err(arg_error(format!("ik: unknown key '{key}' (feet, hands)"))),
        }
    }
    Ok(w)
}

/// `compress=None | True | tolerance`: the tolerance, a fraction of the skeleton's height.
fn compress_arg(compress: Option<&Bound<'_, PyAny>>) -> PyResult<Option<f32>> {
    let Some(c) = compress.filter(|c| !c.is_none()) else {
        return Ok(None);
    };
    if c.is_instance_of::<PyBool>() {
        return Ok(c.extract::<bool>()?.then_some(DEFAULT_TOLERANCE));
    }
    let t: f32 = c
        .extract()
        .map_err(|_| arg_error("compress: expected None, True or a tolerance (a float)"))?;
    if !(t.is_finite() && t > 0.0 && t <= 1.0) {
        return Err(arg_error(format!(
            "compress: tolerance {t} is not a fraction of the skeleton's height in (0, 1]"
        )));
    }
    Ok(Some(t))
}

/// One retarget source of a library.
pub struct SourceEntry {
    pub asset: Py<Asset>,
    /// The plan its clips play through (the character retargeting); `None` under a rig's modes.
    pub plan: Option<Arc<RetargetPlan>>,
    /// Its clips are the library's `first .. first + count`.
    pub first: usize,
    pub count: usize,
}

/// A validated, packed, immutable set of clips on one skeleton, evaluated by `Evaluator` and
/// `Crowd`.
///
/// `Library(asset)` holds the asset's clips (a clipless asset gets one clip, "reference pose",
/// as `posegpu eval` does). With `sources=[...]`, every clip of each source follows, retargeted
/// onto `asset`: through a character plan by default (any humanoid onto any humanoid, with IK
/// after retargeting at `ik`'s weights, feet on by default), or through UE's per-bone modes
/// when `rig` sets them (`"humanoid"`, a mode name, a rig file or its JSON as a dict).
/// `rest` chooses the pose both characters are measured from (`"bind"`, the character
/// retargeting's default, or `"nodes"`); `bake=True` retargets the clips once here instead of
/// per frame. `compress` packs every clip (`True`: the default tolerance, 3e-4 of the
/// skeleton's height, or a tolerance).
#[pyclass(module = "posegpu", frozen)]
pub struct Library {
    pub lib: Arc<AnimLibrary>,
    pub target: Py<Asset>,
    pub sources: Vec<SourceEntry>,
    /// The IK weights instances playing retargeted clips get.
    pub ik: IkWeights,
    /// Some source plays through a plan (so IK applies).
    pub has_plans: bool,
    pub tolerance: Option<f32>,
}

#[pymethods]
impl Library {
    #[new]
    #[pyo3(signature = (asset, compress=None, sources=None, rig=None, ik=None, rest=None, bake=false))]
    #[allow(clippy::too_many_arguments)] // the Python signature's keywords
    fn new(
        py: Python<'_>,
        asset: Py<Asset>,
        compress: Option<&Bound<'_, PyAny>>,
        sources: Option<Vec<Py<Asset>>>,
        rig: Option<&Bound<'_, PyAny>>,
        ik: Option<&Bound<'_, PyAny>>,
        rest: Option<&str>,
        bake: bool,
    ) -> PyResult<Self> {
        guard(|| {
            let tolerance = compress_arg(compress)?;
            let ik = ik_arg(ik)?;
            let sources = sources.unwrap_or_default();
            let runtime = runtime(rig, rest)?;
            if bake && matches!(runtime, Runtime::Modes(_)) {
                return Err(arg_error(
                    "bake: the rig sets translation modes, which UE plays at run time; bake \
                     works with the character retargeting",
                ));
            }
            let target = asset.get().inner.clone();
            let source_assets: Vec<(Arc<posegpu::Asset>, String)> = sources
                .iter()
                .map(|s| (s.get().inner.clone(), s.get().label.clone()))
                .collect();
            for (k, (s, label)) in source_assets.iter().enumerate() {
                if s.clips.is_empty() {
                    return Err(arg_error(format!("sources[{k}]: {label} has no clips")));
                }
            }
            let (lib, plans) = detached(py, move || {
                build(&target, &source_assets, &runtime, tolerance, bake)
            })?;
            let own = lib.clip_count()
                - sources
                    .iter()
                    .map(|s| s.get().inner.clips.len())
                    .sum::<usize>();
            let mut first = own;
            let has_plans = plans.iter().any(Option::is_some);
            let sources = sources
                .into_iter()
                .zip(plans)
                .map(|(asset, plan)| {
                    let count = asset.get().inner.clips.len();
                    let e = SourceEntry {
                        asset,
                        plan,
                        first,
                        count,
                    };
                    first += count;
                    e
                })
                .collect();
            Ok(Self {
                lib: Arc::new(lib),
                target: asset,
                sources,
                ik,
                has_plans,
                tolerance,
            })
        })
    }

    /// Clip names, in clip-index order (the target's own clips, then each source's).
    #[getter]
    fn clip_names(&self) -> Vec<String> {
        self.lib.clip_names().to_vec()
    }

    /// Bone names of the target skeleton, parents first.
    #[getter]
    fn bone_names(&self) -> Vec<String> {
        self.lib.skeleton().names().to_vec()
    }

    /// Each bone's parent index (int32), -1 for a root.
    #[getter]
    fn parents<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray1<i32>> {
        PyArray1::from_slice(py, self.lib.skeleton().parents())
    }

    /// The number of clips.
    #[getter]
    fn clip_count(&self) -> usize {
        self.lib.clip_count()
    }

    /// The number of bones.
    #[getter]
    fn bone_count(&self) -> usize {
        self.lib.bone_count()
    }

    /// Clip durations in seconds (float32).
    #[getter]
    fn clip_durations<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray1<f32>> {
        let lib = &self.lib;
        f32_vector(py, lib.clip_ids().map(|c| lib.clip_duration(c)).collect())
    }

    /// Per clip, the index in `sources` of the character it comes from (int32; -1: the
    /// target's own).
    #[getter]
    fn clip_sources<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray1<i32>> {
        let mut v = vec![-1i32; self.lib.clip_count()];
        for (k, s) in self.sources.iter().enumerate() {
            v[s.first..s.first + s.count].fill(k as i32);
        }
        PyArray1::from_vec(py, v)
    }

    /// The curves the clips carry (glTF morph weights), the columns of `Pose.curves`.
    #[getter]
    fn curve_names(&self) -> Vec<String> {
        self.lib.curve_names().to_vec()
    }

    /// The target asset.
    #[getter]
    fn target(&self, py: Python<'_>) -> Py<Asset> {
        self.target.clone_ref(py)
    }

    /// The source assets, in order.
    #[getter]
    fn sources(&self, py: Python<'_>) -> Vec<Py<Asset>> {
        self.sources.iter().map(|s| s.asset.clone_ref(py)).collect()
    }

    /// The IK weights instances playing retargeted clips get: {"feet": w, "hands": w}.
    #[getter]
    fn ik<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let d = PyDict::new(py);
        d.set_item("feet", self.ik.feet)?;
        d.set_item("hands", self.ik.hands)?;
        Ok(d)
    }

    /// The compression tolerance, or None for plain keys.
    #[getter]
    fn compress(&self) -> Option<f32> {
        self.tolerance
    }

    /// The index of the clip named `name` (or numbered: "3"); with `source`, among that
    /// source's clips only (sources often share clip names).
    #[pyo3(signature = (name, source=None))]
    fn find_clip(&self, name: &str, source: Option<usize>) -> PyResult<u32> {
        match source {
            None => self
                .lib
                .find_clip(name)
                .map(|c| c.0)
                .map_err(|e| arg_error(format!("name: {e}"))),
            Some(k) => {
                let s = self.sources.get(k).ok_or_else(|| {
                    arg_error(format!(
                        "source: {k} is not a source index (the library has {})",
                        self.sources.len()
                    ))
                })?;
                let names = &self.lib.clip_names()[s.first..s.first + s.count];
                names
                    .iter()
                    .position(|n| n == name)
                    .map(|i| (s.first + i) as u32)
                    .ok_or_else(|| {
                        arg_error(format!(
                            "name: source {k} has no clip named '{name}' (available: {})",
                            names.join(", ")
                        ))
                    })
            }
        }
    }

    /// Per clip, what `posegpu info FILE --compress` prints: `name`, `raw_bytes` (ACL's
    /// count), `packed_bytes`, `ratio`, `worst_error` (the optimizer's, a fraction of the
    /// skeleton's height), `played_error` (through the decoder), `seconds` (compression
    /// time) and `source` (-1: the target's own clip). At the library's tolerance, else
    /// `tolerance`, else the default (3e-4).
    #[pyo3(signature = (tolerance=None))]
    fn compression_report<'py>(
        &self,
        py: Python<'py>,
        tolerance: Option<f32>,
    ) -> PyResult<Vec<Bound<'py, PyDict>>> {
        guard(|| {
            let tol = tolerance.or(self.tolerance).unwrap_or(DEFAULT_TOLERANCE);
            let mut assets = vec![(-1i32, self.target.get().inner.clone())];
            assets.extend(
                self.sources
                    .iter()
                    .enumerate()
                    .map(|(k, s)| (k as i32, s.asset.get().inner.clone())),
            );
            let reports = detached(py, move || {
                assets
                    .iter()
                    .map(|(k, a)| Ok((*k, posegpu::compress::compression_report(a, tol)?)))
                    .collect::<posegpu::Result<Vec<_>>>()
            })?;
            let mut out = Vec::new();
            for (k, list) in reports {
                for r in list {
                    let d = PyDict::new(py);
                    d.set_item("name", &r.name)?;
                    d.set_item("source", k)?;
                    d.set_item("raw_bytes", r.raw_bytes)?;
                    d.set_item("packed_bytes", r.packed_bytes)?;
                    d.set_item("ratio", r.ratio())?;
                    d.set_item("worst_error", r.worst_error)?;
                    d.set_item("played_error", r.played_error)?;
                    d.set_item("seconds", r.seconds)?;
                    out.push(d);
                }
            }
            Ok(out)
        })
    }

    /// The retarget plan source `source` plays through (the character retargeting), for its
    /// description and quality reports.
    #[pyo3(signature = (source=0))]
    fn plan(&self, py: Python<'_>, source: usize) -> PyResult<RetargetPlanPy> {
        guard(|| {
            let s = self.sources.get(source).ok_or_else(|| {
                arg_error(format!(
                    "source: {source} is not a source index (the library has {})",
                    self.sources.len()
                ))
            })?;
            let plan = s.plan.clone().ok_or_else(|| {
                arg_error(format!(
                    "source: source {source} plays through a rig's per-bone modes, not a plan"
                ))
            })?;
            Ok(RetargetPlanPy {
                plan,
                source: s.asset.clone_ref(py),
                target: self.target.clone_ref(py),
            })
        })
    }

    /// How closely retargeted clip `clip` (an index or name of this library) follows its
    /// source in the world, measured over `frames` frames with IK weights `ik` (default the
    /// library's): what `posegpu retarget --report` prints.
    #[pyo3(signature = (clip, frames=400, ik=None))]
    fn quality(
        &self,
        py: Python<'_>,
        clip: &Bound<'_, PyAny>,
        frames: usize,
        ik: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<QualityReport> {
        let index = resolve_clip(&self.lib, &clip_ref(clip, "clip")?, "clip")? as usize;
        let (k, s) = self
            .sources
            .iter()
            .enumerate()
            .find(|(_, s)| (s.first..s.first + s.count).contains(&index))
            .ok_or_else(|| {
                arg_error(format!(
                    "clip: {index} is not a retargeted clip of this library (its own clips \
                     need no retargeting)"
                ))
            })?;
        let weights = match ik {
            Some(i) if !i.is_none() => ik_arg(Some(i))?,
            _ => self.ik,
        };
        let plan = self.plan(py, k)?;
        quality_report(py, &plan, index - s.first, frames, weights)
    }

    fn __repr__(&self) -> String {
        format!(
            "<posegpu.Library: {} bones, {} clips, {} sources{}>",
            self.lib.bone_count(),
            self.lib.clip_count(),
            self.sources.len(),
            self.tolerance
                .map_or(String::new(), |t| format!(", compressed at {t:e}"))
        )
    }
}

/// Builds the library: the target's clips (or its reference pose), then each source's clips
/// retargeted, under `tolerance`'s compression.
fn build(
    target: &posegpu::Asset,
    sources: &[(Arc<posegpu::Asset>, String)],
    runtime: &Runtime,
    tolerance: Option<f32>,
    bake: bool,
) -> posegpu::Result<(AnimLibrary, Vec<Option<Arc<RetargetPlan>>>)> {
    let mut builder = AnimLibrary::builder(&target.skeleton);
    builder.compress(tolerance.map(Compression::all).transpose()?);
    let own = if target.clips.is_empty() {
        let s = &target.skeleton;
        vec![Clip::from_pose("reference pose", s, s.rest())?]
    } else {
        target.clips.clone()
    };
    builder.add_clips(&own)?;
    let mut plans = Vec::new();
    for (source, label) in sources {
        match runtime {
            Runtime::Character(options) => {
                let plan = RetargetPlan::new(source, target, options)?;
                if bake {
                    builder.add_baked_clips(source, &plan, &source.clips)?;
                } else {
                    let id = builder.add_character_source(label, source, &plan)?;
                    builder.add_clips_from(id, &source.clips)?;
                }
                plans.push(Some(Arc::new(plan)));
            }
            Runtime::Modes(rig) => {
                let id = builder.add_source(label, &source.skeleton, None, rig)?;
                builder.add_clips_from(id, &source.clips)?;
                plans.push(None);
            }
        }
    }
    Ok((builder.build(), plans))
}
