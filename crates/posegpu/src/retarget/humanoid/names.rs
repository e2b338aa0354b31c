//! Recognition by names: bone names split into tokens, a side and a kind read from them, and
//! the limb bones chosen along each side's chains.

use glam::Vec3;

use super::{snap_axis, torso, Ctx, Digit, Method, Parts, Refusal, Side, SideLimbs};

/// What a bone name says.
#[derive(Clone, Debug, PartialEq)]
pub(super) struct NameInfo {
    pub(super) side: Option<Side>,
    pub(super) kind: Option<Kind>,
    /// Why the bone can have no role, from its name.
    pub(super) excluded: Option<&'static str>,
}

/// The body part a name says.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Kind {
    Hips,
    Spine,
    Neck,
    Head,
    Clavicle,
    /// `shoulder`: a clavicle, or the upper arm in mocap files.
    Shoulder,
    UpperArm,
    Forearm,
    Hand,
    Thigh,
    Shin,
    Foot,
    Toes,
    Finger(Digit),
}

/// Splits a name into lower-case tokens at separators, case changes and digit runs, after any
/// namespace (`mixamorig:`).
fn tokens(name: &str) -> Vec<String> {
    let name = name.rsplit([':', '|']).next().unwrap_or(name);
    let chars: Vec<char> = name.chars().collect();
    let mut out = Vec::new();
    let mut cur = String::new();
    for i in 0..chars.len() {
        let c = chars[i];
        if !c.is_alphanumeric() {
            if !cur.is_empty() {
                out.push(std::mem::take(&mut cur));
            }
            continue;
        }
        if !cur.is_empty() {
            let prev = chars[i - 1];
            let next_lower = chars.get(i + 1).is_some_and(|n| n.is_lowercase());
            let boundary = (prev.is_lowercase() && c.is_uppercase())
                || (prev.is_alphabetic() && c.is_numeric())
                || (prev.is_numeric() && c.is_alphabetic())
                || (prev.is_uppercase() && c.is_uppercase() && next_lower);
            if boundary {
                out.push(std::mem::take(&mut cur));
            }
        }
        cur.extend(c.to_lowercase());
    }
    if !cur.is_empty() {
        out.push(cur);
    }
    out
}

const PREFIXES: [&str; 14] = [
    "def",
    "b",
    "bip",
    "bip001",
    "mixamorig",
    "cc",
    "base",
    "jnt",
    "bn",
    "bone",
    "valvebiped",
    "rig",
    "armature",
    "deform",
];
const MECHANISM_PREFIXES: [&str; 11] = [
    "mch", "org", "ctrl", "ctl", "ik", "fk", "pole", "tgt", "vis", "mstr", "wgt",
];
const MECHANISM: [&str; 14] = [
    "ik", "pole", "target", "control", "ctrl", "roll", "goal", "effector", "locator", "socket",
    "attach", "weapon", "grip", "prop",
];
const ENDS: [&str; 5] = ["end", "leaf", "nub", "tip", "top"];

/// Reads a side, a kind and exclusions from a bone name (see the module documentation).
pub(super) fn parse_name(name: &str) -> NameInfo {
    let mut excluded = None;
    if name.starts_with("__") {
        excluded = Some("helper joint ('__' name)");
    }
    let mut toks = tokens(name);
    // Tool prefixes.
    while toks.len() > 1 && PREFIXES.contains(&toks[0].as_str()) {
        let was_bip = toks[0].starts_with("bip");
        toks.remove(0);
        if was_bip && toks.len() > 1 && toks[0].chars().all(|c| c.is_numeric()) {
            toks.remove(0);
        }
    }
    if toks
        .first()
        .is_some_and(|t| MECHANISM_PREFIXES.contains(&t.as_str()))
    {
        excluded = excluded.or(Some("IK / control / mechanism bone (name)"));
    }
    // Side.
    let mut side = None;
    toks.retain(|t| match t.as_str() {
        "l" | "left" => {
            side = Some(Side::Left);
            false
        }
        "r" | "right" => {
            side = Some(Side::Right);
            false
        }
        _ => true,
    });
    for t in toks.iter_mut() {
        for (word, s) in [("left", Side::Left), ("right", Side::Right)] {
            if t.len() > word.len() && t.starts_with(word) {
                side = Some(s);
                *t = t[word.len()..].to_string();
            }
        }
    }
    for t in &toks {
        if t == "twist" {
            excluded = excluded.or(Some("twist bone (name)"));
        } else if MECHANISM.contains(&t.as_str()) || t.contains("slot") {
            excluded = excluded.or(Some("IK / control / slot bone (name)"));
        } else if ENDS.contains(&t.as_str()) {
            excluded = excluded.or(Some("end bone (name)"));
        }
    }
    let core: String = toks
        .iter()
        .filter(|t| !t.chars().all(|c| c.is_numeric()))
        .map(String::as_str)
        .collect();
    let kind = classify(&core, side.is_some());
    NameInfo {
        side,
        kind,
        excluded,
    }
}

