//! Two-bone IK after retargeting, on one pose: the per-instance weights, and the solver the IK
//! stage runs (`shaders/ik.wgsl`; its CPU twin `src/cpu/ik.rs` reads the batch and calls this),
//! which `RetargetPlan::apply_with_ik` runs too. Spec: `docs/pose-math.md`, "IK after
//! retargeting".

use glam::{Quat, Vec3, Vec4};

use crate::layout::ZERO_WEIGHT;
use crate::layout::{
    Entry, IkChain, IkHeader, BEND_BIAS, IK_ATTACHED, IK_CARRIED, IK_CHAIN_WORDS, IK_HAND,
    IK_HEADER_WORDS, IK_MAX_CHAINS, IK_NO_BONE, IK_TORSO, MAX_REACH,
};
use crate::math::mirror::local_rotation;
use crate::math::{find_between_normals, safe_recip, TINY};
use crate::Transform;

/// How much of the IK after retargeting an instance gets, from 0 (the retargeted pose as it
/// is) to 1 (the chains reach their goals).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct IkWeights {
    /// Both legs: each ankle goes to the height of the source's ankle above its floor, scaled to
    /// the target (feet on the ground where the source's are, no sinking, no floating; a
    /// swinging foot within 2% of hip height of it), the toes likewise; and the torso: the
    /// line from the pelvis to the neck's base leans as the source's does.
    pub feet: f32,
    /// The left arm: the left hand goes where the source's left hand is relative to its right
    /// hand (a two-handed weapon stays in both hands), and turns as the source's does.
    pub hands: f32,
}

impl IkWeights {
    /// No IK.
    pub const NONE: Self = Self {
        feet: 0.0,
        hands: 0.0,
    };
    /// Feet on the ground, hands free: what `posegpu` does by default for retargeted clips.
    pub const FEET: Self = Self {
        feet: 1.0,
        hands: 0.0,
    };
    /// Feet on the ground and the left hand on the right hand's grip.
    pub const ALL: Self = Self {
        feet: 1.0,
        hands: 1.0,
    };

    /// True when both weights are finite and within `0..=1`.
    pub fn is_valid(&self) -> bool {
        [self.feet, self.hands]
            .iter()
            .all(|w| w.is_finite() && (0.0..=1.0).contains(w))
    }
}

/// The number of chains of an IK table.
pub(crate) fn chain_count(table: &[Entry]) -> usize {
    Chains(table).count()
}

/// Whether an IK table has [`IK_ATTACHED`] chains, for which the IK stage runs on every
/// instance ([`IkHeader::attached`]).
pub(crate) fn attaches_feet(table: &[Entry]) -> bool {
    Chains(table).count() > 0 && Chains(table).ik_header().attached > 0
}

