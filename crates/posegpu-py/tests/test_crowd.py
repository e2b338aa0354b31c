"""Crowds against hand-computed sequence players (UE's: effective rate
clamp(scale * rate / basis + bias), wrapping when looping, stopping at either end otherwise),
on the CPU twin and the GPU."""

import math

import numpy as np
import pytest

import posegpu

HUMANOID = posegpu.procedural.humanoid()
LIB = posegpu.Library(HUMANOID)
LENGTH = dict(zip(LIB.clip_names, LIB.clip_durations.tolist()))  # idle 2, walk 1, run 0.7, wave 2
CLIPS = LIB.clip_names


class Reference:
    """One sequence player, stepped as the spec says (docs/pose-math.md, "Sequence player")."""

    def __init__(self, clip, rate=1.0, rate_basis=1.0, scale=1.0, bias=0.0, clamp=None,
                 start=0.0, loop=True):
        self.length = LENGTH[CLIPS[clip] if isinstance(clip, int) else clip]
        ratio = 0.0 if abs(rate_basis) <= 1e-8 else rate / rate_basis
        r = scale * ratio + bias
        if clamp is not None:
            r = min(max(r, clamp[0]), clamp[1])
        self.rate, self.position, self.loop = r, start, loop

    def step(self, dt):
        """Moves by rate * dt; returns (finished this step, laps passed)."""
        start, end = self.position, self.position + self.rate * dt
        if self.loop:
            length = self.length
            self.position = end - length * math.floor(end / length)
            # Laps: multiples of the length passed, (start, end] forward, [end, start) backward.
            if end > start:
                laps = math.floor(end / length) - math.floor(start / length)
            else:
                laps = math.ceil(start / length) - math.ceil(end / length)
            return False, laps
        self.position = min(max(end, 0.0), self.length)
        travel = self.position - start
        finished = (travel > 0 and self.position >= self.length) or (travel < 0 and self.position <= 0)
        return finished, 0


# Each case: the player's arguments, every one of the rate's parts and both ends exercised.
PLAYERS = [
    dict(clip=1),
    dict(clip=1, rate=-1.0, start=0.3),  # backwards, wrapping below 0
    dict(clip=2, rate=150.0, rate_basis=100.0),  # a rate basis (cm/s over 100)
    dict(clip=3, rate=2.0, scale=0.5, bias=0.25),  # scale and bias: 1.25
    dict(clip=0, rate=3.0, clamp=(-0.5, 0.8)),  # clamped from above: 0.8
    dict(clip=0, rate=-3.0, clamp=(-0.5, 0.8)),  # clamped from below: -0.5
    dict(clip=1, rate=1.0, rate_basis=0.0, bias=0.3),  # a basis of 0 gives a ratio of 0
    dict(clip=2, loop=False),  # stops at its end, finished once
    dict(clip=3, rate=-2.0, start=1.5, loop=False),  # stops at 0 going backwards
    dict(clip=1, rate=4.0, start=0.999),  # several laps a step
    dict(clip=1, rate=-2.5, start=0.2),  # several laps backwards
    dict(clip="run", rate=0.5, scale=-1.0, bias=0.1, start=0.65, clamp=(-0.3, 0.3)),  # by name
]
STEPS = [0.1, 0.25, 0.0, 0.7, 2.3, 0.05, 1.0]


def crowd_of(backend, players):
    crowd = posegpu.Crowd(LIB, backend=backend)
    for p in players:
        crowd.add(posegpu.Player(**p))
    return crowd


def test_players_follow_the_hand_computed_positions(backend):
    crowd = crowd_of(backend, PLAYERS)
    refs = [Reference(**p) for p in PLAYERS]
    for p, ref in zip(PLAYERS, refs):
        assert posegpu.Player(**p).effective_rate == pytest.approx(ref.rate, abs=1e-6)
    assert len(crowd) == len(PLAYERS)
    for dt in STEPS:
        crowd.step(dt)
        results = [ref.step(dt) for ref in refs]
        want = np.array([[r.position] for r in refs], dtype=np.float32)
        got = crowd.positions()
        assert got.shape == (len(PLAYERS), 1)
        np.testing.assert_allclose(got, want, atol=2e-5, err_msg=f"after dt={dt}")
        assert crowd.finished() == [i for i, (f, _) in enumerate(results) if f], f"dt={dt}"
        laps = [0] * len(refs)
        for e in crowd.events():
            assert e["kind"] == "looped" and e["player"] == 0
            laps[e["instance"]] += 1
        assert laps == [n for _, n in results], f"laps after dt={dt}"


