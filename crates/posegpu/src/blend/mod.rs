//! Blending full poses, and the blend spaces that give the weights.

pub mod clips;
pub mod pose;
pub mod space;
