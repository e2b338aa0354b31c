//! The quality of a retargeted clip as a user sees it, each character measured in its own body
//! frame ([`BodyFrame`]): per limb segment the angle between the source's direction (mapped
//! through `G`) and the target's; pelvis height, ankle lift and pelvis travel, each in the
//! character's own hip heights, compared; foot sliding (horizontal ankle speed while the
//! source's foot is in contact). Spec: `docs/pose-math.md`, "Quality as a user sees it".
//!
//! Segments run between joints of corresponding roles: upper arm (shoulder → elbow), forearm
//! (elbow → wrist), thigh (hip → knee), shin (knee → ankle), pelvis → neck (midpoint of the two
//! hip joints → the neck's base, [`Humanoid::neck_base`]: each character's own, its head's joint
//! where it has no neck), neck → head (only where both have a neck).
//!
//! [`measure`] evaluates the plan on the CPU; [`measure_poses`] judges poses evaluated
//! elsewhere (read back from the GPU) the same way.

use std::fmt;

use glam::Vec3;

pub use super::frame::frame_times;
use super::frame::BodyFrame;
use super::humanoid::{Humanoid, Side, SideLimbs};
use super::plan::RetargetPlan;
use super::tree::Tree;
use crate::drive::IkWeights;
use crate::error::{Error, Result};
use crate::model::{component_space, Asset, Clip, Skeleton};
use crate::pose::Poses;
use crate::Transform;

/// The aim for retargeted directions: mean error at most this many degrees.
pub const AIM_MEAN_DEG: f32 = 2.0;
/// The aim for retargeted directions: 95th percentile at most this many degrees.
pub const AIM_P95_DEG: f32 = 6.0;
/// The aim for heights, contact and travel: within this fraction of the hip height.
pub const AIM_HEIGHT: f32 = 0.03;

/// A limb segment.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[allow(missing_docs)] // the segments they name
pub enum Limb {
    UpperArm,
    Forearm,
    Thigh,
    Shin,
    PelvisToNeck,
    NeckToHead,
}

impl Limb {
    /// The segment's name in reports.
    pub fn name(self) -> &'static str {
        match self {
            Self::UpperArm => "upper arm",
            Self::Forearm => "forearm",
            Self::Thigh => "thigh",
            Self::Shin => "shin",
            Self::PelvisToNeck => "pelvis→neck",
            Self::NeckToHead => "neck→head",
        }
    }
}

/// Mean, 95th percentile and maximum of a sample.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Stats {
    /// The mean.
    pub mean: f32,
    /// The 95th percentile (nearest rank).
    pub p95: f32,
    /// The largest value.
    pub max: f32,
    /// How many values.
    pub count: usize,
}

impl Stats {
    /// The statistics of `values` (all zero when there are none).
    pub fn of(values: &[f32]) -> Self {
        if values.is_empty() {
            return Self::default();
        }
        let mut v = values.to_vec();
        v.sort_by(f32::total_cmp);
        let n = v.len();
        let p95 = v[((n as f32 * 0.95).ceil() as usize).clamp(1, n) - 1];
        Self {
            mean: v.iter().sum::<f32>() / n as f32,
            p95,
            max: v[n - 1],
            count: n,
        }
    }
}

/// One limb segment's direction error, in degrees.
#[derive(Clone, Debug, PartialEq)]
pub struct LimbReport {
    /// The segment.
    pub limb: Limb,
    /// Its side; `None` for the torso segments.
    pub side: Option<Side>,
    /// The angle between the source's direction (through `G`) and the target's, in degrees.
    pub degrees: Stats,
}

