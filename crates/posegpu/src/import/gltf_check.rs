//! The glTF JSON checked before the `gltf` crate reads it: the crate trusts index fields (an
//! index past an array panics inside gltf-json, one past `u32::MAX` wraps), so every index the
//! reader follows is checked against its array here, with the JSON path in the message. Also
//! what the crate refuses but the spec allows: a scene without `nodes`, and meshes compressed
//! with an extension nobody here decodes (Draco, meshopt), which keep skeletons and clips
//! loading (the meshes are dropped, and said so).

use serde_json::{Map, Value};

/// Mesh-compression extensions: a file requiring one still gives its skeleton and clips.
const MESH_COMPRESSION: &[&str] = &["KHR_draco_mesh_compression", "EXT_meshopt_compression"];

/// A glTF document ready for the `gltf` crate: its JSON (re-serialized), the GLB binary chunk,
/// and the mesh-compression extension whose meshes were dropped.
pub(crate) struct Prepared {
    pub json: Vec<u8>,
    pub blob: Option<Vec<u8>>,
    pub dropped_meshes: Option<String>,
}

/// Splits a `.glb` (or takes `.gltf` text), checks the JSON and prepares it (see the module
/// documentation). The error says what is wrong and where.
pub(crate) fn prepare(bytes: &[u8]) -> Result<Prepared, String> {
    let (json, blob) = if bytes.starts_with(b"glTF") {
        let glb = gltf::binary::Glb::from_slice(bytes).map_err(|e| {
            format!(
                "not a complete GLB ({e}; {} bytes: truncated?)",
                bytes.len()
            )
        })?;
        (glb.json.into_owned(), glb.bin.map(|b| b.into_owned()))
    } else {
        (bytes.to_vec(), None)
    };
    let mut root: Value = serde_json::from_slice(&json).map_err(|e| {
        if e.is_eof() {
            format!("the JSON ends early ({e}): truncated?")
        } else {
            format!("not JSON: {e}")
        }
    })?;
    let Value::Object(map) = &mut root else {
        return Err("the JSON is not an object".into());
    };
    let version = map
        .get("asset")
        .and_then(|a| a.get("version"))
        .and_then(Value::as_str)
        .ok_or("no asset.version: not a glTF 2.0 file")?;
    if !version.starts_with("2.") {
        return Err(format!("glTF {version} is not supported (only glTF 2.x)"));
    }
    for scene in array_mut(map, "scenes") {
        if let Value::Object(s) = scene {
            s.entry("nodes").or_insert_with(|| Value::Array(Vec::new()));
        }
    }
    let dropped_meshes = drop_compressed_meshes(map);
    check_indices(map)?;
    let json = serde_json::to_vec(&root).map_err(|e| e.to_string())?;
    Ok(Prepared {
        json,
        blob,
        dropped_meshes,
    })
}

/// The items of a JSON array field (none where it is absent or not an array).
fn each(v: Option<&Value>) -> impl Iterator<Item = &Value> {
    v.and_then(Value::as_array).into_iter().flatten()
}

fn array_mut<'a>(
    map: &'a mut Map<String, Value>,
    key: &str,
) -> impl Iterator<Item = &'a mut Value> {
    map.get_mut(key)
        .and_then(Value::as_array_mut)
        .into_iter()
        .flatten()
}

/// Where a file requires (or its meshes use) a mesh-compression extension: drops the meshes
/// (and the nodes' references to them) and the extension; returns its name.
fn drop_compressed_meshes(map: &mut Map<String, Value>) -> Option<String> {
    let listed = |key: &str| -> Vec<String> {
        each(map.get(key))
            .filter_map(Value::as_str)
            .filter(|e| MESH_COMPRESSION.contains(e))
            .map(str::to_string)
            .collect()
    };
    let mut found = listed("extensionsRequired");
    found.extend(listed("extensionsUsed"));
    let first = found.first()?.clone();
    map.remove("meshes");
    for node in array_mut(map, "nodes") {
        if let Value::Object(n) = node {
            n.remove("mesh");
        }
    }
    for key in ["extensionsRequired", "extensionsUsed"] {
        if let Some(Value::Array(list)) = map.get_mut(key) {
            list.retain(|e| !e.as_str().is_some_and(|e| MESH_COMPRESSION.contains(&e)));
        }
    }
    drop_compressed_accessors(map);
    Some(first)
}

