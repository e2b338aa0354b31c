//! Reading a glTF template's bytes: the GLB container, buffers in its BIN chunk, in data URIs
//! or in files beside it, and image files.

use std::collections::HashMap;
use std::path::Path;

use serde_json::Value;

use crate::error::{Error, Result};

/// Where a template's bytes come from: its BIN chunk, data URIs, files beside it.
pub(super) struct Sources<'a> {
    path: &'a Path,
    base: &'a Path,
    blob: Option<&'a [u8]>,
    buffers: Vec<Value>,
    loaded: HashMap<usize, Vec<u8>>,
}

impl<'a> Sources<'a> {
    pub(super) fn new(path: &'a Path, blob: Option<&'a [u8]>, buffers: Vec<Value>) -> Self {
        Self {
            path,
            base: path.parent().unwrap_or(Path::new("")),
            blob,
            buffers,
            loaded: HashMap::new(),
        }
    }

    fn err(&self, message: String) -> Error {
        Error::Gltf {
            path: self.path.to_path_buf(),
            message,
        }
    }

    /// The bytes of buffer view `index`.
    pub(super) fn view(&mut self, index: usize, view: &Value) -> Result<&[u8]> {
        let field = |key: &str| view.get(key).and_then(Value::as_u64).map(|v| v as usize);
        let (Some(buffer), Some(length)) = (field("buffer"), field("byteLength")) else {
            return Err(self.err(format!("buffer view {index} lacks buffer or byteLength")));
        };
        let offset = field("byteOffset").unwrap_or(0);
        let path = self.path;
        let data = self.buffer(buffer)?;
        let size = data.len();
        data.get(offset..offset.saturating_add(length))
            .ok_or_else(|| Error::Gltf {
                path: path.to_path_buf(),
                message: format!(
                    "buffer view {index} (bytes {offset}+{length}) runs past \
                     buffer {buffer} ({size} bytes)"
                ),
            })
    }

    /// A buffer's bytes, read once.
    fn buffer(&mut self, index: usize) -> Result<&[u8]> {
        if !self.loaded.contains_key(&index) {
            let buffer = self
                .buffers
                .get(index)
                .ok_or_else(|| self.err(format!("buffer {index} does not exist")))?;
            let declared = buffer.get("byteLength").and_then(Value::as_u64);
            let bytes = match buffer.get("uri").and_then(Value::as_str) {
                Some(uri) => self.read_uri(uri)?.0,
                None => self
                    .blob
                    .ok_or_else(|| self.err(format!("buffer {index} has no uri and no BIN chunk")))?
                    .to_vec(),
            };
            if declared.is_some_and(|n| (bytes.len() as u64) < n) {
                return Err(self.err(format!(
                    "buffer {index} holds {} bytes, fewer than its byteLength {}",
                    bytes.len(),
                    declared.unwrap_or(0)
                )));
            }
            self.loaded.insert(index, bytes);
        }
        Ok(self.loaded.get(&index).map_or(&[][..], Vec::as_slice))
    }

    /// The bytes a URI names (a data URI, or a file relative to the template), and the file's
    /// path where it is one (which gives an image's type).
    pub(super) fn read_uri(&self, uri: &str) -> Result<(Vec<u8>, std::path::PathBuf)> {
        if let Some(rest) = uri.strip_prefix("data:") {
            let (meta, data) = rest
                .split_once(',')
                .ok_or_else(|| self.err("a data URI without a comma".into()))?;
            let bytes = if meta.ends_with(";base64") {
                base64_decode(data)
            } else {
                percent_decode(data)
            };
            return bytes
                .map(|b| (b, std::path::PathBuf::new()))
                .ok_or_else(|| self.err("a malformed data URI".into()));
        }
        if has_scheme(uri) {
            return Err(self.err(format!(
                "'{uri}': only relative file URIs and data URIs are supported"
            )));
        }
        let relative = percent_decode(uri)
            .and_then(|b| String::from_utf8(b).ok())
            .ok_or_else(|| self.err(format!("'{uri}': a malformed URI")))?;
        let file = self.base.join(relative);
        let bytes = std::fs::read(&file).map_err(|source| Error::Io {
            path: file.clone(),
            source,
        })?;
        Ok((bytes, file))
    }
}