/// The quality of one retargeted clip.
#[derive(Clone, Debug, PartialEq)]
pub struct QualityReport {
    /// Each segment's direction error.
    pub limbs: Vec<LimbReport>,
    /// Every limb sample together.
    pub overall: Stats,
    /// |source − target| pelvis height above the floor, in hip heights.
    pub hips_height: Stats,
    /// |source − target| ankle lift (height above the rest pose's), in hip heights, both feet.
    pub feet_height: Stats,
    /// While the source's foot is in contact (its lowest joint within 3% of hip height of its
    /// rest height): |source − target| lift of that joint (the toes where both have toes, else
    /// the ankle). Sinking or floating feet.
    pub contact_height: Stats,
    /// |source − target| horizontal pelvis travel since the first frame, in hip heights.
    pub travel: Stats,
    /// Mean horizontal speed of the contact joint while the source's foot is in contact, hip
    /// heights per second: the source's own, and the target's counterpart joint's (in-place
    /// loops move the planted foot backwards, so compare the two).
    pub source_sliding: f32,
    /// The target's sliding, as `source_sliding`.
    pub target_sliding: f32,
    /// For an IK-style foot (not below the shin: Mech's `Foot.L`), the distance between the
    /// foot's joint and the point the shin carries, in hip heights: the source's own, and the
    /// target's.
    pub source_ik_gap: Option<Stats>,
    /// The target's IK gap, as `source_ik_gap`.
    pub ik_gap: Option<Stats>,
    /// Frames measured.
    pub frames: usize,
}

impl QualityReport {
    /// True when every aim is met: directions ([`AIM_MEAN_DEG`], [`AIM_P95_DEG`]), pelvis
    /// height, ankle lift, contact and travel ([`AIM_HEIGHT`]).
    pub fn meets_aim(&self) -> bool {
        self.overall.mean <= AIM_MEAN_DEG
            && self.overall.p95 <= AIM_P95_DEG
            && self.hips_height.max <= AIM_HEIGHT
            && self.feet_height.max <= AIM_HEIGHT
            && self.contact_height.max <= AIM_HEIGHT
            && self.travel.max <= AIM_HEIGHT
    }

    /// The worst limb by 95th percentile.
    pub fn worst_limb(&self) -> Option<&LimbReport> {
        self.limbs
            .iter()
            .max_by(|a, b| a.degrees.p95.total_cmp(&b.degrees.p95))
    }

    /// One line: overall mean / p95 / max in degrees, then heights and travel maxima in % of hip
    /// height.
    pub fn summary(&self) -> String {
        format!(
            "dir {:.2}/{:.2}/{:.1}° hips {:.2}% feet {:.2}% contact {:.2}% travel {:.2}% slide {:.3}/{:.3}",
            self.overall.mean,
            self.overall.p95,
            self.overall.max,
            self.hips_height.max * 100.0,
            self.feet_height.max * 100.0,
            self.contact_height.max * 100.0,
            self.travel.max * 100.0,
            self.source_sliding,
            self.target_sliding
        )
    }
}

impl fmt::Display for QualityReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "{} frames", self.frames)?;
        writeln!(
            f,
            "{:<20} {:>8} {:>8} {:>8}",
            "segment", "mean°", "p95°", "max°"
        )?;
        for l in &self.limbs {
            let name = match l.side {
                Some(s) => format!("{} {}", s.name(), l.limb.name()),
                None => l.limb.name().to_string(),
            };
            writeln!(
                f,
                "{name:<20} {:>8.2} {:>8.2} {:>8.2}",
                l.degrees.mean, l.degrees.p95, l.degrees.max
            )?;
        }
        writeln!(
            f,
            "{:<20} {:>8.2} {:>8.2} {:>8.2}",
            "overall", self.overall.mean, self.overall.p95, self.overall.max
        )?;
        for (name, s) in [
            ("pelvis height %H", &self.hips_height),
            ("ankle lift %H", &self.feet_height),
            ("contact lift %H", &self.contact_height),
            ("travel %H", &self.travel),
        ] {
            writeln!(
                f,
                "{name:<20} {:>8.2} {:>8.2} {:>8.2}",
                s.mean * 100.0,
                s.p95 * 100.0,
                s.max * 100.0
            )?;
        }
        for (name, gap) in [
            ("source IK gap %H", &self.source_ik_gap),
            ("IK foot gap %H", &self.ik_gap),
        ] {
            if let Some(g) = gap {
                writeln!(
                    f,
                    "{name:<20} {:>8.2} {:>8.2} {:>8.2}",
                    g.mean * 100.0,
                    g.p95 * 100.0,
                    g.max * 100.0
                )?;
            }
        }
        writeln!(
            f,
            "sliding in contact (H/s): source {:.3}, target {:.3}",
            self.source_sliding, self.target_sliding
        )
    }
}

