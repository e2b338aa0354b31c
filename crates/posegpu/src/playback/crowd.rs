//! A crowd's state: each instance's group of players, the tracks they play, the transitions
//! under way and what the last step produced, the one state both steppers advance (`cpu/crowd.rs`
//! on the CPU, [`crate::GpuCrowd`] on the GPU). Its groups and tracks are packed as
//! [`super::state`] lays them out for the crowd passes.

use super::state::{Group, Timeline};
use super::{Agent, Event, Montage, Player, RootMotionMode, TrackId, Transition};
use crate::batch::{ClipSample, InertialStart, InstanceLayers, PoseBatch, RootLock};
use crate::error::{Error, Result};
use crate::layout::ZERO_WEIGHT;
use crate::layout::{
    GROUP_IGNORE_MOTION, GROUP_LOCK_SHIFT, GROUP_MONTAGES_ONLY, GROUP_ROOT_MOTION, GROUP_SYNC,
    GROUP_TRANSITIONS,
};
use crate::library::AnimLibrary;
use crate::math::blend::kept_weights;
use crate::Transform;

/// A transition under way: how, its blend time, the seconds since it began, and for an
/// inertialization the step it began with (its length and the old player's position before
/// it: the old pose's velocity).
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct TransitionState {
    pub kind: Transition,
    pub blend_time: f32,
    pub elapsed: f32,
    pub phase: Phase,
    pub dt: f32,
    pub before: f32,
    /// Seconds into the inertialization this one interrupted, when it did.
    pub interrupted: Option<f32>,
}

/// Where a transition is: asked for (its first step is the next), on the step it began (the
/// offsets are measured when it is evaluated), or blending.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Phase {
    Asked,
    Starting,
    Blending,
}

impl TransitionState {
    /// One step of `dt` (`before`: the outgoing player's position before it); true once the
    /// transition is over.
    pub(crate) fn step(&mut self, dt: f32, before: f32) -> bool {
        match self.phase {
            Phase::Asked => {
                self.phase = Phase::Starting;
                // A step of 0 measures no velocity (a tiny step keeps the start's marker).
                self.dt = dt.max(1e-6);
                self.before = before;
                // The interrupted transition would have gone on by this step too.
                if let Some(t) = &mut self.interrupted {
                    *t += dt;
                }
            }
            Phase::Starting | Phase::Blending => {
                self.phase = Phase::Blending;
                self.elapsed += dt;
            }
        }
        self.elapsed >= self.blend_time
    }

    /// An inertialization layer's blend time, elapsed seconds and start step for `transition`
    /// (idle, all 0, between transitions, for crossfades, and until one begins).
    pub(crate) fn layer_words(transition: Option<Self>) -> [f32; 3] {
        match transition {
            Some(t) if t.kind == Transition::Inertialize && t.phase != Phase::Asked => {
                let dt = if t.phase == Phase::Starting {
                    t.dt
                } else {
                    0.0
                };
                [t.blend_time, t.elapsed, dt]
            }
            _ => [0.0; 3],
        }
    }

    /// Steps `transition` by `dt` (`before`: the outgoing player's position before the step)
    /// and clears it once over. Returns the new and outgoing players' weights: a crossfade's
    /// ramp, or 1 and 0 (inertialization, or over).
    pub(crate) fn step_weights(transition: &mut Option<Self>, dt: f32, before: f32) -> [f32; 2] {
        let Some(t) = transition else {
            return [1.0, 0.0];
        };
        if t.step(dt, before) {
            *transition = None;
            return [1.0, 0.0];
        }
        match t.kind {
            Transition::Crossfade => {
                let alpha = (t.elapsed / t.blend_time).clamp(0.0, 1.0);
                [alpha, 1.0 - alpha]
            }
            Transition::Inertialize => [1.0, 0.0],
        }
    }
}

/// A crowd's players and what they produce each step. [`Crowd::advance`] steps it on the CPU;
/// [`crate::GpuCrowd`] starts from it and steps the same state on the GPU.
#[derive(Clone, Debug, PartialEq)]
pub struct Crowd {
    pub(crate) timeline: Timeline,
    pub(crate) groups: Vec<Group>,
    pub(crate) players: Vec<Player>,
    pub(crate) motion: Vec<Transform>,
    pub(crate) placements: Vec<Transform>,
    pub(crate) finished: Vec<u32>,
    pub(crate) events: Vec<Event>,
}

