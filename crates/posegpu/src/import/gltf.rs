//! glTF 2.0 (`.glb`, `.gltf` with external or data-URI buffers) through the `gltf` crate.
//!
//! The first skin's joints become the skeleton, reordered parents-first (glTF's node order is
//! not always so); non-joint nodes lying between two joints become bones too (identity inverse
//! bind), so that their transforms stay in the chain. A file without a skin (an animation
//! library) gives the node hierarchy its clips animate ([`clip_only_nodes`]). CUBICSPLINE
//! channels are baked into LINEAR keys (`cubic.rs`). Nodes above the top joints (an armature
//! node, say) are not applied: component space is the space above the top joint. Animations
//! become clips; channels on other nodes and morph-weight channels are skipped with a log line.

use std::collections::HashMap;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::Path;

use glam::{Mat4, Quat, Vec3, Vec4};
use gltf::animation::util::ReadOutputs;
use gltf::animation::{Interpolation as GltfInterpolation, Property};

use crate::error::{Error, Result};
use crate::model::Asset;
use crate::model::{AssetFrame, BindSpace};
use crate::model::{Bone, Skeleton};
use crate::model::{BoneTrack, Channel, Clip, Interpolation};
use crate::Transform;

/// Loads the first skin of a glTF file and the animations that target its joints.
pub fn load_gltf(path: &Path) -> Result<Asset> {
    load_gltf_file(read_file(path)?, path)
}

/// [`load_gltf`] of a file's bytes (a GLB, or a `.gltf` whose buffers are data URIs): `name`
/// names the data in errors. A buffer in a file beside the document is refused, as there is
/// no directory to read it from.
pub fn load_gltf_bytes(bytes: &[u8], name: &Path) -> Result<Asset> {
    super::check_size(bytes, name)?;
    load_gltf_file(read_bytes(bytes, name, None)?, name)
}

fn load_gltf_file(file: GltfFile, path: &Path) -> Result<Asset> {
    let err = |message: String| Error::Gltf {
        path: path.to_path_buf(),
        message,
    };
    let GltfFile {
        document,
        buffers,
        dropped_meshes,
    } = file;
    if let Some(ext) = dropped_meshes {
        log::info!(
            "{}: meshes use {ext}, which posegpu cannot decode; skeleton and clips only",
            path.display()
        );
    }
    let buffers: Vec<&[u8]> = buffers.iter().map(Vec::as_slice).collect();
    // The JSON was checked (`gltf_check`) so that the crate's readers stay in range; should one
    // still panic, the caller is not taken down, and the message says whose defect it is
    // (docs/gltf-crate-notes.md).
    catch_unwind(AssertUnwindSafe(|| read_document(&document, &buffers)))
        .map_err(|_| {
            err(
                "the gltf crate panicked reading this file, which its checks should have \
                 refused (a gltf-crate defect: docs/gltf-crate-notes.md)"
                    .into(),
            )
        })?
        .map_err(|e| match e {
            ReadError::Model(e) => super::in_file(path, e),
            ReadError::Message(m) => err(m),
        })
}

/// A file as the readers take it.
pub(crate) struct GltfFile {
    pub document: gltf::Document,
    /// Each buffer's bytes, padded to a multiple of 4.
    pub buffers: Vec<Vec<u8>>,
    /// The mesh-compression extension whose meshes were dropped (skeletons and clips load).
    pub dropped_meshes: Option<String>,
}

impl GltfFile {
    /// An error, naming `path`, when the meshes were dropped (compressed): for readers that
    /// need them (`why`: what they would do with them).
    pub(crate) fn check_meshes(&self, path: &Path, why: &str) -> Result<()> {
        match &self.dropped_meshes {
            Some(ext) => Err(Error::Gltf {
                path: path.to_path_buf(),
                message: format!(
                    "its meshes are compressed with {ext}, which posegpu cannot decode, so they \
                     cannot be {why} (skeleton and clips load)"
                ),
            }),
            None => Ok(()),
        }
    }
}