def test_restart_and_set_player(backend):
    crowd = crowd_of(backend, [dict(clip=1, start=0.25), dict(clip=0, rate=0.5)])
    crowd.step(0.5)
    np.testing.assert_allclose(crowd.positions()[:, 0], [0.75, 0.25], atol=1e-6)
    crowd.restart(0)
    crowd.set_player(1, 0, posegpu.Player(2, rate=-1.0, start=0.1))
    crowd.step(0.2)
    np.testing.assert_allclose(crowd.positions()[:, 0], [0.45, 0.6], atol=1e-5)


def test_synced_followers_take_the_leaders_phase(backend):
    crowd = posegpu.Crowd(LIB, backend=backend)
    crowd.add([posegpu.Player("walk", weight=0.3, rate=3.0),
               posegpu.Player("run", weight=0.7, rate=0.5)], sync=True)
    crowd.add([posegpu.Player("idle", weight=0.5), posegpu.Player("walk", weight=0.5, rate=2.0)], sync=True)
    leader0, leader1 = Reference("run", rate=0.5), Reference("idle")  # the heaviest; the first on a tie
    for dt in [0.2, 0.45, 0.3]:
        crowd.step(dt)
        leader0.step(dt)
        leader1.step(dt)
        pos = crowd.positions()
        phase0, phase1 = leader0.position / LENGTH["run"], leader1.position / LENGTH["idle"]
        np.testing.assert_allclose(pos[0], [phase0 * LENGTH["walk"], leader0.position], atol=2e-5)
        np.testing.assert_allclose(pos[1], [leader1.position, phase1 * LENGTH["walk"]], atol=2e-5)


def test_a_blend_space_drives_an_agent(backend):
    space = posegpu.BlendSpace1D([(1.4, "walk"), (0.0, "idle"), (3.5, "run")])
    crowd = posegpu.Crowd(LIB, backend=backend)
    plain = crowd.add(posegpu.Player("wave"))
    agent = crowd.add(blend=space, parameter=2.1, sync=True)
    crowd.step(0.1)
    w = crowd.weights()
    assert w.shape == (2, 3) and np.isnan(w[plain, 1:]).all()
    np.testing.assert_allclose(w[agent], [2 / 3, 0.0, 1 / 3], atol=1e-6)  # walk 2/3, run 1/3
    crowd.set_parameter(agent, -5.0)  # clamped to idle
    crowd.step(0.1)
    np.testing.assert_allclose(crowd.weights()[agent], [0.0, 1.0, 0.0], atol=1e-6)
    crowd.set_parameter(agent, 0.7)
    crowd.step(0.1)
    np.testing.assert_allclose(crowd.weights()[agent], [0.5, 0.5, 0.0], atol=1e-6)


def test_crowd_poses_are_the_evaluators_at_the_players_positions(backend):
    crowd = crowd_of(backend, PLAYERS[:6])
    for dt in [0.13, 0.4]:
        crowd.step(dt)
    positions = crowd.positions()[:, 0]
    clips = [LIB.find_clip(p["clip"]) if isinstance(p["clip"], str) else p["clip"] for p in PLAYERS[:6]]
    want = posegpu.Evaluator(LIB).evaluate(clips, positions)
    got = crowd.poses()
    if backend == "cpu":
        np.testing.assert_array_equal(got.component, want.component)
    else:
        np.testing.assert_allclose(got.component, want.component, atol=2e-4)


def root_z(times):
    """The walk's root translation along +Z at clip times, from the evaluator."""
    locals_ = posegpu.Evaluator(LIB).evaluate("walk", np.float32(times)).locals
    return locals_[:, 0, 6].astype(np.float64)