impl Crowd {
    /// An empty crowd that can play every clip of `lib` (track `k` is clip `k`).
    pub fn new(lib: &AnimLibrary) -> Self {
        Self {
            timeline: Timeline::new(lib),
            groups: Vec::new(),
            players: Vec::new(),
            motion: Vec::new(),
            placements: Vec::new(),
            finished: Vec::new(),
            events: Vec::new(),
        }
    }

    /// Adds a montage's track (its segments checked against `lib`).
    pub fn add_montage(&mut self, lib: &AnimLibrary, montage: &Montage) -> Result<TrackId> {
        self.timeline.add_montage(lib, montage)
    }

    /// Checks that the crowd was made for `lib` (its clip tracks are `lib`'s clips).
    pub(crate) fn check_library(&self, lib: &AnimLibrary) -> Result<()> {
        let same = self.timeline.tracks.len() >= lib.clip_count()
            && (0..lib.clip_count() as u32).all(|k| {
                let s = self.timeline.segments(TrackId(k));
                s.len() == 1 && s[0].clip == k && s[0].length == lib.data().clip_data(k).duration
            });
        if same {
            Ok(())
        } else {
            Err(Error::Playback {
                what: "the crowd was made for another library (its clip tracks differ)".into(),
            })
        }
    }

    /// The length of a track in seconds.
    pub fn track_length(&self, track: TrackId) -> Option<f32> {
        self.timeline.get(track).map(|t| t.length)
    }

    /// Adds an instance (its players checked first); returns its index. Its placement starts
    /// at the identity.
    pub fn add(&mut self, agent: &Agent) -> Result<usize> {
        let instance = self.groups.len();
        if agent.players.is_empty() {
            return Err(bad(instance, "no players".into()));
        }
        for (k, p) in agent.players.iter().enumerate() {
            self.check_player(instance, k, p)?;
        }
        check_weights(instance, agent.players.iter().map(|p| p.weight))?;
        if let Some(w) = agent.ik.filter(|w| !w.is_valid()) {
            return Err(bad(
                instance,
                format!("IK weights {w:?}: each must be within 0..=1"),
            ));
        }
        let (lock, axes) = (RootLock::code(agent.in_place), agent.root_axes.code());
        let mode = match agent.root_mode {
            RootMotionMode::FromEverything => 0,
            RootMotionMode::FromMontagesOnly => GROUP_MONTAGES_ONLY,
            RootMotionMode::Ignore => GROUP_IGNORE_MOTION,
        };
        let flags = (u32::from(agent.sync) * GROUP_SYNC)
            | (u32::from(agent.root_motion) * GROUP_ROOT_MOTION)
            | mode
            | (lock | axes) << GROUP_LOCK_SHIFT;
        if agent.transitions && (agent.players.len() != 1 || agent.sync) {
            let w = "transitions need an agent of one player, not synced (it gets a second, the \
                     outgoing, which keeps its own time)";
            return Err(bad(instance, w.into()));
        }
        let flags = flags | (u32::from(agent.transitions) * GROUP_TRANSITIONS);
        self.groups.push(Group {
            first: self.players.len() as u32,
            count: agent.players.len() as u32 + u32::from(agent.transitions),
            flags,
            ik: agent.ik,
            transition: None,
        });
        self.players.extend_from_slice(&agent.players);
        if agent.transitions {
            self.players.push(agent.players[0].with_weight(0.0));
        }
        self.motion.push(Transform::IDENTITY);
        self.placements.push(Transform::IDENTITY);
        Ok(instance)
    }

    fn check_player(&self, instance: usize, k: usize, p: &Player) -> Result<()> {
        let what = |w: String| bad(instance, format!("player {k}: {w}"));
        let Some(track) = self.timeline.get(p.track) else {
            let n = self.timeline.tracks.len();
            return Err(what(format!(
                "track {} does not exist (the crowd has {n})",
                p.track.0
            )));
        };
        if let Some(problem) = p.rate.problem() {
            return Err(what(problem));
        }
        for (name, pos) in [
            ("position", p.position),
            ("start position", p.start_position),
        ] {
            if !(0.0..=track.length).contains(&pos) {
                return Err(what(format!(
                    "{name} {pos} lies outside the track's range [0, {}]",
                    track.length
                )));
            }
        }
        Ok(())
    }

