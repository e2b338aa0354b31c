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
        map.get(key)
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
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
    Some(first)
}

/// Every index the reader follows, against the length of the array it names.
fn check_indices(map: &Map<String, Value>) -> Result<(), String> {
    let len = |key: &str| map.get(key).and_then(Value::as_array).map_or(0, Vec::len);
    let items = |key: &'static str| {
        map.get(key)
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
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
        for (i, v) in obj
            .get(key)
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .enumerate()
        {
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
        for (i, p) in m
            .get("primitives")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .enumerate()
        {
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
            for (t, target) in p
                .get("targets")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .enumerate()
            {
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
        for (i, s) in a
            .get("samplers")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .enumerate()
        {
            let at = format!("{at}.samplers[{i}]");
            field(s, &at, "input", "accessors")?;
            field(s, &at, "output", "accessors")?;
        }
        for (i, c) in a
            .get("channels")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .enumerate()
        {
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
    for (at, t) in items("textures") {
        field(t, &at, "source", "images")?;
        field(t, &at, "sampler", "samplers")?;
    }
    for (at, i) in items("images") {
        field(i, &at, "bufferView", "bufferViews")?;
    }
    Ok(())
}
