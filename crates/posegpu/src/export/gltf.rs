//! Binary glTF output.
//!
//! With a template (the glTF file a skeleton was imported from) the template's JSON is kept as a
//! `serde_json::Value`, so that fields and extensions posegpu does not know survive; only its
//! animations are replaced, and its buffers, external or embedded, are merged into the single
//! BIN chunk a `.glb` has, with external image files embedded too. Without a template, one node
//! per bone and a skin over them are written.
//!
//! Accessors and buffer views that only the replaced animations used are dropped, so that
//! writing one clip onto a file of seventy does not carry the other sixty-nine along. That is
//! only safe where nothing else can point at them: a template that uses an extension not known
//! to leave accessors and views alone keeps all of them.

use std::collections::HashMap;
use std::path::Path;

use glam::{Quat, Vec3};
use serde_json::{json, Map, Value};

use crate::error::{Error, Result};
use crate::model::Skeleton;
use crate::model::{BoneTrack, Clip, Interpolation};

use super::sources::{mime_type, Sources};

/// Where a skeleton came from: the glTF file and the node index of each bone.
///
/// `nodes` is in the skeleton's bone order, as [`crate::Asset::nodes`] gives it.
#[derive(Clone, Copy, Debug)]
pub struct Template<'a> {
    /// The glTF file the skeleton was imported from.
    pub path: &'a Path,
    /// The node index of each bone, in the skeleton's bone order.
    pub nodes: &'a [usize],
}

/// Writes `clips` (validated clips of `skeleton`) as a .glb file at `path`.
///
/// With a `template`, the output is the template's whole document (nodes, meshes, skins,
/// materials, images...) with its animations replaced by `clips`, each bone's channels
/// targeting the template's node for that bone; the template must be the file the skeleton was
/// imported from (bone and node names are checked). Without one, the skeleton itself is written:
/// one node per bone and a skin over all of them. Each clip becomes one animation of the same
/// name; rotations are written normalized, as glTF requires. glTF also requires key times to be
/// non-negative and strictly increasing, so a clip with other times is refused, not repaired.
pub fn write_glb(
    path: &Path,
    skeleton: &Skeleton,
    clips: &[Clip],
    template: Option<&Template<'_>>,
) -> Result<()> {
    let glb = glb_bytes(path, skeleton, clips, template)?;
    std::fs::write(path, glb).map_err(|source| Error::Io {
        path: path.to_path_buf(),
        source,
    })
}

/// [`write_glb`]'s file as bytes in memory (for a download, an archive, a browser); `name`
/// names the output in errors.
pub fn glb_bytes(
    name: impl AsRef<Path>,
    skeleton: &Skeleton,
    clips: &[Clip],
    template: Option<&Template<'_>>,
) -> Result<Vec<u8>> {
    let out_err = |message: String| Error::Gltf {
        path: name.as_ref().to_path_buf(),
        message,
    };
    if let Some(clip) = clips.iter().find(|c| c.tracks().len() != skeleton.len()) {
        return Err(out_err(format!(
            "clip '{}' has {} bone tracks but the skeleton has {} bones",
            clip.name(),
            clip.tracks().len(),
            skeleton.len()
        )));
    }
    let (mut doc, nodes) = match template {
        Some(t) => (Doc::from_template(t, skeleton)?, t.nodes.to_vec()),
        None => Doc::from_skeleton(skeleton),
    };
    doc.add_animations(skeleton, clips, &nodes)
        .map_err(out_err)?;
    doc.into_glb().map_err(out_err)
}

/// glTF's `componentType` for `f32`.
const FLOAT: u32 = 5126;

/// A glTF document being written: its JSON and the bytes of its one buffer.
struct Doc {
    root: Map<String, Value>,
    /// The output buffer's JSON but for `byteLength` (a template's first buffer keeps its name).
    buffer: Map<String, Value>,
    bin: Vec<u8>,
}