/// The compressed meshes' accessors (no buffer view and no sparse data: their data was in the
/// compressed stream) go too, and the accessor indices that skins and animations hold are
/// renumbered past them.
fn drop_compressed_accessors(map: &mut Map<String, Value>) {
    let Some(Value::Array(accessors)) = map.get_mut("accessors") else {
        return;
    };
    let keep: Vec<bool> = accessors
        .iter()
        .map(|a| a.get("bufferView").is_some() || a.get("sparse").is_some())
        .collect();
    let mut next = 0u64;
    let renumber: Vec<Option<u64>> = keep
        .iter()
        .map(|&k| {
            k.then(|| {
                next += 1;
                next - 1
            })
        })
        .collect();
    let mut k = keep.iter();
    accessors.retain(|_| *k.next().unwrap_or(&true));
    // An index to a dropped accessor becomes one past the end: the index check names it.
    let past = next;
    let fix = |v: &mut Value| {
        if let Some(i) = v.as_u64() {
            *v = Value::from(renumber.get(i as usize).copied().flatten().unwrap_or(past));
        }
    };
    for skin in array_mut(map, "skins") {
        if let Some(v) = skin.get_mut("inverseBindMatrices") {
            fix(v);
        }
    }
    for animation in array_mut(map, "animations") {
        let samplers = animation.get_mut("samplers").and_then(Value::as_array_mut);
        for sampler in samplers.into_iter().flatten() {
            for key in ["input", "output"] {
                if let Some(v) = sampler.get_mut(key) {
                    fix(v);
                }
            }
        }
    }
}

/// Every index the reader follows, against the length of the array it names.
fn check_indices(map: &Map<String, Value>) -> Result<(), String> {
    let len = |key: &str| map.get(key).and_then(Value::as_array).map_or(0, Vec::len);
    let items = |key: &'static str| {
        each(map.get(key))
            .enumerate()
            .map(move |(i, v)| (format!("{key}[{i}]"), v))
    };
    let check = |at: &str, v: &Value, array: &str| -> Result<(), String> {
        let n = len(array);
        match v.as_u64() {
            Some(i) if (i as usize) < n && i <= u64::from(u32::MAX) => Ok(()),
            _ => Err(format!(
                "{at}: {v} is not an index into {array} (the file has {n})"
            )),
        }
    };
    let field = |obj: &Value, at: &str, key: &str, array: &str| -> Result<(), String> {
        match obj.get(key) {
            Some(v) => check(&format!("{at}.{key}"), v, array),
            None => Ok(()),
        }
    };
    let list = |obj: &Value, at: &str, key: &str, array: &str| -> Result<(), String> {
        for (i, v) in each(obj.get(key)).enumerate() {
            check(&format!("{at}.{key}[{i}]"), v, array)?;
        }
        Ok(())
    };
    if let Some(v) = map.get("scene") {
        check("scene", v, "scenes")?;
    }
    for (at, s) in items("scenes") {
        list(s, &at, "nodes", "nodes")?;
    }
    for (at, n) in items("nodes") {
        list(n, &at, "children", "nodes")?;
        field(n, &at, "mesh", "meshes")?;
        field(n, &at, "skin", "skins")?;
        field(n, &at, "camera", "cameras")?;
    }
    for (at, s) in items("skins") {
        list(s, &at, "joints", "nodes")?;
        field(s, &at, "skeleton", "nodes")?;
        field(s, &at, "inverseBindMatrices", "accessors")?;
    }
    for (at, m) in items("meshes") {
        for (i, p) in each(m.get("primitives")).enumerate() {
            let at = format!("{at}.primitives[{i}]");
            for (name, v) in p
                .get("attributes")
                .and_then(Value::as_object)
                .into_iter()
                .flatten()
            {
                check(&format!("{at}.attributes.{name}"), v, "accessors")?;
            }
            field(p, &at, "indices", "accessors")?;
            field(p, &at, "material", "materials")?;
            for (t, target) in each(p.get("targets")).enumerate() {
                for (name, v) in target.as_object().into_iter().flatten() {
                    check(&format!("{at}.targets[{t}].{name}"), v, "accessors")?;
                }
            }
        }
    }
    for (at, a) in items("animations") {
        let samplers = a
            .get("samplers")
            .and_then(Value::as_array)
            .map_or(0, Vec::len);
        for (i, s) in each(a.get("samplers")).enumerate() {
            let at = format!("{at}.samplers[{i}]");
            field(s, &at, "input", "accessors")?;
            field(s, &at, "output", "accessors")?;
        }
        for (i, c) in each(a.get("channels")).enumerate() {
            let at = format!("{at}.channels[{i}]");
            match c.get("sampler").and_then(Value::as_u64) {
                Some(s) if (s as usize) < samplers => {}
                _ => {
                    return Err(format!(
                        "{at}.sampler: {} is not one of the animation's {samplers} samplers",
                        c.get("sampler").unwrap_or(&Value::Null)
                    ))
                }
            }
            if let Some(target) = c.get("target") {
                field(target, &format!("{at}.target"), "node", "nodes")?;
                let path = target.get("path").and_then(Value::as_str).unwrap_or("");
                if !matches!(path, "translation" | "rotation" | "scale" | "weights") {
                    return Err(format!(
                        "{at}.target.path: '{path}' is not a glTF animation path (translation, \
                         rotation, scale, weights)"
                    ));
                }
            }
        }
    }
    for (at, a) in items("accessors") {
        field(a, &at, "bufferView", "bufferViews")?;
        if let Some(sparse) = a.get("sparse") {
            for key in ["indices", "values"] {
                if let Some(part) = sparse.get(key) {
                    field(
                        part,
                        &format!("{at}.sparse.{key}"),
                        "bufferView",
                        "bufferViews",
                    )?;
                }
            }
        }
    }
    for (at, v) in items("bufferViews") {
        field(v, &at, "buffer", "buffers")?;
    }
    check_accessor_uses(map)?;
    check_byte_ranges(map)?;
    for (at, t) in items("textures") {
        field(t, &at, "source", "images")?;
        field(t, &at, "sampler", "samplers")?;
    }
    for (at, i) in items("images") {
        field(i, &at, "bufferView", "bufferViews")?;
    }
    Ok(())
}

