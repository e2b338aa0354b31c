//! A retarget plan as a library plays it: its packed section (what `RetargetPlan` compiles to,
//! without the characters and names it was built from), and one target bone from its record
//! and the sampled source locals: the CPU twin of `apply_plan` in `shaders/clip.wgsl` (same
//! operations, same order), called by the CPU sampling stage (`src/cpu/clip.rs`) and by the
//! plan itself. Spec: `docs/pose-math.md`, "Retargeting between characters"; the record's fields
//! are documented on [`BonePlan`].

use glam::{Quat, Vec3};

use crate::error::{Error, Result};
use crate::layout::{
    BonePlan, Entry, MIRROR_PATTERN, MIRROR_PATTERN_BITS, PATH_BONE, PATH_INVERSE, PATH_MIRRORED,
    PATH_MIRROR_SHIFT, PLAN_CHAIN, PLAN_DRIVEN, PLAN_MAPPED, PLAN_MIRROR_SHIFT, PLAN_REFERENCE,
    PLAN_ROTATION,
};
use crate::math::mirror::{pattern_signs, reflect_rotation, sign_pattern};
use crate::math::{find_between_normals, quat_pow, twist};
use crate::model::Clip;
use crate::Transform;

/// A retarget plan packed for the sampling and IK stages: what a library keeps of it.
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct PlanSection {
    /// One record per target bone (path starts relative to `paths`).
    pub(crate) records: Vec<BonePlan>,
    /// The IK goal records: one per chain of the target, then one toe goal per chain (the IK
    /// stage reads goal `g` after the bones' records, at `bones + g`).
    pub(crate) goals: Vec<BonePlan>,
    /// The path entries the records index: source bones, [`PATH_INVERSE`] where inverted.
    pub(crate) paths: Vec<u32>,
    /// The target's IK table (layout: `IkChain`).
    pub(crate) ik: Vec<Entry>,
    /// Per source bone that carries others, the sign pattern of its reference scale, which
    /// the source's clips must keep (the records read it as their unmirrored twin's); `None`
    /// for a leaf.
    pub(crate) kept_signs: Vec<Option<u32>>,
}

impl PlanSection {
    /// Record `r` (of this section) on one pose of the source (source bones past the end read
    /// the identity).
    pub(crate) fn run(&self, r: &BonePlan, source_locals: &[Transform]) -> Transform {
        apply_bone(
            r,
            |i| self.paths.get(i).copied().unwrap_or(0),
            |bone, _| {
                source_locals
                    .get(bone)
                    .copied()
                    .unwrap_or(Transform::IDENTITY)
            },
        )
    }
}

/// An [`Error::MirroredRetarget`] where one of `scales` (source bone, scale) gives a bone that
/// carries others signs other than `kept` ([`PlanSection::kept_signs`]); `what` names their
/// origin, `names` the source's bones.
pub(crate) fn check_reflections(
    kept: &[Option<u32>],
    mut scales: impl Iterator<Item = (usize, Vec3)>,
    names: &[String],
    what: &str,
) -> Result<()> {
    let wrong = scales.find(|&(b, s)| {
        kept.get(b)
            .copied()
            .flatten()
            .is_some_and(|k| sign_pattern(s) != k)
    });
    match wrong {
        Some((b, _)) => Err(Error::MirroredRetarget {
            what: what.to_string(),
            bone: names.get(b).cloned().unwrap_or_default(),
        }),
        None => Ok(()),
    }
}

/// [`check_reflections`] for every scale key of `clip`, a clip of the source.
pub(crate) fn check_clip_reflections(
    kept: &[Option<u32>],
    clip: &Clip,
    names: &[String],
) -> Result<()> {
    let keys = clip.tracks().iter().enumerate().flat_map(|(b, t)| {
        t.scale
            .iter()
            .flat_map(move |c| c.values.iter().map(move |&v| (b, v)))
    });
    check_reflections(kept, keys, names, &format!("source clip '{}'", clip.name()))
}

