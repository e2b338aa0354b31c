//! Skinned triangle meshes: the vertex layout the renderer draws, checks, CPU skinning (the
//! render test's reference) and a generated mesh for any skeleton.

use glam::{Mat4, Quat, Vec3};

use crate::error::{Error, Result};
use crate::layout::Mat3x4;
pub use crate::layout::SkinnedVertex;
use crate::math::{affine_rows, rows_to_mat4};
use crate::model::Skeleton;
use crate::Transform;

/// A triangle list skinned to one skeleton.
#[derive(Clone, Debug, PartialEq)]
pub struct SkinnedMesh {
    /// Vertices in the skeleton's bind pose, each with its bones and weights.
    pub vertices: Vec<SkinnedVertex>,
    /// Three per triangle, counter-clockwise seen from outside.
    pub indices: Vec<u32>,
    /// Component space to model space, applied after skinning: the nodes above a glTF
    /// skeleton (an armature's rotation or scale). The identity for generated meshes.
    pub root: Mat4,
}

impl SkinnedMesh {
    /// Checks the mesh against a skeleton of `bones` bones: something to draw, whole
    /// triangles, indices in range, bone indices in range, finite positions and normals, and
    /// weights finite, not negative and not all zero.
    pub fn validate(&self, bones: usize) -> Result<()> {
        let bad = |what: String| Err(Error::Mesh { what });
        if self.vertices.is_empty() || self.indices.is_empty() {
            return bad("no triangles to draw".into());
        }
        if !self.indices.len().is_multiple_of(3) {
            return bad(format!(
                "{} indices is not a whole number of triangles",
                self.indices.len()
            ));
        }
        if let Some(i) = self
            .indices
            .iter()
            .find(|&&i| i as usize >= self.vertices.len())
        {
            return bad(format!(
                "index {i} is past the last of {} vertices",
                self.vertices.len()
            ));
        }
        if !self.root.is_finite() {
            return bad("the root transform is not finite".into());
        }
        for (k, v) in self.vertices.iter().enumerate() {
            if let Some(j) = v.joints.iter().find(|&&j| j as usize >= bones) {
                return bad(format!(
                    "vertex {k} names bone {j}, past the skeleton's {bones} bones"
                ));
            }
            if !v.position.iter().chain(&v.normal).all(|x| x.is_finite()) {
                return bad(format!("vertex {k}: position or normal is not finite"));
            }
            let w = v.weights;
            if !w.iter().all(|x| x.is_finite() && *x >= 0.0) || w.iter().sum::<f32>() <= 0.0 {
                return bad(format!(
                    "vertex {k}: weights {w:?} must be finite, not negative and not all zero"
                ));
            }
        }
        Ok(())
    }

    /// Bind-pose positions moved by `skinning` (one instance's matrices, the evaluator's
    /// layout): `root · Σ wᵢ · Sᵢ · p`, the vertex shader's sum on the CPU (its twin,
    /// `src/cpu/skin.rs`).
    pub fn skin(&self, skinning: &[Mat3x4]) -> Vec<Vec3> {
        self.vertices
            .iter()
            .map(|v| crate::cpu::skin_vertex(v, skinning, &self.root))
            .collect()
    }

    /// Corners of the box around the mesh as `skinning` (one instance's matrices) poses it,
    /// `root` applied; zeros for an empty mesh.
    pub fn bounds(&self, skinning: &[Mat3x4]) -> (Vec3, Vec3) {
        let points = self.skin(skinning);
        let (lo, hi) = points.iter().fold((Vec3::MAX, Vec3::MIN), |(lo, hi), p| {
            (lo.min(*p), hi.max(*p))
        });
        if lo.cmple(hi).all() {
            (lo, hi)
        } else {
            (Vec3::ZERO, Vec3::ZERO)
        }
    }

