//! Blend spaces: sample points in a 1D or 2D parameter space and the weights an input gives.
//!
//! Samples are referred to by index only (the caller's order); this module knows nothing about
//! clips. Every `weights` gives non-negative weights that sum to 1 (within f32 rounding), with
//! zero weights left out. An input outside the space is clamped to it, as each type says.
//! Callers are expected to pass finite inputs; a non-finite one does not panic but is weighted
//! as a clamped point (NaN as the minimum), as each type documents.

use std::cmp::Ordering;

use glam::{DVec2, Vec2};
use spade::{DelaunayTriangulation, Point2, PositionInTriangulation, Triangulation};

use crate::error::{Error, Result};

/// One sample's share of a blend.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SampleWeight {
    /// The sample's index, in the order the blend space was built from.
    pub sample: usize,
    /// The sample's weight, over 0; a blend's weights sum to 1.
    pub weight: f32,
}

fn bad(what: impl Into<String>) -> Error {
    Error::BlendSpace { what: what.into() }
}

/// Adds a weight unless it is zero (or NaN, which cannot arise from clamped inputs).
fn push(out: &mut Vec<SampleWeight>, sample: usize, weight: f32) {
    if weight > 0.0 {
        out.push(SampleWeight { sample, weight });
    }
}

/// Where `v` falls on a non-empty, strictly increasing axis, clamped to its ends: the entry at
/// or below it and the fraction of the way to the next entry (0 at the last entry).
fn locate(axis: &[f32], v: f32) -> (usize, f64) {
    let last = axis.len() - 1;
    // max/min rather than clamp: clamp keeps NaN, f32::max maps it to the minimum.
    let v = v.max(axis[0]).min(axis[last]);
    // The first entry above v: at least 1, as axis[0] <= v.
    let hi = axis.partition_point(|&a| a <= v);
    if hi > last {
        return (last, 0.0);
    }
    let lo = hi - 1;
    // In f64 so that far-apart positions cannot overflow the span.
    let (a, b) = (f64::from(axis[lo]), f64::from(axis[hi]));
    (lo, (f64::from(v) - a) / (b - a))
}

/// Samples on a line: an input is weighted between its two neighbours.
#[derive(Clone, Debug)]
pub struct BlendSpace1D {
    /// Sample positions, increasing.
    positions: Vec<f32>,
    /// The caller's index of the sample at each entry of `positions`.
    samples: Vec<usize>,
}

impl BlendSpace1D {
    /// Samples at `positions`, in any order; sample `i` is at `positions[i]`.
    pub fn new(positions: &[f32]) -> Result<Self> {
        if positions.is_empty() {
            return Err(bad("a 1D blend space needs at least one sample"));
        }
        if let Some((i, p)) = positions.iter().enumerate().find(|(_, p)| !p.is_finite()) {
            return Err(bad(format!("sample {i} is at {p}, not a finite position")));
        }
        let mut samples: Vec<usize> = (0..positions.len()).collect();
        // Finite, so partial_cmp always answers (and takes -0 and 0 as one position).
        samples.sort_by(|&a, &b| {
            positions[a]
                .partial_cmp(&positions[b])
                .unwrap_or(Ordering::Equal)
        });
        for pair in samples.windows(2) {
            // The sort is stable, so a < b.
            let (a, b) = (pair[0], pair[1]);
            if positions[a] == positions[b] {
                return Err(bad(format!(
                    "samples {a} and {b} are both at position {}",
                    positions[a]
                )));
            }
        }
        let positions = samples.iter().map(|&i| positions[i]).collect();
        Ok(Self { positions, samples })
    }

    /// The number of samples.
    pub fn sample_count(&self) -> usize {
        self.samples.len()
    }

    /// The weights at `x`; see [`weights_into`](Self::weights_into).
    pub fn weights(&self, x: f32) -> Vec<SampleWeight> {
        let mut out = Vec::with_capacity(2);
        self.weights_into(x, &mut out);
        out
    }

    /// Replaces `out` with the weights at `x`, clamped to the samples' range (NaN: the minimum):
    /// the two neighbours linearly, lower position first, or one sample with weight 1 on a
    /// sample or at or beyond an end.
    pub fn weights_into(&self, x: f32, out: &mut Vec<SampleWeight>) {
        out.clear();
        let (lo, t) = locate(&self.positions, x);
        push(out, self.samples[lo], (1.0 - t) as f32);
        if t > 0.0 {
            push(out, self.samples[lo + 1], t as f32);
        }
    }
}

fn check_axis(name: &str, axis: &[f32]) -> Result<()> {
    if axis.is_empty() {
        return Err(bad(format!("grid {name} axis has no positions")));
    }
    if let Some((i, v)) = axis.iter().enumerate().find(|(_, v)| !v.is_finite()) {
        return Err(bad(format!(
            "grid {name} axis position {i} is {v}, not finite"
        )));
    }
    if let Some((i, pair)) = axis.windows(2).enumerate().find(|(_, p)| p[1] <= p[0]) {
        return Err(bad(format!(
            "grid {name} axis positions must increase strictly, but position {} ({}) follows position {i} ({})",
            i + 1,
            pair[1],
            pair[0]
        )));
    }
    Ok(())
}