/// Target bone `r`'s local transform. `path(i)` is path entry `i` (counted from the start of
/// the table `r.path_start` indexes), `local(bone, full)` the sampled local of source bone
/// `bone` (its rotation only, the rest its reference's, where `full` is false).
/// Factors that are the identity by construction (no swing, no segment) are left out, and so
/// are the samples of what the record does not read (a reference bone reads no source; the
/// translations and scales along the path only where a driven translation or a parent swing
/// without a chord of its own reads `X.T`), which changes no result: a product with the
/// identity is exact, and a rotation does not depend on translations or scales.
pub(crate) fn apply_bone(
    r: &BonePlan,
    path: impl Fn(usize) -> u32,
    mut local: impl FnMut(usize, bool) -> Transform,
) -> Transform {
    let q = Quat::from_array;
    let driven = r.modes & PLAN_DRIVEN != 0;
    if r.modes & PLAN_ROTATION == PLAN_REFERENCE && !driven {
        return Transform {
            rotation: q(r.outer_post).normalize(),
            translation: Vec3::from_array(r.t_const),
            scale: Vec3::from_array(r.scale),
        };
    }
    // X = compose(L_e, X) over `len` entries from `start` (the first entry is X itself); also
    // X after the first `cap` entries. `full`: translations and scales too, not only X.R.
    let mut fold = |start: usize, len: usize, cap: usize, full: bool| {
        let mut x = Transform::IDENTITY;
        let mut captured = Transform::IDENTITY;
        for k in 0..len {
            let e = path(start + k);
            let l = local((e & PATH_BONE) as usize, full);
            let l = if e & PATH_MIRRORED != 0 {
                unmirror(l, e >> PATH_MIRROR_SHIFT)
            } else {
                l
            };
            let l = if e & PATH_INVERSE != 0 {
                l.inverse()
            } else {
                l
            };
            x = if k == 0 {
                l
            } else {
                Transform::compose(&l, &x)
            };
            if k + 1 == cap {
                captured = x;
            }
        }
        (x, captured)
    };
    let start = r.path_start as usize;
    let (n, nc, np) = (
        r.path_len as usize,
        r.chord_len as usize,
        r.parent_chord_len as usize,
    );
    let parent_swing = r.parent_swing != [0.0; 3];
    let full = driven || (parent_swing && np == 0);
    let (x, x_cap) = fold(start, n, r.t_cap as usize, full);
    // Swings: this bone's own (its chord Y) and its parent's (Z, or X itself), undone.
    let sc = (nc > 0).then(|| swing(r.swing, fold(start + n, nc, 0, true).0.translation));
    let sp_inv = parent_swing.then(|| {
        let chord = if np > 0 {
            fold(start + n + nc, np, 0, true).0.translation
        } else {
            x.translation
        };
        swing(r.parent_swing, chord).conjugate()
    });
    let rotation = match r.modes & PLAN_ROTATION {
        PLAN_REFERENCE => q(r.outer_post),
        mode => {
            let mut xr = x.rotation;
            if let Some(sp_inv) = sp_inv {
                xr = sp_inv * xr;
            }
            if let Some(sc) = sc {
                xr *= sc;
            }
            let e = q(r.pre) * xr * q(r.post);
            let axis = Vec3::from_array(r.twist_axis);
            let base = || {
                if axis == Vec3::ZERO {
                    e
                } else {
                    twist(e, axis)
                }
            };
            match mode {
                PLAN_MAPPED => e,
                PLAN_CHAIN => q(r.outer_pre) * quat_pow(base(), r.fraction) * q(r.outer_post),
                _ if r.fraction != 0.0 => {
                    q(r.outer_pre) * quat_pow(base(), -r.fraction) * e * q(r.outer_post)
                }
                _ => q(r.outer_pre) * e * q(r.outer_post),
            }
        }
    };
    let mut translation = Vec3::from_array(r.t_const);
    if driven {
        let mut v = x.translation * r.t_k - Vec3::from_array(r.t_sub);
        if let Some(sp_inv) = sp_inv {
            v = sp_inv * v;
        }
        let mut moved = q(r.t_rot) * v;
        if r.t_cap > 0 {
            // The rest offset W turns with the captured bones (or with their heading only).
            let d = q(r.t_wpre) * x_cap.rotation * q(r.t_wpost);
            let axis = Vec3::from_array(r.t_yaw_axis);
            let d = if axis == Vec3::ZERO {
                d
            } else {
                twist(d, axis)
            };
            moved += q(r.t_par_inv) * (d * Vec3::from_array(r.t_w));
        }
        translation += Vec3::from_array(r.t_inv_scale) * moved;
    }
    let mut rotation = rotation.normalize();
    let mirror = (r.modes >> PLAN_MIRROR_SHIFT) & MIRROR_PATTERN;
    if mirror != 0 {
        // The unmirrored twin's local, under the target's reflected parent frame.
        rotation = reflect_rotation(rotation, mirror);
        translation *= pattern_signs(mirror);
    }
    Transform {
        rotation,
        translation,
        scale: Vec3::from_array(r.scale),
    }
}

/// Source local `l` as the unmirrored twin's, `bits` the path entry's mirror bits shifted
/// down: its rotation reflected by its parent frame's pattern `D` (`D · R · D`), its
/// translation `D ∘ T`, its scale's signs undone by its own pattern.
fn unmirror(l: Transform, bits: u32) -> Transform {
    let (parent, own) = (
        bits & MIRROR_PATTERN,
        (bits >> MIRROR_PATTERN_BITS) & MIRROR_PATTERN,
    );
    Transform {
        rotation: reflect_rotation(l.rotation, parent),
        translation: l.translation * pattern_signs(parent),
        scale: l.scale * pattern_signs(own),
    }
}

/// The smallest rotation taking `rest` (a unit direction) to `chord`'s direction; the identity
/// for a zero chord.
fn swing(rest: [f32; 3], chord: Vec3) -> Quat {
    chord.try_normalize().map_or(Quat::IDENTITY, |c| {
        find_between_normals(Vec3::from_array(rest), c)
    })
}