/// The IK table (layout: [`IkChain`]) as the IK stage binds it, read through the readers of
/// `ik.wgsl` (`ik_header`, `ik_chain`, `ik_entry`).
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
    /// `ik_header().chain_count`; 0 for a library without chains (an empty table).
    fn count(&self) -> usize {
        if self.0.is_empty() {
            0
        } else {
            self.ik_header().chain_count as usize
        }
    }

    fn ik_header(&self) -> IkHeader {
        *bytemuck::from_bytes(bytemuck::cast_slice(&self.0[..IK_HEADER_WORDS as usize]))
    }

    fn ik_chain(&self, i: usize) -> IkChain {
        let at = (IK_HEADER_WORDS + i as u32 * IK_CHAIN_WORDS) as usize;
        *bytemuck::from_bytes(bytemuck::cast_slice(
            &self.0[at..at + IK_CHAIN_WORDS as usize],
        ))
    }

    fn ik_entry(&self, i: u32) -> usize {
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
            let b = self.ik_entry(c.path_start + k);
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

    /// `c`'s pose, a carried chain's end at the point its mid bone carries; and where a sample
    /// without a goal puts the end: where it is, or a carried chain's foot bone.
    fn pose(&self, locals: &[Transform], c: &IkChain) -> (ChainPose, Transform) {
        let mut p = self.walk_chain(locals, c);
        if c.flags & IK_CARRIED == 0 {
            return (p, p.end);
        }
        let tip = Transform {
            translation: Vec3::from_array(c.tip),
            ..Transform::IDENTITY
        };
        (p.par_end, p.end) = (p.mid, Transform::compose(&tip, &p.mid));
        (p, self.walk_to(locals, c.goal_path_start, c.goal_path_len))
    }

    /// An [`IK_ATTACHED`] chain's foot bone (`goal_parent`, the last of its goal path) moved to
    /// the point its mid bone carries, its local rotation and scale kept, so that the bones
    /// below it follow (`attach_foot` in `ik.wgsl`).
    fn attach(&self, locals: &mut [Transform], c: &IkChain) {
        let tip = Transform {
            translation: Vec3::from_array(c.tip),
            ..Transform::IDENTITY
        };
        let at = Transform::compose(&tip, &self.walk_chain(locals, c).mid).translation;
        let len = c.goal_path_len.saturating_sub(1);
        let parent = self.walk_to(locals, c.goal_path_start, len);
        let moved = parent.rotation.conjugate() * (at - parent.translation);
        locals[c.goal_parent as usize].translation = moved * safe_recip(parent.scale);
    }

    /// The component-space transform of the last bone of the path `start .. start + len`
    /// (`walk_to` in `ik.wgsl`).
    fn walk_to(&self, locals: &[Transform], start: u32, len: u32) -> Transform {
        (0..len).fold(Transform::IDENTITY, |x, k| {
            let l = locals[self.ik_entry(start + k)];
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

/// WGSL's `smoothstep`: 0 at or below `lo`, 1 at or above `hi`, cubic in between.
fn smoothstep(lo: f32, hi: f32, x: f32) -> f32 {
    let t = ((x - lo) / (hi - lo)).clamp(0.0, 1.0);
    t * t * (3.0 - 2.0 * t)
}

/// Runs every chain of `table` on one pose, in table order. `sample_weights` are the base
/// samples' weights (the blend rule's: those at or below `ZERO_WEIGHT` dropped, the rest
/// renormalized), `goal(chain, record, sample, toe)` that sample's goal for chain `chain`
/// (whose record is given) in the chain's goal frame, or its toe goal (component space) where
/// `toe` (`None`: the end, or the toe, where it is).
pub(crate) fn solve(
    table: &[Entry],
    locals: &mut [Transform],
    weights: IkWeights,
    sample_weights: impl Iterator<Item = f32> + Clone,
    mut goal: impl FnMut(usize, &IkChain, usize, bool) -> Option<Transform>,
) {
    let chains = Chains(table);
    let sum: f32 = sample_weights.clone().filter(|&w| w > ZERO_WEIGHT).sum();
    let weight = |c: &IkChain| {
        let w = if c.flags & IK_HAND != 0 {
            weights.hands
        } else {
            weights.feet
        };
        (w > ZERO_WEIGHT && (c.flags & IK_CARRIED != 0 || sum > 0.0)).then_some(w)
    };
    // The legs' goals, blended once before any chain runs: the pelvis drop needs them all.
    let mut leg_goals = [None; IK_MAX_CHAINS as usize];
    let head = chains.ik_header();
    if head.pelvis != IK_NO_BONE {
        let mut drop = 0.0f32;
        let mut up = Vec3::ZERO;
        for (i, cached) in leg_goals.iter_mut().enumerate().take(chains.count()) {
            let c = chains.ik_chain(i);
            let Some(w) = weight(&c).filter(|_| lowers_pelvis(&c)) else {
                continue;
            };
            let (p, unplanned) = chains.pose(locals, &c);
            let (goal_t, _, planned) =
                blend_goal(sample_weights.clone(), sum, unplanned, None, |k| {
                    goal(i, &c, k, false)
                });
            *cached = Some((goal_t, planned));
            // A carried leg playing its own clips is not crouched for.
            if !planned {
                continue;
            }
            let aim = leg_aim(&c, p.end.translation, goal_t, w);
            let (a, b, e) = (p.root.translation, p.mid.translation, p.end.translation);
            up = Vec3::from_array(c.up);
            drop = drop.max(pelvis_drop(a, b, e, aim, up));
        }
        let drop = capped_drop(drop, head.max_drop);
        if drop > 0.0 {
            let parent = chains.walk_to(locals, head.pelvis_path_start, head.pelvis_path_len);
            let moved = parent.rotation.conjugate() * (up * -drop);
            locals[head.pelvis as usize].translation += moved * safe_recip(parent.scale);
        }
    }
    // Whether some weighted sample has a goal for chain `i` (it plays a retargeted clip).
    let planned = |goal: &mut dyn FnMut(usize, &IkChain, usize, bool) -> Option<Transform>,
                   i: usize,
                   c: &IkChain| {
        let mut weighted = sample_weights
            .clone()
            .enumerate()
            .filter(|&(_, w)| w > ZERO_WEIGHT);
        weighted.any(|(k, _)| goal(i, c, k, false).is_some())
    };
    for i in 0..chains.count() {
        let c = chains.ik_chain(i);
        // The chain's IK; its value says whether the samples have a goal for it, where it
        // found out.
        let known: Option<bool> = 'chain: {
            let hand = c.flags & IK_HAND != 0;
            let carried = c.flags & IK_CARRIED != 0;
            let Some(w) = weight(&c) else {
                break 'chain None;
            };
            if c.flags & IK_TORSO != 0 {
                // The torso: the spine bone below the chest turns, the chest keeps its turn.
                let p = chains.walk_chain(locals, &c);
                let hips = chains.walk_to(locals, c.goal_path_start, c.goal_path_len);
                let pelvis =
                    hips.translation + hips.rotation * (hips.scale * Vec3::from_array(c.tip));
                let (goal_t, _, planned) =
                    blend_goal(sample_weights.clone(), sum, p.end, None, |k| {
                        goal(i, &c, k, false)
                    });
                let (j1, j2, n) = (p.root.translation, p.mid.translation, p.end.translation);
                if let Some(turn) = torso_turn(pelvis, j1, j2, n, goal_t, w).filter(|_| planned) {
                    let root = turn * p.root.rotation;
                    locals[c.root as usize].rotation = local_rotation(&p.par_root, root);
                    locals[c.mid as usize].rotation =
                        local_rotation(&turned(&p.root, root), p.mid.rotation);
                }
                break 'chain Some(planned);
            }
            let (p, unplanned) = chains.pose(locals, &c);
            let end = p.end;
            let (goal_t, goal_r, planned) = match leg_goals.get(i).copied().flatten() {
                // A leg's goal from before the pelvis dropped (a sample without a goal keeps the
                // foot where the pose put it, not where the drop took it).
                Some((goal_t, planned)) => (goal_t, Vec4::from(end.rotation), planned),
                None if hand => {
                    let frame = chains.walk_to(locals, c.goal_path_start, c.goal_path_len);
                    blend_goal(sample_weights.clone(), sum, end, Some(frame), |k| {
                        goal(i, &c, k, false)
                    })
                }
                None => blend_goal(sample_weights.clone(), sum, unplanned, None, |k| {
                    goal(i, &c, k, false)
                }),
            };
            // Legs aim at their goal's height (across the ground as little as the leg's length
            // needs); a carried leg whose samples have no goal (its own clips) reaches its foot
            // bone.
            let target = if !hand && (planned || !carried) {
                let aim = leg_aim(&c, end.translation, goal_t, w);
                let (a, b) = (p.root.translation, p.mid.translation);
                within_reach(
                    aim,
                    a,
                    ((b - a).length() + (end.translation - b).length()) * MAX_REACH,
                    Vec3::from_array(c.up),
                )
            } else {
                end.translation + (goal_t - end.translation) * w
            };
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
                break 'chain Some(planned);
            };
            let dba = db * da;
            let rot = |parent: &Transform, turn: Quat, cs: Quat| {
                local_rotation(&turned(parent, turn * parent.rotation), cs)
            };
            locals[c.root as usize].rotation = local_rotation(&p.par_root, da * p.root.rotation);
            locals[c.mid as usize].rotation = rot(&p.par_mid, da, dba * p.mid.rotation);
            if !carried {
                locals[c.end as usize].rotation = rot(&p.par_end, dba, end_rotation);
            }
            if !hand && !carried && c.toe != IK_NO_BONE {
                // The foot turns about the ankle to bring the toe to its goal's height.
                let p = chains.walk_chain(locals, &c);
                let toe = Transform::compose(&locals[c.toe as usize], &p.end);
                let (toe_goal, _, _) = blend_goal(sample_weights.clone(), sum, toe, None, |k| {
                    goal(i, &c, k, true)
                });
                let up = Vec3::from_array(c.up);
                let v = toe.translation - p.end.translation;
                let turn = toe_turn(v, toe_goal - toe.translation, up, w);
                locals[c.end as usize].rotation = local_rotation(&p.par_end, turn * p.end.rotation);
            }
            Some(planned)
        };
        // An attached foot follows its shin, where the instance plays a retargeted sample, with
        // the chain's IK weight or without.
        if c.flags & IK_ATTACHED != 0 && known.unwrap_or_else(|| planned(&mut goal, i, &c)) {
            chains.attach(locals, &c);
        }
    }
}

/// The rotation (component space) that turns the foot about the ankle so that the toe, `v`
/// from the ankle, moves `w` of the way to the height of `to_goal` (from the toe): the
/// smallest one, keeping the toe's heading; as near as the toe reaches (at most
/// [`MAX_REACH`] of its length along `up`), and the identity where the toe lies along `up`.
/// `x` turned to rotation `r` (its translation and scale kept): a component-space parent
/// after the chain turned it.
fn turned(x: &Transform, r: Quat) -> Transform {
    Transform { rotation: r, ..*x }
}

fn toe_turn(v: Vec3, to_goal: Vec3, up: Vec3, w: f32) -> Quat {
    let len = v.length();
    let h = (v.dot(up) + to_goal.dot(up) * w).clamp(-len * MAX_REACH, len * MAX_REACH);
    let across = v - up * v.dot(up);
    let across_len = across.length();
    if across_len <= TINY || across_len.is_nan() {
        return Quat::IDENTITY;
    }
    swing(
        v,
        across * ((len * len - h * h).sqrt() / across_len) + up * h,
    )
}

/// True for a chain the pelvis is lowered for: a leg (its goal is in component space).
fn lowers_pelvis(c: &IkChain) -> bool {
    c.flags & (IK_HAND | IK_TORSO) == 0
}

/// The torso's turn (component space) about the joint `j1` of the spine bone below the chest
/// (joint `j2`) that puts the neck's base `n`, moved rigidly with the chest, on the line from
/// the pelvis toward `goal` (`w` of the way from where the line points now): the sphere–line
/// solve `|q + t d| = |j2 − j1|`, `q = pelvis − (n − j2) − j1`, the root nearest the pose.
/// `None` where the line misses the sphere or a direction is undefined.
fn torso_turn(pelvis: Vec3, j1: Vec3, j2: Vec3, n: Vec3, goal: Vec3, w: f32) -> Option<Quat> {
    let have = (n - pelvis).try_normalize()?;
    let want = (goal - pelvis).try_normalize()?;
    let d = (have * (1.0 - w) + want * w).try_normalize()?;
    let v = j2 - j1;
    let q = pelvis - (n - j2) - j1;
    let b = q.dot(d);
    let disc = b * b - q.length_squared() + v.length_squared();
    // Not real (NaN): the line misses the sphere.
    let root = Some(disc.sqrt()).filter(|r| r.is_finite())?;
    let (near, far) = (q + d * (-b - root), q + d * (-b + root));
    let moved = if near.dot(v) > far.dot(v) { near } else { far };
    Some(swing(v, moved))
}

/// Where a leg's end aims, from where it is (`end`) toward its goal with weight `w`: only its
/// height, all of it in contact and within the chain's slack while the foot swings. Across the
/// ground the leg keeps the retargeted stride: pulling a planted foot to where the source's is
/// bent the legs away from the source's directions and did not slide the feet less (measured:
/// `docs/pose-math.md`, "IK after retargeting"); and a swinging foot within the slack of its
/// height keeps the source's knee angle where the legs' proportions differ.
fn leg_aim(c: &IkChain, end: Vec3, goal: Vec3, w: f32) -> Vec3 {
    let up = Vec3::from_array(c.up);
    let along = (goal - end).dot(up);
    let lift = goal.dot(up) - c.rest_height;
    let slack = c.slack * smoothstep(c.contact_lo, c.contact_hi, lift);
    end + up * (along.signum() * (along.abs() - slack).max(0.0) * w)
}

/// `aim`, or where it lies beyond `reach` of the root joint `a`, moved across the ground
/// toward the point under `a` until it is within reach at the same height (none where the
/// height alone is out of reach: the leg then stretches toward it as far as it goes).
fn within_reach(aim: Vec3, a: Vec3, reach: f32, up: Vec3) -> Vec3 {
    let d = aim - a;
    if d.length_squared() <= reach * reach {
        return aim;
    }
    let along = d.dot(up);
    let across = d - up * along;
    let room = reach * reach - along * along;
    let len = across.length();
    if room <= 0.0 || len <= TINY {
        return aim;
    }
    a + up * along + across * (room.sqrt() / len)
}

/// How far the root joint `a` of a chain `a` → `b` → `e` must move down `up` for its end to
/// reach `aim` (at the most [`MAX_REACH`] of its length): 0 where it reaches, and where no
/// drop would (an aim farther across than the chain is long: lowering would only sink it).
fn pelvis_drop(a: Vec3, b: Vec3, e: Vec3, aim: Vec3, up: Vec3) -> f32 {
    let reach = ((b - a).length() + (e - b).length()) * MAX_REACH;
    let d = aim - a;
    if d.length_squared() <= reach * reach {
        return 0.0;
    }
    let along = d.dot(up);
    let across = d.length_squared() - along * along;
    if across >= reach * reach {
        return 0.0;
    }
    (-along - (reach * reach - across).sqrt()).max(0.0)
}

/// The pelvis drop the legs get for the drop they need: all of it up to `max`; past `max` it
/// fades to none at `1.5 max`, where a goal is taken as out of the legs' reach (a source foot
/// far from its own leg, as IK-style rigs allow) rather than crouched toward.
fn capped_drop(needed: f32, max: f32) -> f32 {
    if needed <= max {
        needed
    } else {
        (max * (3.0 - 2.0 * needed / max)).max(0.0)
    }
}

/// The blend of the base samples' goals (component space; a sample without one gives `end`):
/// positions weighted, rotations summed in one hemisphere (normalized by the caller); and
/// whether any sample had a goal.
fn blend_goal(
    sample_weights: impl Iterator<Item = f32>,
    sum: f32,
    end: Transform,
    frame: Option<Transform>,
    mut goal: impl FnMut(usize) -> Option<Transform>,
) -> (Vec3, Vec4, bool) {
    let (mut acc_t, mut acc_r, mut planned) = (Vec3::ZERO, Vec4::ZERO, false);
    for (k, sw) in sample_weights.enumerate() {
        if sw <= ZERO_WEIGHT {
            continue;
        }
        let f = sw / sum;
        let sample = goal(k);
        planned |= sample.is_some();
        let g = match (sample, frame) {
            (Some(l), Some(p)) => Transform::compose(&l, &p),
            (Some(l), None) => l,
            (None, _) => end,
        };
        acc_t += g.translation * f;
        let r = Vec4::from(g.rotation);
        let r = if acc_r.dot(r) < 0.0 { -r } else { r };
        acc_r += r * f;
    }
    (acc_t, acc_r, planned)
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_pelvis_drops_as_far_as_the_leg_needs_to_reach() {
        // A straight leg of length 1 hanging from (0, 1, 0); up is +Y.
        let (a, b, e, up) = (Vec3::Y, Vec3::Y * 0.5, Vec3::ZERO, Vec3::Y);
        let reach = MAX_REACH;
        // Within reach: no drop.
        assert_eq!(pelvis_drop(a, b, e, Vec3::new(0.3, 0.2, 0.0), up), 0.0);
        // Below and ahead: the dropped hip reaches the aim at full stretch.
        let aim = Vec3::new(0.6, -0.2, 0.1);
        let drop = pelvis_drop(a, b, e, aim, up);
        assert!(drop > 0.0);
        assert!((((a - up * drop) - aim).length() - reach).abs() < 1e-5);
        // Farther across than the leg is long: lowering would only sink the foot.
        assert_eq!(pelvis_drop(a, b, e, Vec3::new(1.2, 0.5, 0.0), up), 0.0);
        // Above the hip and out of reach: a drop would take it farther.
        assert_eq!(pelvis_drop(a, b, e, Vec3::new(0.2, 2.5, 0.0), up), 0.0);
    }

    #[test]
    fn the_foot_turns_to_bring_the_toe_to_its_height() {
        let up = Vec3::Y;
        // A toe ahead of and below the ankle, to be raised by 0.05.
        let v = Vec3::new(0.0, -0.05, 0.12);
        let turn = toe_turn(v, up * 0.05, up, 1.0);
        let moved = turn * v;
        assert!((moved.y - 0.0).abs() < 1e-6, "{moved}");
        assert!((moved.length() - v.length()).abs() < 1e-6);
        assert!(
            moved.x.abs() < 1e-6 && moved.z > 0.0,
            "the heading is kept: {moved}"
        );
        // Half the weight, half the way.
        assert!(((toe_turn(v, up * 0.05, up, 0.5) * v).y + 0.025).abs() < 1e-6);
        // Out of reach: as far as the toe goes.
        let low = toe_turn(v, up * -1.0, up, 1.0) * v;
        assert!((low.y + v.length() * MAX_REACH).abs() < 1e-5, "{low}");
        // A toe straight below the ankle has no heading to keep.
        assert_eq!(toe_turn(up * -0.1, up * 0.05, up, 1.0), Quat::IDENTITY);
    }

    #[test]
    fn the_torso_turns_the_neck_onto_the_wanted_line() {
        // A spine bone from 0.3 to 0.7 carrying a chest whose neck base is at 0.8, above the
        // pelvis at the origin; the source leans forward.
        let (pelvis, j1, j2, n) = (Vec3::ZERO, Vec3::Y * 0.3, Vec3::Y * 0.7, Vec3::Y * 0.8);
        let goal = Vec3::new(0.0, 0.8, 0.2);
        let neck = |turn: Quat| j1 + turn * (j2 - j1) + (n - j2);
        let turn = torso_turn(pelvis, j1, j2, n, goal, 1.0).unwrap();
        assert!(neck(turn).normalize().dot(goal.normalize()) > 1.0 - 1e-6);
        // Half the weight: the line half way (by direction) between where it was and the goal.
        let half = torso_turn(pelvis, j1, j2, n, goal, 0.5).unwrap();
        let mid = (Vec3::Y + goal.normalize()).normalize();
        assert!(neck(half).normalize().dot(mid) > 1.0 - 1e-6);
        // A spine bone too short to swing the neck onto a line across: none.
        let short = Vec3::Y * 0.35;
        assert_eq!(torso_turn(pelvis, j1, short, n, Vec3::X, 1.0), None);
    }

    #[test]
    fn an_aim_out_of_reach_moves_under_the_hip_at_its_height() {
        let (a, up) = (Vec3::Y, Vec3::Y);
        // Within reach: kept.
        let near = Vec3::new(0.3, 0.2, 0.0);
        assert_eq!(within_reach(near, a, 1.0, up), near);
        // Ahead and below, out of reach: the same height, as far ahead as the leg reaches.
        let far = Vec3::new(0.8, 0.1, 0.2);
        let moved = within_reach(far, a, 1.0, up);
        assert!((moved.y - far.y).abs() < 1e-6 && ((moved - a).length() - 1.0).abs() < 1e-5);
        assert!(
            (moved.x / moved.z - far.x / far.z).abs() < 1e-5,
            "the heading is kept: {moved}"
        );
        // A height out of reach: left for the leg to stretch toward.
        let deep = Vec3::new(0.1, -0.5, 0.0);
        assert_eq!(within_reach(deep, a, 1.0, up), deep);
    }

    #[test]
    fn a_drop_past_the_cap_fades_out_without_a_jump() {
        let max = 0.1;
        assert_eq!(capped_drop(0.05, max), 0.05);
        assert_eq!(capped_drop(max, max), max);
        assert!((capped_drop(max * 1.000_01, max) - max).abs() < 1e-5);
        assert!((capped_drop(max * 1.25, max) - max * 0.5).abs() < 1e-6);
        assert_eq!(capped_drop(max * 1.5, max), 0.0);
        assert_eq!(capped_drop(max * 4.0, max), 0.0);
    }
}
