//! Evaluating instances (a clip at a time each) on the CPU twin or the GPU, and the poses that
//! come back.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, Weak};
use std::time::Instant;

use numpy::{PyArray2, PyArray3, PyArray4};
use posegpu::{
    AnimLibrary, ClipSample, CpuEvaluator, GpuEvaluator, GpuOptions, IkWeights, PoseBatch, Poses,
};
use pyo3::prelude::*;

use crate::arrays::ClipRef;
use crate::arrays::{broadcast_len, clip_refs, f32_matrix, floats, skinning_array, xform_array};
use crate::errors::{arg_error, detached, guard};
use crate::gpu::{self, Backend};
use crate::library::{ik_arg, Library};
use crate::recycle::Recycler;

/// A clip reference checked against `lib` (`what` names it in an error): an index in range,
/// or a name found.
pub fn resolve_clip(lib: &AnimLibrary, r: &ClipRef, what: &str) -> PyResult<u32> {
    let count = lib.clip_count();
    match r {
        ClipRef::Index(c) if (0..count as i64).contains(c) => Ok(*c as u32),
        ClipRef::Index(c) => Err(arg_error(format!(
            "{what} is {c}: the library has {count} clips (0..{})",
            count.saturating_sub(1)
        ))),
        ClipRef::Name(n) => lib
            .find_clip(n)
            .map(|c| c.0)
            .map_err(|e| arg_error(format!("{what}: {e}"))),
    }
}

/// Clip references checked against `lib` ([`resolve_clip`]), each name looked up once.
pub fn resolve_clips(lib: &AnimLibrary, refs: Vec<ClipRef>, name: &str) -> PyResult<Vec<u32>> {
    let mut names: HashMap<String, u32> = HashMap::new();
    refs.into_iter()
        .enumerate()
        .map(|(i, r)| {
            if let ClipRef::Name(n) = &r {
                if let Some(&c) = names.get(n) {
                    return Ok(c);
                }
            }
            let c = resolve_clip(lib, &r, &format!("{name}[{i}]"))?;
            if let ClipRef::Name(n) = r {
                names.insert(n, c);
            }
            Ok(c)
        })
        .collect()
}

/// Evaluates instances of a library, each a clip at a time, on the CPU twin (every core) or
/// the GPU (`backend="gpu"`: wgpu's best adapter, lavapipe where there is no GPU).
///
/// The GIL is released while it evaluates, so other Python threads run meanwhile.
#[pyclass(module = "posegpu", frozen)]
pub struct Evaluator {
    library: Py<Library>,
    lib: Arc<AnimLibrary>,
    backend: Backend,
    gpu: Option<Mutex<GpuEvaluator>>,
    /// The buffers of poses Python has dropped, evaluated into again.
    recycler: Arc<Recycler>,
    /// Seconds the last evaluate spent in posegpu's evaluator, as f64 bits.
    seconds: std::sync::atomic::AtomicU64,
}

#[pymethods]
impl Evaluator {
    #[new]
    #[pyo3(signature = (library, backend="cpu"))]
    fn new(py: Python<'_>, library: Py<Library>, backend: &str) -> PyResult<Self> {
        guard(|| {
            let backend = Backend::parse(backend)?;
            let lib = library.get().lib.clone();
            let gpu = match backend {
                Backend::Cpu => None,
                Backend::Gpu => {
                    let ctx = gpu::context(py)?;
                    let l = lib.clone();
                    let g = detached(py, move || {
                        GpuEvaluator::new(&ctx, &l, 1, &GpuOptions::default())
                    })?;
                    Some(Mutex::new(g))
                }
            };
            Ok(Self {
                library,
                lib,
                backend,
                gpu,
                recycler: Arc::default(),
                seconds: Default::default(),
            })
        })
    }

