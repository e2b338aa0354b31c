//! Tools that measure the evaluator rather than run it: the warp-level replay of each pass's
//! memory traffic, which runs without a GPU.

pub use crate::gpu::{replay_traffic, PassTraffic};