/// Samples on a rectangular grid: an input is weighted bilinearly over the cell holding it.
#[derive(Clone, Debug)]
pub struct BlendGrid {
    x: Vec<f32>,
    y: Vec<f32>,
}

impl BlendGrid {
    /// A grid with the given axis positions, each strictly increasing with at least one entry.
    /// The sample at corner `(i, j)` (at `(x[i], y[j])`) has index `j * x.len() + i`.
    pub fn new(x: &[f32], y: &[f32]) -> Result<Self> {
        check_axis("x", x)?;
        check_axis("y", y)?;
        Ok(Self {
            x: x.to_vec(),
            y: y.to_vec(),
        })
    }

    /// The number of samples: one per grid corner.
    pub fn sample_count(&self) -> usize {
        self.x.len() * self.y.len()
    }

    /// The weights at `p`; see [`weights_into`](Self::weights_into).
    pub fn weights(&self, p: Vec2) -> Vec<SampleWeight> {
        let mut out = Vec::with_capacity(4);
        self.weights_into(p, &mut out);
        out
    }

    /// Replaces `out` with the weights at `p`, each coordinate clamped to its axis (NaN: the
    /// axis minimum): bilinear over the cell's corners, in the order (i, j), (i+1, j),
    /// (i, j+1), (i+1, j+1), leaving out those with weight 0 (on a cell edge or corner, or
    /// along a one-position axis).
    pub fn weights_into(&self, p: Vec2, out: &mut Vec<SampleWeight>) {
        out.clear();
        let (i, tx) = locate(&self.x, p.x);
        let (j, ty) = locate(&self.y, p.y);
        let n = self.x.len();
        // A corner past the last entry of an axis only comes with weight 0, and is left out.
        let corners = [
            (i, j, (1.0 - tx) * (1.0 - ty)),
            (i + 1, j, tx * (1.0 - ty)),
            (i, j + 1, (1.0 - tx) * ty),
            (i + 1, j + 1, tx * ty),
        ];
        for (ci, cj, w) in corners {
            push(out, cj * n + ci, w as f32);
        }
    }
}

/// Samples scattered in the plane: a Delaunay triangulation of them (built by `spade`, whose
/// predicates are exact), and inside it barycentric weights.
#[derive(Clone, Debug)]
pub struct BlendTriangulation {
    points: Vec<Vec2>,
    delaunay: DelaunayTriangulation<Point2<f64>>,
    /// Counter-clockwise triangles of sample indices.
    triangles: Vec<[usize; 3]>,
    /// Bounding box of the samples, where non-finite inputs are clamped to.
    min: Vec2,
    max: Vec2,
}

impl BlendTriangulation {
    /// Triangulates the samples at `points` (sample `i` at `points[i]`). Needs at least three
    /// distinct, finite points, not all on one line.
    pub fn new(points: &[Vec2]) -> Result<Self> {
        let n = points.len();
        if n < 3 {
            return Err(bad(format!(
                "a scattered 2D blend space needs at least 3 samples, got {n}"
            )));
        }
        if let Some((i, p)) = points.iter().enumerate().find(|(_, p)| !p.is_finite()) {
            return Err(bad(format!(
                "sample {i} is at ({}, {}), not a finite point",
                p.x, p.y
            )));
        }
        for (i, p) in points.iter().enumerate() {
            if let Some(j) = points[i + 1..].iter().position(|q| q == p) {
                return Err(bad(format!(
                    "samples {i} and {} are both at ({}, {})",
                    i + 1 + j,
                    p.x,
                    p.y
                )));
            }
        }
        // Distinct points, so vertex handles are the samples' indices, in order.
        let mut delaunay = DelaunayTriangulation::<Point2<f64>>::new();
        for (i, p) in points.iter().enumerate() {
            delaunay
                .insert(Point2::new(f64::from(p.x), f64::from(p.y)))
                .map_err(|e| {
                    bad(format!(
                        "sample {i} at ({}, {}) cannot be triangulated: {e:?}",
                        p.x, p.y
                    ))
                })?;
        }
        let triangles: Vec<[usize; 3]> = delaunay
            .inner_faces()
            .map(|f| f.vertices().map(|v| v.fix().index()))
            .collect();
        if triangles.is_empty() {
            return Err(bad(format!(
                "all {n} samples lie on one line, so no triangle can be made (use a 1D blend space)"
            )));
        }
        let min = points.iter().fold(points[0], |m, &p| m.min(p));
        let max = points.iter().fold(points[0], |m, &p| m.max(p));
        Ok(Self {
            points: points.to_vec(),
            delaunay,
            triangles,
            min,
            max,
        })
    }

    /// The number of samples.
    pub fn sample_count(&self) -> usize {
        self.points.len()
    }

    /// The triangles, as sample indices counter-clockwise.
    pub fn triangles(&self) -> &[[usize; 3]] {
        &self.triangles
    }

    /// The weights at `p`; see [`weights_into`](Self::weights_into).
    pub fn weights(&self, p: Vec2) -> Vec<SampleWeight> {
        let mut out = Vec::with_capacity(3);
        self.weights_into(p, &mut out);
        out
    }