/// Where the shin carries the foot's joint: the foot's own joint when it hangs below the shin;
/// for an IK-style foot (a root, or a bone elsewhere that deforms nothing, as Mech's `Foot.L`),
/// the point the shin carries as in a reference pose, which is what the mesh shows.
struct Ankle {
    shin: usize,
    foot: usize,
    carried: Option<Transform>,
}

impl Ankle {
    fn new(tree: &Tree, l: &SideLimbs, reference: &[Transform]) -> Self {
        let carried = (!tree.is_ancestor(l.shin, l.foot))
            .then(|| Transform::relative(&reference[l.foot], &reference[l.shin]));
        Self {
            shin: l.shin,
            foot: l.foot,
            carried,
        }
    }

    fn at(&self, cs: &[Transform]) -> Vec3 {
        match &self.carried {
            Some(rel) => Transform::compose(rel, &cs[self.shin]).translation,
            None => cs[self.foot].translation,
        }
    }

    /// Distance between an IK-style foot's joint and the carried point.
    fn gap(&self, cs: &[Transform]) -> Option<f32> {
        self.carried
            .as_ref()
            .map(|_| (self.at(cs) - cs[self.foot].translation).length())
    }
}

/// Measures `plan` (from `source` to `target`) playing `clip`, a clip of `source`, at
/// `times`, evaluated on the CPU with IK weights `ik` ([`RetargetPlan::apply_with_ik`];
/// [`IkWeights::NONE`]: [`RetargetPlan::apply`] alone).
pub fn measure(
    source: &Asset,
    target: &Asset,
    plan: &RetargetPlan,
    clip: &Clip,
    times: &[f32],
    ik: IkWeights,
) -> Result<QualityReport> {
    check(source, target, plan, clip)?;
    let (ss, ts) = (&source.skeleton, &target.skeleton);
    let frames = times
        .iter()
        .map(|&t| {
            let s_locals = clip.pose_at(ss.rest(), t);
            let t_locals = plan.apply_with_ik(&s_locals, ik);
            (
                component_space(ss.parents(), &s_locals),
                component_space(ts.parents(), &t_locals),
            )
        })
        .collect();
    Ok(measure_frames(ss, ts, plan, times, frames))
}

/// The same for target poses evaluated elsewhere: instance `i` of `poses` is the target at
/// `times[i]` (say, `ClipSample::new(clip, times[i], false)` of a library that plays `clip`
/// through `plan`, read back from the GPU). The poses' component-space transforms are judged.
pub fn measure_poses(
    source: &Asset,
    target: &Asset,
    plan: &RetargetPlan,
    clip: &Clip,
    times: &[f32],
    poses: &Poses,
) -> Result<QualityReport> {
    check(source, target, plan, clip)?;
    let (ss, ts) = (&source.skeleton, &target.skeleton);
    if poses.bone_count != ts.len() || poses.instance_count() != times.len() {
        return Err(Error::PlanMismatch {
            what: format!(
                "{} poses of {} bones for {} times of a target of {} bones",
                poses.instance_count(),
                poses.bone_count,
                times.len(),
                ts.len()
            ),
        });
    }
    let frames = times
        .iter()
        .enumerate()
        .map(|(i, &t)| {
            let s_locals = clip.pose_at(ss.rest(), t);
            let target = (0..ts.len()).map(|b| poses.component(i, b)).collect();
            (component_space(ss.parents(), &s_locals), target)
        })
        .collect();
    Ok(measure_frames(ss, ts, plan, times, frames))
}

/// An error unless `plan` was built for these skeletons and `clip` is a clip of the source.
fn check(source: &Asset, target: &Asset, plan: &RetargetPlan, clip: &Clip) -> Result<()> {
    plan.check(&source.skeleton, &target.skeleton)?;
    if clip.tracks().len() != source.skeleton.len() {
        return Err(Error::TrackCount {
            clip: clip.name().to_string(),
            expected: source.skeleton.len(),
            got: clip.tracks().len(),
        });
    }
    Ok(())
}

