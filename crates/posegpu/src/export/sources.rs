//! Reading a glTF template's bytes through the `gltf` crate: its buffers (a GLB's BIN chunk,
//! data URIs, files beside it) loaded by the importer, and the image files it names.

use std::path::{Path, PathBuf};

use crate::error::{Error, Result};

/// A template's document and its loaded buffers.
pub(super) struct Sources<'a> {
    path: &'a Path,
    document: gltf::Document,
    buffers: Vec<Vec<u8>>,
}

impl<'a> Sources<'a> {
    /// Reads the file at `path` (validated by the `gltf` crate) and loads every buffer.
    pub(super) fn read(path: &'a Path) -> Result<Self> {
        let file = crate::import::read_gltf_file(path)?;
        file.check_meshes(path, "copied into the output")?;
        let crate::import::GltfFile {
            document, buffers, ..
        } = file;
        Ok(Self {
            path,
            document,
            buffers,
        })
    }

    fn err(&self, message: String) -> Error {
        Error::Gltf {
            path: self.path.to_path_buf(),
            message,
        }
    }

    /// The bytes of buffer view `index`.
    pub(super) fn view(&self, index: usize) -> Result<&[u8]> {
        let view = self
            .document
            .views()
            .nth(index)
            .ok_or_else(|| self.err(format!("buffer view {index} does not exist")))?;
        let buffer = view.buffer().index();
        let (offset, length) = (view.offset(), view.length());
        let data = self
            .buffers
            .get(buffer)
            .ok_or_else(|| self.err(format!("buffer {buffer} does not exist")))?;
        data.get(offset..offset.saturating_add(length))
            .ok_or_else(|| {
                self.err(format!(
                    "buffer view {index} (bytes {offset}+{length}) runs past buffer {buffer} \
                     ({} bytes)",
                    data.len()
                ))
            })
    }

    /// The bytes of an image file the template names by a relative URI, and the file's path
    /// (which gives its type); `None` where the file does not exist (as some files ship).
    pub(super) fn image_file(&self, uri: &str) -> Result<Option<(Vec<u8>, PathBuf)>> {
        if has_scheme(uri) {
            return Err(self.err(format!(
                "'{uri}': only relative file URIs and data URIs are supported"
            )));
        }
        let relative = urlencoding::decode(uri)
            .map_err(|e| self.err(format!("'{uri}': a malformed URI ({e})")))?;
        let file = self
            .path
            .parent()
            .unwrap_or(Path::new(""))
            .join(relative.as_ref());
        match std::fs::read(&file) {
            Ok(bytes) => Ok(Some((bytes, file))),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(source) => Err(Error::Io { path: file, source }),
        }
    }
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
