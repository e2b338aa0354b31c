"""Blend-space weights against hand-computed ones: linear between 1-D neighbours, barycentric in
a triangle, the nearest hull point outside, bilinear on a grid; one weight per sample in the
order given."""

import math

import numpy as np
import pytest

import posegpu


def lerp_weights(xs, x):
    """The 1-D rule by hand: clamp, then the two neighbours linearly."""
    order = sorted(range(len(xs)), key=lambda i: xs[i])
    x = min(max(x, xs[order[0]]), xs[order[-1]])
    w = [0.0] * len(xs)
    for a, b in zip(order, order[1:]):
        if xs[a] <= x <= xs[b]:
            t = (x - xs[a]) / (xs[b] - xs[a])
            w[a], w[b] = 1 - t, t
            return w
    w[order[-1]] = 1.0
    return w


@pytest.mark.parametrize("x", [-3.0, 0.0, 0.35, 1.4, 2.0, 3.49, 3.5, 9.0])
def test_1d_weights_are_linear_between_neighbours(x):
    xs = [1.4, 0.0, 3.5, 2.0]  # given out of order
    space = posegpu.BlendSpace1D([(p, i) for i, p in enumerate(xs)])
    assert len(space) == 4
    np.testing.assert_allclose(space.weights(x), lerp_weights(xs, x), atol=1e-6)


def barycentric(a, b, c, p):
    (ax, ay), (bx, by), (cx, cy), (px, py) = a, b, c, p
    det = (by - cy) * (ax - cx) + (cx - bx) * (ay - cy)
    wa = ((by - cy) * (px - cx) + (cx - bx) * (py - cy)) / det
    wb = ((cy - ay) * (px - cx) + (ax - cx) * (py - cy)) / det
    return wa, wb, 1 - wa - wb


def test_2d_weights_inside_a_triangle_are_barycentric():
    pts = [(0.0, 0.0), (4.0, 0.0), (0.0, 3.0)]
    space = posegpu.BlendSpace2D([(x, y, i) for i, (x, y) in enumerate(pts)])
    for p in [(1.0, 1.0), (0.5, 2.0), (3.0, 0.25), (0.0, 0.0), (2.0, 1.5)]:
        np.testing.assert_allclose(space.weights(*p), barycentric(*pts, p), atol=1e-6)


def test_2d_weights_outside_clamp_to_the_nearest_hull_edge():
    pts = [(0.0, 0.0), (2.0, 0.0), (0.0, 2.0)]
    space = posegpu.BlendSpace2D([(x, y, i) for i, (x, y) in enumerate(pts)])
    # Below the bottom edge at x = 0.5: its nearest hull point is (0.5, 0) on edge 0-1.
    np.testing.assert_allclose(space.weights(0.5, -3.0), [0.75, 0.25, 0.0], atol=1e-6)
    # Beyond the hypotenuse: (3, 3) projects to (1, 1), half way from sample 1 to sample 2.
    np.testing.assert_allclose(space.weights(3.0, 3.0), [0.0, 0.5, 0.5], atol=1e-6)
    # Beyond a corner: the corner alone.
    np.testing.assert_allclose(space.weights(-1.0, -1.0), [1.0, 0.0, 0.0], atol=1e-6)


def test_2d_scattered_samples_weigh_within_their_delaunay_triangle():
    # A square with its centre: the four triangles all have the centre as a corner, and the
    # right one, (2,0) (2,2) (1,1), holds the points with x > y and x + y > 2.
    pts = [(0.0, 0.0), (2.0, 0.0), (2.0, 2.0), (0.0, 2.0), (1.0, 1.0)]
    space = posegpu.BlendSpace2D([(x, y, f"clip{i}") for i, (x, y) in enumerate(pts)])
    for p in [(1.6, 0.8), (1.9, 1.5), (1.2, 1.0)]:
        want = [0.0] * 5
        for i, v in zip([1, 2, 4], barycentric(pts[1], pts[2], pts[4], p)):
            want[i] = v
        np.testing.assert_allclose(space.weights(*p), want, atol=1e-6)


@pytest.mark.parametrize("p", [(0.25, 0.5), (1.0, 1.0), (1.5, 0.0), (-1.0, 5.0), (1.9, 1.1)])
def test_grid_weights_are_bilinear(p):
    xs, ys = [0.0, 1.0, 2.0], [0.0, 1.0]
    samples = [(x, y, f"c{x}{y}") for y in ys for x in xs]
    samples = samples[::-1]  # any order
    space = posegpu.BlendSpace2D(samples, kind="grid")
    px, py = min(max(p[0], 0.0), 2.0), min(max(p[1], 0.0), 1.0)
    want = []
    for x, y, _ in samples:
        # The tent function of each corner: (1 - |dx|)(1 - |dy|) within a cell.
        want.append(max(0.0, 1 - abs(px - x)) * max(0.0, 1 - abs(py - y)))
    np.testing.assert_allclose(space.weights(*p), want, atol=1e-6)


def test_bad_blend_spaces_are_errors():
    with pytest.raises(posegpu.PlaybackError, match="both at position"):
        posegpu.BlendSpace1D([(1.0, 0), (1.0, 1)])
    with pytest.raises(posegpu.PlaybackError, match="one line"):
        posegpu.BlendSpace2D([(0, 0, 0), (1, 1, 1), (2, 2, 2)])
    with pytest.raises(posegpu.ArgumentError, match="fill a grid"):
        posegpu.BlendSpace2D([(0, 0, 0), (1, 0, 1), (0, 1, 2)], kind="grid")
    with pytest.raises(posegpu.ArgumentError, match="kind"):
        posegpu.BlendSpace2D([(0, 0, 0), (1, 0, 1), (0, 1, 2)], kind="hexagonal")
    with pytest.raises(posegpu.ArgumentError, match="samples\\[1\\]"):
        posegpu.BlendSpace1D([(0.0, 0), ("x", 1)])
    space = posegpu.BlendSpace1D([(0.0, 0), (1.0, 1)])
    with pytest.raises(posegpu.ArgumentError, match="x is NaN"):
        space.weights(math.nan)
