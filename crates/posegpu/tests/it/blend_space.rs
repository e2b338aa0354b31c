//! Blend space weights against hand-computed cases, random checks of the triangulation, and
//! every bad input.

use glam::Vec2;
use posegpu::blend::space::*;
use posegpu::Error;

const EPS: f32 = 1e-5;

fn sw(sample: usize, weight: f32) -> SampleWeight {
    SampleWeight { sample, weight }
}

/// Same samples in the same order, weights within EPS.
fn assert_weights(got: &[SampleWeight], want: &[SampleWeight], what: &str) {
    let same = got.len() == want.len()
        && got
            .iter()
            .zip(want)
            .all(|(g, w)| g.sample == w.sample && (g.weight - w.weight).abs() <= EPS);
    assert!(same, "{what}: got {got:?}, want {want:?}");
}

/// Weights positive, summing to 1, each sample at most once.
fn assert_valid(w: &[SampleWeight], count: usize, what: &str) {
    assert!(!w.is_empty(), "{what}: no weights");
    assert!(
        w.iter().all(|s| s.weight > 0.0 && s.sample < count),
        "{what}: {w:?}"
    );
    let sum: f32 = w.iter().map(|s| s.weight).sum();
    assert!((sum - 1.0).abs() <= EPS, "{what}: weights sum to {sum}");
    for (i, a) in w.iter().enumerate() {
        assert!(
            w[i + 1..].iter().all(|b| b.sample != a.sample),
            "{what}: {w:?}"
        );
    }
}

fn blend_error(r: Result<impl std::fmt::Debug, Error>) -> String {
    match r {
        Err(e @ Error::BlendSpace { .. }) => e.to_string(),
        other => panic!("expected a blend space error, got {other:?}"),
    }
}

fn assert_error_names(r: Result<impl std::fmt::Debug, Error>, parts: &[&str]) {
    let msg = blend_error(r);
    for p in parts {
        assert!(msg.contains(p), "'{msg}' does not name '{p}'");
    }
}

/// Numerical Recipes' LCG, uniform in [0, 1).
struct Lcg(u32);

impl Lcg {
    fn next(&mut self) -> f32 {
        self.0 = self.0.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
        (self.0 >> 8) as f32 / (1u32 << 24) as f32
    }

    fn point(&mut self, lo: f32, hi: f32) -> Vec2 {
        let x = lo + (hi - lo) * self.next();
        Vec2::new(x, lo + (hi - lo) * self.next())
    }
}

fn blend_point(points: &[Vec2], w: &[SampleWeight]) -> Vec2 {
    w.iter().map(|s| points[s.sample] * s.weight).sum()
}

fn cross(o: Vec2, a: Vec2, b: Vec2) -> f32 {
    (a - o).perp_dot(b - o)
}

/// Hull edges by brute force: the pairs with every other point strictly to their left (the
/// random sets have no three collinear points).
fn hull_edges(points: &[Vec2]) -> Vec<(usize, usize)> {
    let mut edges = Vec::new();
    for (i, &a) in points.iter().enumerate() {
        for (j, &b) in points.iter().enumerate() {
            let left = points
                .iter()
                .enumerate()
                .all(|(k, &c)| k == i || k == j || cross(a, b, c) > 0.0);
            if i != j && left {
                edges.push((i, j));
            }
        }
    }
    edges
}

fn nearest_on_segment(a: Vec2, b: Vec2, p: Vec2) -> Vec2 {
    let t = ((p - a).dot(b - a) / (b - a).length_squared()).clamp(0.0, 1.0);
    a + (b - a) * t
}

fn random_points(seed: u32, n: usize) -> Vec<Vec2> {
    let mut rng = Lcg(seed);
    (0..n).map(|_| rng.point(-10.0, 10.0)).collect()
}

fn square_and_centre() -> Vec<Vec2> {
    vec![
        Vec2::new(0.0, 0.0),
        Vec2::new(1.0, 0.0),
        Vec2::new(1.0, 1.0),
        Vec2::new(0.0, 1.0),
        Vec2::new(0.5, 0.5),
    ]
}

