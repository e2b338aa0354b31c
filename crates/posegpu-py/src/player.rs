//! A sequence player as Python builds it: UE's rate (rate, basis, scale, bias, clamp), a start
//! position, looping and a weight, playing a clip (by index or name) or a montage's track.

use posegpu::playback::{PlayRate, Player as RustPlayer, TrackId};
use posegpu::AnimLibrary;
use pyo3::prelude::*;

use crate::arrays::ClipRef;
use crate::errors::arg_error;

/// One sequence player (UE's): it plays `clip` (an index, a name, or a montage's track from
/// `Crowd.add_montage`) from `start` seconds at the effective rate
/// `clamp(scale * rate / rate_basis + bias)` (a basis within 1e-8 of 0 gives a ratio of 0, as
/// in UE; `clamp=None` clamps nothing), looping or stopping at the end it reaches, with
/// `weight` in its instance's blend. A negative rate plays backwards.
#[pyclass(module = "posegpu", frozen, from_py_object)]
#[derive(Clone)]
pub struct Player {
    pub clip: ClipRef,
    pub rate: PlayRate,
    pub start: f32,
    pub looping: bool,
    pub weight: f32,
}

fn finite(name: &str, v: f32) -> PyResult<f32> {
    if v.is_finite() {
        Ok(v)
    } else {
        Err(arg_error(format!("{name} is {v}: it must be finite")))
    }
}

#[pymethods]
impl Player {
    #[new]
    #[pyo3(signature = (clip, rate=1.0, rate_basis=1.0, scale=1.0, bias=0.0, clamp=None, start=0.0, r#loop=true, weight=1.0))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        clip: &Bound<'_, PyAny>,
        rate: f32,
        rate_basis: f32,
        scale: f32,
        bias: f32,
        clamp: Option<(f32, f32)>,
        start: f32,
        r#loop: bool,
        weight: f32,
    ) -> PyResult<Self> {
        let clip = if let Ok(i) = clip.extract::<i64>() {
            if i < 0 {
                return Err(arg_error(format!("clip: {i} is negative")));
            }
            ClipRef::Index(i)
        } else {
            ClipRef::Name(
                clip.extract::<String>()
                    .map_err(|_| arg_error("clip: expected a clip index, name or track"))?,
            )
        };
        let mut play = PlayRate::new(finite("rate", rate)?)
            .with_basis(finite("rate_basis", rate_basis)?)
            .with_scale_bias(finite("scale", scale)?, finite("bias", bias)?);
        if let Some((lo, hi)) = clamp {
            let (lo, hi) = (finite("clamp[0]", lo)?, finite("clamp[1]", hi)?);
            if lo > hi {
                return Err(arg_error(format!(
                    "clamp: ({lo}, {hi}) has its minimum above its maximum"
                )));
            }
            play = play.with_clamp(lo, hi);
        }
        if finite("start", start)? < 0.0 {
            return Err(arg_error(format!(
                "start is {start}: positions are not negative"
            )));
        }
        if finite("weight", weight)? < 0.0 {
            return Err(arg_error(format!(
                "weight is {weight}: weights are not negative"
            )));
        }
        Ok(Self {
            clip,
            rate: play,
            start,
            looping: r#loop,
            weight,
        })
    }

    /// The clip (index or name) or track it plays.
    #[getter]
    fn clip(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        Ok(match &self.clip {
            ClipRef::Index(i) => i.into_pyobject(py)?.into_any().unbind(),
            ClipRef::Name(n) => n.into_pyobject(py)?.into_any().unbind(),
        })
    }

    /// UE's PlayRate.
    #[getter]
    fn rate(&self) -> f32 {
        self.rate.rate
    }

    /// UE's PlayRateBasis (the rate is divided by it).
    #[getter]
    fn rate_basis(&self) -> f32 {
        self.rate.basis
    }

    /// Multiplies rate / rate_basis.
    #[getter]
    fn scale(&self) -> f32 {
        self.rate.scale
    }

    /// Added after the scale.
    #[getter]
    fn bias(&self) -> f32 {
        self.rate.bias
    }

    /// The bounds of the effective rate, or None.
    #[getter]
    fn clamp(&self) -> Option<(f32, f32)> {
        let (lo, hi) = self.rate.clamp;
        (lo > -f32::MAX || hi < f32::MAX).then_some((lo, hi))
    }

    /// Where it starts (and restarts), in track seconds.
    #[getter]
    fn start(&self) -> f32 {
        self.start
    }

    /// Whether it wraps at either end.
    #[getter(r#loop)]
    fn looping(&self) -> bool {
        self.looping
    }

    /// Its weight in its instance's blend.
    #[getter]
    fn weight(&self) -> f32 {
        self.weight
    }

    /// The rate it advances at: clamp(scale * rate / rate_basis + bias), track seconds per
    /// second.
    #[getter]
    fn effective_rate(&self) -> f32 {
        self.rate.effective()
    }

    fn __repr__(&self) -> String {
        let clip = match &self.clip {
            ClipRef::Index(i) => i.to_string(),
            ClipRef::Name(n) => format!("{n:?}"),
        };
        format!(
            "Player({clip}, rate={}, rate_basis={}, scale={}, bias={}, clamp={:?}, start={}, \
             loop={}, weight={})",
            self.rate.rate,
            self.rate.basis,
            self.rate.scale,
            self.rate.bias,
            self.clamp(),
            self.start,
            if self.looping { "True" } else { "False" },
            self.weight
        )
    }
}

impl Player {
    /// The player of `lib`'s crowd: its clip name looked up, its track checked by the crowd.
    pub fn to_rust(&self, lib: &AnimLibrary) -> PyResult<RustPlayer> {
        let track = match &self.clip {
            ClipRef::Index(i) => u32::try_from(*i)
                .map_err(|_| arg_error(format!("clip: {i} is not a track index")))?,
            ClipRef::Name(n) => {
                lib.find_clip(n)
                    .map_err(|e| arg_error(format!("clip: {e}")))?
                    .0
            }
        };
        Ok(RustPlayer::new(TrackId(track))
            .starting_at(self.start)
            .with_rate(self.rate)
            .looping(self.looping)
            .with_weight(self.weight))
    }
}
