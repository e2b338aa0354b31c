//! Blend spaces: sample points in a 1D or 2D parameter space and the weights an input gives.
//!
//! Samples are referred to by index only (the caller's order); this module knows nothing about
//! clips. Every `weights` gives non-negative weights that sum to 1 (within f32 rounding), with
//! zero weights left out. An input outside the space is clamped to it, as each type says.
//! Callers are expected to pass finite inputs; a non-finite one does not panic but is weighted
//! as a clamped point (NaN as the minimum), as each type documents.

use std::cmp::Ordering;

use glam::{DVec2, Vec2};

use crate::error::{Error, Result};

/// One sample's share of a blend.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SampleWeight {
    /// The sample's index, in the order the blend space was built from.
    pub sample: usize,
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

/// Samples scattered in the plane: a Delaunay triangulation of them, and inside it barycentric
/// weights.
#[derive(Clone, Debug)]
pub struct BlendTriangulation {
    points: Vec<Vec2>,
    /// Counter-clockwise triangles of sample indices.
    triangles: Vec<[usize; 3]>,
    /// The triangulation's boundary edges (the convex hull, split at samples lying on it),
    /// each counter-clockwise.
    boundary: Vec<[usize; 2]>,
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
        let hull = convex_hull(points);
        if hull.len() < 3 {
            return Err(bad(format!(
                "all {n} samples lie on one line, so no triangle can be made (use a 1D blend space)"
            )));
        }
        // Fan over the hull (strictly convex, so no flat triangle), then the other samples one
        // by one, then edge flips until Delaunay.
        let mut triangles: Vec<[usize; 3]> = hull
            .windows(2)
            .skip(1)
            .map(|w| [hull[0], w[0], w[1]])
            .collect();
        let mut on_hull = vec![false; n];
        for &h in &hull {
            on_hull[h] = true;
        }
        for (i, _) in on_hull.iter().enumerate().filter(|(_, &h)| !h) {
            if !insert(points, &mut triangles, i) {
                // Exact predicates and distinct points make this unreachable.
                return Err(bad(format!(
                    "sample {i} fell outside the triangulation (internal error)"
                )));
            }
        }
        make_delaunay(points, &mut triangles);
        let boundary = triangles
            .iter()
            .flat_map(|t| [[t[0], t[1]], [t[1], t[2]], [t[2], t[0]]])
            .filter(|&[a, b]| find_edge(&triangles, b, a).is_none())
            .collect();
        let min = points.iter().fold(points[0], |m, &p| m.min(p));
        let max = points.iter().fold(points[0], |m, &p| m.max(p));
        Ok(Self {
            points: points.to_vec(),
            triangles,
            boundary,
            min,
            max,
        })
    }

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
        for t in &self.triangles {
            let [a, b, c] = t.map(|i| self.points[i]);
            if orient(b, c, p) == Ordering::Less
                || orient(c, a, p) == Ordering::Less
                || orient(a, b, p) == Ordering::Less
            {
                continue;
            }
            // Each corner's weight is the area of the sub-triangle facing it; dividing by their
            // sum (not the triangle's area) makes them sum to 1 despite rounding.
            let [da, db, dc] = [a, b, c].map(Vec2::as_dvec2);
            let w = [area2(db, dc, dp), area2(dc, da, dp), area2(da, db, dp)].map(|w| w.max(0.0));
            let sum = w[0] + w[1] + w[2];
            if sum > 0.0 && sum.is_finite() {
                for (&s, w) in t.iter().zip(w) {
                    push(out, s, (w / sum) as f32);
                }
                return;
            }
        }
        // Outside the hull: the nearest point over all boundary edges.
        let mut best = (f64::INFINITY, self.boundary[0], 0.0);
        for &[a, b] in &self.boundary {
            let (da, db) = (self.points[a].as_dvec2(), self.points[b].as_dvec2());
            let ab = db - da;
            // Not NaN: a and b are distinct f32 points, so in f64 |ab|² is neither 0 nor inf.
            let t = ((dp - da).dot(ab) / ab.length_squared()).clamp(0.0, 1.0);
            let d2 = (da + ab * t - dp).length_squared();
            if d2 < best.0 {
                best = (d2, [a, b], t);
            }
        }
        let (_, [a, b], t) = best;
        push(out, a, (1.0 - t) as f32);
        push(out, b, t as f32);
    }
}

/// A blend space of any kind; 1D ones read the x coordinate of the input.
#[derive(Clone, Debug)]
pub enum BlendSpace {
    OneD(BlendSpace1D),
    Grid(BlendGrid),
    Scattered(BlendTriangulation),
}

impl BlendSpace {
    pub fn sample_count(&self) -> usize {
        match self {
            Self::OneD(s) => s.sample_count(),
            Self::Grid(s) => s.sample_count(),
            Self::Scattered(s) => s.sample_count(),
        }
    }

