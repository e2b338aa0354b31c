//! Assets: a skeleton and its clips, loaded from a file or from bytes, or built in code
//! (`posegpu.procedural`).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use numpy::{PyArray1, PyArray2};
use posegpu::export::{write_glb, Template};
use posegpu::import::Format;
use pyo3::prelude::*;
use pyo3::types::{PyByteArray, PyBytes, PyMemoryView};

use crate::arrays::{f32_vector, transform_rows};
use crate::errors::{arg_error, detached, guard};

/// A skeleton and the clips that animate it.
///
/// Made by `posegpu.load`, `posegpu.procedural.humanoid()` or `posegpu.retarget`. Bones are
/// listed parents first, in the order of `posegpu eval`'s JSON.
#[pyclass(module = "posegpu", frozen)]
pub struct Asset {
    pub inner: Arc<posegpu::Asset>,
    /// The glTF file the skeleton's nodes come from (what `save_glb` keeps meshes and skins
    /// of); `None` for BVH, procedural assets and bytes.
    pub template: Option<PathBuf>,
    /// How it is named in reprs and reports.
    pub label: String,
}

impl Asset {
    pub fn new(asset: posegpu::Asset, template: Option<PathBuf>, label: String) -> Self {
        Self {
            inner: Arc::new(asset),
            template,
            label,
        }
    }
}

#[pymethods]
impl Asset {
    /// Bone names, parents first (the order of `posegpu eval`'s JSON and of every pose array).
    #[getter]
    fn bone_names(&self) -> Vec<String> {
        self.inner.skeleton.names().to_vec()
    }

    /// Each bone's parent index as int32, -1 for a root.
    #[getter]
    fn parents<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray1<i32>> {
        PyArray1::from_slice(py, self.inner.skeleton.parents())
    }

    /// The clips' names, in order.
    #[getter]
    fn clip_names(&self) -> Vec<String> {
        self.inner
            .clips
            .iter()
            .map(|c| c.name().to_string())
            .collect()
    }

    /// The clips' durations in seconds, float32.
    #[getter]
    fn clip_durations<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray1<f32>> {
        f32_vector(py, self.inner.clips.iter().map(|c| c.duration()).collect())
    }

    /// The number of bones.
    #[getter]
    fn bone_count(&self) -> usize {
        self.inner.skeleton.len()
    }

    /// The reference (node) pose's local transforms, float32 (B, 10): quaternion x y z w,
    /// translation x y z, scale x y z.
    #[getter]
    fn rest<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray2<f32>> {
        transform_rows(py, self.inner.skeleton.rest())
    }

    /// The file it was loaded from, when a glTF file (`save_glb` keeps its meshes), else None.
    #[getter]
    fn path(&self) -> Option<String> {
        self.template.as_ref().map(|p| p.display().to_string())
    }

    /// The index of the bone named `name`.
    fn find_bone(&self, name: &str) -> PyResult<usize> {
        self.inner.skeleton.find(name).ok_or_else(|| {
            arg_error(format!(
                "name: no bone named '{name}' in {} ({} bones)",
                self.label,
                self.inner.skeleton.len()
            ))
        })
    }

    /// Writes the skeleton and its clips as a binary glTF file. An asset loaded from a glTF
    /// file (or retargeted onto one) keeps that file's meshes, skins and materials; others are
    /// written as one node per bone and a skin over them.
    fn save_glb(&self, py: Python<'_>, path: PathBuf) -> PyResult<()> {
        let asset = self.inner.clone();
        let template = self.template.clone();
        detached(py, move || save(&asset, template.as_deref(), &path))
    }

    /// Each clip's notifies (UE's anim notifies: named time markers a crowd reports when a
    /// player passes them): {clip name: [(notify name, seconds), ...]}, clips without any left
    /// out.
    #[getter]
    fn notifies(&self) -> std::collections::BTreeMap<String, Vec<(String, f32)>> {
        self.inner
            .clips
            .iter()
            .filter(|c| !c.notifies().is_empty())
            .map(|c| {
                let list = c
                    .notifies()
                    .iter()
                    .map(|n| (n.name.clone(), n.time))
                    .collect();
                (c.name().to_string(), list)
            })
            .collect()
    }

    /// A copy with notifies added: `notifies` maps clip names to `[(name, seconds), ...]`, or
    /// is the path of a sidecar JSON file mapping clip names to `[{"name", "time"}, ...]`
    /// (`posegpu::import::apply_sidecar`). A clip the asset lacks, or a time outside a clip's
    /// range, is an error and changes nothing.
    fn with_notifies(&self, py: Python<'_>, notifies: &Bound<'_, PyAny>) -> PyResult<Self> {
        guard(|| {
            let mut asset = (*self.inner).clone();
            if let Ok(map) =
                notifies.extract::<std::collections::BTreeMap<String, Vec<(String, f32)>>>()
            {
                for (clip, list) in map {
                    let k = posegpu::Clip::find(&asset.clips, &clip)
                        .map_err(|e| arg_error(format!("notifies: {e}")))?;
                    let mut c = asset.clips[k].clone();
                    for (name, time) in list {
                        c = c.with_notify(name, time).map_err(crate::errors::to_py)?;
                    }
                    asset.clips[k] = c;
                }
            } else {
                let path: PathBuf = notifies.extract().map_err(|_| {
                    arg_error("notifies: expected {clip: [(name, seconds), ...]} or a sidecar path")
                })?;
                asset = detached(py, move || {
                    posegpu::import::apply_sidecar(&mut asset, &path)?;
                    Ok(asset)
                })?;
            }
            Ok(Self::new(asset, self.template.clone(), self.label.clone()))
        })
    }