impl Doc {
    /// The skeleton as glTF: node `i` is bone `i`, and a skin lists them all.
    fn from_skeleton(skeleton: &Skeleton) -> (Self, Vec<usize>) {
        let count = skeleton.len();
        let mut children = vec![Vec::new(); count];
        let mut roots = Vec::new();
        for bone in 0..count {
            match skeleton.parent(bone) {
                Some(p) => children[p].push(bone),
                None => roots.push(bone),
            }
        }
        let mut nodes: Vec<Value> = (0..count)
            .map(|bone| {
                let rest = &skeleton.rest()[bone];
                let mut node = Map::new();
                let name = &skeleton.names()[bone];
                if !name.is_empty() {
                    node.insert("name".into(), name.as_str().into());
                }
                node.insert("translation".into(), vec3(rest.translation));
                node.insert("rotation".into(), quat(rest.rotation));
                node.insert("scale".into(), vec3(rest.scale));
                if !children[bone].is_empty() {
                    node.insert("children".into(), json!(children[bone]));
                }
                Value::Object(node)
            })
            .collect();
        // glTF wants a skin's joints under one common root; several root bones get an
        // identity parent, which the importer does not make a bone (it lies above the joints).
        let scene_nodes = if roots.len() > 1 {
            nodes.push(json!({ "children": roots }));
            vec![count]
        } else {
            roots
        };
        let mut doc = Self {
            root: Map::new(),
            buffer: Map::new(),
            bin: Vec::new(),
        };
        doc.root.insert(
            "asset".into(),
            json!({"version": "2.0", "generator": concat!("posegpu ", env!("CARGO_PKG_VERSION"))}),
        );
        doc.root.insert("scene".into(), 0.into());
        doc.root
            .insert("scenes".into(), json!([{ "nodes": scene_nodes }]));
        doc.root.insert("nodes".into(), Value::Array(nodes));

        // The skeleton's inverse bind matrices where it has them, else those that make the
        // rest pose skin to identity. glTF wants their last row exactly 0 0 0 1, which a
        // general inverse misses by rounding.
        let rest = skeleton.rest_component();
        let matrices: Vec<f32> = skeleton
            .inverse_bind()
            .iter()
            .zip(&rest)
            .flat_map(|(ibm, rest)| {
                let mut m = ibm.unwrap_or_else(|| rest.to_matrix().inverse());
                m.x_axis.w = 0.0;
                m.y_axis.w = 0.0;
                m.z_axis.w = 0.0;
                m.w_axis.w = 1.0;
                m.to_cols_array()
            })
            .collect();
        let view = doc.push_view(&floats_to_bytes(&matrices), json!({}));
        let accessor = doc.push(
            "accessors",
            json!({"bufferView": view, "componentType": FLOAT, "count": count, "type": "MAT4"}),
        );
        doc.root.insert(
            "skins".into(),
            json!([{ "joints": (0..count).collect::<Vec<_>>(), "inverseBindMatrices": accessor }]),
        );
        (doc, (0..count).collect())
    }

