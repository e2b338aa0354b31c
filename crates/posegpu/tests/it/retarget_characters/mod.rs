//! Retargeting between characters from different tools (`posegpu::retarget`): recognition of
//! every character of `../shared/anim-data`, the plan's exactness and limits, every cross-tool
//! pair measured as a user sees it, and the GPU against the CPU twin.

mod bind;
mod data;
mod feet;
mod gpu;
mod ik;
mod mocap;
mod mocap_pairs;
mod pairs;
mod plan;
mod recognition;
