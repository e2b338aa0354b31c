//! Reading skeletons and clips from files: glTF 2.0 (feature `gltf`) and BVH (feature `bvh`).

#[cfg(feature = "bvh")]
mod bvh;
#[cfg(feature = "gltf")]
mod cubic;
#[cfg(feature = "gltf")]
mod gltf;
#[cfg(feature = "gltf")]
mod gltf_check;
#[cfg(all(feature = "gltf", feature = "render"))]
mod mesh;
mod notifies;

use std::path::Path;

use crate::error::{Error, Result};
use crate::model::Asset;

#[cfg(feature = "bvh")]
pub use self::bvh::{load_bvh, load_bvh_bytes, parse_bvh};
#[cfg(feature = "gltf")]
pub use self::cubic::CUBIC_TOLERANCE;
#[cfg(feature = "gltf")]
pub(crate) use self::gltf::{
    check_times as check_gltf_times, read_file as read_gltf_file, GltfFile,
};
#[cfg(feature = "gltf")]
pub use self::gltf::{load_gltf, load_gltf_bytes, UNIT_TOLERANCE};
#[cfg(all(feature = "gltf", feature = "render"))]
pub use self::mesh::load_gltf_mesh;
pub use self::notifies::apply_sidecar;
#[cfg(feature = "gltf")]
pub(crate) use self::notifies::{clip_extras, with_extras, AnimationExtras};

/// The most bytes a file may have unless `POSEGPU_MAX_FILE_BYTES` says otherwise: 1 GiB, far
/// above any character or mocap take, far below what would exhaust a worker's memory.
pub const DEFAULT_MAX_FILE_BYTES: u64 = 1 << 30;

/// The most bytes a file may have: `POSEGPU_MAX_FILE_BYTES` when set to a number, else
/// [`DEFAULT_MAX_FILE_BYTES`].
pub fn max_file_bytes() -> u64 {
    std::env::var("POSEGPU_MAX_FILE_BYTES")
        .ok()
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(DEFAULT_MAX_FILE_BYTES)
}

/// A file's bytes, refused with [`Error::FileTooLarge`] past [`max_file_bytes`] before they are
/// all read (an endless input such as `/dev/zero` stops there too).
pub(crate) fn read_bounded(path: &Path) -> Result<Vec<u8>> {
    use std::io::Read;
    let io = |source| Error::Io {
        path: path.to_path_buf(),
        source,
    };
    let limit = max_file_bytes();
    let file = std::fs::File::open(path).map_err(io)?;
    let mut bytes = Vec::new();
    file.take(limit.saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(io)?;
    refuse_past(bytes.len() as u64, limit, path)?;
    Ok(bytes)
}

/// Refuses data past [`max_file_bytes`] as [`read_bounded`] refuses a file, naming it `name`.
fn check_size(bytes: &[u8], name: &Path) -> Result<()> {
    refuse_past(bytes.len() as u64, max_file_bytes(), name)
}

/// [`Error::FileTooLarge`] for `len` bytes past `limit`.
fn refuse_past(len: u64, limit: u64, path: &Path) -> Result<()> {
    if len > limit {
        return Err(Error::FileTooLarge {
            path: path.to_path_buf(),
            limit,
        });
    }
    Ok(())
}

/// `e` with `path` named: errors about what a file holds (a clip, a skeleton) become
/// [`Error::InFile`]; those that name it already stay as they are.
pub(crate) fn in_file(path: &Path, e: Error) -> Error {
    match e {
        Error::Io { .. }
        | Error::Gltf { .. }
        | Error::Bvh { .. }
        | Error::FileTooLarge { .. }
        | Error::InFile { .. }
        | Error::UnknownFormat { .. }
        | Error::FeatureDisabled { .. } => e,
        e => Error::InFile {
            path: path.to_path_buf(),
            source: Box::new(e),
        },
    }
}

/// Paths as `posegpu retarget` takes them: files as they are, folders searched (recursively)
/// for `.glb`, `.gltf` and `.bvh` files, and `@LIST` files of one path a line (blank lines and
/// `#` comments skipped); sorted, without repeats. An unreadable folder or list is an
/// [`Error::Io`] naming it.
pub fn expand_paths(args: &[impl AsRef<str>]) -> Result<Vec<std::path::PathBuf>> {
    use std::path::PathBuf;
    let mut files = Vec::new();
    for arg in args.iter().map(AsRef::as_ref) {
        if let Some(list) = arg.strip_prefix('@') {
            let text = std::fs::read_to_string(list).map_err(|source| Error::Io {
                path: list.into(),
                source,
            })?;
            files.extend(
                text.lines()
                    .map(str::trim)
                    .filter(|l| !l.is_empty() && !l.starts_with('#'))
                    .map(PathBuf::from),
            );
        } else if Path::new(arg).is_dir() {
            walk(Path::new(arg), &mut files)?;
        } else {
            files.push(PathBuf::from(arg));
        }
    }
    files.sort();
    files.dedup();
    Ok(files)
}

/// Every file under `dir` whose extension a format has ([`Format::of_path`]).
fn walk(dir: &Path, out: &mut Vec<std::path::PathBuf>) -> Result<()> {
    let io = |source| Error::Io {
        path: dir.to_path_buf(),
        source,
    };
    for entry in std::fs::read_dir(dir).map_err(io)? {
        let path = entry.map_err(io)?.path();
        if path.is_dir() {
            walk(&path, out)?;
        } else if Format::of_path(&path).is_some() {
            out.push(path);
        }
    }
    Ok(())
}

/// The file formats the importers read.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Format {
    /// glTF 2.0, binary (`.glb`) or JSON (`.gltf`): the first skin and its animations.
    Gltf,
    /// BioVision Hierarchy (`.bvh`) motion capture.
    Bvh,
}