/// FLOAT, and the normalized integer types glTF allows for rotations.
const FLOAT: u64 = 5126;
const ROTATION_TYPES: &[u64] = &[5126, 5120, 5121, 5122, 5123];

/// The accessors animations and skins read have the types glTF gives them: times SCALAR
/// FLOAT, translations and scales VEC3 FLOAT, rotations VEC4 FLOAT or normalized integers,
/// weights SCALAR, inverse bind matrices MAT4 FLOAT; a node's property is animated once per
/// animation.
fn check_accessor_uses(map: &Map<String, Value>) -> Result<(), String> {
    let accessors = map.get("accessors").and_then(Value::as_array);
    let accessor = |i: &Value| i.as_u64().and_then(|i| accessors?.get(i as usize));
    let kind = |a: &Value| {
        (
            a.get("type")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_string(),
            a.get("componentType").and_then(Value::as_u64).unwrap_or(0),
            a.get("normalized")
                .and_then(Value::as_bool)
                .unwrap_or(false),
        )
    };
    let expect =
        |at: &str, index: Option<&Value>, ty: &str, components: &[u64], normalized: bool| {
            let Some(a) = index.and_then(accessor) else {
                return Ok(());
            };
            let (t, c, n) = kind(a);
            let ok = t == ty && components.contains(&c) && (c == FLOAT || !normalized || n);
            if ok {
                Ok(())
            } else {
                Err(format!(
                    "{at}: accessor {} is {t} of component type {c}{}; glTF needs {ty} {}",
                    index.unwrap_or(&Value::Null),
                    if n { " (normalized)" } else { "" },
                    if components == [FLOAT] {
                        "FLOAT"
                    } else {
                        "FLOAT or normalized integers"
                    }
                ))
            }
        };
    for (s, skin) in each(map.get("skins")).enumerate() {
        let at = format!("skins[{s}].inverseBindMatrices");
        expect(
            &at,
            skin.get("inverseBindMatrices"),
            "MAT4",
            &[FLOAT],
            false,
        )?;
    }
    for (a, anim) in each(map.get("animations")).enumerate() {
        let samplers = anim.get("samplers").and_then(Value::as_array);
        let mut seen = std::collections::HashSet::new();
        for (c, channel) in each(anim.get("channels")).enumerate() {
            let at = format!("animations[{a}].channels[{c}]");
            let target = channel.get("target");
            let path = target
                .and_then(|t| t.get("path"))
                .and_then(Value::as_str)
                .unwrap_or("");
            if let Some(node) = target.and_then(|t| t.get("node")).and_then(Value::as_u64) {
                if !seen.insert((node, path.to_string())) {
                    return Err(format!(
                        "{at}: node {node}'s {path} is animated twice in one animation"
                    ));
                }
            }
            let Some(sampler) = channel
                .get("sampler")
                .and_then(Value::as_u64)
                .and_then(|s| samplers?.get(s as usize))
            else {
                continue;
            };
            expect(
                &format!("{at} key times"),
                sampler.get("input"),
                "SCALAR",
                &[FLOAT],
                false,
            )?;
            let out = sampler.get("output");
            let at = format!("{at} {path} values");
            match path {
                "translation" | "scale" => expect(&at, out, "VEC3", &[FLOAT], false)?,
                "rotation" => expect(&at, out, "VEC4", ROTATION_TYPES, true)?,
                _ => {}
            }
        }
    }
    Ok(())
}