/// The JSON and BIN chunks of a GLB; a `.gltf` file is all JSON.
pub(super) fn split_glb(bytes: &[u8]) -> Result<(&[u8], Option<&[u8]>), String> {
    if !bytes.starts_with(b"glTF") {
        return Ok((bytes, None));
    }
    let word = |at: usize| {
        bytes
            .get(at..at + 4)
            .map(|w| u32::from_le_bytes([w[0], w[1], w[2], w[3]]) as usize)
    };
    let version = word(4).ok_or("GLB header truncated")?;
    if version != 2 {
        return Err(format!("GLB version {version}; only 2 is supported"));
    }
    let total = word(8).ok_or("GLB header truncated")?.min(bytes.len());
    let mut chunks = Vec::new();
    let mut at = 12;
    while at + 8 <= total {
        let (Some(length), Some(kind)) = (word(at), bytes.get(at + 4..at + 8)) else {
            break;
        };
        let data = bytes
            .get(at + 8..at + 8 + length)
            .ok_or("GLB chunk runs past the end of the file")?;
        chunks.push((kind, data));
        at += 8 + length;
    }
    let json = match chunks.first() {
        Some((b"JSON", data)) => {
            // Some writers pad with NULs instead of spaces.
            let end = data.iter().rposition(|&b| b != 0).map_or(0, |i| i + 1);
            &data[..end]
        }
        _ => return Err("GLB: the first chunk is not JSON".into()),
    };
    let bin = chunks
        .get(1)
        .filter(|(kind, _)| *kind == b"BIN\0")
        .map(|(_, data)| *data);
    Ok((json, bin))
}

/// Standard or URL-safe base64, padding optional.
fn base64_decode(text: &str) -> Option<Vec<u8>> {
    let mut out = Vec::with_capacity(text.len() / 4 * 3);
    let (mut acc, mut bits) = (0u32, 0u32);
    for c in text.bytes() {
        let v = match c {
            b'A'..=b'Z' => c - b'A',
            b'a'..=b'z' => c - b'a' + 26,
            b'0'..=b'9' => c - b'0' + 52,
            b'+' | b'-' => 62,
            b'/' | b'_' => 63,
            b'=' => break,
            c if c.is_ascii_whitespace() => continue,
            _ => return None,
        };
        acc = (acc << 6) | u32::from(v);
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
            acc &= (1 << bits) - 1;
        }
    }
    Some(out)
}

/// `%XX` escapes decoded; anything else kept.
fn percent_decode(text: &str) -> Option<Vec<u8>> {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = bytes.get(i + 1..i + 3)?;
            if !hex.iter().all(u8::is_ascii_hexdigit) {
                return None;
            }
            out.push(u8::from_str_radix(std::str::from_utf8(hex).ok()?, 16).ok()?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    Some(out)
}

/// `scheme:` at the start of a URI (`http:`, `file:`...); one letter is a Windows drive.
fn has_scheme(uri: &str) -> bool {
    uri.split_once(':').is_some_and(|(scheme, _)| {
        scheme.len() > 1
            && scheme.starts_with(|c: char| c.is_ascii_alphabetic())
            && scheme
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'))
    })
}

pub(super) fn mime_type(file: &Path) -> Option<&'static str> {
    let ext = file.extension()?.to_str()?.to_ascii_lowercase();
    match ext.as_str() {
        "png" => Some("image/png"),
        "jpg" | "jpeg" => Some("image/jpeg"),
        "webp" => Some("image/webp"),
        "ktx2" => Some("image/ktx2"),
        _ => None,
    }
}