    /// The template's document without its animations, its data merged into one buffer.
    fn from_template(t: &Template<'_>, skeleton: &Skeleton) -> Result<Self> {
        let err = |message: String| Error::Gltf {
            path: t.path.to_path_buf(),
            message,
        };
        if t.nodes.len() != skeleton.len() {
            return Err(err(format!(
                "the template maps {} bones to nodes but the skeleton has {} bones",
                t.nodes.len(),
                skeleton.len()
            )));
        }
        // The gltf crate reads and validates the file and loads its buffers (indices in range,
        // required fields), so what follows can trust the document's shape; it still never
        // indexes blindly. The JSON itself is kept as a Value so unknown fields survive.
        let sources = Sources::read(t.path)?;
        let bytes = std::fs::read(t.path).map_err(|source| Error::Io {
            path: t.path.to_path_buf(),
            source,
        })?;
        let json = if bytes.starts_with(b"glTF") {
            gltf::Glb::from_slice(&bytes)
                .map_err(|e| err(e.to_string()))?
                .json
        } else {
            std::borrow::Cow::Borrowed(bytes.as_slice())
        };
        let mut root = match serde_json::from_slice(&json) {
            Ok(Value::Object(root)) => root,
            Ok(_) => return Err(err("the JSON is not an object".into())),
            Err(e) => return Err(err(format!("JSON: {e}"))),
        };
        check_nodes(&root, t.nodes, skeleton).map_err(err)?;
        let prune = can_prune(&root).map_err(err)?;
        root.remove("animations");

        let mut buffer = match array(&root, "buffers").first() {
            Some(Value::Object(b)) => b.clone(),
            _ => Map::new(),
        };
        buffer.remove("uri");
        buffer.remove("byteLength");
        root.remove("buffers");

        // Accessors: keep those that meshes and skins use (all of them when pruning is unsafe).
        let accessors = take_array(&mut root, "accessors");
        let mut keep = vec![!prune; accessors.len()];
        if prune {
            accessor_refs(&mut root, &mut |v| mark(v, &mut keep, "accessor")).map_err(err)?;
        }
        let (accessors, map) = compact(accessors, &keep);
        accessor_refs(&mut root, &mut |v| remap(v, &map, "accessor")).map_err(err)?;
        put_array(&mut root, "accessors", accessors);

        // Buffer views: keep those that kept accessors and images use, copied into one buffer.
        let views = take_array(&mut root, "bufferViews");
        let mut keep = vec![!prune; views.len()];
        if prune {
            view_refs(&mut root, &mut |v| mark(v, &mut keep, "buffer view")).map_err(err)?;
        }
        let mut doc = Self {
            root,
            buffer,
            bin: Vec::new(),
        };
        let mut map = Vec::with_capacity(views.len());
        for (index, view) in views.into_iter().enumerate() {
            map.push(if keep[index] {
                Some(doc.push_view(sources.view(index)?, view))
            } else {
                None
            });
        }
        view_refs(&mut doc.root, &mut |v| remap(v, &map, "buffer view")).map_err(err)?;

        // Images in files of their own move into the buffer; data-URI images stay as they are,
        // and so does the URI of an image file that does not exist (said in the log).
        let mut images = take_array(&mut doc.root, "images");
        for (index, image) in images.iter_mut().enumerate() {
            let Some(image) = image.as_object_mut() else {
                continue;
            };
            let Some(uri) = image.get("uri").and_then(Value::as_str) else {
                continue;
            };
            if uri.starts_with("data:") {
                continue;
            }
            let Some((bytes, file)) = sources.image_file(uri)? else {
                log::warn!(
                    "{}: image {index} ('{uri}') does not exist; its URI is kept as it is",
                    t.path.display()
                );
                continue;
            };
            let mime = match image.get("mimeType").and_then(Value::as_str) {
                Some(m) => m.to_string(),
                None => mime_type(&file)
                    .ok_or_else(|| {
                        err(format!(
                            "image {index} ('{uri}'): unknown image type (expected .png or .jpg)"
                        ))
                    })?
                    .to_string(),
            };
            if bytes.is_empty() {
                return Err(err(format!("image {index} ('{uri}') is empty")));
            }
            let view = doc.push_view(&bytes, json!({}));
            image.remove("uri");
            image.insert("bufferView".into(), view.into());
            image.insert("mimeType".into(), mime.into());
        }
        if !images.is_empty() {
            put_array(&mut doc.root, "images", images);
        }
        Ok(doc)
    }

    /// One animation per clip, appended to the document; every key lies in one new buffer view.
    fn add_animations(
        &mut self,
        skeleton: &Skeleton,
        clips: &[Clip],
        nodes: &[usize],
    ) -> Result<(), String> {
        let mut keys = KeyData {
            view: array(&self.root, "bufferViews").len(),
            first: array(&self.root, "accessors").len(),
            bytes: Vec::new(),
            accessors: Vec::new(),
            times: HashMap::new(),
        };
        let mut animations = Vec::with_capacity(clips.len());
        for clip in clips {
            let mut samplers = Vec::new();
            let mut channels = Vec::new();
            for (bone, track) in clip.tracks().iter().enumerate() {
                for channel in channels_of(track) {
                    crate::import::check_gltf_times(channel.times).map_err(|m| {
                        format!(
                            "clip '{}', bone '{}', {}: {m}",
                            clip.name(),
                            skeleton.names()[bone],
                            channel.path
                        )
                    })?;
                    let input = keys.times(channel.times);
                    let output = keys.values(&channel.values, channel.kind, None);
                    let interpolation = match channel.interpolation {
                        Interpolation::Linear => "LINEAR",
                        Interpolation::Step => "STEP",
                    };
                    channels.push(json!({
                        "sampler": samplers.len(),
                        "target": {"node": nodes[bone], "path": channel.path},
                    }));
                    samplers.push(json!({
                        "input": input, "output": output, "interpolation": interpolation,
                    }));
                }
            }
            let mut animation = json!({
                "name": clip.name(), "samplers": samplers, "channels": channels,
            });
            // Notifies and curves in the animation's extras, where posegpu's importer reads
            // them back (import/notifies.rs).
            if !clip.notifies().is_empty() || !clip.curves().is_empty() {
                animation["extras"] = crate::import::clip_extras(clip);
            }
            animations.push(animation);
        }
        if !keys.bytes.is_empty() {
            let view = self.push_view(&keys.bytes, json!({}));
            debug_assert_eq!(view, keys.view);
            let mut accessors = take_array(&mut self.root, "accessors");
            accessors.extend(keys.accessors);
            put_array(&mut self.root, "accessors", accessors);
        }
        put_array(&mut self.root, "animations", animations);
        Ok(())
    }

