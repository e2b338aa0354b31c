//! Skinned meshes from glTF, bound to the skeleton [`super::load_gltf`] read from the same file.
//!
//! Primitives skinned to a skin whose joints are all bones are kept with their first four
//! influences (`JOINTS_0`/`WEIGHTS_0`, weights normalized to sum to 1). Meshes hung under a
//! bone without a skin (a sword in a hand slot, a helmet on the head) are bound rigidly to
//! that bone. Everything else (other primitive modes, meshes outside the skeleton) is skipped
//! with a log line.

use std::collections::HashMap;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::Path;

use glam::{Mat4, Vec3};

use super::gltf::{ancestors, node_parents};
use crate::error::{Error, Result};
use crate::model::Asset;
use crate::render::{SkinnedMesh, SkinnedVertex};

/// The meshes of a glTF file drawn on `asset`'s skeleton (`asset` loaded from the same file),
/// without the mesh nodes named in `hide`. Normals missing from a primitive are computed.
pub fn load_gltf_mesh(path: &Path, asset: &Asset, hide: &[&str]) -> Result<SkinnedMesh> {
    let err = |message: String| Error::Gltf {
        path: path.to_path_buf(),
        message,
    };
    let nodes = asset
        .nodes
        .as_ref()
        .ok_or_else(|| err("the asset was not read from a glTF file".into()))?;
    let file = super::gltf::read_file(path)?;
    file.check_meshes(path, "drawn (export them uncompressed)")?;
    let super::gltf::GltfFile {
        document, buffers, ..
    } = file;
    let buffers: Vec<&[u8]> = buffers.iter().map(Vec::as_slice).collect();
    let names: Vec<&str> = document
        .nodes()
        .filter(|n| n.mesh().is_some())
        .filter_map(|n| n.name())
        .collect();
    if let Some(missing) = hide.iter().find(|h| !names.contains(h)) {
        let listed = if names.is_empty() {
            "the file's mesh nodes have no names, so none can be hidden".to_string()
        } else {
            format!("mesh nodes: {}", names.join(", "))
        };
        return Err(Error::Mesh {
            what: format!(
                "{}: no mesh node named '{missing}' to hide ({listed})",
                path.display()
            ),
        });
    }
    let bone_of: HashMap<usize, usize> = nodes.iter().enumerate().map(|(b, &n)| (n, b)).collect();
    let mesh = catch_unwind(AssertUnwindSafe(|| {
        read_meshes(&document, &buffers, asset, &bone_of, hide)
    }))
    .map_err(|_| err("malformed mesh data (the glTF reader panicked)".into()))?
    .map_err(err)?;
    mesh.validate(asset.skeleton.len())?;
    Ok(mesh)
}

