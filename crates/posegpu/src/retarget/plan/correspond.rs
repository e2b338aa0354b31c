//! Which source bone drives each target bone: roles, chains matched by the places of their
//! joints, names, and a rig's `bone_map` (`docs/pose-math.md`, "Correspondence").

use glam::Vec3;

use super::build::PlanSide;
use super::PlanOptions;
use crate::error::{Error, Result};
use crate::retarget::humanoid::{Digit, Humanoid, Role, Side};
use crate::retarget::tree::Tree;

/// Normalized places of chain bones along `start → chain… → end` joints.
fn chain_places(pos: &[Vec3], start: usize, chain: &[usize], end: Option<usize>) -> Vec<f32> {
    let mut joints = vec![pos[start]];
    joints.extend(chain.iter().map(|&b| pos[b]));
    if let Some(e) = end {
        joints.push(pos[e]);
    }
    let mut acc = 0.0;
    let mut along = Vec::new();
    for w in joints.windows(2) {
        acc += (w[1] - w[0]).length();
        along.push(acc);
    }
    let total = acc.max(1e-12);
    along[..chain.len()].iter().map(|l| l / total).collect()
}

/// Cost of leaving a chain bone without a counterpart, in normalized chain length.
const CHAIN_SKIP: f32 = 0.25;

/// Order-preserving matching of two chains by the places of their joints along the chain,
/// minimizing the summed distance of matched places plus [`CHAIN_SKIP`] per bone left out
/// (so CMU's `Neck`, whose joint sits on the chest's, is left out rather than matched to a
/// neck bone halfway up): pairs `(index in a, index in b)`.
fn match_chains(a: &[f32], b: &[f32]) -> Vec<(usize, usize)> {
    let (m, n) = (a.len(), b.len());
    let mut dp = vec![vec![0.0f32; n + 1]; m + 1];
    for i in 0..=m {
        for j in 0..=n {
            if i == 0 && j == 0 {
                continue;
            }
            let mut best = f32::INFINITY;
            if i > 0 {
                best = best.min(dp[i - 1][j] + CHAIN_SKIP);
            }
            if j > 0 {
                best = best.min(dp[i][j - 1] + CHAIN_SKIP);
            }
            if i > 0 && j > 0 {
                best = best.min(dp[i - 1][j - 1] + (a[i - 1] - b[j - 1]).abs());
            }
            dp[i][j] = best;
        }
    }
    let mut pairs = Vec::new();
    let (mut i, mut j) = (m, n);
    while i > 0 || j > 0 {
        if i > 0 && j > 0 && dp[i][j] == dp[i - 1][j - 1] + (a[i - 1] - b[j - 1]).abs() {
            pairs.push((i - 1, j - 1));
            i -= 1;
            j -= 1;
        } else if i > 0 && dp[i][j] == dp[i - 1][j] + CHAIN_SKIP {
            i -= 1;
        } else {
            j -= 1;
        }
    }
    pairs.reverse();
    pairs
}