/// The document and its buffers (external, embedded or data URIs); images are not decoded.
/// The JSON is checked first (`gltf_check`): every index the readers follow is in range.
pub(crate) fn read_file(path: &Path) -> Result<GltfFile> {
    let bytes = super::read_bounded(path)?;
    read_bytes(&bytes, path, Some(path.parent().unwrap_or(Path::new(""))))
}

/// A document's bytes as the readers take them; `dir` holds the buffers it names by relative
/// URI (`None`: the bytes came from memory, and such buffers are refused).
fn read_bytes(bytes: &[u8], path: &Path, dir: Option<&Path>) -> Result<GltfFile> {
    let err = |message: String| Error::Gltf {
        path: path.to_path_buf(),
        message,
    };
    let prepared = super::gltf_check::prepare(bytes).map_err(err)?;
    let document = gltf::Gltf::from_slice(&prepared.json)
        .map_err(|e| err(e.to_string()))?
        .document;
    let buffers = load_buffers(&document, dir, prepared.blob).map_err(err)?;
    Ok(GltfFile {
        document,
        buffers,
        dropped_meshes: prepared.dropped_meshes,
    })
}

/// Each buffer's bytes: the GLB's binary chunk, a base64 data URI's, or a file beside the
/// document (its URI URL-decoded, read within the size limit), each at least its declared
/// length and padded to a multiple of 4 bytes. Written here rather than taken from the `gltf`
/// crate's `import` feature, which brings the image decoders along.
fn load_buffers(
    document: &gltf::Document,
    dir: Option<&Path>,
    mut blob: Option<Vec<u8>>,
) -> Result<Vec<Vec<u8>>, String> {
    use base64::Engine;
    document
        .buffers()
        .map(|buffer| {
            let i = buffer.index();
            let mut data = match buffer.source() {
                gltf::buffer::Source::Bin => blob
                    .take()
                    .ok_or_else(|| format!("buffer {i}: the file has no binary chunk"))?,
                gltf::buffer::Source::Uri(uri) if uri.starts_with("data:") => {
                    let (_, payload) = uri
                        .split_once(";base64,")
                        .ok_or_else(|| format!("buffer {i}: a data URI that is not base64"))?;
                    base64::engine::general_purpose::STANDARD
                        .decode(payload)
                        .map_err(|e| format!("buffer {i}: a malformed data URI ({e})"))?
                }
                gltf::buffer::Source::Uri(uri) if uri.contains("://") => {
                    return Err(format!(
                        "buffer {i}: '{uri}': only relative file URIs and data URIs are supported"
                    ))
                }
                gltf::buffer::Source::Uri(uri) => {
                    let Some(dir) = dir else {
                        return Err(format!(
                            "buffer {i}: '{uri}' is a file beside the document, and bytes from \
                             memory have no directory: embed the buffers (a GLB, or data URIs)"
                        ));
                    };
                    let relative = urlencoding::decode(uri)
                        .map_err(|e| format!("buffer {i}: '{uri}' is a malformed URI ({e})"))?;
                    let file = dir.join(relative.as_ref());
                    super::read_bounded(&file)
                        .map_err(|e| format!("buffer {i} ('{}'): {e}", file.display()))?
                }
            };
            if data.len() < buffer.length() {
                return Err(format!(
                    "buffer {i}: {} bytes where the file declares {}",
                    data.len(),
                    buffer.length()
                ));
            }
            data.resize(data.len().next_multiple_of(4), 0);
            Ok(data)
        })
        .collect()
}