fn read_meshes(
    document: &gltf::Document,
    buffers: &[&[u8]],
    asset: &Asset,
    bone_of: &HashMap<usize, usize>,
    hide: &[&str],
) -> Result<SkinnedMesh, String> {
    let skeleton = &asset.skeleton;
    let parent_of = node_parents(document)?;
    let locals: Vec<Mat4> = document
        .nodes()
        .map(|n| Mat4::from_cols_array_2d(&n.transform().matrix()))
        .collect();
    let binds = skeleton.inverse_bind();

    let mut mesh = SkinnedMesh {
        vertices: Vec::new(),
        indices: Vec::new(),
        // The space above the skeleton, applied after skinning.
        root: asset.frame.above,
    };
    for node in document.nodes() {
        let Some(gltf_mesh) = node.mesh() else {
            continue;
        };
        let name = node.name().unwrap_or("");
        if hide.contains(&name) {
            continue;
        }
        let label = format!("mesh node {} '{name}'", node.index());
        // Each kind of node maps its primitives' vertices to (bone indices, bind-space matrix).
        let binding = if let Some(skin) = node.skin() {
            let joints: Option<Vec<u32>> = skin
                .joints()
                .map(|j| bone_of.get(&j.index()).map(|&b| b as u32))
                .collect();
            match joints {
                Some(joints) => Binding::Skinned(joints),
                None => {
                    log::info!("{label}: its skin has joints outside the skeleton; skipped");
                    continue;
                }
            }
        } else {
            // The nearest bone above the node, and the node's transform relative to it.
            let above = ancestors(&parent_of, node.index());
            let Some(bone_node) = above.clone().find(|n| bone_of.contains_key(n)) else {
                log::info!("{label}: neither skinned nor under a bone; skipped");
                continue;
            };
            let bone = bone_of[&bone_node];
            let chain = above
                .take_while(|&n| n != bone_node)
                .fold(locals[node.index()], |m, n| locals[n] * m);
            // Rest: S(rest) · p' = rest_cs · chain · p, with S(rest) = rest_cs · inverse_bind.
            let bind = binds[bone].unwrap_or(Mat4::IDENTITY);
            Binding::Rigid(bone as u32, bind.inverse() * chain)
        };
        for primitive in gltf_mesh.primitives() {
            if primitive.mode() != gltf::mesh::Mode::Triangles {
                log::info!("{label}: a {:?} primitive skipped", primitive.mode());
                continue;
            }
            let reader = primitive.reader(|b| buffers.get(b.index()).copied());
            let positions: Vec<Vec3> = reader
                .read_positions()
                .ok_or_else(|| format!("{label}: positions unreadable"))?
                .map(Vec3::from)
                .collect();
            let first = mesh.vertices.len() as u32;
            let indices: Vec<u32> = match reader.read_indices() {
                Some(i) => i.into_u32().collect(),
                None => (0..positions.len() as u32).collect(),
            };
            if let Some(i) = indices.iter().find(|&&i| i as usize >= positions.len()) {
                return Err(format!(
                    "{label}: index {i} past its {} vertices",
                    positions.len()
                ));
            }
            let normals: Vec<Vec3> = match reader.read_normals() {
                Some(n) => n.map(Vec3::from).collect(),
                None => smooth_normals(&positions, &indices),
            };
            if normals.len() != positions.len() {
                return Err(format!(
                    "{label}: {} normals for {} positions",
                    normals.len(),
                    positions.len()
                ));
            }
            let influences: Vec<([u32; 4], [f32; 4])> = match &binding {
                Binding::Skinned(joints) => {
                    let read = reader
                        .read_joints(0)
                        .zip(reader.read_weights(0))
                        .ok_or_else(|| format!("{label}: skinned, but no JOINTS_0/WEIGHTS_0"))?;
                    let pairs: Vec<_> = read.0.into_u16().zip(read.1.into_f32()).collect();
                    if pairs.len() != positions.len() {
                        return Err(format!(
                            "{label}: {} joint sets for {} positions",
                            pairs.len(),
                            positions.len()
                        ));
                    }
                    let mut out = Vec::with_capacity(pairs.len());
                    for (k, (j, w)) in pairs.into_iter().enumerate() {
                        let sum: f32 = w.iter().sum();
                        let mut bones = [0u32; 4];
                        for (slot, &joint) in j.iter().enumerate() {
                            bones[slot] = *joints.get(usize::from(joint)).ok_or_else(|| {
                                format!(
                                    "{label}: vertex {k} names joint {joint}, past the skin's {}",
                                    joints.len()
                                )
                            })?;
                        }
                        if !(sum.is_finite() && sum > 0.0) {
                            return Err(format!(
                                "{label}: vertex {k}'s weights {w:?} sum to {sum}"
                            ));
                        }
                        out.push((bones, w.map(|x| x / sum)));
                    }
                    out
                }
                Binding::Rigid(bone, _) => {
                    vec![([*bone, 0, 0, 0], [1.0, 0.0, 0.0, 0.0]); positions.len()]
                }
            };
            let to_bind = match &binding {
                Binding::Skinned(_) => Mat4::IDENTITY,
                Binding::Rigid(_, m) => *m,
            };
            let normal_matrix = to_bind.inverse().transpose();
            mesh.vertices
                .extend(positions.iter().zip(&normals).zip(influences).map(
                    |((p, n), (joints, weights))| {
                        SkinnedVertex {
                            position: to_bind.transform_point3(*p).into(),
                            normal: normal_matrix
                                .transform_vector3(*n)
                                .normalize_or_zero()
                                .into(),
                            joints,
                            weights,
                        }
                    },
                ));
            mesh.indices.extend(indices.iter().map(|i| first + i));
        }
    }
    Ok(mesh)
}

enum Binding {
    /// The skin's joints as bone indices.
    Skinned(Vec<u32>),
    /// One bone, and the matrix taking the node's vertices into that bone's bind space.
    Rigid(u32, Mat4),
}

/// Per-vertex normals as the area-weighted sum of the faces around each vertex.
fn smooth_normals(positions: &[Vec3], indices: &[u32]) -> Vec<Vec3> {
    let mut normals = vec![Vec3::ZERO; positions.len()];
    for t in indices.chunks_exact(3) {
        let [a, b, c] = [t[0], t[1], t[2]].map(|i| i as usize);
        let n = (positions[b] - positions[a]).cross(positions[c] - positions[a]);
        for i in [a, b, c] {
            normals[i] += n;
        }
    }
    normals.iter().map(|n| n.normalize_or_zero()).collect()
}
