//! Crowds: instances that play their own sequence players, stepped on the CPU twin or the GPU,
//! with sync, root motion, montages, transitions, notifies, and agents that follow a blend
//! space.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use numpy::PyArray2;
use posegpu::playback::{Agent, EventKind, Montage, RootMotionMode, Segment, TrackId, Transition};
use posegpu::{AnimLibrary, CpuEvaluator, GpuCrowd, GpuOptions, Poses, RootLock, RootMotionAxes};
use pyo3::prelude::*;
use pyo3::sync::MutexExt;
use pyo3::types::PyDict;

use crate::arrays::{f32_matrix, transform_arg, transform_rows, ClipRef};
use crate::blend::{BlendSpace1D, BlendSpace2D, Space};
use crate::errors::{arg_error, detached, guard, to_py, IntoPy, PlaybackError};
use crate::evaluate::{resolve_clips, Pose};
use crate::gpu::{self, Backend};
use crate::library::{ik_arg, Library};
use crate::player::Player;

/// A blend space an agent follows, and the parameter it takes at the next step.
struct Follow {
    space: Py<PyAny>,
    parameter: (f32, f32),
}

/// The crowd's state, behind one lock: the description (and, on the CPU, the state stepped),
/// the GPU's copy once it runs there, and the poses of the last step.
struct State {
    host: posegpu::Crowd,
    gpu: Option<GpuCrowd>,
    /// Players per instance (transitions add one, the outgoing).
    counts: Vec<usize>,
    follows: BTreeMap<usize, Follow>,
    /// The CPU's poses, evaluated every step into the same buffers (inertialization keeps its
    /// state there).
    poses: Poses,
    stepped: bool,
}

/// Instances that play on their own: each `add` gives one its players (UE's sequence
/// players), and `step(dt)` advances every player and evaluates every pose, on the CPU twin
/// or the GPU (`backend="gpu"`: the players' state lives on the device, nothing is uploaded
/// per step but `dt` and what the host changes). Agents are added before the first step on the
/// GPU.
#[pyclass(module = "posegpu", frozen)]
pub struct Crowd {
    library: Py<Library>,
    lib: Arc<AnimLibrary>,
    backend: Backend,
    state: Mutex<State>,
}

fn root_lock(s: &str) -> PyResult<Option<Option<RootLock>>> {
    Ok(match s {
        "ref_pose" => Some(Some(RootLock::RefPose)),
        "first_frame" => Some(Some(RootLock::FirstFrame)),
        "zero" => Some(Some(RootLock::Zero)),
        "extract" => Some(None),
        _ => {
            return Err(arg_error(format!(
                "root_motion: '{s}' is not None, 'ref_pose', 'first_frame', 'zero' or 'extract'"
            )))
        }
    })
}

fn parse_root_axes(s: &str) -> PyResult<RootMotionAxes> {
    match s {
        "everything" => Ok(RootMotionAxes::EVERYTHING),
        "ground_plane" => Ok(RootMotionAxes::GROUND_PLANE),
        "yaw_only" => Ok(RootMotionAxes::YAW_ONLY),
        _ => Err(arg_error(format!(
            "root_axes: '{s}' is not 'everything', 'ground_plane' or 'yaw_only'"
        ))),
    }
}

fn parse_root_mode(s: &str) -> PyResult<RootMotionMode> {
    match s {
        "everything" => Ok(RootMotionMode::FromEverything),
        "montages_only" => Ok(RootMotionMode::FromMontagesOnly),
        "ignore" => Ok(RootMotionMode::Ignore),
        _ => Err(arg_error(format!(
            "root_mode: '{s}' is not 'everything', 'montages_only' or 'ignore'"
        ))),
    }
}

fn transition_kind(s: &str) -> PyResult<Transition> {
    match s {
        "inertialize" => Ok(Transition::Inertialize),
        "crossfade" => Ok(Transition::Crossfade),
        _ => Err(arg_error(format!(
            "kind: '{s}' is not 'inertialize' or 'crossfade'"
        ))),
    }
}