    /// A mesh for any skeleton: a box along each bone from its parent's joint, rigidly bound
    /// to the parent, `width(parent, length)` across. Bones hanging off a root (a root
    /// bone, IK targets) get none, so a floor-level root draws no stick to the pelvis.
    pub fn bone_boxes(skeleton: &Skeleton, width: impl Fn(usize, f32) -> f32) -> Self {
        let rest = skeleton.rest_component();
        let rest_skin = rest_skinning(skeleton);
        let mut mesh = Self {
            vertices: Vec::new(),
            indices: Vec::new(),
            root: Mat4::IDENTITY,
        };
        for bone in 0..skeleton.len() {
            let Some(parent) = skeleton.parent(bone) else {
                continue;
            };
            if skeleton.parent(parent).is_none() {
                continue;
            }
            let (a, b) = (rest[parent].translation, rest[bone].translation);
            let length = a.distance(b);
            if length < 1e-4 {
                continue;
            }
            // Rest component space to the parent's bind space: S(rest) · p' = p.
            let to_bind = rows_to_mat4(&rest_skin[parent]).inverse();
            mesh.add_box(a, b, width(parent, length), parent as u32, &to_bind);
        }
        mesh
    }

    /// The embedded humanoid's mesh ([`crate::procedural::humanoid`]): [`Self::bone_boxes`]
    /// with a broad torso, a head and slim fingers.
    pub fn humanoid(skeleton: &Skeleton) -> Self {
        let names = skeleton.names();
        Self::bone_boxes(skeleton, |parent, length| {
            let name = names[parent].as_str();
            if name.starts_with("spine") || name == "pelvis" {
                0.26
            } else if name == "head" {
                0.2
            } else if name.starts_with("neck") {
                0.09
            } else if name.starts_with("thigh") || name.starts_with("calf") {
                0.13
            } else {
                (0.35 * length).clamp(0.015, 0.09)
            }
        })
    }

    /// A box from `a` to `b`, `width` across, its vertices taken into bind space by `to_bind`.
    fn add_box(&mut self, a: Vec3, b: Vec3, width: f32, bone: u32, to_bind: &Mat4) {
        let axis = (b - a).normalize();
        let side = axis.any_orthonormal_vector() * (0.5 * width);
        let up = axis.cross(side);
        let corner = |i: usize| {
            let end = if i & 4 == 0 { a } else { b };
            let s = if i & 1 == 0 { -side } else { side };
            let u = if i & 2 == 0 { -up } else { up };
            end + s + u
        };
        let normal_matrix = to_bind.inverse().transpose();
        // Each face: its four corners (counter-clockwise seen from outside) and its normal.
        const FACES: [[usize; 4]; 6] = [
            [0, 2, 3, 1],
            [4, 5, 7, 6],
            [0, 1, 5, 4],
            [2, 6, 7, 3],
            [0, 4, 6, 2],
            [1, 3, 7, 5],
        ];
        for face in FACES {
            let p = face.map(corner);
            let normal = (p[1] - p[0]).cross(p[2] - p[0]).normalize_or_zero();
            let first = self.vertices.len() as u32;
            for q in p {
                self.vertices.push(SkinnedVertex {
                    position: to_bind.transform_point3(q).into(),
                    normal: normal_matrix
                        .transform_vector3(normal)
                        .normalize_or_zero()
                        .into(),
                    joints: [bone, 0, 0, 0],
                    weights: [1.0, 0.0, 0.0, 0.0],
                });
            }
            let quad = [0, 1, 2, 0, 2, 3].map(|k| first + k);
            self.indices.extend_from_slice(&quad);
        }
    }
}

/// The skinning matrices of `skeleton`'s reference pose, `M(CS) · inverseBind` per bone: what
/// [`SkinnedMesh::bounds`] needs for the mesh at rest.
pub fn rest_skinning(skeleton: &Skeleton) -> Vec<Mat3x4> {
    skeleton
        .rest_component()
        .iter()
        .zip(skeleton.inverse_bind())
        .map(|(cs, bind)| affine_rows(&(cs.to_matrix() * bind.unwrap_or(Mat4::IDENTITY))))
        .collect()
}

/// Placements of `count` instances on a square grid in the XZ plane, `spacing` apart, centred
/// on the origin, all facing +Z (row 0 nearest +Z).
pub fn grid_placements(count: usize, spacing: f32) -> Vec<Transform> {
    let columns = (count as f64).sqrt().ceil().max(1.0) as usize;
    let rows = count.div_ceil(columns);
    (0..count)
        .map(|i| {
            let (row, column) = (i / columns, i % columns);
            let x = (column as f32 - (columns - 1) as f32 * 0.5) * spacing;
            let z = (row as f32 - (rows - 1) as f32 * 0.5) * spacing;
            Transform::new(Vec3::new(x, 0.0, -z), Quat::IDENTITY, Vec3::ONE)
        })
        .collect()
}
