//! posegpu's integration tests in one binary, a module per subject: one link instead of
//! one per file (each links wgpu and naga). A module that needs an optional feature builds
//! with it.

mod common;

mod additive;
#[cfg(all(feature = "gltf", feature = "bvh"))]
mod bad_input;
mod blend_poses;
mod blend_space;
mod compress;
mod compress_library;
mod crowd_gpu;
#[cfg(feature = "gltf")]
mod curves;
#[cfg(feature = "gltf")]
mod export_gltf;
mod gpu;
#[cfg(feature = "bvh")]
mod import_bvh;
#[cfg(all(feature = "gltf", feature = "bvh"))]
mod import_bytes;
#[cfg(feature = "gltf")]
mod import_gltf;
#[cfg(feature = "gltf")]
mod inertialization;
#[cfg(feature = "gltf")]
mod layered_blend;
mod math;
#[cfg(feature = "gltf")]
mod mirrored;
mod mirrored_retarget;
mod modules;
mod mutations;
#[cfg(feature = "gltf")]
mod notifies;
mod playback;
mod procedural;
mod public_surface;
#[cfg(all(feature = "render", feature = "gltf"))]
mod render;
#[cfg(all(feature = "gltf", feature = "bvh"))]
mod retarget_assets;
#[cfg(all(feature = "gltf", feature = "bvh"))]
mod retarget_baked;
#[cfg(all(feature = "gltf", feature = "bvh"))]
mod retarget_characters;
mod root_motion_options;
mod webgpu_defaults;
