//! The crowd's CPU stepper: [`Crowd::advance`] and [`Crowd::track_motion`], the CPU twin of the
//! GPU's advance and root-motion passes ([`crate::GpuCrowd`] steps the same state there). The
//! state itself is `playback/crowd.rs`.

use super::advance::{advance_group, crossings};
use super::root_motion::step_motion;
use crate::batch::RootMotionAxes;
use crate::error::{Error, Result};
use crate::layout::ZERO_WEIGHT;
use crate::layout::{GROUP_IGNORE_MOTION, GROUP_ROOT_MOTION};
use crate::library::AnimLibrary;
use crate::math::blend::blend_with;
use crate::playback::crowd::{check_dt, TransitionState};
use crate::playback::{Crowd, Event, TrackId};
use crate::Transform;

impl Crowd {
    /// The root's motion along `track` from position `a` to `b` (backwards when `b < a`),
    /// segment by segment, without wrapping.
    pub fn track_motion(
        &self,
        lib: &AnimLibrary,
        track: TrackId,
        a: f32,
        b: f32,
    ) -> Result<Transform> {
        if self.timeline.get(track).is_none() || !a.is_finite() || !b.is_finite() {
            return Err(Error::Playback {
                what: format!("no motion along track {} from {a} to {b}", track.0),
            });
        }
        let axes = RootMotionAxes::EVERYTHING;
        Ok(super::root_motion::range(
            lib,
            &self.timeline,
            track,
            a,
            b,
            axes,
        ))
    }

    /// Advances every player by `dt` seconds of its own rate (followers of a synced instance
    /// by their leader's phase), extracts root motion where asked and moves placements by it,
    /// and lists the instances that finished. The CPU twin of the GPU's advance and
    /// root-motion passes.
    pub fn advance(&mut self, lib: &AnimLibrary, dt: f32) -> Result<()> {
        check_dt(dt)?;
        self.check_library(lib)?;
        self.finished.clear();
        self.events.clear();
        let mut steps = Vec::new();
        for (i, g) in self.groups.iter_mut().enumerate() {
            let players = &mut self.players[g.players()];
            advance_group(&self.timeline, players, g.flags, dt, &mut steps);
            if g.transition.is_some() {
                let [new, old] =
                    TransitionState::step_weights(&mut g.transition, dt, steps[1].from);
                (players[0].weight, players[1].weight) = (new, old);
            }
            if steps.iter().any(|s| s.finished) {
                self.finished.push(i as u32);
            }
            for (k, (p, s)) in players.iter().zip(&steps).enumerate() {
                if p.weight > ZERO_WEIGHT {
                    crossings(lib, &self.timeline, p, s, |kind| {
                        self.events.push(Event {
                            instance: i as u32,
                            player: k as u32,
                            kind,
                        })
                    });
                }
            }
            if g.flags & GROUP_ROOT_MOTION == 0 {
                self.motion[i] = Transform::IDENTITY;
                continue;
            }
            // Players that give no root motion (montages-only mode) weigh nothing here.
            let weights = players.iter().map(|p| {
                if g.extracts(&self.timeline, p.track) {
                    p.weight
                } else {
                    0.0
                }
            });
            let motion = blend_with(weights, Transform::IDENTITY, |k| {
                let p = &players[k];
                step_motion(lib, &self.timeline, p.track, &steps[k], p.looping, g.axes())
            });
            // Measured in the root-motion bone's parent's frame; moved into the character's.
            let parent = &lib.data().root_parent;
            let motion =
                Transform::compose(&Transform::compose(&parent.inverse(), &motion), parent);
            self.motion[i] = motion;
            if g.flags & GROUP_IGNORE_MOTION == 0 {
                self.placements[i] = Transform::compose(&motion, &self.placements[i]);
            }
        }
        self.events.sort_unstable();
        Ok(())
    }
}
