//! Rest alignment: the direction each mapped target bone is aligned along, and the turns that
//! align the target's rest pose with the source's (`docs/pose-math.md`, "Rest alignment").

use glam::{Quat, Vec3};

use super::build::PlanSide;
use crate::math::find_between_normals;
use crate::model::component_space;
use crate::retarget::humanoid::{Digit, Side};
use crate::Transform;

// ---------------------------------------------------------------------------------------------
// Directions and rest alignment

/// A mapped target bone `b` and the point its direction is taken to: target bone `c`'s joint
/// (its mapped direction child, or the neck's base), matched with source bone `s_anchor`'s
/// joint seen from `b`'s counterpart.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) struct Direction {
    pub(super) b: usize,
    pub(super) c: usize,
    pub(super) s_anchor: usize,
    pub(super) torso: bool,
}

/// The direction of each mapped bone: torso bones toward the next mapped torso bone, limbs
/// toward the next limb bone. The neck's base is an anchor of its own: a target without a neck
/// pivots its head at the neck's base, so its chest points to the source's neck base (CMU's
/// `Neck1`), not to the source's head; a target with an unmapped neck bone points its chest at
/// that bone when the source has no neck.
pub(super) fn directions(s: &PlanSide, t: &PlanSide, map: &[Option<usize>]) -> Vec<Direction> {
    let (sh, th) = (&s.character.humanoid, &t.character.humanoid);
    let (s_pos, t_pos) = (&s.pos, &t.pos);
    let tiny_t = 1e-4 * t.character.body.hip_height;
    let tiny_s = 1e-4 * s.character.body.hip_height;
    let mut dirs = Vec::new();
    let torso: Vec<usize> = th
        .torso()
        .into_iter()
        .filter(|&b| map[b].is_some())
        .collect();
    let (t_nb, s_nb) = (th.neck_base(t_pos), sh.neck_base(s_pos));
    let (t_neck, s_neck) = (t_nb != th.head, s_nb != sh.head);
    for i in 1..torso.len() {
        let b = torso[i];
        let Some(a) = map[b] else { continue };
        let next = torso[i + 1..].iter().copied().find(|&c| {
            map[c].is_some_and(|ac| {
                (t_pos[c] - t_pos[b]).length() > tiny_t && (s_pos[ac] - s_pos[a]).length() > tiny_s
            })
        });
        let Some(c) = next else { continue };
        let ac = map[c].unwrap_or(0);
        let (c, s_anchor) =
            if c == th.head && !t_neck && s_neck && s.tree.is_ancestor(a, s_nb) && a != s_nb {
                (c, s_nb)
            } else if c == th.head
                && t_neck
                && !s_neck
                && map[t_nb].is_none()
                && t.tree.is_ancestor(b, t_nb)
                && b != t_nb
            {
                (t_nb, ac)
            } else {
                (c, ac)
            };
        dirs.push(Direction {
            b,
            c,
            s_anchor,
            torso: true,
        });
    }
    let mut limb = |b: Option<usize>, c: Option<usize>| {
        if let (Some(b), Some(c)) = (b, c) {
            if let (Some(_), Some(ac)) = (map[b], map[c]) {
                dirs.push(Direction {
                    b,
                    c,
                    s_anchor: ac,
                    torso: false,
                });
            }
        }
    };
    for side in Side::BOTH {
        let l = th.side(side);
        limb(l.clavicle, Some(l.upper_arm));
        limb(Some(l.upper_arm), Some(l.forearm));
        limb(Some(l.forearm), Some(l.hand));
        let first_finger = [Digit::Middle, Digit::Index].iter().find_map(|d| {
            let di = Digit::ALL.iter().position(|x| x == d)?;
            l.fingers[di].first().copied().filter(|&f| map[f].is_some())
        });
        limb(Some(l.hand), first_finger);
        for chain in &l.fingers {
            for w in chain.windows(2) {
                limb(Some(w[0]), Some(w[1]));
            }
        }
        limb(Some(l.thigh), Some(l.shin));
        limb(Some(l.shin), Some(l.foot));
    }
    dirs
}