/// The blend space behind `obj` (a BlendSpace1D or BlendSpace2D).
fn space_of<'a>(obj: &'a Bound<'_, PyAny>) -> PyResult<&'a Space> {
    if let Ok(s) = obj.cast::<BlendSpace1D>() {
        return Ok(&s.get().inner);
    }
    if let Ok(s) = obj.cast::<BlendSpace2D>() {
        return Ok(&s.get().inner);
    }
    Err(arg_error("blend: expected a BlendSpace1D or BlendSpace2D"))
}

impl Crowd {
    /// The state, locked without holding the GIL while it waits (a step in another thread
    /// holds the lock without the GIL).
    fn state(&self, py: Python<'_>) -> std::sync::MutexGuard<'_, State> {
        self.state
            .lock_py_attached(py)
            .unwrap_or_else(|e| e.into_inner())
    }

    fn check_instance(state: &State, instance: usize) -> PyResult<()> {
        if instance < state.counts.len() {
            Ok(())
        } else {
            Err(arg_error(format!(
                "instance: {instance} is not an instance (the crowd has {})",
                state.counts.len()
            )))
        }
    }

    fn players(&self, players: &Bound<'_, PyAny>) -> PyResult<Vec<posegpu::playback::Player>> {
        let list: Vec<Player> = match players.extract::<Player>() {
            Ok(p) => vec![p],
            Err(_) => players
                .extract()
                .map_err(|_| arg_error("players: expected a Player or a list of Players"))?,
        };
        list.iter().map(|p| p.to_rust(&self.lib)).collect()
    }

    /// One value per player, (N, P), NaN where an instance has fewer players.
    fn per_player<'py>(
        &self,
        py: Python<'py>,
        value: impl Fn(&posegpu::playback::Player) -> f32,
    ) -> PyResult<Bound<'py, PyArray2<f32>>> {
        let state = self.state(py);
        let players: Vec<posegpu::playback::Player> = match &state.gpu {
            Some(g) => g.read_players().py_err()?,
            None => state.host.all_players().to_vec(),
        };
        let width = state.counts.iter().copied().max().unwrap_or(0);
        let mut out = vec![f32::NAN; state.counts.len() * width];
        let mut at = 0;
        for (i, &c) in state.counts.iter().enumerate() {
            for k in 0..c {
                out[i * width + k] = value(&players[at + k]);
            }
            at += c;
        }
        f32_matrix(py, out, state.counts.len(), width)
    }

    /// Steps the GPU crowd, made on its first step from the state described so far.
    fn step_gpu(&self, py: Python<'_>, state: &mut State, dt: f32) -> PyResult<()> {
        if state.gpu.is_none() {
            if state.counts.is_empty() {
                return Err(PlaybackError::new_err(
                    "playback: the crowd has no instances",
                ));
            }
            let ctx = gpu::context(py)?;
            let (lib, host) = (&*self.lib, &state.host);
            let g = detached(py, move || {
                GpuCrowd::new(&ctx, lib, host, &GpuOptions::default())
            })?;
            state.gpu = Some(g);
        }
        let g = state.gpu.as_mut().expect("made above");
        detached(py, move || g.advance(dt))
    }
}

#[pymethods]
impl Crowd {
    #[new]
    #[pyo3(signature = (library, backend="cpu"))]
    fn new(py: Python<'_>, library: Py<Library>, backend: &str) -> PyResult<Self> {
        guard(|| {
            let backend = Backend::parse(backend)?;
            if backend == Backend::Gpu {
                gpu::context(py)?;
            }
            let lib = library.get().lib.clone();
            let host = posegpu::Crowd::new(&lib);
            Ok(Self {
                library,
                lib,
                backend,
                state: Mutex::new(State {
                    host,
                    gpu: None,
                    counts: Vec::new(),
                    follows: BTreeMap::new(),
                    poses: Poses::default(),
                    stepped: false,
                }),
            })
        })
    }

