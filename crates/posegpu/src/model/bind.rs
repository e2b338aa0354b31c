//! The bind pose: the pose a mesh was skinned in, rebuilt from the skin's inverse bind
//! matrices (`docs/pose-math.md`, "The bind pose"). Many files store node transforms that are
//! not that pose (Quaternius packs hang the arms down, Godot exports bend the knees); the bind
//! pose is what every tool agrees the character's rest is, so retargeting measures from it.

use glam::{Mat4, Vec3};

use crate::math::angle_between;
use crate::Transform;

/// Which pose of a character retargeting measures from: rest alignment, body frames, chains,
/// hip height, IK rest lengths, humanoid recognition, UE's per-bone modes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RestPose {
    /// The pose the mesh was bound in, rebuilt from the skin's inverse bind matrices; the node
    /// transforms where a bone has none (BVH, clip-only files, non-joint nodes).
    #[default]
    Bind,
    /// The node transforms: what unanimated channels hold (for a file whose inverse bind
    /// matrices are wrong).
    Nodes,
}

impl RestPose {
    /// `bind` or `nodes`, as the command line spells it.
    pub fn name(self) -> &'static str {
        match self {
            Self::Bind => "bind",
            Self::Nodes => "nodes",
        }
    }
}

impl std::str::FromStr for RestPose {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "bind" => Ok(Self::Bind),
            "nodes" => Ok(Self::Nodes),
            _ => Err(format!("'{s}' is not a rest pose: bind or nodes")),
        }
    }
}

/// Where a bone's bind local came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BindOrigin {
    /// The node transform: the asset has no bind pose (BVH, code), or the skin's matrix agrees
    /// with the node (within 0.05° in rotation, and 1e-4 of the skeleton's size in translation
    /// and of the scale in scale).
    Nodes,
    /// Rebuilt from the skin's inverse bind matrix (and the parent's).
    Skin,
    /// The node transform: the bone is not a joint of the skin, or the skin has no matrices.
    NoMatrix,
    /// The node transform: the bone's inverse bind matrix is singular or not finite.
    Singular,
}

/// The space a file's inverse bind matrices map from, as the rebuild from the matrices found it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BindSpace {
    /// The scene's (what glTF specifies: the skinned mesh node's transform is ignored).
    Scene,
    /// The skinned mesh node's (some exporters bind in the mesh's local space).
    MeshNode,
    /// The skeleton's component space: the space of the nodes above its top joint.
    Armature,
}

impl BindSpace {
    /// A short description for reports.
    pub fn describe(self) -> &'static str {
        match self {
            Self::Scene => "the scene's",
            Self::MeshNode => "the skinned mesh node's",
            Self::Armature => "the armature's (above the top joint)",
        }
    }
}

/// A bind local within this angle of the node's (and [`AGREE_RELATIVE`] in translation and
/// scale) is taken as the node's exactly, so that float noise in a file's matrices changes
/// nothing for characters whose nodes are their bind pose.
const AGREE_DEGREES: f32 = 0.05;
/// Translation agreement, relative to the skeleton's size; scale agreement, relative.
const AGREE_RELATIVE: f32 = 1e-4;

/// A rebuilt bind pose: locals per bone, where each came from, the space the matrices were in.
#[derive(Clone, Debug, PartialEq)]
pub struct BindPose {
    /// Local transforms, one per bone in the skeleton's order.
    pub locals: Vec<Transform>,
    /// Per bone, where its local came from.
    pub origin: Vec<BindOrigin>,
    /// The space the inverse bind matrices were found in; `None` where no bone had one.
    pub space: Option<BindSpace>,
}