#[test]
fn one_d_weights_the_two_neighbours() {
    // Given out of order: sample 1 at 0, sample 2 at 1, sample 0 at 3.
    let s = BlendSpace1D::new(&[3.0, 0.0, 1.0]).unwrap();
    assert_eq!(s.sample_count(), 3);
    assert_weights(&s.weights(0.25), &[sw(1, 0.75), sw(2, 0.25)], "0.25");
    assert_weights(&s.weights(2.5), &[sw(2, 0.25), sw(0, 0.75)], "2.5");
    assert_weights(&s.weights(2.0), &[sw(2, 0.5), sw(0, 0.5)], "2");
}

#[test]
fn one_d_exact_hits_and_clamping() {
    let s = BlendSpace1D::new(&[3.0, 0.0, 1.0]).unwrap();
    assert_eq!(s.weights(1.0), [sw(2, 1.0)]);
    assert_eq!(s.weights(0.0), [sw(1, 1.0)]);
    assert_eq!(s.weights(3.0), [sw(0, 1.0)]);
    assert_eq!(s.weights(-5.0), [sw(1, 1.0)]);
    assert_eq!(s.weights(10.0), [sw(0, 1.0)]);
    assert_eq!(s.weights(f32::NEG_INFINITY), [sw(1, 1.0)]);
    assert_eq!(s.weights(f32::INFINITY), [sw(0, 1.0)]);
    assert_eq!(s.weights(f32::NAN), [sw(1, 1.0)], "NaN is the minimum");

    let one = BlendSpace1D::new(&[7.0]).unwrap();
    for x in [-1.0, 7.0, 100.0, f32::NAN] {
        assert_eq!(one.weights(x), [sw(0, 1.0)]);
    }
}

#[test]
fn one_d_weights_into_replaces_the_buffer() {
    let s = BlendSpace1D::new(&[0.0, 2.0]).unwrap();
    let mut out = vec![sw(9, 3.0); 5];
    s.weights_into(0.5, &mut out);
    assert_weights(&out, &[sw(0, 0.75), sw(1, 0.25)], "into");
    let mut rng = Lcg(7);
    for _ in 0..200 {
        let x = -1.0 + 4.0 * rng.next();
        s.weights_into(x, &mut out);
        assert_valid(&out, 2, &format!("x {x}"));
        assert_eq!(out, s.weights(x));
    }
}

#[test]
fn grid_bilinear_in_a_cell() {
    let g = BlendGrid::new(&[0.0, 1.0, 3.0], &[-1.0, 1.0]).unwrap();
    assert_eq!(g.sample_count(), 6);
    // Corners (1,0), (2,0), (1,1), (2,1): samples 1, 2, 4, 5.
    assert_weights(
        &g.weights(Vec2::new(2.0, 0.0)),
        &[sw(1, 0.25), sw(2, 0.25), sw(4, 0.25), sw(5, 0.25)],
        "(2, 0)",
    );
    // tx = 0.5 in cell 0, ty = 0.75.
    assert_weights(
        &g.weights(Vec2::new(0.5, 0.5)),
        &[sw(0, 0.125), sw(1, 0.125), sw(3, 0.375), sw(4, 0.375)],
        "(0.5, 0.5)",
    );
    // On a cell edge: two samples; on a grid point: one.
    assert_weights(
        &g.weights(Vec2::new(1.0, 0.5)),
        &[sw(1, 0.25), sw(4, 0.75)],
        "(1, 0.5)",
    );
    assert_eq!(g.weights(Vec2::new(1.0, 1.0)), [sw(4, 1.0)]);
}

#[test]
fn grid_clamps_outside() {
    let g = BlendGrid::new(&[0.0, 1.0, 3.0], &[-1.0, 1.0]).unwrap();
    assert_eq!(g.weights(Vec2::new(-10.0, 5.0)), [sw(3, 1.0)]);
    assert_eq!(g.weights(Vec2::new(10.0, -10.0)), [sw(2, 1.0)]);
    assert_weights(
        &g.weights(Vec2::new(10.0, 0.0)),
        &[sw(2, 0.5), sw(5, 0.5)],
        "right of the grid",
    );
    assert_weights(
        &g.weights(Vec2::new(2.0, -3.0)),
        &[sw(1, 0.5), sw(2, 0.5)],
        "below the grid",
    );
    assert_eq!(g.weights(Vec2::new(f32::NAN, f32::NAN)), [sw(0, 1.0)]);
    assert_eq!(
        g.weights(Vec2::new(f32::INFINITY, f32::NEG_INFINITY)),
        [sw(2, 1.0)]
    );
}