    fn __len__(&self) -> usize {
        self.inner.clips.len()
    }

    fn __repr__(&self) -> String {
        format!(
            "<posegpu.Asset {}: {} bones, {} clips>",
            self.label,
            self.inner.skeleton.len(),
            self.inner.clips.len()
        )
    }
}

/// Writes `asset`'s clips as a .glb at `path`, over `template` where it has one.
pub fn save(asset: &posegpu::Asset, template: Option<&Path>, path: &Path) -> posegpu::Result<()> {
    let template = template
        .zip(asset.nodes.as_deref())
        .map(|(path, nodes)| Template { path, nodes });
    write_glb(path, &asset.skeleton, &asset.clips, template.as_ref())
}

/// Loads a character or motion capture: a `.glb`, `.gltf` (the first skin) or `.bvh` file by
/// path, or the same formats from bytes with `format` ("glb", "gltf" or "bvh"). `name` names
/// bytes in errors (and a BVH's clip). A `.gltf` from bytes can only use embedded (data URI)
/// buffers.
#[pyfunction]
#[pyo3(signature = (source, format=None, name=None))]
pub fn load(
    py: Python<'_>,
    source: &Bound<'_, PyAny>,
    format: Option<&str>,
    name: Option<&str>,
) -> PyResult<Asset> {
    guard(|| {
        if let Some(bytes) = as_bytes(source)? {
            let format = format.map(str::to_ascii_lowercase).ok_or_else(|| {
                arg_error("format: loading bytes needs format='glb', 'gltf' or 'bvh'")
            })?;
            let Some(kind) = Format::from_name(&format) else {
                return Err(arg_error(format!(
                    "format: '{format}' is not one of 'glb', 'gltf', 'bvh'"
                )));
            };
            let label = format!("{}.{format}", name.unwrap_or("<bytes>"));
            return load_bytes(py, bytes, kind, &label);
        }
        let path: PathBuf = source.extract().map_err(|_| {
            arg_error(format!(
                "source: expected a path (str or os.PathLike) or bytes, got {}",
                source
                    .get_type()
                    .name()
                    .map(|n| n.to_string())
                    .unwrap_or_default()
            ))
        })?;
        if let Some(f) = format {
            let ext = path.extension().and_then(|e| e.to_str()).unwrap_or("");
            if !ext.eq_ignore_ascii_case(f) {
                return Err(arg_error(format!(
                    "format: '{f}' does not match the file's extension ('{}'); the extension decides",
                    path.display()
                )));
            }
        }
        let p = path.clone();
        let asset = detached(py, move || posegpu::import::load(&p))?;
        let gltf = Format::of_path(&path) == Some(Format::Gltf);
        let label = path.display().to_string();
        Ok(Asset::new(asset, gltf.then_some(path), label))
    })
}

fn as_bytes(source: &Bound<'_, PyAny>) -> PyResult<Option<Vec<u8>>> {
    if let Ok(b) = source.cast::<PyBytes>() {
        return Ok(Some(b.as_bytes().to_vec()));
    }
    if source.is_instance_of::<PyByteArray>() || source.is_instance_of::<PyMemoryView>() {
        return Ok(Some(
            source
                .call_method0("tobytes")
                .or_else(|_| {
                    source
                        .py()
                        .import("builtins")?
                        .getattr("bytes")?
                        .call1((source,))
                })?
                .extract()?,
        ));
    }
    Ok(None)
}

/// Bytes parsed as `format` in memory (`posegpu::import::load_bytes`), `label` naming them in
/// errors.
fn load_bytes(py: Python<'_>, bytes: Vec<u8>, format: Format, label: &str) -> PyResult<Asset> {
    let name = PathBuf::from(label);
    let asset = detached(py, move || {
        posegpu::import::load_bytes(&bytes, format, &name)
    })?;
    Ok(Asset::new(asset, None, label.to_string()))
}

/// The procedural humanoid of `posegpu::procedural`: 67 bones and four clips (idle, walk, run,
/// wave), the character of `posegpu`'s demo and benchmarks.
#[pyfunction]
pub fn humanoid() -> Asset {
    Asset::new(
        posegpu::procedural::humanoid_asset(),
        None,
        "procedural humanoid".into(),
    )
}

/// The humanoid with other proportions and rest orientations (seeded, deterministic), with the
/// humanoid's clips: a retargeting target.
#[pyfunction]
pub fn humanoid_variant(seed: u64) -> Asset {
    let skeleton = posegpu::procedural::humanoid_variant(seed);
    let clips = posegpu::procedural::humanoid_clips(&skeleton);
    let base = posegpu::procedural::humanoid_asset();
    Asset::new(
        posegpu::Asset {
            skeleton,
            clips,
            nodes: None,
            frame: base.frame,
        },
        None,
        format!("procedural humanoid variant {seed}"),
    )
}

/// A random skeleton of `bones` bones with `clips` clips (seeded): synthetic benchmarks.
#[pyfunction]
#[pyo3(signature = (seed, bones, clips=1))]
pub fn random_asset(seed: u64, bones: usize, clips: usize) -> PyResult<Asset> {
    if bones == 0 {
        return Err(arg_error("bones: must be at least 1"));
    }
    Ok(Asset::new(
        posegpu::procedural::random_asset(seed, bones, clips),
        None,
        format!("random asset {seed} ({bones} bones)"),
    ))
}