    /// "cpu" or "gpu".
    #[getter]
    fn backend(&self) -> &'static str {
        self.backend.name()
    }

    /// The library it evaluates.
    #[getter]
    fn library(&self, py: Python<'_>) -> Py<Library> {
        self.library.clone_ref(py)
    }

    /// Seconds the last `evaluate` spent inside posegpu's evaluator (the CPU twin's evaluate;
    /// on the GPU, the upload, passes and read-back): the Rust side of the call, to set
    /// against its time through Python.
    #[getter]
    fn rust_seconds(&self) -> f64 {
        f64::from_bits(self.seconds.load(std::sync::atomic::Ordering::Relaxed))
    }

    /// Evaluates one instance per (clip, time): `clips` an int, a name, or an array (N,) of
    /// either; `times` a float or an array (N,) in seconds (a scalar is shared by every
    /// instance). Times are clamped to each clip's range, or wrapped into it with `loop=True`.
    /// Instances playing retargeted clips get IK at the library's weights, or `ik`'s.
    /// Returns a `Pose` of N instances.
    #[pyo3(signature = (clips, times, r#loop=false, ik=None))]
    fn evaluate(
        &self,
        py: Python<'_>,
        clips: &Bound<'_, PyAny>,
        times: &Bound<'_, PyAny>,
        r#loop: bool,
        ik: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Pose> {
        guard(|| {
            let clips = clip_refs(clips, "clips")?;
            let times = floats(times, "times")?;
            let n = broadcast_len((&clips, "clips"), (&times, "times"))?;
            let clip_ids = resolve_clips(&self.lib, clips.expand(n), "clips")?;
            let times = times.expand(n);
            let library = self.library.get();
            let weights = match ik {
                Some(i) if !i.is_none() => ik_arg(Some(i))?,
                _ => library.ik,
            };
            let samples: Vec<ClipSample> = clip_ids
                .iter()
                .zip(&times)
                .map(|(&c, &t)| ClipSample::new(c, t, r#loop))
                .collect();
            let ik = (library.has_plans && weights != IkWeights::NONE).then_some(weights);
            let (poses, seconds) = self.run(py, samples, ik)?;
            self.seconds
                .store(seconds.to_bits(), std::sync::atomic::Ordering::Relaxed);
            let home = Arc::downgrade(&self.recycler);
            Ok(Pose::new(poses, Some(home), self.gpu.is_none()))
        })
    }

    fn __repr__(&self) -> String {
        format!(
            "<posegpu.Evaluator on {}: {} bones, {} clips>",
            self.backend.name(),
            self.lib.bone_count(),
            self.lib.clip_count()
        )
    }
}

impl Evaluator {
    /// Evaluates without the GIL; the seconds spent in posegpu's evaluator.
    fn run(
        &self,
        py: Python<'_>,
        samples: Vec<ClipSample>,
        ik: Option<IkWeights>,
    ) -> PyResult<(Poses, f64)> {
        let lib = &*self.lib;
        let gpu = self.gpu.as_ref();
        let recycler = &*self.recycler;
        detached(py, move || {
            // IK is a layer, which only a batch carries; plain samples go straight in.
            let batch = ik.map(|w| {
                let mut batch = PoseBatch::with_capacity(samples.len(), 3);
                for s in &samples {
                    batch.push_blend(std::slice::from_ref(s)).ik(w);
                }
                batch
            });
            let start = Instant::now();
            let poses = match gpu {
                None => {
                    let mut poses = recycler.take_poses();
                    let cpu = CpuEvaluator::new(lib);
                    match &batch {
                        Some(b) => cpu.evaluate(b, &mut poses)?,
                        None => cpu.evaluate(samples.as_slice(), &mut poses)?,
                    }
                    poses
                }
                Some(g) => {
                    let mut g = g.lock().unwrap_or_else(|e| e.into_inner());
                    match &batch {
                        Some(b) => g.evaluate(b)?,
                        None => g.evaluate(samples.as_slice())?,
                    }
                    g.read_back()?
                }
            };
            Ok((poses, start.elapsed().as_secs_f64()))
        })
    }
}

/// Evaluated poses of N instances of a B-bone skeleton. Each array is made on first access
/// (and kept): `component` and `locals` float32 (N, B, 10) = quaternion x y z w, translation
/// x y z, scale x y z; `skinning` float32 (N, B, 3, 4), the component-space matrix times the
/// inverse bind matrix, rows [r0 | tx], [r1 | ty], [r2 | tz]; `curves` float32 (N, C).
#[pyclass(module = "posegpu")]
pub struct Pose {
    poses: Poses,
    /// The evaluator whose buffers these are: arrays are made in its kept buffers, and the
    /// poses go back to it when Python drops them (when `recycle`).
    home: Option<Weak<Recycler>>,
    recycle: bool,
    instances: usize,
    component: Option<Py<PyArray3<f32>>>,
    locals: Option<Py<PyArray3<f32>>>,
    skinning: Option<Py<PyArray4<f32>>>,
    curves: Option<Py<PyArray2<f32>>>,
}

impl Drop for Pose {
    fn drop(&mut self) {
        if let Some(r) = self
            .home
            .as_ref()
            .filter(|_| self.recycle)
            .and_then(Weak::upgrade)
        {
            r.give_poses(std::mem::take(&mut self.poses));
        }
    }
}

impl Pose {
    /// Poses from an evaluator's `home` (whose kept buffers the arrays use; with `recycle`,
    /// the poses themselves go back to it), or none.
    pub fn new(poses: Poses, home: Option<Weak<Recycler>>, recycle: bool) -> Self {
        Self {
            instances: poses.instance_count(),
            home,
            recycle,
            poses,
            component: None,
            locals: None,
            skinning: None,
            curves: None,
        }
    }
}

#[pymethods]
impl Pose {
    /// Component-space transforms, float32 (N, B, 10): relative to the space above the
    /// skeleton's top joint, as `posegpu eval` gives them.
    #[getter]
    fn component<'py>(&mut self, py: Python<'py>) -> PyResult<Bound<'py, PyArray3<f32>>> {
        if self.component.is_none() {
            let (n, b) = (self.instances, self.poses.bone_count);
            let a = xform_array(py, &self.poses.component, n, b, self.home.as_ref())?;
            self.component = Some(a.unbind());
        }
        Ok(self
            .component
            .as_ref()
            .expect("made above")
            .bind(py)
            .clone())
    }

    /// Local transforms, float32 (N, B, 10), as the clips were sampled (and retargeted).
    #[getter]
    fn locals<'py>(&mut self, py: Python<'py>) -> PyResult<Bound<'py, PyArray3<f32>>> {
        if self.locals.is_none() {
            let (n, b) = (self.instances, self.poses.bone_count);
            let a = xform_array(py, &self.poses.locals, n, b, self.home.as_ref())?;
            self.locals = Some(a.unbind());
        }
        Ok(self.locals.as_ref().expect("made above").bind(py).clone())
    }

    /// Skinning matrices, float32 (N, B, 3, 4): NumPy views the evaluator's own buffer.
    #[getter]
    fn skinning<'py>(&mut self, py: Python<'py>) -> PyResult<Bound<'py, PyArray4<f32>>> {
        if self.skinning.is_none() {
            let (n, b) = (self.instances, self.poses.bone_count);
            let m = std::mem::take(&mut self.poses.skinning);
            self.skinning = Some(skinning_array(py, m, n, b, self.home.as_ref())?.unbind());
        }
        Ok(self.skinning.as_ref().expect("made above").bind(py).clone())
    }

    /// Curve values, float32 (N, C), in the library's `curve_names` order.
    #[getter]
    fn curves<'py>(&mut self, py: Python<'py>) -> PyResult<Bound<'py, PyArray2<f32>>> {
        if self.curves.is_none() {
            let c = std::mem::take(&mut self.poses.curves);
            self.curves = Some(f32_matrix(py, c, self.instances, self.poses.curve_count)?.unbind());
        }
        Ok(self.curves.as_ref().expect("made above").bind(py).clone())
    }

    /// N, the number of instances.
    #[getter]
    fn instance_count(&self) -> usize {
        self.instances
    }

    /// B, the number of bones.
    #[getter]
    fn bone_count(&self) -> usize {
        self.poses.bone_count
    }

    fn __len__(&self) -> usize {
        self.instances
    }

    fn __repr__(&self) -> String {
        format!(
            "<posegpu.Pose: {} instances x {} bones>",
            self.instances, self.poses.bone_count
        )
    }
}