    /// The number of instances.
    pub fn len(&self) -> usize {
        self.groups.len()
    }

    /// True when the crowd has no instances.
    pub fn is_empty(&self) -> bool {
        self.groups.is_empty()
    }

    /// The players of `instance`.
    pub fn players(&self, instance: usize) -> &[Player] {
        &self.players[self.groups[instance].players()]
    }

    /// Every player, instance after instance.
    pub fn all_players(&self) -> &[Player] {
        &self.players
    }

    /// Switches `instance` (added [`Agent::with_transitions`]) to `player` over `blend_time`
    /// seconds: its current player becomes the outgoing one, and the transition begins with
    /// the next step. A blend time of 0 switches at once. An instance without transitions, a
    /// bad player, or a blend time that is negative or not finite is an error, and changes
    /// nothing.
    pub fn transition_to(
        &mut self,
        instance: usize,
        player: Player,
        blend_time: f32,
        kind: Transition,
    ) -> Result<()> {
        let g = *self.group(instance)?;
        if g.flags & GROUP_TRANSITIONS == 0 {
            let w = "it was added without transitions (Agent::with_transitions)";
            return Err(bad(instance, w.into()));
        }
        if !(blend_time.is_finite() && blend_time >= 0.0) {
            let w = format!("blend time {blend_time} is not a finite, non-negative number");
            return Err(bad(instance, w));
        }
        self.check_player(instance, 0, &player)?;
        // An inertialization under way is carried into the next one (no pop).
        let interrupted = g
            .transition
            .filter(|t| t.kind == Transition::Inertialize && t.phase != Phase::Asked)
            .map(|t| t.elapsed);
        let (new, old) = (g.first as usize, g.first as usize + 1);
        let fading = blend_time > 0.0;
        let crossfade = fading && kind == Transition::Crossfade;
        self.players[old] = self.players[new].with_weight(if crossfade { 1.0 } else { 0.0 });
        self.players[new] = player.with_weight(if crossfade { 0.0 } else { 1.0 });
        self.groups[instance].transition = fading.then_some(TransitionState {
            kind,
            blend_time,
            elapsed: 0.0,
            phase: Phase::Asked,
            dt: 0.0,
            before: 0.0,
            interrupted,
        });
        Ok(())
    }

