//! glTF 2.0 (`.glb`, `.gltf` with external or data-URI buffers) through the `gltf` crate.
//!
//! The first skin's joints become the skeleton, reordered parents-first (glTF's node order is
//! not always so); non-joint nodes lying between two joints become bones too (identity inverse
//! bind), so that their transforms stay in the chain. Nodes above the top joints (an armature
//! node, say) are not applied: component space is the space above the top joint. Animations
//! become clips; channels on other nodes and morph-weight channels are skipped with a log line.

use std::collections::HashMap;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::Path;

use glam::{Mat4, Quat, Vec3};
use gltf::animation::util::ReadOutputs;
use gltf::animation::{Interpolation as GltfInterpolation, Property};

use super::Asset;
use crate::error::{Error, Result};
use crate::math::Transform;
use crate::model::AssetFrame;
use crate::model::{Bone, Skeleton};
use crate::model::{BoneTrack, Channel, Clip, Interpolation};

/// Loads the first skin of a glTF file and the animations that target its joints.
pub fn load_gltf(path: &Path) -> Result<Asset> {
    let err = |message: String| Error::Gltf {
        path: path.to_path_buf(),
        message,
    };
    let (document, buffers) = read_file(path)?;
    let buffers: Vec<&[u8]> = buffers.iter().map(|b| b.0.as_slice()).collect();
    // The gltf crate's readers index into buffers; a malformed file must not take the caller
    // down if one of them panics.
    catch_unwind(AssertUnwindSafe(|| read_document(&document, &buffers)))
        .map_err(|_| err("malformed accessor data (the glTF reader panicked)".into()))?
        .map_err(|e| match e {
            ReadError::Model(e) => e,
            ReadError::Message(m) => err(m),
        })
}

/// The document and its buffers (external, embedded or data URIs); images are not decoded.
pub(crate) fn read_file(path: &Path) -> Result<(gltf::Document, Vec<gltf::buffer::Data>)> {
    let err = |message: String| Error::Gltf {
        path: path.to_path_buf(),
        message,
    };
    let bytes = std::fs::read(path).map_err(|source| Error::Io {
        path: path.to_path_buf(),
        source,
    })?;
    let gltf::Gltf { document, blob } =
        gltf::Gltf::from_slice(&bytes).map_err(|e| err(e.to_string()))?;
    // A buffer file that cannot be read is named (the gltf crate's error says only "No such
    // file or directory").
    for buffer in document.buffers() {
        if let gltf::buffer::Source::Uri(uri) = buffer.source() {
            if uri.starts_with("data:") || uri.contains("://") {
                continue;
            }
            let relative = urlencoding::decode(uri).map_err(|e| {
                err(format!(
                    "buffer {}: '{uri}' is a malformed URI ({e})",
                    buffer.index()
                ))
            })?;
            let file = path
                .parent()
                .unwrap_or(Path::new(""))
                .join(relative.as_ref());
            if let Err(e) = std::fs::metadata(&file) {
                return Err(err(format!(
                    "buffer {} ('{}'): {e}",
                    buffer.index(),
                    file.display()
                )));
            }
        }
    }
    let buffers = gltf::import_buffers(&document, path.parent(), blob)
        .map_err(|e| err(format!("loading buffers: {e}")))?;
    Ok((document, buffers))
}

/// Each node's parent, or `None` for a root; a node listed as the child of two is an error.
pub(super) fn node_parents(document: &gltf::Document) -> Result<Vec<Option<usize>>, String> {
    let mut parent_of: Vec<Option<usize>> = vec![None; document.nodes().len()];
    for node in document.nodes() {
        for child in node.children() {
            if let Some(other) = parent_of[child.index()].replace(node.index()) {
                return Err(format!(
                    "node {} has two parents ({other} and {})",
                    child.index(),
                    node.index()
                ));
            }
        }
    }
    Ok(parent_of)
}

/// The nodes above `node`, nearest first; stops after as many steps as there are nodes, so
/// that a cycle of parents cannot hang the reader.
pub(super) fn ancestors(
    parent_of: &[Option<usize>],
    node: usize,
) -> impl Iterator<Item = usize> + Clone + '_ {
    std::iter::successors(parent_of[node], |&n| parent_of[n]).take(parent_of.len())
}