    /// Appends `value` to the top-level array `key`, returning its index.
    fn push(&mut self, key: &str, value: Value) -> usize {
        let mut items = take_array(&mut self.root, key);
        items.push(value);
        let index = items.len() - 1;
        put_array(&mut self.root, key, items);
        index
    }

    /// Appends `bytes` to the buffer, 4-byte aligned (enough for any component type), as a
    /// new buffer view: `view` with its buffer, offset and length set (a template's view keeps
    /// its stride, target, name and extensions).
    fn push_view(&mut self, bytes: &[u8], mut view: Value) -> usize {
        align4(&mut self.bin);
        if let Some(v) = view.as_object_mut() {
            v.insert("buffer".into(), 0.into());
            v.insert("byteOffset".into(), self.bin.len().into());
            v.insert("byteLength".into(), bytes.len().into());
        }
        self.bin.extend_from_slice(bytes);
        self.push("bufferViews", view)
    }

    /// The GLB container (written by the `gltf` crate): header, JSON chunk, BIN chunk.
    fn into_glb(mut self) -> Result<Vec<u8>, String> {
        align4(&mut self.bin);
        if !self.bin.is_empty() {
            self.buffer
                .insert("byteLength".into(), self.bin.len().into());
            self.root
                .insert("buffers".into(), json!([Value::Object(self.buffer)]));
        }
        // glTF arrays may not be empty.
        for key in ["accessors", "bufferViews", "animations"] {
            if array(&self.root, key).is_empty() {
                self.root.remove(key);
            }
        }
        let json =
            serde_json::to_vec(&Value::Object(self.root)).map_err(|e| format!("JSON: {e}"))?;
        // The container's lengths are u32: check before the writer casts them.
        let total = 12 + 8 + json.len().next_multiple_of(4) + 8 + self.bin.len();
        if u32::try_from(total).is_err() {
            return Err(format!("{total} bytes: over the 4 GiB a .glb can hold"));
        }
        let glb = gltf::Glb {
            header: gltf::binary::Header {
                magic: *b"glTF",
                version: 2,
                length: total as u32,
            },
            json: json.into(),
            bin: (!self.bin.is_empty()).then(|| self.bin.into()),
        };
        glb.to_vec().map_err(|e| format!("writing the GLB: {e}"))
    }
}

/// The keys of one channel, flattened for an accessor.
struct ChannelKeys<'a> {
    path: &'static str,
    kind: &'static str,
    times: &'a [f32],
    values: Vec<f32>,
    interpolation: Interpolation,
}

fn channels_of(track: &BoneTrack) -> Vec<ChannelKeys<'_>> {
    let flat3 = |v: &[Vec3]| v.iter().flat_map(|v| v.to_array()).collect();
    let mut out = Vec::new();
    if let Some(c) = &track.translation {
        out.push(ChannelKeys {
            path: "translation",
            kind: "VEC3",
            times: &c.times,
            values: flat3(&c.values),
            interpolation: c.interpolation,
        });
    }
    if let Some(c) = &track.rotation {
        out.push(ChannelKeys {
            path: "rotation",
            kind: "VEC4",
            times: &c.times,
            values: c
                .values
                .iter()
                .flat_map(|q| q.normalize().to_array())
                .collect(),
            interpolation: c.interpolation,
        });
    }
    if let Some(c) = &track.scale {
        out.push(ChannelKeys {
            path: "scale",
            kind: "VEC3",
            times: &c.times,
            values: flat3(&c.values),
            interpolation: c.interpolation,
        });
    }
    out
}

