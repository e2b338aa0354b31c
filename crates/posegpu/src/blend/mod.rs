//! Blending full poses, the blend spaces that give the weights, and inertialized transitions.

pub mod clips;
pub mod inertia;
pub mod pose;
pub mod space;