    /// Adds an instance (an agent) and returns its index. `players`: a Player or a list of
    /// them, blended by weight; `sync` keeps them in step by normalized phase (the heaviest
    /// leads); `root_motion`: None (none extracted), "ref_pose", "first_frame" or "zero" (root
    /// motion extracted into the placement and the root locked in the pose so), or "extract"
    /// (extracted, the pose keeping it); `root_axes`: "everything", "ground_plane" or
    /// "yaw_only"; `root_mode`: "everything", "montages_only" or "ignore"; `ik`: IK weights
    /// after retargeting (None: the library's for retargeted clips); `transitions`: room for
    /// `transition_to` (one player, not synced). With `blend` (a BlendSpace1D/2D) the agent
    /// follows the space: `players` default to one per sample (its clip, looping), weighted
    /// by the space at `parameter` (x or (x, y)), changed by `set_parameter`.
    #[pyo3(signature = (players=None, sync=false, root_motion=None, root_axes="everything", root_mode="everything", ik=None, transitions=false, blend=None, parameter=None))]
    #[allow(clippy::too_many_arguments)]
    fn add(
        &self,
        py: Python<'_>,
        players: Option<&Bound<'_, PyAny>>,
        sync: bool,
        root_motion: Option<&str>,
        root_axes: &str,
        root_mode: &str,
        ik: Option<&Bound<'_, PyAny>>,
        transitions: bool,
        blend: Option<&Bound<'_, PyAny>>,
        parameter: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<usize> {
        guard(|| {
            let blend = blend.filter(|b| !b.is_none());
            let mut list = match (players.filter(|p| !p.is_none()), blend) {
                (Some(p), _) => self.players(p)?,
                (None, Some(b)) => {
                    let space = space_of(b)?;
                    let ids = resolve_clips(&self.lib, space.clips.clone(), "blend samples")?;
                    ids.iter()
                        .map(|&c| posegpu::playback::Player::new(TrackId(c)))
                        .collect()
                }
                (None, None) => return Err(arg_error("players: give players, or a blend space")),
            };
            let follow = match blend {
                None => None,
                Some(b) => {
                    let space = space_of(b)?;
                    if list.len() != space.clips.len() {
                        return Err(arg_error(format!(
                            "players: {} players for a blend space of {} samples",
                            list.len(),
                            space.clips.len()
                        )));
                    }
                    let (x, y) = match parameter.filter(|p| !p.is_none()) {
                        None => return Err(arg_error("parameter: a blend agent needs one")),
                        Some(p) => match p.extract::<f32>() {
                            Ok(x) => space.parameter(x, None)?,
                            Err(_) => {
                                let (x, y): (f32, f32) = p
                                    .extract()
                                    .map_err(|_| arg_error("parameter: expected x or (x, y)"))?;
                                space.parameter(x, Some(y))?
                            }
                        },
                    };
                    for (p, w) in list.iter_mut().zip(space.weights(x, y)) {
                        p.weight = w;
                    }
                    Some(Follow {
                        space: b.clone().unbind(),
                        parameter: (x, y),
                    })
                }
            };
            let mut agent = Agent::blend(&list)
                .with_root_axes(parse_root_axes(root_axes)?)
                .with_root_mode(parse_root_mode(root_mode)?);
            if sync {
                agent = agent.synced();
            }
            if let Some(lock) = root_motion.map(root_lock).transpose()? {
                agent = agent.with_root_motion(lock.flatten());
            }
            let library = self.library.get();
            match ik.filter(|i| !i.is_none()) {
                Some(i) => agent = agent.with_ik(ik_arg(Some(i))?),
                None if library.has_plans => agent = agent.with_ik(library.ik),
                None => {}
            }
            if transitions {
                agent = agent.with_transitions();
            }
            let mut state = self.state(py);
            if state.gpu.is_some() {
                return Err(PlaybackError::new_err(
                    "playback: agents are added before the first step on the GPU backend",
                ));
            }
            let instance = state.host.add(&agent).py_err()?;
            state.counts.push(list.len() + usize::from(transitions));
            if let Some(f) = follow {
                state.follows.insert(instance, f);
            }
            Ok(instance)
        })
    }

    /// Adds a montage: clip segments `[(clip, start, end), ...]` played one after the other
    /// (UE's montage slot track). Returns its track, for `Player(track)`.
    fn add_montage(
        &self,
        py: Python<'_>,
        name: &str,
        segments: Vec<(Bound<'_, PyAny>, f32, f32)>,
    ) -> PyResult<u32> {
        guard(|| {
            let mut list = Vec::new();
            for (i, (clip, start, end)) in segments.iter().enumerate() {
                let r = match clip.extract::<i64>() {
                    Ok(c) => ClipRef::Index(c),
                    Err(_) => ClipRef::Name(clip.extract().map_err(|_| {
                        arg_error(format!("segments[{i}]: the clip is an index or a name"))
                    })?),
                };
                let c = resolve_clips(&self.lib, vec![r], &format!("segments[{i}]"))?[0];
                list.push(Segment::new(c, *start, *end));
            }
            let mut state = self.state(py);
            if state.gpu.is_some() {
                return Err(PlaybackError::new_err(
                    "playback: montages are added before the first step on the GPU backend",
                ));
            }
            let track = state
                .host
                .add_montage(&self.lib, &Montage::new(name, &list))
                .py_err()?;
            Ok(track.0)
        })
    }

    /// A track's length in seconds (a clip's duration, or a montage's segments together).
    fn track_length(&self, py: Python<'_>, track: u32) -> PyResult<f32> {
        guard(|| {
            self.state(py)
                .host
                .track_length(TrackId(track))
                .ok_or_else(|| arg_error(format!("track: {track} is not a track of this crowd")))
        })
    }

    /// Advances every player by `dt` seconds (finite, not negative: play backwards with a
    /// rate), moves placements by root motion, lists finished instances and events, and
    /// evaluates every pose. Blend agents first take their parameter.
    fn step(&self, py: Python<'_>, dt: f64) -> PyResult<()> {
        guard(|| {
            let dt = dt as f32;
            if !(dt.is_finite() && dt >= 0.0) {
                return Err(arg_error(format!(
                    "dt is {dt}: a step is finite and not negative (play backwards with a rate)"
                )));
            }
            let mut state = self.state(py);
            let weights: Vec<(usize, Vec<f32>)> = state
                .follows
                .iter()
                .map(|(&i, f)| {
                    let space = space_of(f.space.bind(py))?;
                    Ok((i, space.weights(f.parameter.0, f.parameter.1)))
                })
                .collect::<PyResult<_>>()?;
            let state = &mut *state;
            for (i, w) in weights {
                match state.gpu.as_mut() {
                    Some(g) => g.set_weights(i, &w).py_err()?,
                    None => state.host.set_weights(i, &w).py_err()?,
                }
            }
            match self.backend {
                Backend::Gpu => self.step_gpu(py, state, dt)?,
                Backend::Cpu => {
                    let lib = &*self.lib;
                    let (host, poses) = (&mut state.host, &mut state.poses);
                    detached(py, move || {
                        host.advance(lib, dt)?;
                        CpuEvaluator::new(lib).evaluate(&host.batch(), poses)
                    })?;
                }
            }
            state.stepped = true;
            Ok(())
        })
    }

    /// Sets the parameter a blend agent takes at the next step: x, or x and y.
    #[pyo3(signature = (instance, x, y=None))]
    fn set_parameter(
        &self,
        py: Python<'_>,
        instance: usize,
        x: f32,
        y: Option<f32>,
    ) -> PyResult<()> {
        guard(|| {
            let mut state = self.state(py);
            Self::check_instance(&state, instance)?;
            let f = state.follows.get_mut(&instance).ok_or_else(|| {
                arg_error(format!(
                    "instance: {instance} does not follow a blend space"
                ))
            })?;
            f.parameter = space_of(f.space.bind(py))?.parameter(x, y)?;
            Ok(())
        })
    }

    /// Every player's position in track seconds, float32 (N, P): P the most players an
    /// instance has, NaN where an instance has fewer (an agent with transitions has its
    /// outgoing player second).
    fn positions<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyArray2<f32>>> {
        guard(|| self.per_player(py, |p| p.position))
    }

    /// Every player's weight in its instance's blend, float32 (N, P), NaN-padded as
    /// `positions` (a blend agent's are its space's weights at its parameter).
    fn weights<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyArray2<f32>>> {
        guard(|| self.per_player(py, |p| p.weight))
    }

    /// The instances that reached the end of a non-looping track in the last step, ascending.
    fn finished(&self, py: Python<'_>) -> PyResult<Vec<u32>> {
        guard(|| {
            let state = self.state(py);
            match &state.gpu {
                Some(g) => g.finished().py_err(),
                None => Ok(state.host.finished().to_vec()),
            }
        })
    }

    /// What the players of weight over 1e-5 passed in the last step, sorted by instance,
    /// player and kind: dicts with "instance", "player", "kind" ("notify", "looped",
    /// "segment"), and for a notify its "name", "clip" and "time", for a segment its
    /// "segment".
    fn events<'py>(&self, py: Python<'py>) -> PyResult<Vec<Bound<'py, PyDict>>> {
        guard(|| {
            let state = self.state(py);
            let events = match &state.gpu {
                Some(g) => g.events().py_err()?,
                None => state.host.events().to_vec(),
            };
            events
                .iter()
                .map(|e| {
                    let d = PyDict::new(py);
                    d.set_item("instance", e.instance)?;
                    d.set_item("player", e.player)?;
                    match e.kind {
                        EventKind::Notify(id) => {
                            d.set_item("kind", "notify")?;
                            if let Some(n) = self.lib.notify(id) {
                                d.set_item("name", &n.name)?;
                                d.set_item("clip", n.clip.0)?;
                                d.set_item("time", n.time)?;
                            }
                        }
                        EventKind::Looped => d.set_item("kind", "looped")?,
                        EventKind::Segment(k) => {
                            d.set_item("kind", "segment")?;
                            d.set_item("segment", k)?;
                        }
                    }
                    Ok(d)
                })
                .collect()
        })
    }