/// Rebuilds the bind pose of a skeleton (`parents` parents-first, node locals `rest`) from its
/// inverse bind matrices (`None` for a bone without one). `spaces` are the candidate spaces,
/// each with the matrix taking it to component space; the one that puts the top joints nearest
/// their node transforms wins (scale first, then angle, then position), the first on a tie.
/// Below the top joints the space cancels: a bind local is the parent's bind world inverted
/// times the bone's.
pub(crate) fn rebuild(
    parents: &[i32],
    rest: &[Transform],
    ibms: &[Option<Mat4>],
    spaces: &[(BindSpace, Mat4)],
) -> BindPose {
    let n = rest.len();
    let origin: Vec<BindOrigin> = (0..n)
        .map(|b| match ibms.get(b).copied().flatten() {
            None => BindOrigin::NoMatrix,
            Some(m) if usable(&m) => BindOrigin::Skin,
            Some(_) => BindOrigin::Singular,
        })
        .collect();
    let extent = crate::model::component_space(parents, rest)
        .iter()
        .map(|t| t.translation.length())
        .fold(1e-6, f32::max);
    let worlds = |to_component: Mat4| -> Vec<Mat4> {
        let mut w: Vec<Mat4> = Vec::with_capacity(n);
        for b in 0..n {
            let parent = usize::try_from(parents[b]).ok().map(|p| w[p]);
            w.push(match (origin[b], ibms[b]) {
                (BindOrigin::Skin, Some(m)) => to_component * m.inverse(),
                _ => parent.unwrap_or(Mat4::IDENTITY) * rest[b].to_matrix(),
            });
        }
        w
    };
    // Top joints: joints with a matrix and none above them, the only ones the space moves.
    let has_above = |b: usize| {
        let mut p = parents[b];
        while let Ok(i) = usize::try_from(p) {
            if origin[i] == BindOrigin::Skin {
                return true;
            }
            p = parents[i];
        }
        false
    };
    let tops: Vec<usize> = (0..n)
        .filter(|&b| origin[b] == BindOrigin::Skin && !has_above(b))
        .collect();
    if tops.is_empty() {
        return BindPose {
            locals: rest.to_vec(),
            origin,
            space: None,
        };
    }
    let mut best: Option<(f32, BindSpace, Vec<Mat4>)> = None;
    for &(space, m) in spaces {
        let w = worlds(m);
        let score: f32 = tops
            .iter()
            .map(|&b| {
                let local = decompose(local_of(parents, &w, b));
                let r = &rest[b];
                let scale = (local.scale.abs().max(Vec3::splat(1e-12)) / r.scale.abs())
                    .to_array()
                    .iter()
                    .map(|x| x.ln().abs())
                    .sum::<f32>();
                10.0 * scale
                    + angle_between(local.rotation, r.rotation)
                    + (local.translation - r.translation).length() / extent
            })
            .sum();
        let score = if score.is_finite() {
            score
        } else {
            f32::INFINITY
        };
        if best.as_ref().is_none_or(|(s, _, _)| score < *s - 1e-3) {
            best = Some((score, space, w));
        }
    }
    let Some((_, space, w)) = best else {
        return BindPose {
            locals: rest.to_vec(),
            origin: origin
                .iter()
                .map(|&o| match o {
                    BindOrigin::Skin => BindOrigin::NoMatrix,
                    o => o,
                })
                .collect(),
            space: None,
        };
    };
    let mut origin = origin;
    let locals = (0..n)
        .map(|b| {
            if origin[b] != BindOrigin::Skin {
                return rest[b];
            }
            let local = decompose(local_of(parents, &w, b));
            if !local.is_finite() {
                origin[b] = BindOrigin::Singular;
                return rest[b];
            }
            if agrees(&local, &rest[b], extent) {
                origin[b] = BindOrigin::Nodes;
                return rest[b];
            }
            local
        })
        .collect();
    BindPose {
        locals,
        origin,
        space: Some(space),
    }
}

/// Finite, and far enough from singular to invert (relative to its own size).
fn usable(m: &Mat4) -> bool {
    let size =
        m.x_axis.truncate().length() * m.y_axis.truncate().length() * m.z_axis.truncate().length();
    let det = m.determinant();
    m.is_finite() && det.is_finite() && size > 0.0 && det.abs() > 1e-6 * size
}

/// The local matrix of bone `b` from bind worlds: the parent's inverted times its own.
fn local_of(parents: &[i32], w: &[Mat4], b: usize) -> Mat4 {
    match usize::try_from(parents[b]) {
        Ok(p) => w[p].inverse() * w[b],
        Err(_) => w[b],
    }
}

/// Translation, rotation and scale of a matrix; a negative determinant makes X's scale
/// negative (glam's rule), and any shear is dropped.
fn decompose(m: Mat4) -> Transform {
    let (scale, rotation, translation) = m.to_scale_rotation_translation();
    Transform::new(translation, rotation.normalize(), scale)
}

fn agrees(a: &Transform, b: &Transform, extent: f32) -> bool {
    angle_between(a.rotation, b.rotation).to_degrees() <= AGREE_DEGREES
        && (a.translation - b.translation).length() <= AGREE_RELATIVE * extent
        && (a.scale - b.scale).abs().max_element() <= AGREE_RELATIVE * b.scale.abs().max_element()
}