/// The report from each frame's component-space poses, (source, target).
fn measure_frames(
    ss: &Skeleton,
    ts: &Skeleton,
    plan: &RetargetPlan,
    times: &[f32],
    frames: Vec<(Vec<Transform>, Vec<Transform>)>,
) -> QualityReport {
    let (sh, th) = (&plan.source().humanoid, &plan.target().humanoid);
    let (sf, tf) = (&plan.source().body, &plan.target().body);
    let g = plan.frame_rotation();
    // Measured in each character's pose the plan was built from (its bind pose by default).
    let s_rest_cs = component_space(ss.parents(), plan.measured_source());
    let t_rest_cs = component_space(ts.parents(), plan.measured_target());
    let s_rest: Vec<Vec3> = s_rest_cs.iter().map(|t| t.translation).collect();
    let t_rest: Vec<Vec3> = t_rest_cs.iter().map(|t| t.translation).collect();
    let both_necks = sh.neck_base(&s_rest) != sh.head && th.neck_base(&t_rest) != th.head;
    // Ankles: where the shin carries the foot (the source's rest; the target's aligned pose).
    let t_aligned = component_space(ts.parents(), plan.reference());
    let (s_tree, t_tree) = (Tree::new(ss), Tree::new(ts));
    let s_ankles = Side::BOTH.map(|s| Ankle::new(&s_tree, sh.side(s), &s_rest_cs));
    let t_ankles = Side::BOTH.map(|s| Ankle::new(&t_tree, th.side(s), &t_aligned));
    let t_ankles_rest = Side::BOTH.map(|s| Ankle::new(&t_tree, th.side(s), &t_rest_cs));

    // Limb directions.
    let mut limbs = Vec::new();
    let mut all = Vec::new();
    type Ends<'a> = &'a dyn Fn(&Humanoid, &[Transform], &[Ankle; 2]) -> (Vec3, Vec3);
    let mut series = |limb: Limb, side: Option<Side>, ends: Ends| {
        let mut v = Vec::with_capacity(frames.len());
        for (s, t) in &frames {
            let (s0, s1) = ends(sh, s, &s_ankles);
            let (t0, t1) = ends(th, t, &t_ankles);
            let (Some(ds), Some(dt)) = ((g * (s1 - s0)).try_normalize(), (t1 - t0).try_normalize())
            else {
                continue;
            };
            v.push(ds.dot(dt).clamp(-1.0, 1.0).acos().to_degrees());
        }
        all.extend_from_slice(&v);
        limbs.push(LimbReport {
            limb,
            side,
            degrees: Stats::of(&v),
        });
    };
    let p = |cs: &[Transform], b: usize| cs[b].translation;
    for (si, side) in Side::BOTH.into_iter().enumerate() {
        series(Limb::UpperArm, Some(side), &|h, cs, _| {
            (p(cs, h.side(side).upper_arm), p(cs, h.side(side).forearm))
        });
        series(Limb::Forearm, Some(side), &|h, cs, _| {
            (p(cs, h.side(side).forearm), p(cs, h.side(side).hand))
        });
        series(Limb::Thigh, Some(side), &|h, cs, _| {
            (p(cs, h.side(side).thigh), p(cs, h.side(side).shin))
        });
        series(Limb::Shin, Some(side), &|h, cs, a| {
            (p(cs, h.side(side).shin), a[si].at(cs))
        });
    }
    let positions = |cs: &[Transform]| cs.iter().map(|t| t.translation).collect::<Vec<Vec3>>();
    series(Limb::PelvisToNeck, None, &|h, cs, _| {
        let pelvis = (p(cs, h.left.thigh) + p(cs, h.right.thigh)) * 0.5;
        (pelvis, p(cs, h.neck_base(&positions(cs))))
    });
    if both_necks {
        series(Limb::NeckToHead, None, &|h, cs, _| {
            (p(cs, h.neck_base(&positions(cs))), p(cs, h.head))
        });
    }

    // Heights, travel, contact, sliding; each in its own hip heights.
    let pelvis = |h: &Humanoid, cs: &[Transform]| h.pelvis(cs);
    let lift = |f: &BodyFrame, at: Vec3, rest: Vec3| {
        (f.height(at) - (rest.dot(f.up) - f.rest_ground)) / f.hip_height
    };
    let mut hips = Vec::new();
    let mut feet = Vec::new();
    let mut travel = Vec::new();
    let mut contact_err = Vec::new();
    let (mut s_slide, mut t_slide, mut contacts) = (0.0f32, 0.0f32, 0usize);
    let mut s_gaps = Vec::new();
    let mut t_gaps = Vec::new();
    for (i, (s, t)) in frames.iter().enumerate() {
        let (sp, tp) = (pelvis(sh, s), pelvis(th, t));
        hips.push((sf.height(sp) / sf.hip_height - tf.height(tp) / tf.hip_height).abs());
        let (s0, t0) = (pelvis(sh, &frames[0].0), pelvis(th, &frames[0].1));
        let ds = sf.horizontal(sp - s0) / sf.hip_height;
        let dt = tf.horizontal(tp - t0) / tf.hip_height;
        travel.push((g * ds - dt).length());
        for (si, side) in Side::BOTH.into_iter().enumerate() {
            let (sl, tl) = (sh.side(side), th.side(side));
            let s_ank = s_ankles[si].at(s);
            let t_ank = t_ankles[si].at(t);
            let s_ank_rest = s_ankles[si].at(&s_rest_cs);
            let t_ank_rest = t_ankles_rest[si].at(&t_rest_cs);
            let (s_lift, t_lift) = (lift(sf, s_ank, s_ank_rest), lift(tf, t_ank, t_ank_rest));
            feet.push((s_lift - t_lift).abs());
            if let Some(gap) = s_ankles[si].gap(s) {
                s_gaps.push(gap / sf.hip_height);
            }
            if let Some(gap) = t_ankles[si].gap(t) {
                t_gaps.push(gap / tf.hip_height);
            }
            // Contact: the source's lowest foot joint (toe or ankle) near its rest height and
            // slow; the target's counterpart joint (its toes where both have toes).
            if i == 0 {
                continue;
            }
            let (ps, pt) = (&frames[i - 1].0, &frames[i - 1].1);
            let dt_s = (times[i] - times[i - 1]).max(1e-6);
            let toes = sl.toes.zip(tl.toes);
            let (s_j, t_j, s_prev, t_prev, s_l, t_l) = match toes {
                Some((st, tt)) if lift(sf, p(s, st), s_rest[st]) < s_lift => (
                    p(s, st),
                    p(t, tt),
                    p(ps, st),
                    p(pt, tt),
                    lift(sf, p(s, st), s_rest[st]),
                    lift(tf, p(t, tt), t_rest[tt]),
                ),
                _ => (
                    s_ank,
                    t_ank,
                    s_ankles[si].at(ps),
                    t_ankles[si].at(pt),
                    s_lift,
                    t_lift,
                ),
            };
            let s_speed = sf.horizontal(s_j - s_prev).length() / sf.hip_height / dt_s;
            if s_l < 0.03 {
                contact_err.push((s_l - t_l).abs());
                s_slide += s_speed;
                t_slide += tf.horizontal(t_j - t_prev).length() / tf.hip_height / dt_s;
                contacts += 1;
            }
        }
    }
    QualityReport {
        limbs,
        overall: Stats::of(&all),
        hips_height: Stats::of(&hips),
        feet_height: Stats::of(&feet),
        contact_height: Stats::of(&contact_err),
        travel: Stats::of(&travel),
        source_sliding: if contacts > 0 {
            s_slide / contacts as f32
        } else {
            0.0
        },
        target_sliding: if contacts > 0 {
            t_slide / contacts as f32
        } else {
            0.0
        },
        source_ik_gap: (!s_gaps.is_empty()).then(|| Stats::of(&s_gaps)),
        ik_gap: (!t_gaps.is_empty()).then(|| Stats::of(&t_gaps)),
        frames: frames.len(),
    }
}