/// Accessors of animation keys, all in one buffer view that is appended last.
struct KeyData {
    view: usize,
    first: usize,
    bytes: Vec<u8>,
    accessors: Vec<Value>,
    /// Key-time arrays already written (by bit pattern), so samplers share them.
    times: HashMap<Vec<u32>, usize>,
}

impl KeyData {
    fn values(&mut self, values: &[f32], kind: &str, bounds: Option<(f32, f32)>) -> usize {
        let width = match kind {
            "VEC3" => 3,
            "VEC4" => 4,
            _ => 1,
        };
        let mut accessor = json!({
            "bufferView": self.view,
            "byteOffset": self.bytes.len(),
            "componentType": FLOAT,
            "count": values.len() / width,
            "type": kind,
        });
        if let (Some((min, max)), Some(a)) = (bounds, accessor.as_object_mut()) {
            a.insert("min".into(), json!([min]));
            a.insert("max".into(), json!([max]));
        }
        self.bytes.extend(floats_to_bytes(values));
        self.accessors.push(accessor);
        self.first + self.accessors.len() - 1
    }

    fn times(&mut self, times: &[f32]) -> usize {
        let key: Vec<u32> = times.iter().map(|t| t.to_bits()).collect();
        if let Some(&index) = self.times.get(&key) {
            return index;
        }
        let bounds = times.first().zip(times.last()).map(|(a, b)| (*a, *b));
        let index = self.values(times, "SCALAR", bounds);
        self.times.insert(key, index);
        index
    }
}

/// Each bone's node must exist, be used once, and carry the bone's name: a template that is
/// not the file the skeleton came from would otherwise animate the wrong nodes silently.
fn check_nodes(
    root: &Map<String, Value>,
    nodes: &[usize],
    skeleton: &Skeleton,
) -> Result<(), String> {
    let all = array(root, "nodes");
    let mut used = vec![None; all.len()];
    for (bone, &node) in nodes.iter().enumerate() {
        let name = &skeleton.names()[bone];
        let Some(n) = all.get(node) else {
            return Err(format!(
                "bone {bone} '{name}' maps to node {node}, but the template has {} nodes",
                all.len()
            ));
        };
        if let Some(other) = used[node].replace(bone) {
            return Err(format!("bones {other} and {bone} both map to node {node}"));
        }
        let node_name = n.get("name").and_then(Value::as_str).unwrap_or("");
        if node_name != name {
            return Err(format!(
                "bone {bone} '{name}' maps to node {node}, which is named '{node_name}': \
                 is this the file the skeleton was imported from?"
            ));
        }
    }
    Ok(())
}

/// Whether accessors and views that only animations use may be dropped: true when every
/// extension the template uses is known to point at neither. Extensions that address buffers
/// directly cannot survive a merge of the buffers and are refused.
fn can_prune(root: &Map<String, Value>) -> Result<bool, String> {
    let mut prune = true;
    for ext in array(root, "extensionsUsed")
        .iter()
        .filter_map(Value::as_str)
    {
        if matches!(ext, "EXT_meshopt_compression" | "KHR_meshopt_compression") {
            return Err(format!(
                "the template uses {ext}, whose buffer views cannot be merged into one buffer"
            ));
        }
        let leaves_data_alone = ext.starts_with("KHR_materials_")
            || matches!(
                ext,
                "KHR_texture_transform"
                    | "KHR_texture_basisu"
                    | "EXT_texture_webp"
                    | "EXT_texture_avif"
                    | "KHR_lights_punctual"
                    | "KHR_mesh_quantization"
                    | "KHR_xmp_json_ld"
                    | "KHR_animation_pointer"
            );
        prune &= leaves_data_alone;
    }
    Ok(prune)
}