    /// The poses of the last step (before any step: the crowd as it stands, a step of 0).
    fn poses(&self, py: Python<'_>) -> PyResult<Pose> {
        guard(|| {
            if !self.state(py).stepped {
                self.step(py, 0.0)?;
            }
            let state = self.state(py);
            let poses = match &state.gpu {
                Some(g) => {
                    let e = g.evaluator();
                    detached(py, move || e.read_back())?
                }
                None => state.poses.clone(),
            };
            Ok(Pose::new(poses, None, false))
        })
    }

    /// Each instance's placement, float32 (N, 10) (quaternion, translation, scale): where it
    /// started, moved by every root motion since.
    fn placements<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyArray2<f32>>> {
        guard(|| {
            let state = self.state(py);
            let p = match &state.gpu {
                Some(g) => g.read_placements().py_err()?,
                None => state.host.placements().to_vec(),
            };
            Ok(transform_rows(py, &p))
        })
    }

    /// Each instance's root motion over the last step, float32 (N, 10) (the identity where
    /// it is not extracted).
    fn root_motion<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyArray2<f32>>> {
        guard(|| {
            let state = self.state(py);
            let m = match &state.gpu {
                Some(g) => g.read_root_motion().py_err()?,
                None => state.host.root_motion().to_vec(),
            };
            Ok(transform_rows(py, &m))
        })
    }

