//! Two-bone IK after retargeting, on one pose: the solver the IK stage runs (`shaders/ik.wgsl`;
//! its CPU twin `src/cpu/ik.rs` reads the batch and calls this), and what
//! [`super::RetargetPlan::apply_with_ik`] runs. Spec: `docs/pose-math.md`, "IK after
//! retargeting".

use glam::{Quat, Vec3, Vec4};

use super::goals::IkWeights;
use crate::additive::delta::ZERO_WEIGHT;
use crate::layout::{Entry, IkChain, IK_CARRIED, IK_CHAIN_WORDS, IK_HAND, IK_NO_BONE};
use crate::math::{find_between_normals, Transform, TINY};

/// The number of chains of an IK table.
pub(crate) fn chain_count(table: &[Entry]) -> usize {
    Chains(table).count()
}

/// An IK table (layout: [`IkChain`]) read word by word.
#[derive(Clone, Copy)]
struct Chains<'a>(&'a [Entry]);

/// Component-space transforms met on the walk down a chain's path: the root's, the mid's and
/// the end's, each with its parent's (`ChainPose` in `ik.wgsl`).
#[derive(Clone, Copy)]
struct ChainPose {
    par_root: Transform,
    root: Transform,
    par_mid: Transform,
    mid: Transform,
    par_end: Transform,
    end: Transform,
}

impl Chains<'_> {
    fn count(&self) -> usize {
        self.0.first().map_or(0, |w| w[0] as usize)
    }

    fn chain(&self, i: usize) -> IkChain {
        let at = 1 + i * IK_CHAIN_WORDS as usize;
        *bytemuck::from_bytes(bytemuck::cast_slice(
            &self.0[at..at + IK_CHAIN_WORDS as usize],
        ))
    }

    fn entry(&self, i: u32) -> usize {
        self.0[i as usize / 4][i as usize % 4] as usize
    }

    /// The bones of `c`'s path composed root first, capturing its root, mid and end
    /// (`walk_chain` in `ik.wgsl`).
    fn walk_chain(&self, locals: &[Transform], c: &IkChain) -> ChainPose {
        let id = Transform::IDENTITY;
        let mut out = ChainPose {
            par_root: id,
            root: id,
            par_mid: id,
            mid: id,
            par_end: id,
            end: id,
        };
        let mut x = id;
        for k in 0..c.path_len {
            let b = self.entry(c.path_start + k);
            let cur = if k == 0 {
                locals[b]
            } else {
                Transform::compose(&locals[b], &x)
            };
            let b = b as u32;
            if b == c.root {
                (out.par_root, out.root) = (x, cur);
            }
            if b == c.mid {
                (out.par_mid, out.mid) = (x, cur);
            }
            if b == c.end {
                (out.par_end, out.end) = (x, cur);
            }
            x = cur;
        }
        out
    }

    /// The component-space transform of the last bone of the path `start .. start + len`
    /// (`walk_to` in `ik.wgsl`).
    fn walk_to(&self, locals: &[Transform], start: u32, len: u32) -> Transform {
        (0..len).fold(Transform::IDENTITY, |x, k| {
            let l = locals[self.entry(start + k)];
            if k == 0 {
                l
            } else {
                Transform::compose(&l, &x)
            }
        })
    }
}

/// The smallest rotation taking `from`'s direction to `to`'s; the identity where either is zero.
fn swing(from: Vec3, to: Vec3) -> Quat {
    let (lf, lt) = (from.length(), to.length());
    if !(lf > 0.0 && lt > 0.0) {
        return Quat::IDENTITY;
    }
    find_between_normals(from * (1.0 / lf), to * (1.0 / lt))
}

/// How much of the chain's bend direction (in root lengths) steadies the pose's own bend: it
/// decides only where the pose bends the mid joint by less than about 3°.
pub(crate) const BEND_BIAS: f32 = 0.05;

/// The most of its length a chain stretches to: a knee never locks quite straight, where the
/// mid joint's place would hang on rounding (its offset is the square root of the slack).
pub(crate) const MAX_REACH: f32 = 0.999;

/// WGSL's `smoothstep`: 0 at or below `lo`, 1 at or above `hi`, cubic in between.
fn smoothstep(lo: f32, hi: f32, x: f32) -> f32 {
    let t = ((x - lo) / (hi - lo)).clamp(0.0, 1.0);
    t * t * (3.0 - 2.0 * t)
}