/// Each node's parent, or `None` for a root; a node listed as the child of two is an error.
pub(super) fn node_parents(document: &gltf::Document) -> Result<Vec<Option<usize>>, String> {
    let mut parent_of: Vec<Option<usize>> = vec![None; document.nodes().len()];
    for node in document.nodes() {
        for child in node.children() {
            if child.index() == node.index() {
                return Err(format!(
                    "node {} lists itself as its own child",
                    node.index()
                ));
            }
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
    let skin = document.skins().next();
    let get = |b: gltf::Buffer| buffers.get(b.index()).copied();
    let nodes: Vec<gltf::Node> = document.nodes().collect();

    let parent_of = node_parents(document)?;

    let joints: Vec<usize> = match &skin {
        Some(skin) => skin.joints().map(|j| j.index()).collect(),
        None => clip_only_nodes(document, &parent_of)?,
    };
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

    let ibms: Vec<Mat4> = match skin.as_ref().map(|s| (s, s.reader(get))) {
        None => Vec::new(),
        Some((skin, reader)) => match reader.read_inverse_bind_matrices() {
            Some(iter) => iter.map(|m| Mat4::from_cols_array_2d(&m)).collect(),
            None if skin.inverse_bind_matrices().is_some() => {
                return Err("inverse bind matrices: buffer data missing"
                    .to_string()
                    .into())
            }
            None => Vec::new(),
        },
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
            if let gltf::scene::Transform::Matrix { matrix } = node.transform() {
                let det = Mat4::from_cols_array_2d(&matrix).determinant();
                if det == 0.0 || !det.is_finite() {
                    return Err(format!(
                        "node {n} '{}': its matrix is singular (determinant {det}), so it has no \
                         translation, rotation and scale",
                        node.name().unwrap_or("")
                    ));
                }
            }
            // A matrix with a negative determinant decomposes into a negative Z scale and the
            // matching rotation (the gltf crate's decomposition), a mirrored bone.
            let (t, r, s) = node.transform().decomposed();
            Ok(Bone {
                name: node.name().unwrap_or("").to_string(),
                parent: parent_of[n].and_then(|p| bone_of.get(&p).copied()),
                rest: Transform::new(Vec3::from(t), Quat::from_array(r), Vec3::from(s)),
                // glTF: a skin without inverse bind matrices means identity matrices; a
                // clip-only file has no bind pose.
                inverse_bind: skin
                    .is_some()
                    .then(|| ibms.get(b).copied().unwrap_or(Mat4::IDENTITY)),
            })
        })
        .collect::<Result<_, String>>()?;
    let skeleton = Skeleton::from_unordered(bones)?;
    let locals: Vec<Mat4> = document
        .nodes()
        .map(|n| Mat4::from_cols_array_2d(&n.transform().matrix()))
        .collect();
    let world = |node: usize| ancestors(&parent_of, node).fold(locals[node], |m, n| locals[n] * m);
    // Stored bone i was given as bone source_index[i], whose node is bone_nodes[that].
    let nodes: Vec<usize> = skeleton
        .source_index()
        .iter()
        .map(|&b| bone_nodes[b])
        .collect();
    // Component space ends at the first top joint (bone 0): the nodes above it place it in the
    // world.
    let above = ancestors(&parent_of, nodes[0]).fold(Mat4::IDENTITY, |m, n| locals[n] * m);
    let skeleton = match &skin {
        Some(skin) if !ibms.is_empty() => {
            let has_matrix: Vec<bool> = skeleton
                .source_index()
                .iter()
                .map(|&b| b < joints.len())
                .collect();
            let to_component = above.inverse();
            let mut spaces = vec![(BindSpace::Scene, to_component)];
            if let Some(mesh) = document
                .nodes()
                .find(|n| n.skin().is_some_and(|s| s.index() == skin.index()))
            {
                spaces.push((BindSpace::MeshNode, to_component * world(mesh.index())));
            }
            spaces.push((BindSpace::Armature, Mat4::IDENTITY));
            skeleton.with_bind_from_matrices(&has_matrix, &spaces)?
        }
        _ => skeleton,
    };

    let mut clips = Vec::new();
    for (index, animation) in document.animations().enumerate() {
        let name = animation
            .name()
            .map_or_else(|| format!("animation_{index}"), str::to_string);
        let mut tracks = vec![BoneTrack::default(); bone_nodes.len()];
        let mut curves: Vec<(String, Channel<f32>)> = Vec::new();
        let mut skipped = 0;
        for channel in animation.channels() {
            let target = channel.target();
            let node = target.node();
            if target.property() == Property::MorphTargetWeights {
                curves.extend(morph_curves(&name, &channel, get)?);
                continue;
            }
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
            let (interpolation, cubic) = match channel.sampler().interpolation() {
                GltfInterpolation::Linear => (Interpolation::Linear, false),
                GltfInterpolation::Step => (Interpolation::Step, false),
                // Baked into LINEAR keys within CUBIC_TOLERANCE (cubic.rs says why).
                GltfInterpolation::CubicSpline => (Interpolation::Linear, true),
            };
            let reader = channel.reader(get);
            let times: Vec<f32> = reader
                .read_inputs()
                .ok_or_else(|| format!("{}: key times unreadable", what()))?
                .collect();
            check_times(&times).map_err(|e| format!("{}: {e}", what()))?;
            let outputs = reader
                .read_outputs()
                .ok_or_else(|| format!("{}: key values unreadable", what()))?;
            let track = &mut tracks[bone];
            // Called once, by the one property the channel has: it takes the times over.
            let bake = move |values: Vec<Vec4>, unit: bool| -> Result<_, String> {
                if cubic {
                    super::cubic::bake(&times, &values, unit)
                        .map_err(|e| format!("{}: {e}", what()))
                } else {
                    Ok((times, values))
                }
            };
            match (target.property(), outputs) {
                (Property::Translation, ReadOutputs::Translations(v)) => {
                    let (t, values) = bake(v.map(|p| Vec3::from(p).extend(0.0)).collect(), false)?;
                    let values = values.into_iter().map(Vec4::truncate).collect();
                    track.translation = Some(Channel::new(t, values, interpolation));
                }
                (Property::Rotation, ReadOutputs::Rotations(v)) => {
                    let values: Vec<Vec4> = v.into_f32().map(Vec4::from_array).collect();
                    // CUBICSPLINE tangents (all but every third value) need not be unit.
                    let step = if cubic { 3 } else { 1 };
                    let start = usize::from(cubic);
                    for (k, q) in values.iter().enumerate().skip(start).step_by(step) {
                        if (q.length() - 1.0).abs() > UNIT_TOLERANCE || !q.is_finite() {
                            return Err(format!(
                                "{}: key {} is not a unit quaternion ({q}, length {}; glTF \
                                 rotations are unit within {UNIT_TOLERANCE})",
                                what(),
                                k / step,
                                q.length()
                            )
                            .into());
                        }
                    }
                    let (t, values) = bake(values, true)?;
                    let values = values.into_iter().map(Quat::from_vec4).collect();
                    track.rotation = Some(Channel::new(t, values, interpolation));
                }
                (Property::Scale, ReadOutputs::Scales(v)) => {
                    let (t, values) = bake(v.map(|p| Vec3::from(p).extend(0.0)).collect(), false)?;
                    let values = values.into_iter().map(Vec4::truncate).collect();
                    track.scale = Some(Channel::new(t, values, interpolation));
                }
                _ => return Err(format!("{}: values of the wrong kind", what()).into()),
            }
        }
        if skipped > 0 {
            log::info!(
                "animation '{name}': skipped {skipped} channels on nodes outside the skeleton"
            );
        }
        // Notifies and curves in the animation's extras (import/notifies.rs); other extras are
        // left alone.
        let extras: super::AnimationExtras = match animation.extras() {
            Some(raw) => serde_json::from_str(raw.get())
                .map_err(|e| format!("animation '{name}': extras: {e}"))?,
            None => Default::default(),
        };
        let animated = tracks.iter().any(BoneTrack::is_animated);
        if !animated && curves.is_empty() && extras.curves.is_empty() {
            log::info!("animation '{name}': no channel targets the skeleton; skipped");
            continue;
        }
        let mut clip = if animated {
            let tracks = skeleton
                .source_index()
                .iter()
                .map(|&b| std::mem::take(&mut tracks[b]))
                .collect();
            Clip::new(name, &skeleton, tracks)?
        } else {
            // Curves alone (morph weights): the skeleton stands in its reference pose.
            Clip::from_pose(name, &skeleton, skeleton.rest())?
        };
        for (curve, channel) in curves {
            clip = clip.with_curve(curve, channel)?;
        }
        clips.push(super::with_extras(clip, &extras)?);
    }
    let frame = AssetFrame {
        above,
        up: Some(Vec3::Y),
        skinned: skin
            .as_ref()
            .and_then(|skin| skinned_bones(document, skin, buffers, &nodes)),
    };
    Ok(Asset {
        skeleton,
        clips,
        nodes: Some(nodes),
        frame,
    })
}

/// How far a rotation key's length may be from 1 (then normalized): glTF requires unit
/// quaternions; exporters round.
pub const UNIT_TOLERANCE: f32 = 1e-3;

/// glTF's rule for sampler inputs, on import and export: finite, `t[0] ≥ 0` and
/// `t[n + 1] > t[n]`.
pub(crate) fn check_times(times: &[f32]) -> Result<(), String> {
    if let Some(k) = times.iter().position(|t| !t.is_finite() || *t < 0.0) {
        return Err(format!(
            "key time {k} is {}: glTF times are finite seconds, never negative",
            times[k]
        ));
    }
    match times.windows(2).position(|w| w[1] <= w[0]) {
        Some(i) => Err(format!(
            "key times must increase strictly, as glTF has them strictly increase (key {}: {} \
             then {})",
            i + 1,
            times[i],
            times[i + 1]
        )),
        None => Ok(()),
    }
}

/// The bones of a file without a skin (an animation library: a node hierarchy and clips):
/// every node under the deepest node above all animated nodes (itself included), less the
/// leaves that only carry a mesh or a camera. A file whose only animation is morph weights
/// gets the nodes those animate. No animated node: no skeleton.
fn clip_only_nodes(
    document: &gltf::Document,
    parent_of: &[Option<usize>],
) -> Result<Vec<usize>, String> {
    let channels: Vec<_> = document
        .animations()
        .flat_map(|a| a.channels().collect::<Vec<_>>())
        .collect();
    let nodes = |morph: bool| -> Vec<usize> {
        channels
            .iter()
            .filter(|c| (c.target().property() == Property::MorphTargetWeights) == morph)
            .map(|c| c.target().node().index())
            .collect()
    };
    let mut animated = nodes(false);
    if animated.is_empty() {
        animated = nodes(true);
    }
    let Some(&first) = animated.first() else {
        return Err("the file has no skin and no animated node, so no skeleton".to_string());
    };
    // The deepest common ancestor: the first node of `first`'s chain above every other.
    let chain: Vec<usize> = std::iter::once(first)
        .chain(ancestors(parent_of, first))
        .collect();
    let under = |top: usize, n: usize| n == top || ancestors(parent_of, n).any(|a| a == top);
    let top = chain
        .iter()
        .copied()
        .find(|&c| animated.iter().all(|&n| under(c, n)))
        .ok_or_else(|| {
            let other = animated
                .iter()
                .find(|&&n| !under(*chain.last().unwrap_or(&first), n));
            format!(
                "the file has no skin, and its animated nodes ({first} and {}) have no common \
                 ancestor to make one skeleton of",
                other.copied().unwrap_or(first)
            )
        })?;
    Ok(document
        .nodes()
        .filter(|n| under(top, n.index()))
        .filter(|n| {
            n.index() == top
                || n.children().next().is_some()
                || (n.mesh().is_none() && n.camera().is_none())
        })
        .map(|n| n.index())
        .collect())
}

/// Per bone (whose nodes are `bone_nodes`): whether a mesh deforms with it, that is a mesh
/// skinned by `skin` weights a vertex to it above 1e-3, or a mesh node without a skin hangs
/// below it, directly or through nodes that are not joints (a robot's rigid foot plate rides
/// its foot joint as skin weights would); `None` when no mesh is either.
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
    let rigid = rigid_mesh_joints(document, &joints);
    for (weighted, rigid) in weighted_nodes.iter_mut().zip(&rigid) {
        *weighted |= *rigid;
    }
    let any_mesh = any_mesh || rigid.iter().any(|r| *r);
    any_mesh.then(|| bone_nodes.iter().map(|&n| weighted_nodes[n]).collect())
}

