//! Building a plan's records: the [`Builder`] of one (source, target) pair, over both sides as
//! it reads them ([`PlanSide`]). The formulas are those of `docs/pose-math.md`, "Retargeting
//! between characters"; the names below are the spec's.

use glam::{Quat, Vec3};

use super::mirror::{self, Mirror};
use super::{align, correspond, BoneKind, BonePlanInfo, PlanOptions, MAX_PATH};
use crate::error::{Error, Result};
use crate::layout::{
    BonePlan, PATH_INVERSE, PLAN_CHAIN, PLAN_DRIVEN, PLAN_MAPPED, PLAN_NO_GOAL, PLAN_REFERENCE,
    PLAN_SEGMENT_END,
};
use crate::math::safe_recip;
use crate::model::{component_space, Skeleton};
use crate::retarget::frame::Character;
use crate::retarget::goals::ChainDef;
use crate::retarget::humanoid::{display_name, skeleton_label, Role};
use crate::retarget::tree::Tree;
use crate::Transform;

/// One side of a pair as the builder reads it.
pub(super) struct PlanSide<'a> {
    pub(super) skeleton: &'a Skeleton,
    pub(super) tree: Tree,
    pub(super) character: &'a Character,
    /// Rest component-space transforms.
    pub(super) cs: Vec<Transform>,
    /// Rest joint positions.
    pub(super) pos: Vec<Vec3>,
    /// The reflections of the character `skeleton` is the unmirrored twin of.
    pub(super) mirror: &'a Mirror,
}

impl<'a> PlanSide<'a> {
    pub(super) fn new(
        skeleton: &'a Skeleton,
        character: &'a Character,
        mirror: &'a Mirror,
    ) -> Self {
        let cs = skeleton.rest_component();
        Self {
            mirror,
            skeleton,
            tree: Tree::new(skeleton),
            character,
            pos: cs.iter().map(|t| t.translation).collect(),
            cs,
        }
    }
}

/// What [`Builder::build`] makes.
pub(super) struct Built {
    pub(super) records: Vec<BonePlan>,
    pub(super) goals: Vec<BonePlan>,
    pub(super) paths: Vec<u32>,
    pub(super) bones: Vec<BonePlanInfo>,
    pub(super) g: Quat,
    pub(super) k: f32,
    pub(super) reference: Vec<Transform>,
}

/// The unmapped target bones strictly between two consecutive mapped bones of one chain
/// (`p` above, `c` below), which share the rotation of the segment.
struct Segment {
    inter: Vec<usize>,
    /// Per bone of `inter`: the normalized length from `p`'s joint to its joint.
    cum: Vec<f32>,
    /// The segment's direction in `p`'s frame for a limb segment (its bones share only the
    /// twist about it); zero for torso and finger chains (the whole rotation).
    axis: Vec3,
}

/// A swing: the source sub-path whose end gives the chord, and the chord's rest direction.
type Swing = (Vec<(usize, bool)>, Vec3);

/// Everything the records of one pair are built from.
pub(super) struct Builder<'a> {
    pub(super) s: &'a PlanSide<'a>,
    pub(super) t: &'a PlanSide<'a>,
    options: &'a PlanOptions,
    pub(super) g: Quat,
    pub(super) k: f32,
    /// Counterpart source bone per target bone, and why.
    pub(super) map: Vec<Option<usize>>,
    why: Vec<String>,
    /// The target's reference locals (aligned) and their component-space transforms.
    tref: Vec<Transform>,
    pub(super) t_cs: Vec<Transform>,
    /// `Q_b` per mapped target bone.
    pub(super) q: Vec<Option<Quat>>,
    /// The nearest mapped ancestor per target bone.
    mapped_anc: Vec<Option<usize>>,
    used_source: Vec<bool>,
    segment_of: Vec<Option<Segment>>,
    /// For a chain share: the mapped bone ending its segment and its place in it.
    share_of: Vec<Option<(usize, usize)>>,
    swing: Vec<Option<Swing>>,
}