    pub fn weights(&self, p: Vec2) -> Vec<SampleWeight> {
        let mut out = Vec::with_capacity(4);
        self.weights_into(p, &mut out);
        out
    }

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

/// Which side of the line a→b `c` lies on: `Greater` to the left (counter-clockwise), `Equal`
/// on it. Exact for all finite inputs, so the triangulation never meets an inconsistent
/// answer: products of two f32 are exact in f64, and when the quick f64 sum is too close to 0
/// to trust (Shewchuk's bound), the six products are summed exactly.
fn orient(a: Vec2, b: Vec2, c: Vec2) -> Ordering {
    const E: f64 = f64::EPSILON / 2.0;
    const BOUND: f64 = (3.0 + 16.0 * E) * E;
    let [ax, ay, bx, by, cx, cy] = [a.x, a.y, b.x, b.y, c.x, c.y].map(f64::from);
    let left = (bx - ax) * (cy - ay);
    let right = (by - ay) * (cx - ax);
    let det = left - right;
    if det.abs() > BOUND * (left.abs() + right.abs()) {
        return det.partial_cmp(&0.0).unwrap_or(Ordering::Equal);
    }
    exact_sign([ax * by, -ax * cy, -ay * bx, ay * cx, bx * cy, -by * cx])
}

/// The sign of a sum of six f64, exactly (barring overflow): Shewchuk's Grow-Expansion builds
/// a non-overlapping expansion, whose largest non-zero component has the sum's sign.
fn exact_sign(terms: [f64; 6]) -> Ordering {
    fn two_sum(a: f64, b: f64) -> (f64, f64) {
        let s = a + b;
        let bv = s - a;
        (s, (a - (s - bv)) + (b - bv))
    }
    let mut e = [0.0; 6];
    for (m, q0) in terms.into_iter().enumerate() {
        let mut q = q0;
        for c in e.iter_mut().take(m) {
            let (s, h) = two_sum(q, *c);
            *c = h;
            q = s;
        }
        e[m] = q;
    }
    match e.iter().rev().find(|&&v| v != 0.0) {
        Some(&v) if v > 0.0 => Ordering::Greater,
        Some(_) => Ordering::Less,
        None => Ordering::Equal,
    }
}

/// Whether `d` lies strictly inside the circumcircle of counter-clockwise (a, b, c), by a
/// margin larger than the f64 rounding (so near-cocircular points are left alone, and edge
/// flips cannot cycle).
fn in_circle(a: Vec2, b: Vec2, c: Vec2, d: Vec2) -> bool {
    let [a, b, c] = [a, b, c].map(|p| (p - d).as_dvec2());
    let (la, lb, lc) = (a.length_squared(), b.length_squared(), c.length_squared());
    let det = la * b.perp_dot(c) + lb * c.perp_dot(a) + lc * a.perp_dot(b);
    let cross = |u: DVec2, v: DVec2| (u.x * v.y).abs() + (u.y * v.x).abs();
    let permanent = la * cross(b, c) + lb * cross(c, a) + lc * cross(a, b);
    det > 1e-12 * permanent
}

/// Monotone-chain convex hull, counter-clockwise, without points in the middle of its edges.
/// Fewer than 3 vertices when all points are collinear.
fn convex_hull(points: &[Vec2]) -> Vec<usize> {
    let mut order: Vec<usize> = (0..points.len()).collect();
    order.sort_by(|&a, &b| {
        let (p, q) = (points[a], points[b]);
        // Finite points, so partial_cmp always answers (and takes -0 and 0 as equal).
        (p.x, p.y)
            .partial_cmp(&(q.x, q.y))
            .unwrap_or(Ordering::Equal)
    });
    let chain = |iter: &mut dyn Iterator<Item = &usize>| {
        let mut c: Vec<usize> = Vec::new();
        for &i in iter {
            while let [.., u, v] = c[..] {
                if orient(points[u], points[v], points[i]) == Ordering::Greater {
                    break;
                }
                c.pop();
            }
            c.push(i);
        }
        c.pop();
        c
    };
    let mut hull = chain(&mut order.iter());
    hull.extend(chain(&mut order.iter().rev()));
    hull
}

/// The triangle holding the directed edge a→b, and its corner opposite that edge.
fn find_edge(triangles: &[[usize; 3]], a: usize, b: usize) -> Option<(usize, usize)> {
    triangles.iter().enumerate().find_map(|(k, t)| {
        (0..3)
            .find(|&e| t[e] == a && t[(e + 1) % 3] == b)
            .map(|e| (k, t[(e + 2) % 3]))
    })
}

/// Splits the triangle holding sample `i` (or, when it lies on an edge, the one or two
/// triangles sharing that edge). False when no triangle holds it.
fn insert(points: &[Vec2], triangles: &mut Vec<[usize; 3]>, i: usize) -> bool {
    let p = points[i];
    for k in 0..triangles.len() {
        let [a, b, c] = triangles[k];
        let sides = [
            orient(points[b], points[c], p),
            orient(points[c], points[a], p),
            orient(points[a], points[b], p),
        ];
        if sides.contains(&Ordering::Less) {
            continue;
        }
        match sides.iter().filter(|&&s| s == Ordering::Equal).count() {
            0 => {
                triangles[k] = [a, b, i];
                triangles.push([b, c, i]);
                triangles.push([c, a, i]);
            }
            1 => {
                // On edge u→v, opposite w; a triangle on the other side holds v→u.
                let e = sides
                    .iter()
                    .position(|&s| s == Ordering::Equal)
                    .unwrap_or(0);
                let t = triangles[k];
                let (u, v, w) = (t[(e + 1) % 3], t[(e + 2) % 3], t[e]);
                triangles[k] = [u, i, w];
                triangles.push([i, v, w]);
                if let Some((m, x)) = find_edge(triangles, v, u) {
                    triangles[m] = [v, i, x];
                    triangles.push([i, u, x]);
                }
            }
            // On a corner: only for a duplicate point, which `new` rejects.
            _ => continue,
        }
        return true;
    }
    false
}

/// Lawson's edge flips until every interior edge is locally Delaunay, which makes the whole
/// triangulation Delaunay.
fn make_delaunay(points: &[Vec2], triangles: &mut [[usize; 3]]) {
    // Flips are only made where certainly needed, so they terminate (at most ~n²/2 of them);
    // the cap only guards against overflowing inputs, leaving a valid triangulation.
    let cap = 4 * points.len() * points.len() + 16;
    let mut flips = 0;
    loop {
        let mut flipped = false;
        for k in 0..triangles.len() {
            for e in 0..3 {
                let t = triangles[k];
                let (a, b, c) = (t[e], t[(e + 1) % 3], t[(e + 2) % 3]);
                let Some((m, d)) = find_edge(triangles, b, a) else {
                    continue;
                };
                let [pa, pb, pc, pd] = [a, b, c, d].map(|s| points[s]);
                // Only a strictly convex quadrilateral can be flipped; an illegal edge always
                // has one, the orientation checks just keep rounding from making a flat triangle.
                if in_circle(pa, pb, pc, pd)
                    && orient(pc, pa, pd) == Ordering::Greater
                    && orient(pd, pb, pc) == Ordering::Greater
                {
                    triangles[k] = [c, a, d];
                    triangles[m] = [d, b, c];
                    flipped = true;
                    flips += 1;
                }
            }
        }
        if !flipped || flips > cap {
            return;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exact_sign_sees_what_rounding_cancels() {
        // A plain f64 sum of these is 0.
        assert_eq!(
            exact_sign([1e20, 1.0, -1e20, 0.0, 0.0, 0.0]),
            Ordering::Greater
        );
        assert_eq!(
            exact_sign([1e20, -1.0, -1e20, 0.0, 0.0, 0.0]),
            Ordering::Less
        );
        assert_eq!(
            exact_sign([1e20, 3.0, -1e20, -3.0, 0.0, 0.0]),
            Ordering::Equal
        );
    }

    #[test]
    fn orient_is_consistent_near_a_line() {
        // Points a few ulps off the line through (0.5, 0.5) and (24, 24): the answer must not
        // depend on which corner comes first.
        let (b, c) = (Vec2::new(12.0, 12.0), Vec2::new(24.0, 24.0));
        let mut collinear = 0;
        for i in 0..16 {
            for j in 0..16 {
                let a = Vec2::new(
                    0.5 + i as f32 * f32::EPSILON / 2.0,
                    0.5 + j as f32 * f32::EPSILON / 2.0,
                );
                let s = orient(a, b, c);
                assert_eq!(s, orient(b, c, a), "({i}, {j})");
                assert_eq!(s, orient(c, a, b), "({i}, {j})");
                assert_eq!(s, orient(b, a, c).reverse(), "({i}, {j})");
                // Above the line (j > i) is left of a→b.
                assert_eq!(s, j.cmp(&i), "({i}, {j})");
                collinear += usize::from(s == Ordering::Equal);
            }
        }
        assert_eq!(collinear, 16);
    }

    #[test]
    fn in_circle_leaves_cocircular_points_alone() {
        let [a, b, c] = [Vec2::ZERO, Vec2::X, Vec2::ONE];
        assert!(!in_circle(a, b, c, Vec2::Y));
        assert!(in_circle(a, b, c, Vec2::new(0.1, 0.9)));
        assert!(!in_circle(a, b, c, Vec2::new(-0.1, 1.0)));
    }
}
