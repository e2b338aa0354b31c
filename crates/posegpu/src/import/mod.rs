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
pub use self::bvh::{load_bvh, parse_bvh};
#[cfg(feature = "gltf")]
pub use self::cubic::CUBIC_TOLERANCE;
#[cfg(feature = "gltf")]
pub(crate) use self::gltf::{
    check_times as check_gltf_times, read_file as read_gltf_file, GltfFile,
};
#[cfg(feature = "gltf")]
pub use self::gltf::{load_gltf, UNIT_TOLERANCE};
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
    if bytes.len() as u64 > limit {
        return Err(Error::FileTooLarge {
            path: path.to_path_buf(),
            limit,
        });
    }
    Ok(bytes)
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

/// Loads a `.glb`/`.gltf` (the first skin) or a `.bvh` file, by extension.
pub fn load(path: impl AsRef<Path>) -> Result<Asset> {
    let path = path.as_ref();
    let ext = path
        .extension()
        .and_then(|e| e.to_str())
        .map(str::to_ascii_lowercase);
    match ext.as_deref() {
        #[cfg(feature = "gltf")]
        Some("glb" | "gltf") => load_gltf(path),
        #[cfg(feature = "bvh")]
        Some("bvh") => load_bvh(path),
        #[cfg(not(feature = "gltf"))]
        Some("glb" | "gltf") => Err(Error::FeatureDisabled {
            path: path.to_path_buf(),
            feature: "gltf",
        }),
        #[cfg(not(feature = "bvh"))]
        Some("bvh") => Err(Error::FeatureDisabled {
            path: path.to_path_buf(),
            feature: "bvh",
        }),
        _ => Err(Error::UnknownFormat {
            path: path.to_path_buf(),
        }),
    }
}