def test_root_motion_moves_the_placement_by_the_roots_travel(backend):
    crowd = posegpu.Crowd(LIB, backend=backend)
    crowd.add(posegpu.Player("walk", start=0.1), root_motion="ref_pose")
    crowd.add(posegpu.Player("walk"))  # no root motion: stays at the identity
    length = LENGTH["walk"]
    z0, z_end = root_z([0.0, length])
    lap = z_end - z0
    position, travelled = 0.1, 0.0
    for dt in [0.3, 0.45, 0.6, 2.2]:
        crowd.step(dt)
        end = position + dt
        laps = math.floor(end / length)
        new = end - laps * length
        # Split where the track wraps: to the end, whole laps, then from the start.
        if laps == 0:
            travelled += float(np.diff(root_z([position, new]))[0])
        else:
            travelled += (z_end - root_z([position])[0]) + (laps - 1) * lap + (root_z([new])[0] - z0)
        position = new
        placement = crowd.placements()
        np.testing.assert_allclose(placement[0, 6], travelled, rtol=1e-4, atol=1e-4)
        np.testing.assert_allclose(placement[1], [0, 0, 0, 1, 0, 0, 0, 1, 1, 1], atol=1e-6)
    # In place, the root shows the reference pose.
    pose = crowd.poses()
    np.testing.assert_allclose(pose.locals[0, 0], HUMANOID.rest[0], atol=1e-6)
    assert crowd.root_motion()[1].tolist() == pytest.approx([0, 0, 0, 1, 0, 0, 0, 1, 1, 1])


def test_montages_play_their_segments_in_turn(backend):
    crowd = posegpu.Crowd(LIB, backend=backend)
    track = crowd.add_montage("combo", [("walk", 0.2, 0.8), ("run", 0.0, 0.7)])
    assert track == LIB.clip_count  # after the clip tracks
    assert crowd.track_length(track) == pytest.approx(1.3)
    crowd.add(posegpu.Player(track, loop=False))
    crowd.step(0.5)
    assert crowd.events() == []
    crowd.step(0.3)  # crosses into the second segment at 0.6
    assert [(e["kind"], e.get("segment")) for e in crowd.events()] == [("segment", 1)]
    assert crowd.finished() == []
    crowd.step(1.0)
    assert crowd.positions()[0, 0] == pytest.approx(1.3)
    assert crowd.finished() == [0]


def test_transitions_end_on_the_new_clips_pose(backend):
    crowd = posegpu.Crowd(LIB, backend=backend)
    a = crowd.add(posegpu.Player("walk"), transitions=True)
    b = crowd.add(posegpu.Player("walk"), transitions=True)
    crowd.step(0.2)
    crowd.transition_to(a, posegpu.Player("run"), 0.3, kind="inertialize")
    crowd.transition_to(b, posegpu.Player("idle"), 0.4, kind="crossfade")
    # The step after transition_to begins the blend (its weights measured at 0 elapsed), each
    # later step adds its dt.
    crowd.step(0.1)
    w = crowd.weights()
    assert w.shape == (2, 2)
    np.testing.assert_allclose(w[b], [0.0, 1.0], atol=1e-6)
    np.testing.assert_allclose(w[a], [1.0, 0.0], atol=1e-6)  # inertialization plays the new clip
    crowd.step(0.1)
    np.testing.assert_allclose(crowd.weights()[b], [0.25, 0.75], atol=1e-5)  # 0.1 of 0.4 s
    mid = crowd.poses()
    for _ in range(4):
        crowd.step(0.1)
    np.testing.assert_allclose(crowd.weights(), [[1.0, 0.0], [1.0, 0.0]], atol=1e-6)
    pos = crowd.positions()[:, 0]
    np.testing.assert_allclose(pos, [0.6 % 0.7, 0.6], atol=1e-5)
    want = posegpu.Evaluator(LIB).evaluate(["run", "idle"], pos)
    np.testing.assert_allclose(crowd.poses().component, want.component, atol=1e-4)
    # Mid-blend the pose was still away from the new clip's.
    new_mid = posegpu.Evaluator(LIB).evaluate("run", [0.1])
    assert np.abs(mid.component[a] - new_mid.component[0]).max() > 1e-3


