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

/// A count of at least one (`--instances`, `--frames`): zero is refused, not rounded up.
pub fn positive_count(s: &str) -> Result<usize, String> {
    match s.trim().parse::<usize>() {
        Ok(0) => Err("must be at least 1".into()),
        Ok(n) => Ok(n),
        Err(e) => Err(e.to_string()),
    }
}

/// A weight (`--ik-feet`, `--ik-hands`): a finite number from 0 to 1.
pub fn unit_weight(s: &str) -> Result<f32, String> {
    match s.trim().parse::<f32>() {
        Ok(v) if (0.0..=1.0).contains(&v) => Ok(v),
        Ok(v) => Err(format!("{v} is not a weight from 0 to 1")),
        Err(e) => Err(e.to_string()),
    }
}

/// A finite rate above zero (`--fps`): zero, negative and non-finite values are refused.
pub fn positive_rate(s: &str) -> Result<f32, String> {
    match s.trim().parse::<f32>() {
        Ok(v) if v.is_finite() && v > 0.0 => Ok(v),
        Ok(v) => Err(format!("{v} is not a finite number above 0")),
        Err(e) => Err(e.to_string()),
    }
}

/// `--compress[=TOL]`, shared by the commands that build a library: every clip compressed
/// within TOL of the skeleton's height.
#[derive(clap::Args, Clone, Debug, Default)]
pub struct CompressArg {
    /// Compress every clip (packed keys, decoded in the sampling passes; the CPU twin reads the
    /// same words) within TOL of the skeleton's height, a fraction in (0, 1]; `--compress`
    /// alone: 3e-4. With `bench --traffic`, the replay reads the packed blocks.
    #[arg(
        long,
        value_name = "TOL",
        num_args = 0..=1,
        default_missing_value = "0.0003",
        require_equals = true
    )]
    pub compress: Option<f32>,
}

impl CompressArg {
    /// The compression asked for, or none; a bad TOL is `Error::CompressTolerance`.
    pub fn compression(&self) -> Result<Option<posegpu::compress::Compression>, posegpu::Error> {
        self.compress
            .map(posegpu::compress::Compression::all)
            .transpose()
    }
}