impl<'a> Builder<'a> {
    pub(super) fn new(
        s: &'a PlanSide<'a>,
        t: &'a PlanSide<'a>,
        options: &'a PlanOptions,
    ) -> Result<Self> {
        let (sf, tf) = (&s.character.body, &t.character.body);
        let g = sf.rotation_to(tf);
        let k = tf.hip_height / sf.hip_height;
        let nt = t.skeleton.len();
        let (map, why) = correspond::correspondence(s, t, options)?;
        let dirs = align::directions(s, t, &map);
        let mut tref = t.skeleton.rest().to_vec();
        if options.align_rest {
            align::align_rest(s, t, &mut tref, &map, &dirs, g);
        }
        let t_cs = component_space(t.skeleton.parents(), &tref);
        let q: Vec<Option<Quat>> = (0..nt)
            .map(|b| {
                map[b].map(|a| {
                    (s.cs[a].rotation.inverse() * g.inverse() * t_cs[b].rotation).normalize()
                })
            })
            .collect();
        let mapped_anc: Vec<Option<usize>> = (0..nt)
            .map(|b| t.tree.ancestors(b).skip(1).find(|&y| map[y].is_some()))
            .collect();
        let mut used_source = vec![false; s.skeleton.len()];
        for &a in map.iter().flatten() {
            used_source[a] = true;
        }
        let mut builder = Self {
            s,
            t,
            options,
            g,
            k,
            map,
            why,
            tref,
            t_cs,
            q,
            mapped_anc,
            used_source,
            segment_of: (0..nt).map(|_| None).collect(),
            share_of: vec![None; nt],
            swing: vec![None; nt],
        };
        builder.chain_segments();
        builder.swings(&dirs);
        Ok(builder)
    }

    /// Segments between consecutive mapped bones of a chain, whose unmapped bones share the
    /// segment's rotation ("Chains of different lengths").
    fn chain_segments(&mut self) {
        let (t, map) = (self.t, &self.map);
        let roles = t.character.humanoid.roles();
        for b in 0..t.skeleton.len() {
            let (Some(_), Some(p)) = (map[b], self.mapped_anc[b]) else {
                continue;
            };
            let inter = t.tree.between(p, b);
            let Some(twist_only) = chain_kind(roles[p], roles[b]) else {
                continue;
            };
            if inter.is_empty() {
                continue;
            }
            // A shared bone that carries other mapped bones would move them: it stays rigid.
            let carries_others = inter.iter().any(|&u| {
                (0..t.skeleton.len()).any(|d| {
                    map[d].is_some()
                        && d != b
                        && t.tree.is_ancestor(u, d)
                        && !t.tree.is_ancestor(b, d)
                })
            });
            if carries_others {
                continue;
            }
            let joints: Vec<Vec3> = std::iter::once(p)
                .chain(inter.iter().copied())
                .chain([b])
                .map(|x| self.t_cs[x].translation)
                .collect();
            let along: Vec<f32> = joints
                .windows(2)
                .scan(0.0, |acc, w| {
                    *acc += (w[1] - w[0]).length();
                    Some(*acc)
                })
                .collect();
            let total = along.last().copied().unwrap_or(0.0);
            if total <= 1e-8 {
                continue;
            }
            let axis = if twist_only {
                (self.t_cs[p].rotation.inverse()
                    * (self.t_cs[b].translation - self.t_cs[p].translation))
                    .try_normalize()
                    .unwrap_or(Vec3::ZERO)
            } else {
                Vec3::ZERO
            };
            for (i, &u) in inter.iter().enumerate() {
                self.share_of[u] = Some((b, i));
            }
            let cum = along[..inter.len()].iter().map(|l| l / total).collect();
            self.segment_of[b] = Some(Segment { inter, cum, axis });
        }
    }

    /// Swings ("Swings"): a mapped bone whose source segment to its direction child passes
    /// through extra source bones turns so that its direction follows the source's joints.
    fn swings(&mut self, dirs: &[align::Direction]) {
        let (s, t) = (self.s, self.t);
        for d in dirs {
            let Some(a) = self.map[d.b] else { continue };
            if d.b == t.character.humanoid.hips
                || !t.tree.is_ancestor(d.b, d.c)
                || !s.tree.is_ancestor(a, d.s_anchor)
            {
                continue;
            }
            let path = s.tree.path(a, d.s_anchor);
            if path.len() < 2 || path.iter().any(|&(_, inv)| inv) || path.len() > MAX_PATH {
                continue;
            }
            if let Some(chord) = self.rest_x(&path).translation.try_normalize() {
                self.swing[d.b] = Some((path, chord));
            }
        }
    }

