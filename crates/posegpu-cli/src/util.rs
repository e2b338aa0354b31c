//! Small helpers the subcommands share.

use posegpu::{Error, GpuContext};

/// Opens a GPU, or says plainly that there is none.
pub fn open_gpu() -> Result<Option<GpuContext>, Error> {
    match GpuContext::new() {
        Ok(ctx) => Ok(Some(ctx)),
        Err(Error::NoAdapter) => Ok(None),
        Err(e) => Err(e),
    }
}

/// Bones per second, in a readable unit.
pub fn rate(bones: f64, seconds: f64) -> String {
    let r = bones / seconds.max(1e-12);
    if r >= 1e9 {
        format!("{:.2} G bones/s", r / 1e9)
    } else {
        format!("{:.1} M bones/s", r / 1e6)
    }
}
