//! Blend spaces, which give a blend's weights from parameters, and clip blends baked on the host.
//! The blend rule itself, which both evaluators run, is `crate::math::blend`.

pub mod clips;
pub mod space;