    /// Path entries: source bone indices, with their mirror bits, [`PATH_INVERSE`] where the
    /// local is inverted.
    pub(super) fn encode(&self, path: &[(usize, bool)]) -> Vec<u32> {
        let m = self.s.mirror;
        path.iter()
            .map(|&(x, inv)| x as u32 | m.path_bits(x) | if inv { PATH_INVERSE } else { 0 })
            .collect()
    }

    /// `X` at rest: the composition of the source's reference locals along `path`.
    fn rest_x(&self, path: &[(usize, bool)]) -> Transform {
        path.iter().fold(Transform::IDENTITY, |x, &(e, inv)| {
            let l = self.s.skeleton.rest()[e];
            Transform::compose(&if inv { l.inverse() } else { l }, &x)
        })
    }

    /// The source path a mapped target bone `c` reads: from its mapped ancestor's counterpart,
    /// or from the source's top when it has none.
    fn main_path(&self, c: usize) -> Vec<(usize, bool)> {
        let a = self.map[c].unwrap_or(0);
        match self.mapped_anc[c].and_then(|p| self.map[p]) {
            Some(a_p) => self.s.tree.path(a_p, a),
            None => from_top(&self.s.tree, a),
        }
    }

    pub(super) fn build(self, chains: &[ChainDef]) -> Result<Built> {
        let nt = self.t.skeleton.len();
        let mut records = Vec::with_capacity(nt);
        let mut paths: Vec<u32> = Vec::new();
        let mut bones = Vec::with_capacity(nt);
        for b in 0..nt {
            let (record, info) = self.record(b, &mut paths)?;
            records.push(record);
            bones.push(info);
        }
        // One goal per chain, then one toe goal per chain.
        let mut goals: Vec<BonePlan> = chains.iter().map(|c| self.goal(c, &mut paths)).collect();
        goals.extend(chains.iter().map(|c| self.toe_goal(c, &mut paths)));
        Ok(Built {
            records,
            goals,
            paths,
            bones,
            g: self.g,
            k: self.k,
            reference: self.tref,
        })
    }

    /// Target bone `b`'s record and report; its path entries go to `paths`.
    fn record(&self, b: usize, paths: &mut Vec<u32>) -> Result<(BonePlan, BonePlanInfo)> {
        let mut rec = reference_record(&self.tref[b]);
        // The mapped bone whose path this record reads: itself, or its segment's end.
        let reader = match (self.map[b], self.share_of[b]) {
            (Some(_), _) => Some(b),
            (None, Some((c, _))) => Some(c),
            _ => None,
        };
        let Some(c) = reader else {
            let info = BonePlanInfo {
                source: None,
                kind: BoneKind::Reference,
                driven: false,
                reason: self.why[b].clone(),
                path: Vec::new(),
            };
            return Ok((rec, info));
        };
        let path = self.main_path(c);
        if path.len() > MAX_PATH {
            return Err(Error::RetargetPath {
                bone: display_name(&self.t.skeleton.names()[b]).to_string(),
                target: skeleton_label(self.t.skeleton),
                len: path.len(),
                limit: MAX_PATH,
            });
        }
        // Entries: the path, this bone's own chord (a chain share reads its segment end's),
        // then its frame parent's chord unless that is the path itself.
        let own = self.swing[c].as_ref();
        let parent = self.mapped_anc[c].and_then(|p| self.swing[p].as_ref());
        rec.path_start = paths.len() as u32;
        rec.path_len = path.len() as u32;
        paths.extend(self.encode(&path));
        if let Some((chord_path, chord)) = own {
            rec.swing = chord.to_array();
            rec.chord_len = chord_path.len() as u32;
            paths.extend(self.encode(chord_path));
        }
        if let Some((chord_path, chord)) = parent {
            rec.parent_swing = chord.to_array();
            if *chord_path != path {
                rec.parent_chord_len = chord_path.len() as u32;
                paths.extend(self.encode(chord_path));
            }
        }
        let driven = if self.map[b].is_some() {
            self.mapped_rotation(&mut rec, b);
            self.translation(&mut rec, b, &path)
        } else {
            self.share_rotation(&mut rec, b, c);
            false
        };
        if driven {
            rec.modes |= PLAN_DRIVEN;
        }
        let tm = self.t.mirror;
        mirror::mirror_record(&mut rec, tm.parent(b), tm.own(b));
        let (kind, reason) = if self.map[b].is_some() {
            (BoneKind::Mapped, self.why[b].clone())
        } else {
            let twist = if rec.twist_axis == [0.0; 3] {
                ""
            } else {
                " (twist only)"
            };
            let reason = format!(
                "chain share {:.2} of the rotation up to '{}'{twist}",
                rec.fraction,
                display_name(&self.t.skeleton.names()[c]),
            );
            (BoneKind::ChainShare, reason)
        };
        let mut read = path;
        read.extend(own.iter().flat_map(|(p, _)| p.iter().copied()));
        let info = BonePlanInfo {
            source: self.map[b],
            kind,
            driven,
            reason,
            path: read,
        };
        Ok((rec, info))
    }