#[test]
fn grid_with_one_wide_axes() {
    let g = BlendGrid::new(&[5.0], &[0.0, 2.0]).unwrap();
    assert_weights(
        &g.weights(Vec2::new(7.0, 0.5)),
        &[sw(0, 0.75), sw(1, 0.25)],
        "1-wide x",
    );
    let g = BlendGrid::new(&[0.0, 4.0], &[3.0]).unwrap();
    assert_weights(
        &g.weights(Vec2::new(1.0, -9.0)),
        &[sw(0, 0.75), sw(1, 0.25)],
        "1-wide y",
    );
    let g = BlendGrid::new(&[1.0], &[1.0]).unwrap();
    assert_eq!(g.weights(Vec2::new(-3.0, 8.0)), [sw(0, 1.0)]);
}

#[test]
fn grid_weights_reproduce_the_input() {
    let (xs, ys) = ([0.0, 1.0, 3.0, 3.5], [-1.0, 1.0, 4.0]);
    let g = BlendGrid::new(&xs, &ys).unwrap();
    let pos = |s: usize| Vec2::new(xs[s % xs.len()], ys[s / xs.len()]);
    let mut rng = Lcg(3);
    let mut out = Vec::new();
    for _ in 0..500 {
        let p = Vec2::new(3.5 * rng.next(), -1.0 + 5.0 * rng.next());
        g.weights_into(p, &mut out);
        assert_valid(&out, g.sample_count(), &format!("{p}"));
        let q: Vec2 = out.iter().map(|s| pos(s.sample) * s.weight).sum();
        assert!(q.abs_diff_eq(p, 1e-4), "{p}: weights give {q}");
    }
}

#[test]
fn square_and_centre_gives_four_triangles() {
    let points = square_and_centre();
    let t = BlendTriangulation::new(&points).unwrap();
    assert_eq!(t.triangles().len(), 4, "{:?}", t.triangles());
    for tri in t.triangles() {
        assert!(tri.contains(&4), "{tri:?} misses the centre");
        let [a, b, c] = tri.map(|i| points[i]);
        assert!(cross(a, b, c) > 0.0, "{tri:?} is not counter-clockwise");
    }
    assert_eq!(t.weights(Vec2::new(0.5, 0.5)), [sw(4, 1.0)]);
    // In triangle (0, 1, 4): y = 0.5 w4, x = w1 + 0.5 w4.
    let mut w = t.weights(Vec2::new(0.5, 0.25));
    w.sort_by_key(|s| s.sample);
    assert_weights(&w, &[sw(0, 0.25), sw(1, 0.25), sw(4, 0.5)], "(0.5, 0.25)");
}

#[test]
fn each_sample_alone_at_its_point() {
    for points in [square_and_centre(), random_points(11, 20)] {
        let t = BlendTriangulation::new(&points).unwrap();
        for (i, &p) in points.iter().enumerate() {
            assert_eq!(t.weights(p), [sw(i, 1.0)], "sample {i} at {p}");
        }
    }
}

#[test]
fn barycentric_weights_reproduce_points_inside() {
    let mut rng = Lcg(12345);
    for (seed, n) in [(1, 5), (2, 12), (3, 20), (4, 40)] {
        let points = random_points(seed, n);
        let t = BlendTriangulation::new(&points).unwrap();
        let mut out = Vec::new();
        for _ in 0..300 {
            // A convex combination of three samples lies inside the hull.
            let pick = |r: &mut Lcg| points[(r.next() * n as f32) as usize % n];
            let (a, b, c) = (pick(&mut rng), pick(&mut rng), pick(&mut rng));
            let (u, v) = (rng.next(), rng.next());
            let (u, v) = if u + v > 1.0 {
                (1.0 - u, 1.0 - v)
            } else {
                (u, v)
            };
            let p = a + (b - a) * u + (c - a) * v;
            t.weights_into(p, &mut out);
            let what = format!("set {seed}, {p}");
            assert_valid(&out, n, &what);
            assert!(out.len() <= 3, "{what}: {out:?}");
            assert!(
                t.triangles()
                    .iter()
                    .any(|tri| out.iter().all(|s| tri.contains(&s.sample))),
                "{what}: {out:?} are not corners of one triangle"
            );
            let q = blend_point(&points, &out);
            assert!(q.abs_diff_eq(p, 1e-4), "{what}: weights give {q}");
        }
    }
}

