//! Recognition by structure, for skeletons whose names say nothing (CesiumMan's unnamed
//! joints): the head is the highest extremity, the legs the two lowest, branching from the
//! hips; the arms the two largest branches above the hips; left and right from the facing
//! direction (the toes point forward; glTF's +Z without toes).

use glam::{Mat3, Vec3};

use super::{torso, Ctx, Method, Parts, Refusal, Side, SideLimbs};

/// The roles from the hierarchy and the rest pose alone.
pub(super) fn by_structure(ctx: &Ctx) -> Result<Parts, Refusal> {
    let n = ctx.skeleton.len();
    let tree = ctx.tree;
    let pos = ctx.pos;
    let up = ctx.world_up.unwrap_or(Vec3::Y);
    let h = |b: usize| pos[b].dot(up);
    let missing = |what: &str| Refusal::Missing(what.into());
    let live = |b: usize| ctx.usable(b) && ctx.deforms[b];
    let usable_children = |b: usize| -> Vec<usize> {
        tree.children[b]
            .iter()
            .copied()
            .filter(|&c| live(c))
            .collect()
    };
    let leaves: Vec<usize> = (0..n)
        .filter(|&b| live(b) && usable_children(b).is_empty())
        .collect();
    if leaves.len() < 5 {
        return Err(missing("five extremities (head, two hands, two feet)"));
    }
    let head = *leaves
        .iter()
        .max_by(|&&a, &&b| h(a).total_cmp(&h(b)))
        .ok_or_else(|| missing("head"))?;
    let mut low: Vec<usize> = leaves.iter().copied().filter(|&b| b != head).collect();
    low.sort_by(|&a, &b| h(a).total_cmp(&h(b)));
    let foot_a = low[0];
    let foot_b = low[1..]
        .iter()
        .copied()
        .find(|&b| {
            tree.lca(foot_a, b)
                .is_some_and(|l| tree.is_ancestor(l, head) && l != foot_a && l != b)
        })
        .ok_or_else(|| missing("second leg"))?;
    let hips = tree.lca(foot_a, foot_b).ok_or_else(|| missing("hips"))?;
    if !tree.is_ancestor(hips, head) {
        return Err(missing("hips below the head"));
    }
    // Branches off the hips→head path (above the hips), largest first.
    let head_path: Vec<usize> = tree.ancestors(head).take_while(|&b| b != hips).collect();
    let mut branches: Vec<(usize, f32)> = Vec::new();
    for &b in head_path.iter().skip(1) {
        for c in usable_children(b) {
            if head_path.contains(&c) {
                continue;
            }
            let extent = (0..n)
                .filter(|&d| tree.is_ancestor(c, d))
                .map(|d| (pos[d] - pos[b]).length())
                .fold(0.0, f32::max);
            branches.push((c, extent));
        }
    }
    branches.sort_by(|a, b| b.1.total_cmp(&a.1));
    if branches.len() < 2 {
        return Err(missing("two arms"));
    }
    let (arm_a, arm_b) = (branches[0].0, branches[1].0);

    // Chains with coincident joints (zero-length connectors) dropped.
    let tol = 1e-3 * ctx.extent();
    let chain = |top: usize, leaf: usize| -> Vec<usize> {
        let mut c = tree.between(top, leaf);
        c.push(leaf);
        c.into_iter()
            .filter(|&b| live(b))
            .filter(|&b| tree.parent[b].is_none_or(|p| (pos[b] - pos[p]).length() > tol))
            .collect()
    };
    let leg = |foot_leaf: usize| -> Result<(usize, usize, usize, Option<usize>), Refusal> {
        let c = chain(hips, foot_leaf);
        match c.len() {
            0..=2 => Err(missing("leg of three bones")),
            3 => Ok((c[0], c[1], c[2], None)),
            l => Ok((c[0], c[l - 3], c[l - 2], Some(c[l - 1]))),
        }
    };
    let arm = |root: usize| -> Result<(Option<usize>, usize, usize, usize), Refusal> {
        let parent = tree.parent[root].unwrap_or(root);
        let far = (0..n)
            .filter(|&d| tree.is_ancestor(root, d) && live(d))
            .max_by(|&a, &b| {
                (pos[a] - pos[parent])
                    .length()
                    .total_cmp(&(pos[b] - pos[parent]).length())
            })
            .unwrap_or(root);
        let mut c = tree.between(parent, far);
        c.push(far);
        let c: Vec<usize> = c
            .into_iter()
            .filter(|&b| live(b))
            .filter(|&b| tree.parent[b].is_none_or(|p| (pos[b] - pos[p]).length() > tol))
            .collect();
        let hand_at = c
            .iter()
            .position(|&b| usable_children(b).len() >= 2)
            .unwrap_or(c.len().saturating_sub(1));
        if hand_at < 2 {
            return Err(missing("arm of three bones"));
        }
        let clavicle = (hand_at >= 3).then(|| c[hand_at - 3]);
        Ok((clavicle, c[hand_at - 2], c[hand_at - 1], c[hand_at]))
    };
    let (ta, sa, fa, toe_a) = leg(foot_a)?;
    let (tb, sb, fb, toe_b) = leg(foot_b)?;
    let (ca, ua, la, ha) = arm(arm_a)?;
    let (cb, ub, lb, hb) = arm(arm_b)?;
    // Facing: the toes point forward; without toes, glTF's front (+Z in the world).
    let mut forward = Vec3::ZERO;
    for (foot, toe) in [(fa, toe_a), (fb, toe_b)] {
        if let Some(t) = toe {
            forward += pos[t] - pos[foot];
        }
    }
    forward -= up * forward.dot(up);
    if forward.length() < tol {
        let linear = Mat3::from_mat4(ctx.frame.above);
        forward = linear.inverse() * Vec3::Z;
        forward -= up * forward.dot(up);
    }
    let forward = forward
        .try_normalize()
        .ok_or_else(|| missing("facing direction"))?;
    let right = forward.cross(up);
    let leg_a_right = pos[ta].dot(right) > pos[tb].dot(right);
    let arm_a_right = pos[ha].dot(right) > pos[hb].dot(right);
    let limbs = |leg: (usize, usize, usize, Option<usize>),
                 arm: (Option<usize>, usize, usize, usize)| {
        SideLimbs {
            clavicle: arm.0,
            upper_arm: arm.1,
            forearm: arm.2,
            hand: arm.3,
            hand_parts: Vec::new(),
            fingers: Default::default(),
            thigh: leg.0,
            shin: leg.1,
            foot: leg.2,
            toes: leg.3,
        }
    };
    let la_ = (ta, sa, fa, toe_a);
    let lb_ = (tb, sb, fb, toe_b);
    let aa_ = (ca, ua, la, ha);
    let ab_ = (cb, ub, lb, hb);
    let (right_leg, left_leg) = if leg_a_right { (la_, lb_) } else { (lb_, la_) };
    let (right_arm, left_arm) = if arm_a_right { (aa_, ab_) } else { (ab_, aa_) };
    let left = limbs(left_leg, left_arm);
    let right = limbs(right_leg, right_arm);
    let (hips, chest) = torso(ctx, &left, &right, head)?;
    let mut reasons = Vec::new();
    for (side, l) in [(Side::Left, &left), (Side::Right, &right)] {
        let sn = side.name();
        let leg_note = format!("a chain down from the pelvis, on the {sn} of the facing direction");
        let arm_note = format!("a chain sideways from the chest, on the {sn}");
        reasons.push((l.thigh, format!("structure: {sn} thigh ({leg_note})")));
        reasons.push((
            l.shin,
            format!("structure: {sn} shin (second bone of that chain)"),
        ));
        reasons.push((
            l.foot,
            format!("structure: {sn} foot (third bone of that chain)"),
        ));
        if let Some(t) = l.toes {
            reasons.push((t, format!("structure: {sn} toes (end of that chain)")));
        }
        if let Some(c) = l.clavicle {
            reasons.push((
                c,
                format!("structure: {sn} clavicle (short first bone of {arm_note})"),
            ));
        }
        reasons.push((
            l.upper_arm,
            format!("structure: {sn} upper arm ({arm_note})"),
        ));
        reasons.push((
            l.forearm,
            format!("structure: {sn} forearm (next bone of that chain)"),
        ));
        reasons.push((l.hand, format!("structure: {sn} hand (end of that chain)")));
    }
    reasons.push((
        head,
        "structure: the highest extremity above the chest".to_string(),
    ));
    Ok(Parts {
        hips,
        chest,
        head,
        sides: [left, right],
        up,
        method: Method::Structure,
        reasons,
    })
}