fn classify(core: &str, sided: bool) -> Option<Kind> {
    let finger = |w: &str| -> Option<Digit> {
        let w = w
            .strip_prefix("hand")
            .or_else(|| w.strip_prefix("finger"))
            .unwrap_or(w);
        let w = if w.len() > 1 && w.starts_with('f') && finger_word(&w[1..]).is_some() {
            &w[1..]
        } else {
            w
        };
        finger_word(w)
    };
    let kind = match core {
        "hips" | "pelvis" if !sided => Kind::Hips,
        "hip" => {
            if sided {
                Kind::Thigh
            } else {
                Kind::Hips
            }
        }
        "spine" | "lowerback" | "back" | "abdomen" | "abs" | "torso" | "waist" | "chest"
        | "upperchest" | "ribcage" | "body" | "spineupper" | "spinelower" | "spinemid"
        | "upperback" | "midback" | "abdomenlower" | "abdomenupper" | "chestlower"
        | "chestupper"
            if !sided =>
        {
            Kind::Spine
        }
        "neck" | "neckupper" | "necklower" if !sided => Kind::Neck,
        "head" if !sided => Kind::Head,
        "clavicle" | "clav" | "collar" | "collarbone" | "clavical" if sided => Kind::Clavicle,
        "shoulder" if sided => Kind::Shoulder,
        "upperarm" | "uparm" | "arm" | "shldr" | "humerus" | "bicep" if sided => Kind::UpperArm,
        "forearm" | "lowerarm" | "loarm" | "elbow" | "lowarm" if sided => Kind::Forearm,
        "hand" | "wrist" if sided => Kind::Hand,
        c if sided && c.starts_with("palm") && c.len() <= 5 => Kind::Hand,
        "upleg" | "upperleg" | "thigh" | "femur" if sided => Kind::Thigh,
        "leg" | "lowerleg" | "loleg" | "shin" | "calf" | "knee" | "crus" | "lowleg" if sided => {
            Kind::Shin
        }
        "foot" | "ankle" if sided => Kind::Foot,
        "toe" | "toes" | "toebase" | "ball" if sided => Kind::Toes,
        c if sided => Kind::Finger(finger(c)?),
        _ => return None,
    };
    Some(kind)
}

fn finger_word(w: &str) -> Option<Digit> {
    Some(match w {
        "thumb" => Digit::Thumb,
        "index" | "pointer" => Digit::Index,
        "middle" | "mid" => Digit::Middle,
        "ring" => Digit::Ring,
        "pinky" | "pinkie" | "little" | "small" => Digit::Pinky,
        _ => return None,
    })
}

