//! `eval --transition-to NAME --transition-at T`: the poses of one instance that switches clips
//! at a time, by inertialization or crossfade. A transition has state (each bone's offset is
//! measured when it begins), so every requested time is played from 0 by a one-instance crowd
//! in steps of at most 1/30 s, evaluated each step.

use posegpu::playback::{Agent, Player, Transition};
use posegpu::{AnimLibrary, CpuEvaluator, Crowd, Error, GpuCrowd, GpuOptions, IkWeights, Poses};

use crate::Backend;

/// The longest step the crowd takes.
const STEP: f32 = 1.0 / 30.0;

/// The transition `eval` plays.
#[derive(Clone, Debug, clap::Args)]
pub struct TransitionArgs {
    /// Switch to this clip (of MODEL, or of SOURCE with --animation-from) at --transition-at;
    /// --times must then be 0 or later.
    #[arg(long, value_name = "NAME", requires = "transition_at")]
    pub transition_to: Option<String>,
    /// When the transition begins, in seconds (0 or later).
    #[arg(long, value_name = "T", requires = "transition_to")]
    pub transition_at: Option<f32>,
    /// The transition's blend time, in seconds.
    #[arg(long, value_name = "B", default_value_t = 0.3)]
    pub blend_time: f32,
    /// `inertialize` (UE5's inertialization: the new clip alone, the old pose's offset
    /// decaying) or `crossfade` (both clips blended).
    #[arg(long, value_enum, default_value = "inertialize")]
    pub transition: TransitionKind,
}

/// `--transition`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum TransitionKind {
    Inertialize,
    Crossfade,
}

/// What one played instance is: its clips, looping, IK and backend.
pub struct Play {
    pub from: u32,
    pub to: u32,
    pub looping: bool,
    pub ik: Option<IkWeights>,
    pub backend: Backend,
}

impl TransitionArgs {
    /// The poses at each of `times`, one instance each, in order.
    pub fn poses(&self, lib: &AnimLibrary, play: &Play, times: &[f32]) -> Result<Poses, Error> {
        let at = self.transition_at.unwrap_or(0.0);
        let bad = |what: String| Error::Playback { what };
        if !(at.is_finite() && at >= 0.0) {
            return Err(bad(format!(
                "--transition-at {at} is not a time of 0 or later"
            )));
        }
        if let Some(t) = times.iter().find(|t| !(t.is_finite() && **t >= 0.0)) {
            return Err(bad(format!(
                "time {t}: a transition is played from 0, so --times are 0 or later"
            )));
        }
        let mut out = Poses::default();
        for &time in times {
            let poses = self.play(lib, play, at, time)?;
            out.bone_count = poses.bone_count;
            out.curve_count = poses.curve_count;
            out.locals.extend(poses.locals);
            out.component.extend(poses.component);
            out.skinning.extend(poses.skinning);
            out.curves.extend(poses.curves);
        }
        Ok(out)
    }

    /// One instance played from 0 to `time`, switching at `at`.
    fn play(&self, lib: &AnimLibrary, play: &Play, at: f32, time: f32) -> Result<Poses, Error> {
        let kind = match self.transition {
            TransitionKind::Inertialize => Transition::Inertialize,
            TransitionKind::Crossfade => Transition::Crossfade,
        };
        let mut crowd = Crowd::new(lib);
        let mut agent = Agent::new(Player::new(play.from).looping(play.looping)).with_transitions();
        if let Some(w) = play.ik {
            agent = agent.with_ik(w);
        }
        crowd.add(&agent)?;
        let mut gpu = match play.backend {
            Backend::Gpu => {
                let ctx = crate::util::open_gpu()?.ok_or(Error::NoAdapter)?;
                Some(GpuCrowd::new(&ctx, lib, &crowd, &GpuOptions::default())?)
            }
            Backend::Cpu => None,
        };
        let mut poses = Poses::default();
        let new = Player::new(play.to).looping(play.looping);
        let switch = |crowd: &mut Crowd, gpu: &mut Option<GpuCrowd>| -> Result<(), Error> {
            crowd.transition_to(0, new, self.blend_time, kind)?;
            match gpu {
                Some(g) => g.transition_to(0, new, self.blend_time, kind),
                None => Ok(()),
            }
        };
        let mut step = |crowd: &mut Crowd, gpu: &mut Option<GpuCrowd>, dt: f32| {
            crowd.advance(lib, dt)?;
            match gpu {
                Some(g) => g.advance(dt),
                None => CpuEvaluator::new(lib).evaluate(&crowd.batch(), &mut poses),
            }
        };
        // The pose at 0, then steps ending every STEP, at `at` and at `time`; the switch comes
        // after the step that reaches `at`, and the transition begins with the next.
        let mut switched = at <= 0.0;
        if switched {
            switch(&mut crowd, &mut gpu)?;
        }
        step(&mut crowd, &mut gpu, 0.0)?;
        let mut now = 0.0f32;
        while now < time {
            let mut next = (now + STEP).min(time);
            if now < at && at < next {
                next = at;
            }
            step(&mut crowd, &mut gpu, next - now)?;
            now = next;
            if !switched && now >= at {
                switch(&mut crowd, &mut gpu)?;
                switched = true;
            }
        }
        match &gpu {
            Some(g) => g.evaluator().read_back(),
            None => Ok(poses),
        }
    }
}