/// The counterpart of every target bone and why (or why it has none): roles pair 1:1,
/// spine, neck and finger chains by the places of their joints, hand parts by name or with the
/// hand, then (with [`PlanOptions::match_names`]) role-less bones of the same name, and last the
/// options' `bone_map`, over everything.
pub(super) fn correspondence(
    s: &PlanSide,
    t: &PlanSide,
    options: &PlanOptions,
) -> Result<(Vec<Option<usize>>, Vec<String>)> {
    let nt = t.skeleton.len();
    let mut map = vec![None; nt];
    let mut why = vec![String::new(); nt];
    let (sh, th) = (&s.character.humanoid, &t.character.humanoid);
    let (s_pos, t_pos) = (&s.pos, &t.pos);
    let mut pair = |tb: usize, sb: usize, reason: String| {
        map[tb] = Some(sb);
        why[tb] = reason;
    };
    let same = |role: Role| format!("{role} ↔ {role}");
    pair(th.hips, sh.hips, same(Role::Hips));
    pair(th.chest, sh.chest, same(Role::Chest));
    pair(th.head, sh.head, same(Role::Head));
    let chains = [
        (
            "spine",
            chain_places(t_pos, th.hips, &th.spine, Some(th.chest)),
            chain_places(s_pos, sh.hips, &sh.spine, Some(sh.chest)),
            &th.spine,
            &sh.spine,
        ),
        (
            "neck",
            chain_places(t_pos, th.chest, &th.neck, Some(th.head)),
            chain_places(s_pos, sh.chest, &sh.neck, Some(sh.head)),
            &th.neck,
            &sh.neck,
        ),
    ];
    for (name, tu, su, tc, sc) in &chains {
        for (i, j) in match_chains(tu, su) {
            pair(
                tc[i],
                sc[j],
                format!(
                    "{name} {} of {} ↔ {name} {} of {} (nearest place along the chain: {:.2} / {:.2})",
                    i + 1,
                    tc.len(),
                    j + 1,
                    sc.len(),
                    tu[i],
                    su[j]
                ),
            );
        }
    }
    for side in Side::BOTH {
        let (tl, sl) = (th.side(side), sh.side(side));
        if let (Some(a), Some(b)) = (tl.clavicle, sl.clavicle) {
            pair(a, b, same(Role::Clavicle(side)));
        }
        pair(tl.upper_arm, sl.upper_arm, same(Role::UpperArm(side)));
        pair(tl.forearm, sl.forearm, same(Role::Forearm(side)));
        pair(tl.hand, sl.hand, same(Role::Hand(side)));
        for &h in &tl.hand_parts {
            // A hand part of the same name on the source (one tool's rig), else the hand.
            let name = &t.skeleton.names()[h];
            match sl
                .hand_parts
                .iter()
                .copied()
                .find(|&x| !name.is_empty() && s.skeleton.names()[x] == *name)
            {
                Some(x) => pair(h, x, same(Role::HandPart(side))),
                None => pair(
                    h,
                    sl.hand,
                    format!("{} ↔ {}", Role::HandPart(side), Role::Hand(side)),
                ),
            }
        }
        pair(tl.thigh, sl.thigh, same(Role::Thigh(side)));
        pair(tl.shin, sl.shin, same(Role::Shin(side)));
        pair(tl.foot, sl.foot, same(Role::Foot(side)));
        if let (Some(a), Some(b)) = (tl.toes, sl.toes) {
            pair(a, b, same(Role::Toes(side)));
        }
        for (di, digit) in Digit::ALL.into_iter().enumerate() {
            let (tf, sf) = (&tl.fingers[di], &sl.fingers[di]);
            if tf.is_empty() || sf.is_empty() {
                continue;
            }
            let tu = chain_places(t_pos, tl.hand, tf, None);
            let su = chain_places(s_pos, sl.hand, sf, None);
            for (i, j) in match_chains(&tu, &su) {
                pair(
                    tf[i],
                    sf[j],
                    format!(
                        "{} ↔ {} (nearest place along the finger)",
                        Role::Finger(side, digit, i as u8),
                        Role::Finger(side, digit, j as u8)
                    ),
                );
            }
        }
    }
    if options.match_names {
        let has_roles_below = |h: &Humanoid, tree: &Tree, b: usize| {
            (0..tree.len()).any(|d| h.role(d).is_some() && tree.is_ancestor(b, d))
        };
        for b in 0..nt {
            let name = &t.skeleton.names()[b];
            if map[b].is_some() || th.role(b).is_some() || name.is_empty() {
                continue;
            }
            let Some(a) = s.skeleton.find(name) else {
                continue;
            };
            if sh.role(a).is_some()
                || has_roles_below(th, &t.tree, b)
                || has_roles_below(sh, &s.tree, a)
            {
                continue;
            }
            map[b] = Some(a);
            why[b] = "same name, no role (extra bone of one tool)".to_string();
        }
    }
    for (t_name, s_name) in &options.bone_map {
        let unknown = |name: &str, skeleton| Error::UnknownBone {
            what: "plan bone_map".to_string(),
            name: name.to_string(),
            skeleton,
        };
        let b = t
            .skeleton
            .find(t_name)
            .ok_or_else(|| unknown(t_name, "target"))?;
        let a = s
            .skeleton
            .find(s_name)
            .ok_or_else(|| unknown(s_name, "source"))?;
        map[b] = Some(a);
        why[b] = "bone_map".to_string();
    }
    for b in 0..nt {
        if map[b].is_none() && why[b].is_empty() {
            why[b] = match th.role(b) {
                Some(r) => format!("{r}: no counterpart in the source; keeps its reference pose"),
                None => "no role; keeps its reference pose".to_string(),
            };
        }
    }
    Ok((map, why))
}