/// The roles from names; the torso from where the named limbs meet.
pub(super) fn by_names(ctx: &Ctx) -> Result<Parts, Refusal> {
    let n = ctx.skeleton.len();
    let tree = ctx.tree;
    let cand = |b: usize, kind: Kind, side: Option<Side>| {
        ctx.usable(b) && ctx.infos[b].kind == Some(kind) && ctx.infos[b].side == side
    };
    // Root-most of `bones`; ties go to the one nearest their mean position.
    // Root-most of `bones`, preferring bones that deform the mesh (an IK-style foot that
    // deforms nothing is taken only when no deforming candidate exists).
    let rootmost = |bones: Vec<usize>| -> Option<usize> {
        let deforming: Vec<usize> = bones.iter().copied().filter(|&b| ctx.deforms[b]).collect();
        let bones = if deforming.is_empty() {
            bones
        } else {
            deforming
        };
        let d = bones.iter().map(|&b| tree.depth[b]).min()?;
        let tied: Vec<usize> = bones.into_iter().filter(|&b| tree.depth[b] == d).collect();
        let mean = tied.iter().map(|&b| ctx.pos[b]).sum::<Vec3>() / tied.len() as f32;
        tied.into_iter().min_by(|&a, &b| {
            (ctx.pos[a] - mean)
                .length()
                .total_cmp(&(ctx.pos[b] - mean).length())
        })
    };
    let mut reasons = Vec::new();
    let mut why = |b: usize, role: &str, extra: &str| {
        reasons.push((b, format!("name '{}' → {role}{extra}", ctx.name(b))));
    };
    let mut sides = Vec::new();
    for side in Side::BOTH {
        let s = Some(side);
        let sn = side.name();
        let missing = |what: &str| Refusal::Missing(format!("{sn} {what}"));
        // Legs.
        let thigh = rootmost((0..n).filter(|&b| cand(b, Kind::Thigh, s)).collect())
            .ok_or_else(|| missing("thigh"))?;
        let shin = rootmost(
            (0..n)
                .filter(|&b| cand(b, Kind::Shin, s) && b != thigh && tree.is_ancestor(thigh, b))
                .collect(),
        )
        .ok_or_else(|| missing("shin"))?;
        let foot = rootmost(
            (0..n)
                .filter(|&b| cand(b, Kind::Foot, s) && tree.is_ancestor(shin, b))
                .collect(),
        )
        .or_else(|| rootmost((0..n).filter(|&b| cand(b, Kind::Foot, s)).collect()))
        .ok_or_else(|| missing("foot"))?;
        let toes = rootmost(
            (0..n)
                .filter(|&b| cand(b, Kind::Toes, s) && b != foot && tree.is_ancestor(foot, b))
                .collect(),
        );
        why(thigh, &format!("{sn} thigh"), "");
        why(shin, &format!("{sn} shin"), "");
        let root_note = if !ctx.deforms[foot] {
            " (deforms nothing: an IK target, placed where the source's foot is)"
        } else if tree.parent[foot].is_none() {
            " (a skeleton root: IK-style foot)"
        } else if !tree.is_ancestor(shin, foot) {
            " (not under the shin: IK-style foot)"
        } else {
            ""
        };
        why(foot, &format!("{sn} foot"), root_note);
        if let Some(t) = toes {
            why(t, &format!("{sn} toes"), "");
        }

        // Arms: the hand, then up its ancestors.
        let hands: Vec<usize> = (0..n).filter(|&b| cand(b, Kind::Hand, s)).collect();
        let top_depth = hands
            .iter()
            .map(|&b| tree.depth[b])
            .min()
            .ok_or_else(|| missing("hand"))?;
        let tied: Vec<usize> = hands
            .iter()
            .copied()
            .filter(|&b| tree.depth[b] == top_depth)
            .collect();
        let has_finger = |h: usize, digits: &[Digit]| {
            (0..n).any(|b| {
                tree.is_ancestor(h, b)
                    && matches!(ctx.infos[b].kind, Some(Kind::Finger(d)) if digits.contains(&d))
            })
        };
        let hand = tied
            .iter()
            .copied()
            .find(|&h| has_finger(h, &[Digit::Middle]))
            .or_else(|| {
                tied.iter()
                    .copied()
                    .find(|&h| has_finger(h, &[Digit::Index]))
            })
            .unwrap_or(tied[0]);
        let tol = 1e-3 * ctx.extent();
        let hand_parts: Vec<usize> = tied
            .iter()
            .copied()
            .filter(|&h| {
                h != hand
                    && tree.parent[h] == tree.parent[hand]
                    && (ctx.pos[h] - ctx.pos[hand]).length() < tol
            })
            .collect();
        let anc: Vec<usize> = tree
            .ancestors(hand)
            .skip(1)
            .take_while(|&b| ctx.infos[b].side == s || ctx.infos[b].kind.is_none())
            .filter(|&b| ctx.usable(b) && ctx.infos[b].side == s)
            .collect();
        let kind_at = |i: usize| ctx.infos[anc[i]].kind;
        // Forearm: the root-most of the run of forearm-kind bones nearest the hand.
        let fi = (0..anc.len())
            .find(|&i| kind_at(i) == Some(Kind::Forearm))
            .ok_or_else(|| missing("forearm"))?;
        let mut fe = fi;
        while fe + 1 < anc.len() && kind_at(fe + 1) == Some(Kind::Forearm) {
            fe += 1;
        }
        let forearm = anc[fe];
        // Upper arm: the next upper-arm run; a shoulder with no upper arm above it is the upper
        // arm itself (mocap).
        let rest: Vec<usize> = (fe + 1..anc.len()).collect();
        let ui = rest
            .iter()
            .copied()
            .find(|&i| matches!(kind_at(i), Some(Kind::UpperArm | Kind::Shoulder)))
            .ok_or_else(|| missing("upper arm"))?;
        let shoulder_as_upper = kind_at(ui) == Some(Kind::Shoulder)
            && !rest
                .iter()
                .any(|&i| i > ui && kind_at(i) == Some(Kind::UpperArm));
        let (upper_arm, ue) = if shoulder_as_upper {
            (anc[ui], ui)
        } else {
            let ui = rest
                .iter()
                .copied()
                .find(|&i| kind_at(i) == Some(Kind::UpperArm))
                .ok_or_else(|| missing("upper arm"))?;
            let mut ue = ui;
            while ue + 1 < anc.len() && kind_at(ue + 1) == Some(Kind::UpperArm) {
                ue += 1;
            }
            (anc[ue], ue)
        };
        // Clavicle: the root-most of the next clavicle/shoulder run.
        let clavicle = (ue + 1..anc.len())
            .find(|&i| matches!(kind_at(i), Some(Kind::Clavicle | Kind::Shoulder)))
            .map(|ci| {
                let mut ce = ci;
                while ce + 1 < anc.len()
                    && matches!(kind_at(ce + 1), Some(Kind::Clavicle | Kind::Shoulder))
                {
                    ce += 1;
                }
                anc[ce]
            });
        if let Some(c) = clavicle {
            let extra = if ctx.infos[c].kind == Some(Kind::Shoulder) {
                " (a shoulder with the upper arm below it)"
            } else {
                ""
            };
            why(c, &format!("{sn} clavicle"), extra);
        }
        let extra = if shoulder_as_upper {
            " (a shoulder whose child is the elbow-level bone: mocap convention)"
        } else {
            ""
        };
        why(upper_arm, &format!("{sn} upper arm"), extra);
        why(forearm, &format!("{sn} forearm"), "");
        why(hand, &format!("{sn} hand"), "");
        for &h in &hand_parts {
            why(
                h,
                &format!("{sn} hand (part)"),
                " (a second bone at the hand's joint)",
            );
        }
        // Fingers: per digit, the chain of finger bones below the hand (or its parts).
        let mut fingers: [Vec<usize>; 5] = Default::default();
        for (di, digit) in Digit::ALL.into_iter().enumerate() {
            let mut chain: Vec<usize> = Vec::new();
            let mut bones: Vec<usize> = (0..n)
                .filter(|&b| {
                    cand(b, Kind::Finger(digit), s)
                        && std::iter::once(hand)
                            .chain(hand_parts.iter().copied())
                            .any(|h| h != b && tree.is_ancestor(h, b))
                })
                .collect();
            bones.sort_by_key(|&b| tree.depth[b]);
            for b in bones {
                if chain.last().is_none_or(|&l| tree.is_ancestor(l, b)) {
                    if chain
                        .last()
                        .is_some_and(|&l| tree.depth[b] == tree.depth[l])
                    {
                        continue;
                    }
                    chain.push(b);
                }
            }
            for (i, &b) in chain.iter().enumerate() {
                why(b, &format!("{sn} {} {}", digit.name(), i + 1), "");
            }
            fingers[di] = chain;
        }
        sides.push(SideLimbs {
            clavicle,
            upper_arm,
            forearm,
            hand,
            hand_parts,
            fingers,
            thigh,
            shin,
            foot,
            toes,
        });
    }
    let head = rootmost((0..n).filter(|&b| cand(b, Kind::Head, None)).collect())
        .ok_or_else(|| Refusal::Missing("head".into()))?;
    why(head, "head", "");
    let [left, right]: [SideLimbs; 2] = sides
        .try_into()
        .map_err(|_| Refusal::Missing("left and right sides".into()))?;
    let up = match ctx.world_up {
        Some(u) => u,
        None => {
            let feet = (ctx.pos[left.foot] + ctx.pos[right.foot]) * 0.5;
            snap_axis(ctx.pos[head] - feet)
        }
    };
    let (hips, chest) = torso(ctx, &left, &right, head)?;
    Ok(Parts {
        hips,
        chest,
        head,
        sides: [left, right],
        up,
        method: Method::Names,
        reasons,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_split_conventions() {
        assert_eq!(tokens("mixamorig:LeftUpLeg"), ["left", "up", "leg"]);
        assert_eq!(tokens("DEF-upper_arm.L"), ["def", "upper", "arm", "l"]);
        assert_eq!(tokens("LHipJoint"), ["l", "hip", "joint"]);
        assert_eq!(tokens("lShldr"), ["l", "shldr"]);
        assert_eq!(tokens("kneeIK.l"), ["knee", "ik", "l"]);
        assert_eq!(tokens("upperarm01.L"), ["upperarm", "01", "l"]);
    }

    #[test]
    fn names_classify() {
        let k = |s: &str| {
            let i = parse_name(s);
            (i.side, i.kind, i.excluded.is_some())
        };
        use Side::*;
        assert_eq!(
            k("mixamorig:LeftArm"),
            (Some(Left), Some(Kind::UpperArm), false)
        );
        assert_eq!(
            k("mixamorig:LeftUpLeg"),
            (Some(Left), Some(Kind::Thigh), false)
        );
        assert_eq!(
            k("mixamorig:LeftLeg"),
            (Some(Left), Some(Kind::Shin), false)
        );
        assert_eq!(k("calf_r"), (Some(Right), Some(Kind::Shin), false));
        assert_eq!(k("ball_l"), (Some(Left), Some(Kind::Toes), false));
        assert!(k("ball_leaf_l").2);
        assert!(k("upperarm_twist_01_l").2);
        assert_eq!(k("lShldr"), (Some(Left), Some(Kind::UpperArm), false));
        assert_eq!(k("rThigh"), (Some(Right), Some(Kind::Thigh), false));
        assert_eq!(k("LeftHip"), (Some(Left), Some(Kind::Thigh), false));
        assert_eq!(k("LeftKnee"), (Some(Left), Some(Kind::Shin), false));
        assert_eq!(k("LeftAnkle"), (Some(Left), Some(Kind::Foot), false));
        assert_eq!(
            k("DEF-f_index.01.L"),
            (Some(Left), Some(Kind::Finger(Digit::Index)), false)
        );
        assert_eq!(k("LoArm_L"), (Some(Left), Some(Kind::Forearm), false));
        assert!(k("PoleTarget.L").2);
        assert!(k("handslot.r").2);
        assert!(k("__UpLeg_L").2);
        assert_eq!(k("LHipJoint").1, None);
        assert_eq!(k("LowerBack"), (None, Some(Kind::Spine), false));
        assert_eq!(k("Bip01 L Thigh"), (Some(Left), Some(Kind::Thigh), false));
        assert_eq!(k("L_Forearm"), (Some(Left), Some(Kind::Forearm), false));
        assert!(k("HeadTop_End").2);
    }
}