def test_the_gpu_crowd_refuses_late_agents():
    from conftest import need_gpu

    need_gpu()
    crowd = posegpu.Crowd(LIB, backend="gpu")
    crowd.add(posegpu.Player(0))
    crowd.step(0.1)
    with pytest.raises(posegpu.PlaybackError, match="before the first step"):
        crowd.add(posegpu.Player(1))


@pytest.mark.parametrize("dt", [-0.1, float("nan"), float("inf")])
def test_bad_steps_name_dt(dt):
    crowd = crowd_of("cpu", [dict(clip=0)])
    with pytest.raises(posegpu.ArgumentError, match="dt"):
        crowd.step(dt)


def test_bad_players_and_weights():
    with pytest.raises(posegpu.ArgumentError, match="clamp"):
        posegpu.Player(0, clamp=(1.0, -1.0))
    with pytest.raises(posegpu.ArgumentError, match="rate_basis"):
        posegpu.Player(0, rate_basis=float("nan"))
    with pytest.raises(posegpu.ArgumentError, match="weight"):
        posegpu.Player(0, weight=-1.0)
    crowd = posegpu.Crowd(LIB)
    with pytest.raises(posegpu.PlaybackError, match=r"outside the track.s range \[0, 0.7\]"):
        crowd.add(posegpu.Player("run", start=5.0))  # past the track's end
    with pytest.raises(posegpu.ArgumentError, match="clip"):
        crowd.add(posegpu.Player("sprint"))
    i = crowd.add([posegpu.Player(0), posegpu.Player(1)])
    with pytest.raises(posegpu.PlaybackError):
        crowd.set_weights(i, [0.0, 0.0])  # an all-zero blend
    with pytest.raises(posegpu.ArgumentError, match="instance"):
        crowd.restart(7)


def notify_crossings(markers, length, start, end):
    """Markers passed moving from `start` to `end` (unwrapped) on a looping track of `length`:
    from < x + kL <= end forward, end <= x + kL < from backward; laps are markers at 0."""
    passed = []
    lo, hi = (start, end) if end > start else (end, start)
    for name, x in markers + [("<lap>", 0.0)]:
        for k in range(math.floor((lo - x) / length) - 1, math.ceil((hi - x) / length) + 2):
            at = x + k * length
            if (end > start and start < at <= end) or (end < start and end <= at < start):
                passed.append(name)
    return sorted(passed)


def test_notifies_are_reported_once_per_crossing(backend, tmp_path):
    marks = [("footstep_l", 0.25), ("footstep_r", 0.75)]
    asset = HUMANOID.with_notifies({"walk": marks})
    assert asset.notifies == {"walk": [("footstep_l", 0.25), ("footstep_r", 0.75)]}
    # The same from a sidecar file.
    sidecar = tmp_path / "notifies.json"
    sidecar.write_text('{"walk": [{"name": "footstep_l", "time": 0.25}, {"name": "footstep_r", "time": 0.75}]}')
    assert HUMANOID.with_notifies(str(sidecar)).notifies == asset.notifies
    lib = posegpu.Library(asset)
    crowd = posegpu.Crowd(lib, backend=backend)
    players = [dict(clip="walk", start=0.1), dict(clip="walk", rate=-1.0, start=0.5),
               dict(clip="walk", rate=3.0, start=0.9)]
    for p in players:
        crowd.add(posegpu.Player(**p))
    refs = [Reference(**p) for p in players]
    for dt in [0.15, 0.5, 0.3, 1.2, 0.0]:
        crowd.step(dt)
        for i, ref in enumerate(refs):
            start = ref.position
            ref.step(dt)
            want = notify_crossings(marks, 1.0, start, start + ref.rate * dt)
            got = sorted(e.get("name", "<lap>") for e in crowd.events() if e["instance"] == i)
            assert got == want, f"instance {i}, dt={dt}"
    for e in crowd.events():
        if e["kind"] == "notify":
            assert e["clip"] == lib.find_clip("walk") and e["time"] in (0.25, 0.75)
    with pytest.raises(posegpu.DataError, match="outside the clip's range"):
        HUMANOID.with_notifies({"run": [("late", 5.0)]})
    with pytest.raises(posegpu.ArgumentError, match="notifies"):
        HUMANOID.with_notifies({"sprint": [("x", 0.1)]})
