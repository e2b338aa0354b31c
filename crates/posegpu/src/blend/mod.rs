//! Blending full poses, the blend spaces that give the weights, and the bone masks that weight
//! a layer per bone.

pub mod clips;
pub mod mask;
pub mod pose;
pub mod space;