/// Rest alignment ("Rest alignment"): turns the target's reference locals `tref` so that each
/// mapped bone points where the source's counterpart points at rest (through `G`): the torso
/// chain, then the pelvis → neck-base line at the hips (or, where the hips cannot reach it, at
/// the first spine bone), then the limbs parents first; feet keep their rest orientation.
pub(super) fn align_rest(
    source: &PlanSide,
    target: &PlanSide,
    tref: &mut [Transform],
    map: &[Option<usize>],
    dirs: &[Direction],
    g: Quat,
) {
    let tsk = target.skeleton;
    let (th, sh) = (&target.character.humanoid, &source.character.humanoid);
    let s_pos = &source.pos;
    let orig_cs = &target.cs;
    let tiny = 1e-4 * target.character.body.hip_height.max(1e-6);
    let pose = |tref: &[Transform]| component_space(tsk.parents(), tref);

    // Turns bone `b` by `delta` in component space (its descendants follow).
    let turn = |tref: &mut [Transform], b: usize, delta: Quat| {
        let cs = pose(tref);
        let new = delta * cs[b].rotation;
        tref[b].rotation = match tsk.parent(b) {
            Some(p) => (cs[p].rotation.inverse() * new).normalize(),
            None => new.normalize(),
        };
    };
    // Aligns b's direction to c with the source's (mapped through G). A c that does not hang
    // below b (an IK-style foot) is carried along rigidly with b.
    let align = |tref: &mut [Transform], d: &Direction, extra: &[usize]| {
        let Some(a) = map[d.b] else { return };
        let (b, c) = (d.b, d.c);
        let want = g * (s_pos[d.s_anchor] - s_pos[a]);
        if want.length() <= 1e-4 * source.character.body.hip_height {
            return;
        }
        let below = target.tree.is_ancestor(b, c);
        let rel = Transform::relative(&orig_cs[c], &orig_cs[b]);
        let cs = pose(tref);
        let end = if below {
            cs[c].translation
        } else {
            Transform::compose(&rel, &cs[b]).translation
        };
        let have = end - cs[b].translation;
        if have.length() <= tiny {
            return;
        }
        let delta = find_between_normals(have.normalize(), want.normalize());
        turn(tref, b, delta);
        for &e in extra {
            turn(tref, e, delta);
        }
        if !below {
            let cs = pose(tref);
            let placed = Transform::compose(&rel, &cs[b]);
            tref[c] = match tsk.parent(c) {
                Some(pp) => Transform::relative(&placed, &cs[pp]),
                None => placed,
            };
        }
    };

    // 1. The torso chain, each mapped bone toward its direction.
    // 2. The hips, so that the pelvis → neck-base line matches the source's too. Once the
    // chain is aligned, the line is `R·u + S`: `S` (first spine joint → neck base) is fixed by
    // the chain's directions, `u` (pelvis → first spine joint) turns with the hips. The hips
    // turn `R` takes `u` to the `u'` of the same length with `u' + S` along the wanted
    // direction (a sphere–line intersection), then the chain is aligned again; repeated a few
    // times since the chain's twist can move `S` slightly.
    let torso_dirs: Vec<&Direction> = dirs.iter().filter(|d| d.torso).collect();
    let align_torso = |tref: &mut [Transform]| {
        for d in &torso_dirs {
            align(tref, d, &[]);
        }
    };
    let s_pelvis = (s_pos[sh.left.thigh] + s_pos[sh.right.thigh]) * 0.5;
    align_torso(tref);
    for _ in 0..4 {
        let Some(first) = torso_dirs.first().map(|d| d.b) else {
            break;
        };
        let cs = pose(tref);
        let t_pos: Vec<Vec3> = cs.iter().map(|t| t.translation).collect();
        let t_pelvis = (t_pos[th.left.thigh] + t_pos[th.right.thigh]) * 0.5;
        let (t_top, s_top) = (th.neck_base(&t_pos), sh.neck_base(s_pos));
        let Some(w) = (g * (s_pos[s_top] - s_pelvis)).try_normalize() else {
            break;
        };
        let u = t_pos[first] - t_pelvis;
        let top = t_pos[t_top] - t_pos[first];
        if (u + top)
            .try_normalize()
            .is_some_and(|h| h.dot(w) > 1.0 - 1e-12)
            || u.length() <= tiny
        {
            break;
        }
        let b = w.dot(top);
        let disc = (b * b - top.length_squared() + u.length_squared())
            .max(0.0)
            .sqrt();
        let best = [b + disc, b - disc]
            .into_iter()
            .filter(|&l| l > 0.0)
            .filter_map(|l| (w * l - top).try_normalize())
            .max_by(|x, y| x.dot(u).total_cmp(&y.dot(u)));
        let Some(u2) = best else { break };
        // About the hip line only: a roll or a yaw of the hips would lift one hip joint and
        // lower the other (by a third of the hip height per 10° on the Knight's wide hips).
        let across = t_pos[th.right.thigh] - t_pos[th.left.thigh];
        turn(tref, th.hips, pitch_between(u, u2, across));
        align_torso(tref);
    }
    // Where turning the hips cannot reach (the pelvis sits on the spine's base, as in
    // MakeHuman's rig), the first spine bone turns the rest of the torso about its joint by the
    // same kind of solve, and the bones above the chest are aligned again (their joints, the
    // neck's base among them, do not move).
    if let Some(first) = torso_dirs.first().map(|d| d.b) {
        let cs = pose(tref);
        let t_pos: Vec<Vec3> = cs.iter().map(|t| t.translation).collect();
        let t_pelvis = (t_pos[th.left.thigh] + t_pos[th.right.thigh]) * 0.5;
        let (t_top, s_top) = (th.neck_base(&t_pos), sh.neck_base(s_pos));
        if let Some(w) = (g * (s_pos[s_top] - s_pelvis)).try_normalize() {
            let u = t_pos[first] - t_pelvis;
            let r = t_pos[t_top] - t_pos[first];
            let off = (u + r).try_normalize().map_or(0.0, |h| 1.0 - h.dot(w));
            if off > 1e-10 && r.length() > tiny {
                let b = w.dot(u);
                let disc = (b * b - u.length_squared() + r.length_squared())
                    .max(0.0)
                    .sqrt();
                let best = [b + disc, b - disc]
                    .into_iter()
                    .filter(|&l| l > 0.0)
                    .filter_map(|l| (w * l - u).try_normalize())
                    .max_by(|x, y| x.dot(r).total_cmp(&y.dot(r)));
                if let Some(r2) = best {
                    turn(tref, first, find_between_normals(r.normalize(), r2));
                    for d in &torso_dirs {
                        if d.b != th.chest
                            && !th.spine.contains(&d.b)
                            && !target.tree.is_ancestor(d.b, th.chest)
                        {
                            align(tref, d, &[]);
                        }
                    }
                }
            }
        }
    }
    // 3. Limbs, parents first (the directions are listed so).
    for d in dirs.iter().filter(|d| !d.torso) {
        let side_parts = Side::BOTH
            .iter()
            .map(|&s| th.side(s))
            .find(|l| l.hand == d.b)
            .map_or(&[][..], |l| l.hand_parts.as_slice());
        align(tref, d, side_parts);
        // The foot keeps its rest orientation in component space (flat on the floor): a
        // source standing flat then maps to a target standing flat, whatever the proportions
        // of the two feet; the toes follow it.
        if let Some(l) = Side::BOTH
            .iter()
            .map(|&s| th.side(s))
            .find(|l| l.shin == d.b)
        {
            if map[l.foot].is_some() {
                let cs = pose(tref);
                let keep = orig_cs[l.foot].rotation;
                tref[l.foot].rotation = match tsk.parent(l.foot) {
                    Some(pp) => (cs[pp].rotation.inverse() * keep).normalize(),
                    None => keep,
                };
            }
        }
    }
}

/// The rotation about `axis` that takes `from` to `to` as seen along the axis (their parts
/// square to it); the whole smallest rotation where `axis` is zero, the identity where either
/// part is.
fn pitch_between(from: Vec3, to: Vec3, axis: Vec3) -> Quat {
    let Some(axis) = axis.try_normalize() else {
        return from
            .try_normalize()
            .zip(to.try_normalize())
            .map_or(Quat::IDENTITY, |(f, t)| find_between_normals(f, t));
    };
    let square = |v: Vec3| (v - axis * v.dot(axis)).try_normalize();
    match (square(from), square(to)) {
        (Some(f), Some(t)) => find_between_normals(f, t),
        _ => Quat::IDENTITY,
    }
}
