//! Reading skeletons and clips from files: glTF 2.0 and BVH.

mod bvh;
mod gltf;
mod mesh;

use std::path::Path;

use crate::error::{Error, Result};
pub use crate::model::Asset;

pub use self::bvh::{load_bvh, parse_bvh};
pub use self::gltf::load_gltf;
pub use self::mesh::load_gltf_mesh;

/// Loads a `.glb`/`.gltf` (the first skin) or a `.bvh` file, by extension.
pub fn load(path: impl AsRef<Path>) -> Result<Asset> {
    let path = path.as_ref();
    let ext = path
        .extension()
        .and_then(|e| e.to_str())
        .map(str::to_ascii_lowercase);
    match ext.as_deref() {
        Some("glb" | "gltf") => load_gltf(path),
        Some("bvh") => load_bvh(path),
        _ => Err(Error::UnknownFormat {
            path: path.to_path_buf(),
        }),
    }
}