    /// `Q_p⁻¹` for a bone whose nearest mapped ancestor is `p`, `G` for one without.
    fn frame_q(&self, c: usize) -> Quat {
        match self.mapped_anc[c] {
            Some(p) => self.q[p].unwrap_or(Quat::IDENTITY).inverse(),
            None => self.g,
        }
    }

    /// `P` for bone `x` read through `c`'s path: the reference rotation of `x`'s parent
    /// relative to `c`'s mapped ancestor (in component space where it has none).
    fn parent_rel(&self, x: usize, c: usize) -> Quat {
        let par = self
            .t
            .skeleton
            .parent(x)
            .map_or(Quat::IDENTITY, |pp| self.t_cs[pp].rotation);
        match self.mapped_anc[c] {
            Some(p) => (self.t_cs[p].rotation.inverse() * par).normalize(),
            None => par,
        }
    }

    /// A mapped bone's rotation: `pre ⊗ X.R ⊗ post`, or the remainder of its segment's
    /// rotation when unmapped bones above it share it (a segment end).
    fn mapped_rotation(&self, rec: &mut BonePlan, b: usize) {
        let qb = self.q[b].unwrap_or(Quat::IDENTITY);
        let frame_q = self.frame_q(b);
        let pmat = self.parent_rel(b, b);
        match &self.segment_of[b] {
            Some(seg) => {
                let placed = (pmat * self.tref[b].rotation).normalize();
                rec.pre = frame_q.to_array();
                rec.post = (qb * placed.inverse()).normalize().to_array();
                rec.outer_pre = pmat.inverse().to_array();
                rec.outer_post = placed.to_array();
                rec.fraction = seg.cum.last().copied().unwrap_or(0.0);
                rec.twist_axis = seg.axis.to_array();
                rec.modes = PLAN_SEGMENT_END;
            }
            None => {
                rec.pre = (pmat.inverse() * frame_q).normalize().to_array();
                rec.post = qb.to_array();
                rec.modes = PLAN_MAPPED;
            }
        }
    }

    /// A chain share's rotation: its part of the segment ending at mapped bone `c`.
    fn share_rotation(&self, rec: &mut BonePlan, b: usize, c: usize) {
        let (Some((_, i)), Some(seg)) = (self.share_of[b], &self.segment_of[c]) else {
            return;
        };
        let product = |n: usize| {
            seg.inter[..n]
                .iter()
                .fold(Quat::IDENTITY, |acc, &u| acc * self.tref[u].rotation)
        };
        let qc = self.q[c].unwrap_or(Quat::IDENTITY);
        let all = product(seg.inter.len());
        rec.pre = self.frame_q(c).to_array();
        rec.post = (qc * (all * self.tref[c].rotation).inverse())
            .normalize()
            .to_array();
        rec.outer_pre = product(i).inverse().normalize().to_array();
        rec.outer_post = product(i + 1).normalize().to_array();
        let before = if i == 0 { 0.0 } else { seg.cum[i - 1] };
        rec.fraction = seg.cum[i] - before;
        rec.twist_axis = seg.axis.to_array();
        rec.modes = PLAN_CHAIN;
    }

