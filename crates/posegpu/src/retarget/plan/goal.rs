//! The goal records of a plan ("Driven translations" and "IK after retargeting" in
//! `docs/pose-math.md`): a mapping root's translation, each IK chain's goal and toe goal, and
//! the point an IK-style shin carries.

use glam::{Quat, Vec3};

use super::build::{from_top, mean, no_goal, reference_record, Builder};
use super::mirror;
use crate::layout::{BonePlan, PLAN_DRIVEN, PLAN_MAPPED};
use crate::math::safe_recip;
use crate::retarget::frame::BodyFrame;
use crate::retarget::goals::{self, ChainDef};
use crate::retarget::humanoid::Side;
use crate::Transform;

impl Builder<'_> {
    /// A root of the mapping ("Driven translations"): target bone `b` (at its aligned rest,
    /// component space) under parent transform `par` follows source bone `a`'s position
    /// (read through `path`, from the source's top) from the floor point under the pelvis,
    /// scaled by k. The rest offset W turns with the source hips for the hips; with their
    /// heading only for other roots (IK-style feet, IK goals), so that a planted foot stays
    /// planted. A `goal` below the source hips takes W's height from the floors ("IK after
    /// retargeting").
    pub(super) fn root_translation(
        &self,
        rec: &mut BonePlan,
        b: usize,
        par: &Transform,
        a: usize,
        path: &[(usize, bool)],
        goal: bool,
    ) {
        let (s, t) = (self.s, self.t);
        let (sf, tf) = (&s.character.body, &t.character.body);
        let (inv_r, inv_s) = (par.rotation.inverse(), safe_recip(par.scale));
        let t_pelvis = t.character.humanoid.pelvis(&self.t_cs);
        let s_pelvis = s.character.humanoid.pelvis(&s.cs);
        let origin_t = tf.horizontal(t_pelvis) + tf.up * tf.ground;
        let origin_s = sf.horizontal(s_pelvis) + sf.up * sf.ground;
        let hips = s.character.humanoid.hips;
        let floor = goal && s.tree.is_ancestor(hips, a);
        let w = self.rest_offset(b, s.cs[a].translation, floor);
        let hips_at = path.iter().position(|&(x, _)| x == hips);
        let (cap, yaw) = match hips_at {
            Some(i) if a == hips => (i + 1, Vec3::ZERO),
            Some(i) => (i + 1, tf.up),
            None => (path.len(), tf.up),
        };
        let cap_bone = path.get(cap.saturating_sub(1)).map_or(a, |&(x, _)| x);
        rec.t_rot = (inv_r * self.g).normalize().to_array();
        rec.t_k = self.k;
        rec.t_inv_scale = inv_s.to_array();
        rec.t_cap = cap as u32;
        rec.t_w = w.to_array();
        rec.t_wpre = self.g.to_array();
        rec.t_wpost = (s.cs[cap_bone].rotation.inverse() * self.g.inverse())
            .normalize()
            .to_array();
        rec.t_par_inv = inv_r.to_array();
        rec.t_yaw_axis = yaw.to_array();
        rec.t_const = (inv_s
            * (inv_r * (origin_t - self.k * (self.g * origin_s) - par.translation)))
            .to_array();
    }

    /// The goal record of IK chain `c` ("IK after retargeting"): for a leg, the source's ankle
    /// as a root of the mapping, in component space; for the left arm, the source's left hand
    /// relative to its right hand, in the target right hand's frame. [`PLAN_NO_GOAL`] where the
    /// source lacks a counterpart or the path is longer than [`goals::MAX_GOAL_PATH`].
    pub(super) fn goal(&self, c: &ChainDef, paths: &mut Vec<u32>) -> BonePlan {
        // A carried chain's goal is in component space, as a leg's: its `goal_parent` is the
        // foot bone, which its own clips reach for. The torso's is the source's neck base as a
        // root of the mapping without the rest offset `W`: seen from the pelvis (which the hips
        // put at the scaled source pelvis), it lies along the source's pelvis → neck-base line.
        if c.torso.is_some() {
            // Each character's own neck base, as rest alignment and the quality measure take
            // them (the head's joint where it has no neck).
            let s_neck = self.s.character.humanoid.neck_base(&self.s.pos);
            let mut rec = self.goal_from(c.end, s_neck, None, paths);
            rec.t_w = [0.0; 3];
            return rec;
        }
        let goal_parent = c.goal_parent.filter(|_| c.carried.is_none());
        self.goal_of(c.end, goal_parent, paths)
    }

    /// The toe goal record of IK chain `c`: the source's counterpart of the leg's toe as a
    /// root of the mapping, in component space, as the ankle's; [`PLAN_NO_GOAL`] for a chain
    /// without a toe or a source without its counterpart.
    pub(super) fn toe_goal(&self, c: &ChainDef, paths: &mut Vec<u32>) -> BonePlan {
        c.toe
            .map_or_else(no_goal, |toe| self.goal_of(toe, None, paths))
    }

    /// The goal record of target bone `end`: in component space, or relative to `goal_parent`.
    fn goal_of(&self, end: usize, goal_parent: Option<usize>, paths: &mut Vec<u32>) -> BonePlan {
        match self.map[end] {
            Some(a) => self.goal_from(end, a, goal_parent, paths),
            None => no_goal(),
        }
    }

    /// The goal record of target bone `end` from source bone `a`.
    fn goal_from(
        &self,
        end: usize,
        a: usize,
        goal_parent: Option<usize>,
        paths: &mut Vec<u32>,
    ) -> BonePlan {
        let mut rec = reference_record(&Transform::IDENTITY);
        // An IK-style source foot (one that deforms nothing, not below its shin: Mech's) need
        // not be where the shin ends: the goal follows the point the shin carries.
        let carried = goal_parent
            .is_none()
            .then(|| self.carried_source_foot(a))
            .flatten();
        let path = match goal_parent {
            None => from_top(&self.s.tree, carried.map_or(a, |(shin, _)| shin)),
            Some(g) => match self.map[g] {
                Some(a_g) => self.s.tree.path(a_g, a),
                None => return no_goal(),
            },
        };
        if path.is_empty() || path.len() > goals::MAX_GOAL_PATH {
            return no_goal();
        }
        rec.path_start = paths.len() as u32;
        rec.path_len = path.len() as u32;
        paths.extend(self.encode(&path));
        rec.modes = PLAN_DRIVEN;
        match goal_parent {
            None => match carried {
                Some((shin, tip)) => self.carried_goal(&mut rec, end, shin, tip, &path),
                None => self.root_translation(&mut rec, end, &Transform::IDENTITY, a, &path, true),
            },
            Some(g) => {
                let (qg, qe) = (
                    self.q[g].unwrap_or(Quat::IDENTITY),
                    self.q[end].unwrap_or(Quat::IDENTITY),
                );
                let a_g = self.map[g].unwrap_or(0);
                rec.pre = qg.inverse().to_array();
                rec.post = qe.to_array();
                rec.modes |= PLAN_MAPPED;
                rec.t_rot = qg.inverse().to_array();
                rec.t_k = self.k * mean(self.s.cs[a_g].scale) / mean(self.t_cs[g].scale).max(1e-12);
                mirror::mirror_record(&mut rec, self.t.mirror.world(g), 0);
            }
        }
        rec
    }

    /// `W`: how target bone `b`'s aligned rest place relative to its pelvis differs from the
    /// scaled source point `p`'s (source rest) relative to the source's pelvis; with `floor`,
    /// its height measured from the floors instead of the pelvises: a foot at its standing
    /// height on the source stands on the target (their pelvis heights need not be in
    /// proportion, nor the aligned pose's feet at the rest pose's heights).
    fn rest_offset(&self, b: usize, p: Vec3, floor: bool) -> Vec3 {
        let (s, t) = (self.s, self.t);
        let t_pelvis = t.character.humanoid.pelvis(&self.t_cs);
        let s_pelvis = s.character.humanoid.pelvis(&s.cs);
        let w = (self.t_cs[b].translation - t_pelvis) - self.k * (self.g * (p - s_pelvis));
        if !floor {
            return w;
        }
        let (sf, tf) = (&s.character.body, &t.character.body);
        let stand = |f: &BodyFrame, q: Vec3| q.dot(f.up) - f.rest_ground;
        tf.horizontal(w) + tf.up * (stand(tf, t.pos[b]) - self.k * stand(sf, p))
    }

    /// For source bone `a`, a foot that does not hang below its shin: the shin, and the point
    /// the shin carries to the foot at rest (in the shin's frame).
    fn carried_source_foot(&self, a: usize) -> Option<(usize, Vec3)> {
        let s = self.s;
        Side::BOTH.into_iter().find_map(|side| {
            let l = s.character.humanoid.side(side);
            (l.foot == a && !s.tree.is_ancestor(l.shin, a)).then(|| {
                (
                    l.shin,
                    Transform::relative(&s.cs[a], &s.cs[l.shin]).translation,
                )
            })
        })
    }

    /// A leg's goal record (target ankle `end`) that follows the point source shin `shin`
    /// carries (`tip` in its frame), read through `path`: as [`Builder::root_translation`]
    /// from the floor, with the carried offset turning with the shin itself.
    fn carried_goal(
        &self,
        rec: &mut BonePlan,
        end: usize,
        shin: usize,
        tip: Vec3,
        path: &[(usize, bool)],
    ) {
        let s = self.s;
        self.root_translation(rec, end, &Transform::IDENTITY, shin, path, false);
        let shin_rest = s.cs[shin];
        let carried_rest = Transform::compose(
            &Transform {
                translation: tip,
                ..Transform::IDENTITY
            },
            &shin_rest,
        )
        .translation;
        // The rest offset between the ankles, kept as it is; heights from the floor.
        let w = self.rest_offset(end, carried_rest, true);
        rec.t_const = (Vec3::from_array(rec.t_const) + w).to_array();
        rec.t_cap = path.len() as u32;
        rec.t_yaw_axis = [0.0; 3];
        rec.t_w =
            (self.k * (self.g * (shin_rest.rotation * tip * mean(shin_rest.scale)))).to_array();
        rec.t_wpost = (shin_rest.rotation.inverse() * self.g.inverse())
            .normalize()
            .to_array();
    }
}