/// Bytes of one component of a glTF component type.
fn component_bytes(c: u64) -> Option<u64> {
    match c {
        5120 | 5121 => Some(1),
        5122 | 5123 => Some(2),
        5125 | 5126 => Some(4),
        _ => None,
    }
}

/// Components of a glTF accessor type.
fn type_components(t: &str) -> Option<u64> {
    Some(match t {
        "SCALAR" => 1,
        "VEC2" => 2,
        "VEC3" => 3,
        "VEC4" => 4,
        "MAT2" => 4,
        "MAT3" => 9,
        "MAT4" => 16,
        _ => return None,
    })
}

/// Every accessor's elements lie within its buffer view, and every view within its buffer (by
/// the declared lengths; the loaded buffers are checked against those by the gltf crate).
fn check_byte_ranges(map: &Map<String, Value>) -> Result<(), String> {
    let get = |v: &Value, k: &str| v.get(k).and_then(Value::as_u64);
    let buffers = map.get("buffers").and_then(Value::as_array);
    let views = map.get("bufferViews").and_then(Value::as_array);
    for (i, view) in views.into_iter().flatten().enumerate() {
        let (offset, length) = (
            get(view, "byteOffset").unwrap_or(0),
            get(view, "byteLength").unwrap_or(0),
        );
        let buffer = get(view, "buffer")
            .and_then(|b| buffers?.get(b as usize))
            .and_then(|b| get(b, "byteLength"))
            .unwrap_or(0);
        if offset.checked_add(length).is_none_or(|end| end > buffer) {
            return Err(format!(
                "bufferViews[{i}]: bytes {offset}..{} lie past its buffer's {buffer}",
                offset.saturating_add(length)
            ));
        }
    }
    for (i, a) in each(map.get("accessors")).enumerate() {
        let Some(view) = get(a, "bufferView").and_then(|v| views?.get(v as usize)) else {
            continue;
        };
        let at = format!("accessors[{i}]");
        let ty = a.get("type").and_then(Value::as_str).unwrap_or("");
        let (Some(size), Some(n)) = (
            get(a, "componentType").and_then(component_bytes),
            type_components(ty),
        ) else {
            return Err(format!(
                "{at}: type {ty} of component type {} is not glTF's",
                a.get("componentType").unwrap_or(&Value::Null)
            ));
        };
        let element = size * n;
        let stride = get(view, "byteStride").unwrap_or(element);
        let count = get(a, "count").unwrap_or(0);
        let start = get(a, "byteOffset").unwrap_or(0);
        let length = get(view, "byteLength").unwrap_or(0);
        let end = (count > 0).then(|| {
            start
                .checked_add(stride.checked_mul(count - 1)?)?
                .checked_add(element)
        });
        if let Some(end) = end {
            if end.is_none_or(|end| end > length) {
                return Err(format!(
                    "{at}: {count} elements of {element} bytes from byte {start} need more than \
                     its buffer view's {length} bytes"
                ));
            }
        }
    }
    Ok(())
}