enum ReadError {
    Model(Error),
    Message(String),
}

impl From<Error> for ReadError {
    fn from(e: Error) -> Self {
        Self::Model(e)
    }
}

impl From<String> for ReadError {
    fn from(m: String) -> Self {
        Self::Message(m)
    }
}

fn read_document(document: &gltf::Document, buffers: &[&[u8]]) -> Result<Asset, ReadError> {
    let skin = document
        .skins()
        .next()
        .ok_or_else(|| "the file has no skin, so no skeleton".to_string())?;
    let get = |b: gltf::Buffer| buffers.get(b.index()).copied();
    let nodes: Vec<gltf::Node> = document.nodes().collect();

    let parent_of = node_parents(document)?;

    let joints: Vec<usize> = skin.joints().map(|j| j.index()).collect();
    if joints.is_empty() {
        return Err("the first skin has no joints".to_string().into());
    }
    // Bones: the joints in skin order, then the non-joint nodes between two joints.
    let mut bone_nodes = joints.clone();
    let mut bone_of: HashMap<usize, usize> =
        joints.iter().enumerate().map(|(b, &n)| (n, b)).collect();
    if bone_of.len() != joints.len() {
        return Err("the skin lists a joint twice".to_string().into());
    }
    for &joint in &joints {
        let mut path = Vec::new();
        let mut node = joint;
        while let Some(p) = parent_of[node] {
            if path.len() > nodes.len() {
                return Err(format!("node {joint}'s ancestors form a cycle").into());
            }
            if bone_of.contains_key(&p) {
                for n in path.drain(..) {
                    bone_of.insert(n, bone_nodes.len());
                    bone_nodes.push(n);
                }
                break;
            }
            path.push(p);
            node = p;
        }
    }

    let ibms: Vec<Mat4> = match skin.reader(get).read_inverse_bind_matrices() {
        Some(iter) => iter.map(|m| Mat4::from_cols_array_2d(&m)).collect(),
        None if skin.inverse_bind_matrices().is_some() => {
            return Err("inverse bind matrices: buffer data missing"
                .to_string()
                .into())
        }
        None => Vec::new(),
    };
    if !ibms.is_empty() && ibms.len() != joints.len() {
        return Err(format!(
            "{} inverse bind matrices for {} joints",
            ibms.len(),
            joints.len()
        )
        .into());
    }
    let bones: Vec<Bone> = bone_nodes
        .iter()
        .enumerate()
        .map(|(b, &n)| {
            let node = &nodes[n];
            let (t, r, s) = node.transform().decomposed();
            Bone {
                name: node.name().unwrap_or("").to_string(),
                parent: parent_of[n].and_then(|p| bone_of.get(&p).copied()),
                rest: Transform::new(Vec3::from(t), Quat::from_array(r), Vec3::from(s)),
                // glTF: a skin without inverse bind matrices means identity matrices.
                inverse_bind: Some(ibms.get(b).copied().unwrap_or(Mat4::IDENTITY)),
            }
        })
        .collect();
    let skeleton = Skeleton::from_unordered(bones)?;

    let mut clips = Vec::new();
    for (index, animation) in document.animations().enumerate() {
        let name = animation
            .name()
            .map_or_else(|| format!("animation_{index}"), str::to_string);
        let mut tracks = vec![BoneTrack::default(); bone_nodes.len()];
        let mut skipped = 0;
        for channel in animation.channels() {
            let target = channel.target();
            let node = target.node();
            let Some(&bone) = bone_of.get(&node.index()) else {
                skipped += 1;
                continue;
            };
            let what = || {
                format!(
                    "animation '{name}', node '{}', {:?}",
                    node.name().unwrap_or(""),
                    target.property()
                )
            };
            let interpolation = match channel.sampler().interpolation() {
                GltfInterpolation::Linear => Interpolation::Linear,
                GltfInterpolation::Step => Interpolation::Step,
                GltfInterpolation::CubicSpline => {
                    return Err(Error::UnsupportedInterpolation {
                        what: what(),
                        interpolation: "CUBICSPLINE",
                    }
                    .into())
                }
            };
            let reader = channel.reader(get);
            let times: Vec<f32> = reader
                .read_inputs()
                .ok_or_else(|| format!("{}: key times unreadable", what()))?
                .collect();
            let outputs = reader
                .read_outputs()
                .ok_or_else(|| format!("{}: key values unreadable", what()))?;
            let track = &mut tracks[bone];
            match (target.property(), outputs) {
                (Property::Translation, ReadOutputs::Translations(v)) => {
                    let values = v.map(Vec3::from).collect();
                    track.translation = Some(Channel::new(times, values, interpolation));
                }
                (Property::Rotation, ReadOutputs::Rotations(v)) => {
                    let values = v.into_f32().map(Quat::from_array).collect();
                    track.rotation = Some(Channel::new(times, values, interpolation));
                }
                (Property::Scale, ReadOutputs::Scales(v)) => {
                    let values = v.map(Vec3::from).collect();
                    track.scale = Some(Channel::new(times, values, interpolation));
                }
                (Property::MorphTargetWeights, _) => skipped += 1,
                _ => return Err(format!("{}: values of the wrong kind", what()).into()),
            }
        }
        if skipped > 0 {
            log::info!(
                "animation '{name}': skipped {skipped} channels on nodes outside the skeleton or on morph weights"
            );
        }
        if !tracks.iter().any(BoneTrack::is_animated) {
            log::info!("animation '{name}': no channel targets the skeleton; skipped");
            continue;
        }
        let tracks = skeleton
            .source_index()
            .iter()
            .map(|&b| std::mem::take(&mut tracks[b]))
            .collect();
        clips.push(Clip::new(name, &skeleton, tracks)?);
    }
    // Stored bone i was given as bone source_index[i], whose node is bone_nodes[that].
    let nodes: Vec<usize> = skeleton
        .source_index()
        .iter()
        .map(|&b| bone_nodes[b])
        .collect();
    let locals: Vec<Mat4> = document
        .nodes()
        .map(|n| Mat4::from_cols_array_2d(&n.transform().matrix()))
        .collect();
    // Component space ends at the first top joint (bone 0): the nodes above it place it in the
    // world.
    let above = ancestors(&parent_of, nodes[0]).fold(Mat4::IDENTITY, |m, n| locals[n] * m);
    let frame = AssetFrame {
        above,
        up: Some(Vec3::Y),
        skinned: skinned_bones(document, &skin, buffers, &nodes),
    };
    Ok(Asset {
        skeleton,
        clips,
        nodes: Some(nodes),
        frame,
    })
}

