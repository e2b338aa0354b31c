//! The tools around the posegpu library: the `posegpu` command's subcommands, and what they
//! need that a program embedding the library does not (plots, pictures, the bandwidth probe,
//! demo and synthetic workloads). The binary is `src/main.rs`.

pub mod bandwidth;
pub mod bench;
pub mod check;
pub mod demo;
pub mod eval;
pub mod info;
pub mod layer;
pub mod method;
pub mod picture;
pub mod plot;
pub mod render;
pub mod retarget;
pub mod transition;
pub mod util;
pub mod workload;

/// The test helpers posegpu's own tests share (`shared/anim-data` among them).
#[cfg(test)]
#[path = "../../posegpu/tests/it/common/mod.rs"]
mod test_common;

/// Where poses are evaluated.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Backend {
    Cpu,
    Gpu,
}