/// The bones whose bind local turns away from their node local by more than `min_degrees`,
/// with the angle in degrees, largest first.
pub(crate) fn posed(rest: &[Transform], bind: &[Transform], min_degrees: f32) -> Vec<(usize, f32)> {
    let mut out: Vec<(usize, f32)> = rest
        .iter()
        .zip(bind)
        .enumerate()
        .map(|(b, (r, k))| (b, angle_between(r.rotation, k.rotation).to_degrees()))
        .filter(|&(_, a)| a > min_degrees)
        .collect();
    out.sort_by(|a, b| b.1.total_cmp(&a.1));
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::component_space;
    use glam::Quat;

    fn chain() -> (Vec<i32>, Vec<Transform>) {
        let parents = vec![-1, 0, 1, 2];
        let rest = vec![
            Transform::new(Vec3::new(0.0, 1.0, 0.0), Quat::IDENTITY, Vec3::ONE),
            Transform::new(
                Vec3::new(0.2, 0.0, 0.0),
                Quat::from_rotation_z(0.3),
                Vec3::ONE,
            ),
            Transform::new(
                Vec3::new(0.0, 0.4, 0.0),
                Quat::from_rotation_x(-0.5),
                Vec3::ONE,
            ),
            Transform::new(Vec3::new(0.0, 0.3, 0.0), Quat::IDENTITY, Vec3::ONE),
        ];
        (parents, rest)
    }

    fn ibms(parents: &[i32], bind: &[Transform], world: Mat4) -> Vec<Option<Mat4>> {
        component_space(parents, bind)
            .iter()
            .map(|t| Some((world * t.to_matrix()).inverse()))
            .collect()
    }

    #[test]
    fn a_posed_chain_comes_back_from_its_matrices() {
        let (parents, bind) = chain();
        let mut nodes = bind.clone();
        nodes[1].rotation = Quat::from_rotation_z(1.3);
        nodes[2].rotation = Quat::IDENTITY;
        // Matrices in a scene where the armature sits under a 0.01 scale turned about X.
        let above = Mat4::from_scale_rotation_translation(
            Vec3::splat(0.01),
            Quat::from_rotation_x(-1.2),
            Vec3::new(3.0, 0.0, 1.0),
        );
        let spaces = [
            (BindSpace::Scene, above.inverse()),
            (BindSpace::Armature, Mat4::IDENTITY),
        ];
        let got = rebuild(&parents, &nodes, &ibms(&parents, &bind, above), &spaces);
        assert_eq!(got.space, Some(BindSpace::Scene));
        for (b, (g, want)) in got.locals.iter().zip(&bind).enumerate() {
            assert!(angle_between(g.rotation, want.rotation) < 1e-4, "bone {b}");
            assert!(
                (g.translation - want.translation).length() < 1e-4,
                "bone {b}"
            );
            assert!(
                (g.scale - want.scale).abs().max_element() < 1e-4,
                "bone {b}"
            );
        }
        assert_eq!(got.origin[0], BindOrigin::Nodes);
        assert_eq!(got.origin[1], BindOrigin::Skin);
        // Agreeing bones are the nodes' bit for bit.
        assert_eq!(got.locals[3], nodes[3]);
        let p = posed(&nodes, &got.locals, 1.0);
        assert_eq!(p.iter().map(|x| x.0).collect::<Vec<_>>(), vec![1, 2]);
        assert!((p[0].1 - 1.0f32.to_degrees()).abs() < 0.01);
    }

    #[test]
    fn singular_and_missing_matrices_keep_the_nodes() {
        let (parents, rest) = chain();
        let mut m = ibms(&parents, &rest, Mat4::IDENTITY);
        m[2] = Some(Mat4::ZERO);
        m[3] = None;
        let got = rebuild(
            &parents,
            &rest,
            &m,
            &[(BindSpace::Armature, Mat4::IDENTITY)],
        );
        assert_eq!(got.origin[2], BindOrigin::Singular);
        assert_eq!(got.origin[3], BindOrigin::NoMatrix);
        assert_eq!(got.locals, rest);
    }

    #[test]
    fn the_space_nearest_the_nodes_wins() {
        let (parents, bind) = chain();
        let mesh = Mat4::from_rotation_y(1.0) * Mat4::from_scale(Vec3::splat(2.0));
        let spaces = [
            (BindSpace::Scene, Mat4::IDENTITY),
            (BindSpace::MeshNode, mesh),
        ];
        // Matrices in the mesh node's space: its inverse maps them back.
        let got = rebuild(
            &parents,
            &bind,
            &ibms(&parents, &bind, mesh.inverse()),
            &spaces,
        );
        assert_eq!(got.space, Some(BindSpace::MeshNode));
        assert_eq!(got.locals, bind);
    }
}