    /// Replaces `out` with the weights at `p`: inside a triangle, the barycentric weights of
    /// its corners; outside the convex hull, those of the nearest point of the hull (on its
    /// nearest edge, as Unreal's blend spaces clamp), so two samples on an edge or one at a
    /// corner. Zero weights are left out. A non-finite coordinate is first clamped to the
    /// samples' bounding box (NaN: its minimum).
    pub fn weights_into(&self, p: Vec2, out: &mut Vec<SampleWeight>) {
        out.clear();
        let finite = |v: f32, lo: f32, hi: f32| if v.is_finite() { v } else { v.max(lo).min(hi) };
        let p = Vec2::new(
            finite(p.x, self.min.x, self.max.x),
            finite(p.y, self.min.y, self.max.y),
        );
        let dp = p.as_dvec2();
        let at = |i: usize| self.points[i].as_dvec2();
        let on_segment = |out: &mut Vec<SampleWeight>, a: usize, b: usize| {
            let (da, ab) = (at(a), at(b) - at(a));
            // Not NaN: a and b are distinct f32 points, so in f64 |ab|² is neither 0 nor inf.
            let t = ((dp - da).dot(ab) / ab.length_squared()).clamp(0.0, 1.0);
            push(out, a, (1.0 - t) as f32);
            push(out, b, t as f32);
            (da + ab * t - dp).length_squared()
        };
        match self.delaunay.locate(Point2::new(dp.x, dp.y)) {
            PositionInTriangulation::OnFace(face) => {
                let t = self.delaunay.face(face).vertices().map(|v| v.fix().index());
                // Each corner's weight is the area of the sub-triangle facing it; dividing by
                // their sum (not the triangle's area) makes them sum to 1 despite rounding.
                let [da, db, dc] = t.map(at);
                let w =
                    [area2(db, dc, dp), area2(dc, da, dp), area2(da, db, dp)].map(|w| w.max(0.0));
                let sum = w[0] + w[1] + w[2];
                for (&s, w) in t.iter().zip(w) {
                    push(out, s, (w / sum) as f32);
                }
            }
            PositionInTriangulation::OnEdge(edge) => {
                let [a, b] = self
                    .delaunay
                    .directed_edge(edge)
                    .vertices()
                    .map(|v| v.fix().index());
                on_segment(out, a, b);
            }
            PositionInTriangulation::OnVertex(v) => push(out, v.index(), 1.0),
            // Outside the hull (or, never, no triangulation): the nearest point of the hull.
            _ => {
                let mut best: Option<(f64, Vec<SampleWeight>)> = None;
                // Hull edges belong to the outer face; reversed, they run counter-clockwise.
                for edge in self.delaunay.convex_hull() {
                    let [a, b] = edge.rev().vertices().map(|v| v.fix().index());
                    let mut w = Vec::with_capacity(2);
                    let d2 = on_segment(&mut w, a, b);
                    if best.as_ref().is_none_or(|(d, _)| d2 < *d) {
                        best = Some((d2, w));
                    }
                }
                out.extend(best.map(|(_, w)| w).unwrap_or_default());
            }
        }
    }
}

/// A blend space of any kind; 1D ones read the x coordinate of the input.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub enum BlendSpace {
    /// Samples on a line.
    OneD(BlendSpace1D),
    /// Samples on a rectangular grid.
    Grid(BlendGrid),
    /// Samples scattered in the plane, triangulated.
    Scattered(BlendTriangulation),
}

impl BlendSpace {
    /// The number of samples.
    pub fn sample_count(&self) -> usize {
        match self {
            Self::OneD(s) => s.sample_count(),
            Self::Grid(s) => s.sample_count(),
            Self::Scattered(s) => s.sample_count(),
        }
    }

    /// The weights at `p`; see [`weights_into`](Self::weights_into).
    pub fn weights(&self, p: Vec2) -> Vec<SampleWeight> {
        let mut out = Vec::with_capacity(4);
        self.weights_into(p, &mut out);
        out
    }

    /// Replaces `out` with the weights at `p`, by the rule of the space's kind (a 1D space
    /// reads `p.x`).
    pub fn weights_into(&self, p: Vec2, out: &mut Vec<SampleWeight>) {
        match self {
            Self::OneD(s) => s.weights_into(p.x, out),
            Self::Grid(s) => s.weights_into(p, out),
            Self::Scattered(s) => s.weights_into(p, out),
        }
    }
}

impl From<BlendSpace1D> for BlendSpace {
    fn from(s: BlendSpace1D) -> Self {
        Self::OneD(s)
    }
}

impl From<BlendGrid> for BlendSpace {
    fn from(s: BlendGrid) -> Self {
        Self::Grid(s)
    }
}

impl From<BlendTriangulation> for BlendSpace {
    fn from(s: BlendTriangulation) -> Self {
        Self::Scattered(s)
    }
}

/// Twice the signed area of triangle (a, b, c), positive when counter-clockwise.
fn area2(a: DVec2, b: DVec2, c: DVec2) -> f64 {
    (b - a).perp_dot(c - a)
}