    /// Moves `instance` to `placement` (10 floats: quaternion, translation, scale).
    fn set_placement(
        &self,
        py: Python<'_>,
        instance: usize,
        placement: &Bound<'_, PyAny>,
    ) -> PyResult<()> {
        guard(|| {
            let t = transform_arg(placement, "placement")?;
            let mut state = self.state(py);
            Self::check_instance(&state, instance)?;
            match state.gpu.as_mut() {
                Some(g) => g.set_placement(instance, t),
                None => state.host.set_placement(instance, t),
            }
            .py_err()
        })
    }

    /// Sets the weights of `instance`'s players, one per player.
    fn set_weights(&self, py: Python<'_>, instance: usize, weights: Vec<f32>) -> PyResult<()> {
        guard(|| {
            let mut state = self.state(py);
            Self::check_instance(&state, instance)?;
            if state.follows.contains_key(&instance) {
                return Err(arg_error(format!(
                    "instance: {instance} follows a blend space; set its parameter instead"
                )));
            }
            match state.gpu.as_mut() {
                Some(g) => g.set_weights(instance, &weights),
                None => state.host.set_weights(instance, &weights),
            }
            .py_err()
        })
    }

    /// Replaces player `k` of `instance`.
    fn set_player(
        &self,
        py: Python<'_>,
        instance: usize,
        k: usize,
        player: Player,
    ) -> PyResult<()> {
        guard(|| {
            let p = player.to_rust(&self.lib)?;
            let mut state = self.state(py);
            Self::check_instance(&state, instance)?;
            match state.gpu.as_mut() {
                Some(g) => g.set_player(instance, k, p),
                None => state.host.set_player(instance, k, p),
            }
            .py_err()
        })
    }

