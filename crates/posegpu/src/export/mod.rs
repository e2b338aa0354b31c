//! Writing skeletons and clips to files: binary glTF (`.glb`).

mod gltf;
mod sources;

pub use self::gltf::{glb_bytes, write_glb, Template};