/// Runs every chain of `table` on one pose, in table order. `sample_weights` are the base
/// samples' weights (the blend rule's: those at or below `ZERO_WEIGHT` dropped, the rest
/// renormalized), `goal(chain, record, sample)` that sample's goal for chain `chain` (whose
/// record is given) in the chain's goal frame (`None`: the end where it is).
pub(crate) fn solve(
    table: &[Entry],
    locals: &mut [Transform],
    weights: IkWeights,
    sample_weights: impl Iterator<Item = f32> + Clone,
    mut goal: impl FnMut(usize, &IkChain, usize) -> Option<Transform>,
) {
    let chains = Chains(table);
    let sum: f32 = sample_weights.clone().filter(|&w| w > ZERO_WEIGHT).sum();
    for i in 0..chains.count() {
        let c = chains.chain(i);
        let hand = c.flags & IK_HAND != 0;
        let carried = c.flags & IK_CARRIED != 0;
        let w = if hand { weights.hands } else { weights.feet };
        if !(w > ZERO_WEIGHT && (carried || sum > 0.0)) {
            continue;
        }
        let mut p = chains.walk_chain(locals, &c);
        if carried {
            let tip = Transform {
                translation: Vec3::from_array(c.tip),
                ..Transform::IDENTITY
            };
            (p.par_end, p.end) = (p.mid, Transform::compose(&tip, &p.mid));
        }
        let end = p.end;
        let frame = (c.goal_parent != IK_NO_BONE)
            .then(|| chains.walk_to(locals, c.goal_path_start, c.goal_path_len));
        let (goal_t, goal_r) = match frame {
            // A carried chain's goal is its foot bone, wherever the pose put it.
            Some(foot) if carried => (foot.translation, Vec4::from(end.rotation)),
            _ => blend_goal(sample_weights.clone(), sum, end, frame, |k| goal(i, &c, k)),
        };
        // A leg moves its end's height to the goal's always, and across the ground only as
        // far as the goal is in contact: a swinging foot keeps the retargeted stride.
        let mut to_goal = goal_t - end.translation;
        if !hand && !carried {
            let up = Vec3::from_array(c.up);
            let vertical = up * to_goal.dot(up);
            let lift = goal_t.dot(up) - c.rest_height;
            let contact = 1.0 - smoothstep(c.contact_lo, c.contact_hi, lift);
            to_goal = vertical + (to_goal - vertical) * contact;
        }
        let target = end.translation + to_goal * w;
        let end_rotation = if hand {
            let e = Vec4::from(end.rotation);
            let g = goal_r * (1.0 / goal_r.length());
            let g = if e.dot(g) < 0.0 { -g } else { g };
            let v = e * (1.0 - w) + g * w;
            Quat::from_vec4(v * (1.0 / v.length()))
        } else {
            end.rotation
        };
        let Some((da, db)) = two_bone(
            p.root.translation,
            p.mid.translation,
            end.translation,
            target,
            p.root.rotation * Vec3::from_array(c.bend),
        ) else {
            continue;
        };
        let dba = db * da;
        let rot = |parent: Quat, cs: Quat| (parent.conjugate() * cs).normalize();
        locals[c.root as usize].rotation = rot(p.par_root.rotation, da * p.root.rotation);
        locals[c.mid as usize].rotation = rot(da * p.par_mid.rotation, dba * p.mid.rotation);
        if !carried {
            locals[c.end as usize].rotation = rot(dba * p.par_end.rotation, end_rotation);
        }
    }
}

/// The blend of the base samples' goals (component space; a sample without one gives `end`):
/// positions weighted, rotations summed in one hemisphere (normalized by the caller).
fn blend_goal(
    sample_weights: impl Iterator<Item = f32>,
    sum: f32,
    end: Transform,
    frame: Option<Transform>,
    mut goal: impl FnMut(usize) -> Option<Transform>,
) -> (Vec3, Vec4) {
    let (mut acc_t, mut acc_r) = (Vec3::ZERO, Vec4::ZERO);
    for (k, sw) in sample_weights.enumerate() {
        if sw <= ZERO_WEIGHT {
            continue;
        }
        let f = sw / sum;
        let g = match (goal(k), frame) {
            (Some(l), Some(p)) => Transform::compose(&l, &p),
            (Some(l), None) => l,
            (None, _) => end,
        };
        acc_t += g.translation * f;
        let r = Vec4::from(g.rotation);
        let r = if acc_r.dot(r) < 0.0 { -r } else { r };
        acc_r += r * f;
    }
    (acc_t, acc_r)
}

/// Two bones from joints `a` (root), `b` (mid) and `e` (end) toward `target`: the rotations
/// (component space) of the root about `a` and then of the mid about its new joint that put
/// the end there, or as near as the lengths reach; the mid joint in the plane the pose bends
/// it in, steadied by `pole` (the chain's bend direction) where the pose is (nearly) straight.
/// `None` for a degenerate chain or a target on the root joint.
fn two_bone(a: Vec3, b: Vec3, e: Vec3, target: Vec3, pole: Vec3) -> Option<(Quat, Quat)> {
    let (lab, lbc) = ((b - a).length(), (e - b).length());
    let d = target - a;
    let dist = d.length();
    if !(lab > TINY && lbc > TINY && dist > TINY) {
        return None;
    }
    let reach = dist.clamp((lab - lbc).abs(), (lab + lbc) * MAX_REACH);
    let dir = d * (1.0 / dist);
    let line = e - a;
    let line = line * (1.0 / line.length().max(TINY));
    let bent = (b - a) - line * (b - a).dot(line);
    let pole = bent + pole * (BEND_BIAS * lab);
    let side = pole - dir * pole.dot(dir);
    let side_len = side.length();
    let side = if side_len > TINY {
        side * (1.0 / side_len)
    } else {
        Vec3::ZERO
    };
    let cos_a = ((lab * lab + reach * reach - lbc * lbc) / (2.0 * lab * reach)).clamp(-1.0, 1.0);
    let sin_a = (1.0 - cos_a * cos_a).max(0.0).sqrt();
    let b_new = a + (dir * cos_a + side * sin_a) * lab;
    let e_new = a + dir * reach;
    let da = swing(b - a, b_new - a);
    let b1 = a + da * (b - a);
    let e1 = a + da * (e - a);
    Some((da, swing(e1 - b1, e_new - b1)))
}