/// Per node: whether it is one of `joints` with a mesh node that has no skin below it, directly
/// or through nodes that are not joints (a skinned mesh follows its joints, not its parent).
fn rigid_mesh_joints(document: &gltf::Document, joints: &[usize]) -> Vec<bool> {
    let nodes: Vec<gltf::Node> = document.nodes().collect();
    let mut is_joint = vec![false; nodes.len()];
    for &j in joints {
        if let Some(flag) = is_joint.get_mut(j) {
            *flag = true;
        }
    }
    let mut out = vec![false; nodes.len()];
    for &j in joints.iter().filter(|&&j| j < nodes.len()) {
        // Depth-first through the joint's non-joint descendants (the importer has checked that
        // the node graph is a forest; the visited set keeps this loop finite regardless).
        let mut stack: Vec<usize> = nodes[j].children().map(|c| c.index()).collect();
        let mut seen = vec![false; nodes.len()];
        while let Some(n) = stack.pop() {
            if is_joint[n] || std::mem::replace(&mut seen[n], true) {
                continue;
            }
            if nodes[n].mesh().is_some() && nodes[n].skin().is_none() {
                out[j] = true;
                break;
            }
            stack.extend(nodes[n].children().map(|c| c.index()));
        }
    }
    out
}

/// A morph-weights channel as one curve per morph target: named by the mesh's
/// `extras.targetNames` (what Blender and other exporters write) where it has them, else
/// `NODE.morphK` (NODE the node's name, or `node N`). CUBICSPLINE keys are baked to LINEAR as
/// the other channels are.
fn morph_curves<'a, 's, F>(
    animation: &str,
    channel: &gltf::animation::Channel<'a>,
    get: F,
) -> Result<Vec<(String, Channel<f32>)>, String>
where
    F: Clone + Fn(gltf::Buffer<'a>) -> Option<&'s [u8]>,
{
    let node = channel.target().node();
    let label = node
        .name()
        .map_or_else(|| format!("node {}", node.index()), str::to_string);
    let what = format!("animation '{animation}', node '{label}', morph weights");
    let reader = channel.reader(get);
    let times: Vec<f32> = reader
        .read_inputs()
        .ok_or_else(|| format!("{what}: key times unreadable"))?
        .collect();
    check_times(&times).map_err(|e| format!("{what}: {e}"))?;
    let Some(ReadOutputs::MorphTargetWeights(weights)) = reader.read_outputs() else {
        return Err(format!("{what}: values of the wrong kind"));
    };
    let weights: Vec<f32> = weights.into_f32().collect();
    let cubic = channel.sampler().interpolation() == GltfInterpolation::CubicSpline;
    let per_key = if cubic { 3 } else { 1 };
    let keys = times.len() * per_key;
    if keys == 0 || !weights.len().is_multiple_of(keys) {
        return Err(format!(
            "{what}: {} weights for {} keys (a whole number of targets per key)",
            weights.len(),
            times.len()
        ));
    }
    let targets = weights.len() / keys;
    let names: Vec<String> = node
        .mesh()
        .and_then(|m| m.extras().as_ref().map(|raw| raw.get().to_string()))
        .and_then(|raw| serde_json::from_str::<MeshExtras>(&raw).ok())
        .map(|e| e.target_names)
        .filter(|n| n.len() == targets)
        .unwrap_or_else(|| (0..targets).map(|k| format!("{label}.morph{k}")).collect());
    let interpolation = match channel.sampler().interpolation() {
        GltfInterpolation::Step => Interpolation::Step,
        _ => Interpolation::Linear,
    };
    let mut out = Vec::with_capacity(targets);
    for (k, name) in names.into_iter().enumerate() {
        // Key i's value (and, cubic, its tangents) for target k: glTF stores every target's
        // value of a key together.
        let values: Vec<Vec4> = (0..keys)
            .map(|i| Vec4::new(weights[i * targets + k], 0.0, 0.0, 0.0))
            .collect();
        let (t, values) = if cubic {
            super::cubic::bake(&times, &values, false).map_err(|e| format!("{what}: {e}"))?
        } else {
            (times.clone(), values)
        };
        let values = values.into_iter().map(|v| v.x).collect();
        out.push((name, Channel::new(t, values, interpolation)));
    }
    Ok(out)
}

/// A mesh's extras as exporters write them: the morph targets' names.
#[derive(serde::Deserialize)]
struct MeshExtras {
    #[serde(rename = "targetNames")]
    target_names: Vec<String>,
}