impl Format {
    /// The format of `path`'s extension (`glb`, `gltf`, `bvh`, any case); `None` for others.
    pub fn of_path(path: &Path) -> Option<Format> {
        let ext = path.extension()?.to_str()?.to_ascii_lowercase();
        match ext.as_str() {
            "glb" | "gltf" => Some(Format::Gltf),
            "bvh" => Some(Format::Bvh),
            _ => None,
        }
    }

    /// The format a name gives (`glb`, `gltf` or `bvh`, any case), as `load`'s callers name
    /// it; `None` for others.
    pub fn from_name(name: &str) -> Option<Format> {
        Format::of_path(Path::new(&format!("x.{name}")))
    }
}

/// Loads a `.glb`/`.gltf` (the first skin) or a `.bvh` file, by extension.
pub fn load(path: impl AsRef<Path>) -> Result<Asset> {
    let path = path.as_ref();
    match Format::of_path(path) {
        #[cfg(feature = "gltf")]
        Some(Format::Gltf) => load_gltf(path),
        #[cfg(feature = "bvh")]
        Some(Format::Bvh) => load_bvh(path),
        #[cfg(not(all(feature = "gltf", feature = "bvh")))]
        Some(format) => Err(disabled(format, path)),
        None => Err(Error::UnknownFormat {
            path: path.to_path_buf(),
        }),
    }
}

/// Loads a file's bytes held in memory (a download, an archive member, a browser's `File`):
/// `format` says what they are, `name` names them in errors (and a BVH's clip). The same
/// checks as [`load`]: a size limit, then the format's own.
pub fn load_bytes(bytes: &[u8], format: Format, name: impl AsRef<Path>) -> Result<Asset> {
    let name = name.as_ref();
    match format {
        #[cfg(feature = "gltf")]
        Format::Gltf => load_gltf_bytes(bytes, name),
        #[cfg(feature = "bvh")]
        Format::Bvh => load_bvh_bytes(bytes, name),
        #[cfg(not(all(feature = "gltf", feature = "bvh")))]
        format => {
            let _ = bytes;
            Err(disabled(format, name))
        }
    }
}

/// The error for a format whose feature this build leaves out.
#[cfg(not(all(feature = "gltf", feature = "bvh")))]
fn disabled(format: Format, path: &Path) -> Error {
    Error::FeatureDisabled {
        path: path.to_path_buf(),
        feature: match format {
            Format::Gltf => "gltf",
            Format::Bvh => "bvh",
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn data_past_the_limit_is_refused_naming_it() {
        assert!(refuse_past(10, 10, Path::new("a.glb")).is_ok());
        match refuse_past(11, 10, Path::new("a.glb")) {
            Err(Error::FileTooLarge { path, limit }) => {
                assert_eq!((path.as_path(), limit), (Path::new("a.glb"), 10));
            }
            other => panic!("{other:?}"),
        }
    }
}
