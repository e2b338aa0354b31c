//! Writing skeletons and clips to files: binary glTF (`.glb`).

mod gltf;
mod sources;

pub use self::gltf::{write_glb, Template};