#[test]
fn outside_points_go_to_the_nearest_hull_point() {
    let t = BlendTriangulation::new(&square_and_centre()).unwrap();
    assert_weights(
        &t.weights(Vec2::new(2.0, 0.25)),
        &[sw(1, 0.75), sw(2, 0.25)],
        "right of the square",
    );
    assert_eq!(t.weights(Vec2::new(2.0, 3.0)), [sw(2, 1.0)]);
    assert_eq!(t.weights(Vec2::new(-1.0, -3.0)), [sw(0, 1.0)]);
    assert_eq!(t.weights(Vec2::new(f32::NAN, f32::NAN)), [sw(0, 1.0)]);
    assert_eq!(t.weights(Vec2::new(f32::INFINITY, 0.5)).len(), 2);

    let mut rng = Lcg(99);
    for seed in [5, 6, 7] {
        let points = random_points(seed, 20);
        let t = BlendTriangulation::new(&points).unwrap();
        let hull = hull_edges(&points);
        for _ in 0..300 {
            let p = rng.point(-30.0, 30.0);
            let w = t.weights(p);
            assert_valid(&w, points.len(), &format!("{p}"));
            let q = blend_point(&points, &w);
            let nearest = hull
                .iter()
                .map(|&(a, b)| nearest_on_segment(points[a], points[b], p))
                .min_by(|x, y| x.distance(p).total_cmp(&y.distance(p)))
                .unwrap();
            let inside = hull
                .iter()
                .all(|&(a, b)| cross(points[a], points[b], p) >= 0.0);
            if inside {
                assert!(q.abs_diff_eq(p, 1e-4), "{p} inside: weights give {q}");
            } else {
                assert!(
                    q.abs_diff_eq(nearest, 1e-4),
                    "{p} outside: weights give {q}, nearest hull point {nearest}"
                );
                assert!(w.len() <= 2, "{p}: {w:?} is not on one edge");
            }
        }
    }
}

#[test]
fn a_sample_on_the_hull_splits_its_edge() {
    // Sample 2 lies on the hull edge from 0 to 1.
    let points = [
        Vec2::new(0.0, 0.0),
        Vec2::new(2.0, 0.0),
        Vec2::new(1.0, 0.0),
        Vec2::new(1.0, 2.0),
    ];
    let t = BlendTriangulation::new(&points).unwrap();
    assert_eq!(t.triangles().len(), 2, "{:?}", t.triangles());
    assert_weights(
        &t.weights(Vec2::new(0.5, -1.0)),
        &[sw(0, 0.5), sw(2, 0.5)],
        "below the first half",
    );
    assert_eq!(t.weights(Vec2::new(1.0, -1.0)), [sw(2, 1.0)]);
}

/// Triangles cover the hull without overlap, use every sample, and number 2n - b - 2 for b
/// samples on the boundary.
fn assert_covers(points: &[Vec2], t: &BlendTriangulation, hull_area: f32, boundary: usize) {
    let tris = t.triangles();
    let area: f32 = tris
        .iter()
        .map(|tri| {
            let [a, b, c] = tri.map(|i| points[i]);
            let a2 = cross(a, b, c);
            assert!(a2 > 0.0, "{tri:?} is not counter-clockwise");
            a2 / 2.0
        })
        .sum();
    assert!(
        (area - hull_area).abs() <= 1e-4 * hull_area,
        "{area} vs {hull_area}"
    );
    for i in 0..points.len() {
        assert!(tris.iter().any(|tri| tri.contains(&i)), "sample {i} unused");
    }
    assert_eq!(tris.len(), 2 * points.len() - boundary - 2);
}

#[test]
fn triangulation_is_delaunay() {
    for seed in [21, 22, 23] {
        let points = random_points(seed, 20);
        let t = BlendTriangulation::new(&points).unwrap();
        let hull = hull_edges(&points);
        let hull_area: f32 = hull
            .iter()
            .map(|&(a, b)| points[a].perp_dot(points[b]) / 2.0)
            .sum();
        assert_covers(&points, &t, hull_area, hull.len());
        for tri in t.triangles() {
            let [a, b, c] = tri.map(|i| points[i].as_dvec2());
            // Circumcentre relative to a.
            let (b, c) = (b - a, c - a);
            let d = 2.0 * b.perp_dot(c);
            let centre = glam::DVec2::new(
                c.y * b.length_squared() - b.y * c.length_squared(),
                b.x * c.length_squared() - c.x * b.length_squared(),
            ) / d
                + a;
            let r = centre.distance(a);
            for (i, p) in points.iter().enumerate() {
                if tri.contains(&i) {
                    continue;
                }
                let dist = centre.distance(p.as_dvec2());
                assert!(
                    dist >= r * (1.0 - 1e-6),
                    "seed {seed}: sample {i} lies inside the circumcircle of {tri:?}"
                );
            }
        }
    }
}

