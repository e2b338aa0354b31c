//! One sequence player: what it plays, where it is, how fast it goes (spec: `docs/pose-math.md`,
//! "Sequence player").

use crate::math::TINY;

use super::track::TrackId;

/// UE's sequence-player rate: `clamp(scale · (rate / basis) + bias, min, max)`, where a basis
/// within 1e-8 of 0 gives a ratio of 0 (as UE does). A negative result plays backwards.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PlayRate {
    /// UE's PlayRate.
    pub rate: f32,
    /// UE's PlayRateBasis: the rate is divided by it (e.g. a speed in cm/s over 100).
    pub basis: f32,
    /// Multiplies `rate / basis`.
    pub scale: f32,
    /// Added after the scale.
    pub bias: f32,
    /// Inclusive bounds of the result; `(-f32::MAX, f32::MAX)` clamps nothing.
    pub clamp: (f32, f32),
}

impl Default for PlayRate {
    fn default() -> Self {
        Self::new(1.0)
    }
}

impl PlayRate {
    /// `rate` over a basis of 1, with no scale, bias or clamp.
    pub fn new(rate: f32) -> Self {
        Self {
            rate,
            basis: 1.0,
            scale: 1.0,
            bias: 0.0,
            clamp: (-f32::MAX, f32::MAX),
        }
    }

    /// The same rate with basis `basis` (the rate is divided by it).
    pub fn with_basis(self, basis: f32) -> Self {
        Self { basis, ..self }
    }

    /// The same rate with `scale` and `bias` applied to the ratio.
    pub fn with_scale_bias(self, scale: f32, bias: f32) -> Self {
        Self {
            scale,
            bias,
            ..self
        }
    }

    /// The same rate with the result clamped to `[min, max]`.
    pub fn with_clamp(self, min: f32, max: f32) -> Self {
        Self {
            clamp: (min, max),
            ..self
        }
    }

    /// The rate the player advances at (track seconds per second).
    pub fn effective(&self) -> f32 {
        let ratio = if self.basis.abs() <= TINY {
            0.0
        } else {
            self.rate / self.basis
        };
        (ratio * self.scale + self.bias)
            .max(self.clamp.0)
            .min(self.clamp.1)
    }

    /// What is wrong with it, if anything: a value that is not finite, or min above max.
    pub(crate) fn problem(&self) -> Option<String> {
        let values = [
            self.rate,
            self.basis,
            self.scale,
            self.bias,
            self.clamp.0,
            self.clamp.1,
        ];
        if values.iter().any(|v| !v.is_finite()) {
            return Some(format!("play rate {self:?} has a value that is not finite"));
        }
        (self.clamp.0 > self.clamp.1).then(|| {
            format!(
                "play rate clamp [{}, {}] has its minimum above its maximum",
                self.clamp.0, self.clamp.1
            )
        })
    }
}

/// A sequence player: a track, its position in track seconds, its rate, and its weight in its
/// instance's blend.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Player {
    /// What it plays: a clip, or a montage's track.
    pub track: TrackId,
    /// Track seconds, within `[0, length]`.
    pub position: f32,
    /// UE's StartPosition: where the player begins, and where [`crate::Crowd::restart`] puts it.
    pub start_position: f32,
    /// How fast it advances.
    pub rate: PlayRate,
    /// Wraps at either end when true; stops at the end it reaches otherwise.
    pub looping: bool,
    /// Its weight in the instance's blend (and root motion): weights at or below 1e-5 are
    /// dropped and the rest renormalized.
    pub weight: f32,
}

impl Player {
    /// Plays `track` (a clip index or a montage's [`TrackId`]) from 0, looping, at rate 1,
    /// with weight 1.
    pub fn new(track: impl Into<TrackId>) -> Self {
        Self {
            track: track.into(),
            position: 0.0,
            start_position: 0.0,
            rate: PlayRate::default(),
            looping: true,
            weight: 1.0,
        }
    }

    /// Starts (and restarts) at `position`.
    pub fn starting_at(self, position: f32) -> Self {
        Self {
            position,
            start_position: position,
            ..self
        }
    }

    /// The same player at `rate`.
    pub fn with_rate(self, rate: PlayRate) -> Self {
        Self { rate, ..self }
    }

    /// The same player, looping or not.
    pub fn looping(self, looping: bool) -> Self {
        Self { looping, ..self }
    }

    /// The same player with weight `weight`.
    pub fn with_weight(self, weight: f32) -> Self {
        Self { weight, ..self }
    }
}