    /// Puts every player of `instance` back at its start position.
    fn restart(&self, py: Python<'_>, instance: usize) -> PyResult<()> {
        guard(|| {
            let mut state = self.state(py);
            Self::check_instance(&state, instance)?;
            match state.gpu.as_mut() {
                Some(g) => g.restart(instance),
                None => state.host.restart(instance),
            }
            .py_err()
        })
    }

    /// Switches `instance` (added with `transitions=True`) to `player` over `blend_time`
    /// seconds, beginning with the next step: "inertialize" (UE5's inertialization: only the
    /// new clip is evaluated, the offset to the old pose decays) or "crossfade".
    #[pyo3(signature = (instance, player, blend_time, kind="inertialize"))]
    fn transition_to(
        &self,
        py: Python<'_>,
        instance: usize,
        player: Player,
        blend_time: f32,
        kind: &str,
    ) -> PyResult<()> {
        guard(|| {
            let kind = transition_kind(kind)?;
            if !(blend_time.is_finite() && blend_time >= 0.0) {
                return Err(arg_error(format!(
                    "blend_time is {blend_time}: it is finite and not negative"
                )));
            }
            let p = player.to_rust(&self.lib)?;
            let mut state = self.state(py);
            Self::check_instance(&state, instance)?;
            match state.gpu.as_mut() {
                Some(g) => g.transition_to(instance, p, blend_time, kind),
                None => state.host.transition_to(instance, p, blend_time, kind),
            }
            .map_err(to_py)
        })
    }

    /// "cpu" or "gpu".
    #[getter]
    fn backend(&self) -> &'static str {
        self.backend.name()
    }

    /// The number of instances.
    fn __len__(&self, py: Python<'_>) -> usize {
        self.state(py).counts.len()
    }

    fn __repr__(&self, py: Python<'_>) -> String {
        format!(
            "<posegpu.Crowd on {}: {} instances>",
            self.backend.name(),
            self.state(py).counts.len()
        )
    }
}
