//! Reading skeletons and clips from files: glTF 2.0 (feature `gltf`) and BVH (feature `bvh`).

#[cfg(feature = "bvh")]
mod bvh;
#[cfg(feature = "gltf")]
mod gltf;
#[cfg(all(feature = "gltf", feature = "render"))]
mod mesh;

use std::path::Path;

use crate::error::{Error, Result};
pub use crate::model::Asset;

#[cfg(feature = "bvh")]
pub use self::bvh::{load_bvh, parse_bvh};
#[cfg(feature = "gltf")]
pub use self::gltf::load_gltf;
#[cfg(feature = "gltf")]
pub(crate) use self::gltf::read_file as read_gltf_file;
#[cfg(all(feature = "gltf", feature = "render"))]
pub use self::mesh::load_gltf_mesh;

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
