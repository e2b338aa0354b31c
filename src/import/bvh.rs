//! BVH (Biovision hierarchy) motion capture.
use std::path::Path;

use super::Asset;
use crate::error::Result;

pub fn load_bvh(path: &Path) -> Result<Asset> {
    let text = std::fs::read_to_string(path).map_err(|source| crate::Error::Io {
        path: path.to_path_buf(),
        source,
    })?;
    parse_bvh(&text, path)
}

pub fn parse_bvh(_text: &str, _path: &Path) -> Result<Asset> {
    todo!()
}
