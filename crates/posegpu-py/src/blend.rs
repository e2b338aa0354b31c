//! Blend spaces: samples at points of a 1-D or 2-D parameter space, each naming a clip, and the
//! weights a parameter gives them (posegpu::blend::space). A crowd agent can follow one.

use glam::Vec2;
use posegpu::blend::space::{BlendGrid, BlendSpace, BlendSpace1D as Space1D, BlendTriangulation};
use pyo3::prelude::*;

use crate::arrays::{clip_ref, ClipRef};
use crate::errors::{arg_error, guard, to_py};

/// What both kinds share: the space, and each of its samples' place in the caller's order.
pub struct Space {
    pub space: BlendSpace,
    /// `order[k]`: the caller's index of the space's sample `k`.
    order: Vec<usize>,
    pub clips: Vec<ClipRef>,
    dims: usize,
}

impl Space {
    /// One weight per sample, in the caller's order (zeros included).
    pub fn weights(&self, x: f32, y: f32) -> Vec<f32> {
        let mut w = vec![0.0; self.order.len()];
        for s in self.space.weights(Vec2::new(x, y)) {
            w[self.order[s.sample]] = s.weight;
        }
        w
    }

    /// The parameter's coordinates checked: finite, and as many as the space has.
    pub fn parameter(&self, x: f32, y: Option<f32>) -> PyResult<(f32, f32)> {
        let y = match (self.dims, y) {
            (1, None) => 0.0,
            (1, Some(_)) => return Err(arg_error("y: a 1-D blend space takes x alone")),
            (_, Some(y)) => y,
            (_, None) => return Err(arg_error("y: a 2-D blend space needs x and y")),
        };
        for (name, v) in [("x", x), ("y", y)] {
            if !v.is_finite() {
                return Err(arg_error(format!(
                    "{name} is {v}: parameters must be finite"
                )));
            }
        }
        Ok((x, y))
    }
}

/// Samples on a line: `BlendSpace1D([(x, clip), ...])`, a clip an index or a name. A
/// parameter between two samples weights them linearly; one beyond the ends is clamped.
#[pyclass(module = "posegpu", frozen)]
pub struct BlendSpace1D {
    pub inner: Space,
}

#[pymethods]
impl BlendSpace1D {
    #[new]
    fn new(samples: Vec<Bound<'_, PyAny>>) -> PyResult<Self> {
        guard(|| {
            let mut xs = Vec::new();
            let mut clips = Vec::new();
            for (i, s) in samples.iter().enumerate() {
                let (x, clip): (f32, Bound<'_, PyAny>) = s
                    .extract()
                    .map_err(|_| arg_error(format!("samples[{i}]: expected (x, clip)")))?;
                xs.push(x);
                clips.push(clip_ref(&clip, &format!("samples[{i}]"))?);
            }
            let space = Space1D::new(&xs).map_err(to_py)?;
            Ok(Self {
                inner: Space {
                    space: space.into(),
                    order: (0..xs.len()).collect(),
                    clips,
                    dims: 1,
                },
            })
        })
    }

    /// One weight per sample, in the order given: non-negative, summing to 1.
    fn weights(&self, x: f32) -> PyResult<Vec<f32>> {
        guard(|| {
            let (x, y) = self.inner.parameter(x, None)?;
            Ok(self.inner.weights(x, y))
        })
    }

    /// The number of samples.
    fn __len__(&self) -> usize {
        self.inner.clips.len()
    }

    fn __repr__(&self) -> String {
        format!("<posegpu.BlendSpace1D: {} samples>", self.inner.clips.len())
    }
}

/// Samples in a plane: `BlendSpace2D([(x, y, clip), ...])`. `kind="triangulated"` (the
/// default) triangulates them (Delaunay) and weights a parameter barycentrically, clamping
/// one outside to the nearest point of the hull, as UE's blend spaces do; `kind="grid"` needs
/// the samples to fill a rectangular grid and weights bilinearly.
#[pyclass(module = "posegpu", frozen)]
pub struct BlendSpace2D {
    pub inner: Space,
}

#[pymethods]
impl BlendSpace2D {
    #[new]
    #[pyo3(signature = (samples, kind="triangulated"))]
    fn new(samples: Vec<Bound<'_, PyAny>>, kind: &str) -> PyResult<Self> {
        guard(|| {
            let mut points = Vec::new();
            let mut clips = Vec::new();
            for (i, s) in samples.iter().enumerate() {
                let (x, y, clip): (f32, f32, Bound<'_, PyAny>) = s
                    .extract()
                    .map_err(|_| arg_error(format!("samples[{i}]: expected (x, y, clip)")))?;
                points.push(Vec2::new(x, y));
                clips.push(clip_ref(&clip, &format!("samples[{i}]"))?);
            }
            let (space, order) = match kind {
                "triangulated" => {
                    let t = BlendTriangulation::new(&points).map_err(to_py)?;
                    (t.into(), (0..points.len()).collect())
                }
                "grid" => grid(&points)?,
                _ => {
                    return Err(arg_error(format!(
                        "kind: '{kind}' is not 'triangulated' or 'grid'"
                    )))
                }
            };
            Ok(Self {
                inner: Space {
                    space,
                    order,
                    clips,
                    dims: 2,
                },
            })
        })
    }

    /// One weight per sample, in the order given: non-negative, summing to 1.
    fn weights(&self, x: f32, y: f32) -> PyResult<Vec<f32>> {
        guard(|| {
            let (x, y) = self.inner.parameter(x, Some(y))?;
            Ok(self.inner.weights(x, y))
        })
    }

    /// The number of samples.
    fn __len__(&self) -> usize {
        self.inner.clips.len()
    }

    fn __repr__(&self) -> String {
        format!("<posegpu.BlendSpace2D: {} samples>", self.inner.clips.len())
    }
}

/// A grid over points that fill one: its axes, and each grid corner's caller index.
fn grid(points: &[Vec2]) -> PyResult<(BlendSpace, Vec<usize>)> {
    if let Some(k) = points.iter().position(|p| !p.is_finite()) {
        return Err(arg_error(format!(
            "samples[{k}] is at ({}, {}): positions must be finite",
            points[k].x, points[k].y
        )));
    }
    let axis = |f: fn(&Vec2) -> f32| {
        let mut v: Vec<f32> = points.iter().map(f).collect();
        v.sort_by(f32::total_cmp);
        v.dedup();
        v
    };
    let (xs, ys) = (axis(|p| p.x), axis(|p| p.y));
    let mut order = vec![usize::MAX; xs.len() * ys.len()];
    if order.len() != points.len() {
        return Err(arg_error(format!(
            "samples: {} samples do not fill a grid of {} x {} positions",
            points.len(),
            xs.len(),
            ys.len()
        )));
    }
    for (k, p) in points.iter().enumerate() {
        let i = xs.iter().position(|&x| x == p.x).expect("an axis position");
        let j = ys.iter().position(|&y| y == p.y).expect("an axis position");
        if order[j * xs.len() + i] != usize::MAX {
            return Err(arg_error(format!(
                "samples[{k}]: another sample is at ({}, {}) already",
                p.x, p.y
            )));
        }
        order[j * xs.len() + i] = k;
    }
    let g = BlendGrid::new(&xs, &ys).map_err(to_py)?;
    Ok((g.into(), order))
}