/// Every accessor index outside animations in core glTF: mesh attributes, indices, morph
/// targets, and skins' inverse bind matrices.
fn accessor_refs(
    root: &mut Map<String, Value>,
    f: &mut dyn FnMut(&mut Value) -> Result<(), String>,
) -> Result<(), String> {
    for mesh in items_mut(root.get_mut("meshes")) {
        for primitive in items_mut(mesh.get_mut("primitives")) {
            let targets = primitive.get_mut("targets").and_then(Value::as_array_mut);
            for target in targets.into_iter().flatten() {
                values_mut(Some(target)).try_for_each(&mut *f)?;
            }
            values_mut(primitive.get_mut("attributes")).try_for_each(&mut *f)?;
            if let Some(v) = primitive.get_mut("indices") {
                f(v)?;
            }
        }
    }
    for skin in items_mut(root.get_mut("skins")) {
        if let Some(v) = skin.get_mut("inverseBindMatrices") {
            f(v)?;
        }
    }
    Ok(())
}

/// Every buffer view index in core glTF: accessors (sparse ones included) and images.
fn view_refs(
    root: &mut Map<String, Value>,
    f: &mut dyn FnMut(&mut Value) -> Result<(), String>,
) -> Result<(), String> {
    for accessor in items_mut(root.get_mut("accessors")) {
        if let Some(v) = accessor.get_mut("bufferView") {
            f(v)?;
        }
        if let Some(sparse) = accessor.get_mut("sparse") {
            for part in ["indices", "values"] {
                if let Some(v) = sparse.get_mut(part).and_then(|p| p.get_mut("bufferView")) {
                    f(v)?;
                }
            }
        }
    }
    for image in items_mut(root.get_mut("images")) {
        if let Some(v) = image.get_mut("bufferView") {
            f(v)?;
        }
    }
    Ok(())
}

fn index_of(v: &Value, what: &str) -> Result<usize, String> {
    v.as_u64()
        .and_then(|i| usize::try_from(i).ok())
        .ok_or_else(|| format!("{what} index {v} is not a non-negative integer"))
}

fn mark(v: &mut Value, keep: &mut [bool], what: &str) -> Result<(), String> {
    let i = index_of(v, what)?;
    let count = keep.len();
    *keep
        .get_mut(i)
        .ok_or_else(|| format!("{what} {i} does not exist (there are {count})"))? = true;
    Ok(())
}

fn remap(v: &mut Value, map: &[Option<usize>], what: &str) -> Result<(), String> {
    let i = index_of(v, what)?;
    let new = map
        .get(i)
        .copied()
        .flatten()
        .ok_or_else(|| format!("{what} {i} does not exist (there are {})", map.len()))?;
    *v = new.into();
    Ok(())
}

/// The kept items, and each old index's new one.
fn compact(items: Vec<Value>, keep: &[bool]) -> (Vec<Value>, Vec<Option<usize>>) {
    let mut kept = Vec::new();
    let map = items
        .into_iter()
        .zip(keep)
        .map(|(item, &k)| {
            k.then(|| {
                kept.push(item);
                kept.len() - 1
            })
        })
        .collect();
    (kept, map)
}

fn align4(bin: &mut Vec<u8>) {
    bin.resize(bin.len().next_multiple_of(4), 0);
}

fn floats_to_bytes(values: &[f32]) -> Vec<u8> {
    values.iter().flat_map(|v| v.to_le_bytes()).collect()
}

fn vec3(v: Vec3) -> Value {
    json!(v.to_array())
}

fn quat(q: Quat) -> Value {
    json!(q.normalize().to_array())
}

fn array<'a>(root: &'a Map<String, Value>, key: &str) -> &'a [Value] {
    root.get(key)
        .and_then(Value::as_array)
        .map_or(&[], Vec::as_slice)
}

fn take_array(root: &mut Map<String, Value>, key: &str) -> Vec<Value> {
    match root.remove(key) {
        Some(Value::Array(items)) => items,
        _ => Vec::new(),
    }
}

fn put_array(root: &mut Map<String, Value>, key: &str, items: Vec<Value>) {
    root.insert(key.into(), Value::Array(items));
}

fn items_mut(v: Option<&mut Value>) -> impl Iterator<Item = &mut Value> {
    v.and_then(Value::as_array_mut).into_iter().flatten()
}

fn values_mut(v: Option<&mut Value>) -> impl Iterator<Item = &mut Value> {
    v.and_then(Value::as_object_mut)
        .into_iter()
        .flat_map(|m| m.values_mut())
}