/// Per bone (whose nodes are `bone_nodes`): whether a mesh skinned by `skin` weights a vertex
/// to it above 1e-3; `None` when no mesh is skinned by `skin`.
fn skinned_bones(
    document: &gltf::Document,
    skin: &gltf::Skin,
    buffers: &[&[u8]],
    bone_nodes: &[usize],
) -> Option<Vec<bool>> {
    let joints: Vec<usize> = skin.joints().map(|j| j.index()).collect();
    let mut weighted_nodes = vec![false; document.nodes().len()];
    let mut any_mesh = false;
    let primitives = document
        .nodes()
        .filter(|n| n.skin().is_some_and(|s| s.index() == skin.index()))
        .filter_map(|n| n.mesh())
        .flat_map(|m| m.primitives().collect::<Vec<_>>());
    for primitive in primitives {
        let reader = primitive.reader(|b| buffers.get(b.index()).copied());
        let (Some(slots), Some(weights)) = (reader.read_joints(0), reader.read_weights(0)) else {
            continue;
        };
        any_mesh = true;
        for (slots, weights) in slots.into_u16().zip(weights.into_f32()) {
            for (slot, weight) in slots.into_iter().zip(weights) {
                if let (true, Some(&node)) = (weight > 1e-3, joints.get(usize::from(slot))) {
                    weighted_nodes[node] = true;
                }
            }
        }
    }
    any_mesh.then(|| bone_nodes.iter().map(|&n| weighted_nodes[n]).collect())
}