    /// The inertialization layer of an instance with transitions, as its frame always has it
    /// (two samples of the outgoing player: now, and before its last step): idle (blend time 0)
    /// between transitions.
    fn inertialization<'b>(&self, g: &Group, instance: InstanceLayers<'b>) -> InstanceLayers<'b> {
        let old = &self.players[g.first as usize + 1];
        let lock = g.lock().filter(|_| g.extracts(&self.timeline, old.track));
        let sample = |pos: f32| {
            let (clip, time) = self.timeline.locate(old.track, pos);
            ClipSample::new(clip, time, false)
                .with_root_lock(lock)
                .with_root_axes(g.axes())
        };
        let [blend_time, elapsed, dt] = TransitionState::layer_words(g.transition);
        let before = g.transition.map_or(old.position, |t| t.before);
        let interrupted = g
            .transition
            .and_then(|t| t.interrupted)
            .filter(|_| dt > 0.0);
        let start = InertialStart {
            now: sample(old.position),
            before: sample(before),
            dt,
            interrupted,
        };
        instance.inertialize_with(blend_time, elapsed, start)
    }

    /// Replaces player `k` of `instance` (checked first).
    pub fn set_player(&mut self, instance: usize, k: usize, player: Player) -> Result<()> {
        let at = self.player_index(instance, k)?;
        self.check_player(instance, k, &player)?;
        let mut weights: Vec<f32> = self.players(instance).iter().map(|p| p.weight).collect();
        weights[k] = player.weight;
        check_weights(instance, weights.into_iter())?;
        self.players[at] = player;
        Ok(())
    }

    /// Sets the weights of `instance`'s players, one per player.
    pub fn set_weights(&mut self, instance: usize, weights: &[f32]) -> Result<()> {
        let range = self.group(instance)?.players();
        if weights.len() != range.len() {
            let w = format!("{} weights for {} players", weights.len(), range.len());
            return Err(bad(instance, w));
        }
        check_weights(instance, weights.iter().copied())?;
        for (p, &w) in self.players[range].iter_mut().zip(weights) {
            p.weight = w;
        }
        Ok(())
    }

    /// Puts every player of `instance` back at its start position.
    pub fn restart(&mut self, instance: usize) -> Result<()> {
        let range = self.group(instance)?.players();
        for p in &mut self.players[range] {
            p.position = p.start_position;
        }
        Ok(())
    }

    /// Where `instance` stands (its root motion accumulates here).
    pub fn set_placement(&mut self, instance: usize, placement: Transform) -> Result<()> {
        self.group(instance)?;
        if !placement.is_finite() {
            return Err(bad(instance, "placement is not finite".into()));
        }
        self.placements[instance] = placement;
        Ok(())
    }

    pub(crate) fn group(&self, instance: usize) -> Result<&Group> {
        self.groups.get(instance).ok_or_else(|| {
            let n = self.groups.len();
            bad(instance, format!("no such instance (the crowd has {n})"))
        })
    }

    pub(crate) fn player_index(&self, instance: usize, k: usize) -> Result<usize> {
        let g = self.group(instance)?;
        if k >= g.count as usize {
            let w = format!("no player {k} (it has {})", g.count);
            return Err(bad(instance, w));
        }
        Ok(g.first as usize + k)
    }

    /// Each instance's root motion over the last step (the identity where it is not
    /// extracted).
    pub fn root_motion(&self) -> &[Transform] {
        &self.motion
    }

    /// Each instance's placement: where it started, moved by every root motion since.
    pub fn placements(&self) -> &[Transform] {
        &self.placements
    }

    /// The instances that reached the end of a non-looping track in the last step, ascending.
    pub fn finished(&self) -> &[u32] {
        &self.finished
    }

    /// What the players of weight over 1e-5 passed in the last step (notifies, loops, montage
    /// segments), sorted by instance, player and kind: each crossing once.
    pub fn events(&self) -> &[Event] {
        &self.events
    }

    /// What every instance plays now: a base blending its players' clips at their positions.
    pub fn batch(&self) -> PoseBatch {
        let mut batch =
            PoseBatch::with_capacity(self.len(), 1 + self.players.len() / self.len().max(1));
        let mut samples = Vec::new();
        for g in &self.groups {
            samples.clear();
            samples.extend(self.players[g.players()].iter().map(|p| {
                let (clip, time) = self.timeline.locate(p.track, p.position);
                let lock = g.lock().filter(|_| g.extracts(&self.timeline, p.track));
                ClipSample::new(clip, time, false)
                    .with_weight(p.weight)
                    .with_root_lock(lock)
                    .with_root_axes(g.axes())
            }));
            let mut instance = batch.push_blend(&samples);
            if g.flags & GROUP_TRANSITIONS != 0 {
                instance = self.inertialization(g, instance);
            }
            if let Some(w) = g.ik {
                instance.ik(w);
            }
        }
        batch
    }
}

fn bad(instance: usize, what: String) -> Error {
    Error::BadInstance { instance, what }
}

/// Weights must be finite and not negative, and at least one over 1e-5 (all-zero blends have
/// nothing to play).
pub(crate) fn check_weights(
    instance: usize,
    weights: impl Iterator<Item = f32> + Clone,
) -> Result<()> {
    for (k, w) in weights.clone().enumerate() {
        if !w.is_finite() || w < 0.0 {
            return Err(bad(
                instance,
                format!("player {k}: weight {w} is not a finite, non-negative number"),
            ));
        }
    }
    if kept_weights(weights.clone()).1 == 0 {
        let all: Vec<f32> = weights.collect();
        return Err(bad(
            instance,
            format!("weights {all:?} are all at or below {ZERO_WEIGHT}: nothing to play"),
        ));
    }
    Ok(())
}

pub(crate) fn check_dt(dt: f32) -> Result<()> {
    if dt.is_finite() && dt >= 0.0 {
        Ok(())
    } else {
        Err(Error::Playback {
            what: format!("time step {dt} is not a finite, non-negative number of seconds (play backwards with a negative rate)"),
        })
    }
}