#[test]
fn cocircular_grid_of_samples() {
    // A 3x3 grid: every cell's corners are cocircular, and samples lie on the hull edges.
    let points: Vec<Vec2> = (0..9)
        .map(|i| Vec2::new((i % 3) as f32, (i / 3) as f32))
        .collect();
    let t = BlendTriangulation::new(&points).unwrap();
    assert_covers(&points, &t, 4.0, 8);
    assert_weights(
        &t.weights(Vec2::new(3.0, 1.5)),
        &[sw(5, 0.5), sw(8, 0.5)],
        "right of the grid",
    );
}

#[test]
fn blend_space_enum_dispatches() {
    let one: BlendSpace = BlendSpace1D::new(&[0.0, 1.0]).unwrap().into();
    assert_eq!(one.sample_count(), 2);
    assert_weights(
        &one.weights(Vec2::new(0.25, 99.0)),
        &[sw(0, 0.75), sw(1, 0.25)],
        "1D reads x",
    );
    let grid: BlendSpace = BlendGrid::new(&[0.0, 1.0, 3.0], &[-1.0, 1.0])
        .unwrap()
        .into();
    assert_eq!(grid.sample_count(), 6);
    assert_eq!(grid.weights(Vec2::new(1.0, 1.0)), [sw(4, 1.0)]);
    let scattered: BlendSpace = BlendTriangulation::new(&square_and_centre())
        .unwrap()
        .into();
    assert_eq!(scattered.sample_count(), 5);
    let mut out = Vec::new();
    scattered.weights_into(Vec2::new(0.5, 0.5), &mut out);
    assert_eq!(out, [sw(4, 1.0)]);
}

#[test]
fn one_d_errors_name_the_problem() {
    assert_error_names(BlendSpace1D::new(&[]), &["at least one sample"]);
    assert_error_names(
        BlendSpace1D::new(&[0.0, f32::NAN]),
        &["sample 1", "NaN", "finite"],
    );
    assert_error_names(
        BlendSpace1D::new(&[f32::INFINITY, 0.0]),
        &["sample 0", "inf"],
    );
    assert_error_names(
        BlendSpace1D::new(&[1.5, 0.0, 1.5]),
        &["samples 0 and 2", "1.5"],
    );
    assert_error_names(BlendSpace1D::new(&[-0.0, 0.0]), &["samples 0 and 1"]);
}

#[test]
fn grid_errors_name_the_problem() {
    assert_error_names(BlendGrid::new(&[], &[0.0]), &["x axis", "no positions"]);
    assert_error_names(BlendGrid::new(&[0.0], &[]), &["y axis", "no positions"]);
    assert_error_names(
        BlendGrid::new(&[0.0], &[0.0, f32::NAN]),
        &["y axis position 1", "NaN"],
    );
    assert_error_names(
        BlendGrid::new(&[0.0, 2.0, 1.0], &[0.0]),
        &["x axis", "increase", "position 2 (1)", "position 1 (2)"],
    );
    assert_error_names(
        BlendGrid::new(&[0.0], &[0.0, 0.0]),
        &["y axis", "increase", "position 1 (0)"],
    );
}

#[test]
fn triangulation_errors_name_the_problem() {
    let p = Vec2::new;
    assert_error_names(
        BlendTriangulation::new(&[p(0.0, 0.0), p(1.0, 0.0)]),
        &["at least 3", "got 2"],
    );
    assert_error_names(
        BlendTriangulation::new(&[p(0.0, 0.0), p(1.0, 0.0), p(0.0, f32::NAN)]),
        &["sample 2", "NaN", "finite"],
    );
    assert_error_names(
        BlendTriangulation::new(&[p(0.0, 0.0), p(1.0, 0.5), p(0.0, 1.0), p(1.0, 0.5)]),
        &["samples 1 and 3", "(1, 0.5)"],
    );
    assert_error_names(
        BlendTriangulation::new(&[p(0.0, 0.0), p(2.0, 1.0), p(1.0, 0.5), p(-4.0, -2.0)]),
        &["all 4 samples", "one line"],
    );
}
