//! Native numbers for the browser tests, and the demo crowd's GPU time on the native adapter.
//!
//! ```text
//! posegpu-web-fixtures expected OUT.json     # the CPU twin's numbers (crate::fixtures)
//! posegpu-web-fixtures bench [INSTANCES [FRAMES]]   # GpuCrowd::advance_timed, median GPU ms
//! ```
//! Reads `../shared/anim-data` beside the repository (or `POSEGPU_ANIM_DATA`).

fn main() {
    if let Err(e) = native::run(std::env::args().skip(1).collect()) {
        eprintln!("posegpu-web-fixtures: {e}");
        std::process::exit(1);
    }
}

#[cfg(target_arch = "wasm32")]
mod native {
    pub fn run(_: Vec<String>) -> Result<(), String> {
        Err("native only".into())
    }
}

#[cfg(not(target_arch = "wasm32"))]
#[path = "fixtures/native.rs"]
mod native;