    /// A mapped bone's translation ("Driven translations"); true where it follows the source.
    fn translation(&self, rec: &mut BonePlan, b: usize, path: &[(usize, bool)]) -> bool {
        let (s, t) = (self.s, self.t);
        let a = self.map[b].unwrap_or(0);
        match self.mapped_anc[b] {
            None => {
                let par = t
                    .skeleton
                    .parent(b)
                    .map_or(Transform::IDENTITY, |pp| self.t_cs[pp]);
                self.root_translation(rec, b, &par, a, path, false);
                true
            }
            Some(p) => {
                let a_p = self.map[p].unwrap_or(0);
                let qp = self.q[p].unwrap_or(Quat::IDENTITY);
                let par = t.skeleton.parent(b).map_or(Transform::IDENTITY, |pp| {
                    Transform::relative(&self.t_cs[pp], &self.t_cs[p])
                });
                let (inv_r, inv_s) = (par.rotation.inverse(), safe_recip(par.scale));
                let kk = self.k * mean(s.cs[a_p].scale) / mean(self.t_cs[p].scale).max(1e-12);
                let xref = self.rest_x(path);
                let forward_mapped = path
                    .iter()
                    .any(|&(x, inv)| !inv && x != a && self.used_source[x]);
                if forward_mapped {
                    // Its path runs through another mapped source bone (an IK-style foot under
                    // the hips): it follows the source's position in p's frame.
                    let rest_b = Transform::relative(&self.t_cs[b], &self.t_cs[p]).translation;
                    rec.t_rot = (inv_r * qp.inverse()).normalize().to_array();
                    rec.t_k = kk;
                    rec.t_inv_scale = inv_s.to_array();
                    rec.t_cap = path.len() as u32;
                    rec.t_w = (rest_b - kk * (qp.inverse() * xref.translation)).to_array();
                    rec.t_wpre = qp.inverse().to_array();
                    rec.t_wpost = (xref.rotation.inverse() * qp).normalize().to_array();
                    rec.t_par_inv = inv_r.to_array();
                    rec.t_const = (inv_s * (inv_r * -par.translation)).to_array();
                    true
                } else if self.options.translation_deltas && path.len() == 1 && !path[0].1 {
                    // The source bone's own translation change from rest, into the target.
                    rec.t_rot = (inv_r * qp.inverse()).normalize().to_array();
                    rec.t_k = kk;
                    rec.t_inv_scale = inv_s.to_array();
                    rec.t_sub = (xref.translation * kk).to_array();
                    rec.t_const = self.tref[b].translation.to_array();
                    true
                } else {
                    false
                }
            }
        }
    }
}

/// A goal record for no goal.
pub(super) fn no_goal() -> BonePlan {
    BonePlan {
        modes: PLAN_NO_GOAL,
        ..reference_record(&Transform::IDENTITY)
    }
}

/// A record that keeps `reference` (a bone with no counterpart).
pub(super) fn reference_record(reference: &Transform) -> BonePlan {
    let identity = Quat::IDENTITY.to_array();
    BonePlan {
        pre: identity,
        post: identity,
        outer_pre: identity,
        outer_post: reference.rotation.to_array(),
        t_rot: identity,
        t_inv_scale: [1.0; 3],
        t_k: 1.0,
        t_const: reference.translation.to_array(),
        modes: PLAN_REFERENCE,
        scale: reference.scale.to_array(),
        t_wpre: identity,
        t_wpost: identity,
        t_par_inv: identity,
        ..BonePlan::default()
    }
}

/// The path from the source's top down to `a` (each local as it is).
pub(super) fn from_top(tree: &Tree, a: usize) -> Vec<(usize, bool)> {
    tree.top_down(a).into_iter().map(|x| (x, false)).collect()
}

/// Whether bones between `p` and `b` form a chain, and if so whether they share only the twist
/// (limb segments, `Some(true)`) or the whole rotation (torso and fingers, `Some(false)`).
fn chain_kind(p: Option<Role>, b: Option<Role>) -> Option<bool> {
    use Role::*;
    let torso = |r: Role| matches!(r, Hips | Spine(_) | Chest | Neck(_) | Head);
    let (p, b) = (p?, b?);
    if torso(p) && torso(b) {
        return Some(false);
    }
    match (p, b) {
        (Hand(s), Finger(t, _, 0)) if s == t => Some(false),
        (Finger(s, d, _), Finger(t, e, _)) if s == t && d == e => Some(false),
        (UpperArm(s), Forearm(t))
        | (Forearm(s), Hand(t))
        | (Thigh(s), Shin(t))
        | (Shin(s), Foot(t))
            if s == t =>
        {
            Some(true)
        }
        _ => None,
    }
}

pub(super) fn mean(v: Vec3) -> f32 {
    (v.x + v.y + v.z) / 3.0
}
