//! One row per (skeleton, instance count): the printed table, the CSV and the plot.

use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};

use crate::plot::LogPlot;
use posegpu::Error;

use super::traffic::PassBytes;
use crate::util::rate;

/// The CSV's columns, in order. Empty cells: a backend that did not run (`--backend`,
/// `--cpu-max-instances`, no adapter), per-pass times without timestamp queries.
pub const CSV_HEADER: &str = "instances,bones,layer_space,frames,\
sample_ms,layers_ms,hierarchy_ms,gpu_ms,gpu_time,gpu_wall_ms,gpu_bones_per_s,\
sample_bytes_per_bone,layers_bytes_per_bone,hierarchy_bytes_per_bone,bytes_per_bone,\
effective_gb_per_s,copy_gb_per_s,fraction_of_copy,copy_ceiling_bones_per_s,\
cpu_ms,cpu_threads,cpu_bones_per_s,gpu_speedup,adapter";

/// The GPU side of a row (medians over the frames).
#[derive(Clone, Copy, Debug)]
pub struct GpuFigures {
    /// Per-pass GPU time from timestamp queries: `[sample, layers, hierarchy]` (layers 0 when
    /// the pass did not run); `None` without timestamp queries.
    pub passes_ms: Option<[f64; 3]>,
    /// Submission to completion, the upload of the frame's instances included.
    pub wall_ms: f64,
}

impl GpuFigures {
    /// The frame's GPU time: the passes' sum, or the wall clock without timestamps.
    pub fn ms(&self) -> f64 {
        self.passes_ms.map_or(self.wall_ms, |p| p.iter().sum())
    }
}

/// The measured figures of one configuration.
#[derive(Clone, Debug)]
pub struct Row {
    pub instances: usize,
    pub bones: usize,
    pub layer_space: &'static str,
    pub frames: usize,
    pub gpu: Option<GpuFigures>,
    pub traffic: PassBytes,
    /// Copy-kernel bandwidth in bytes per second (when a GPU ran).
    pub copy_bytes_per_s: Option<f64>,
    /// CPU twin wall clock (median) and its thread count.
    pub cpu_ms: Option<f64>,
    pub cpu_threads: usize,
    pub adapter: String,
}

impl Row {
    fn bones_evaluated(&self) -> f64 {
        (self.instances * self.bones) as f64
    }

    /// `[sample, layers, hierarchy, total]` modelled bytes per bone.
    pub fn bytes_per_bone(&self) -> [f64; 4] {
        self.traffic.per_bone((self.instances * self.bones) as u64)
    }

    pub fn gpu_bones_per_s(&self) -> Option<f64> {
        self.gpu.map(|g| self.bones_evaluated() / (g.ms() / 1e3))
    }

    pub fn cpu_bones_per_s(&self) -> Option<f64> {
        self.cpu_ms.map(|ms| self.bones_evaluated() / (ms / 1e3))
    }

    /// Modelled bytes per second at the measured GPU rate.
    pub fn effective_bytes_per_s(&self) -> Option<f64> {
        self.gpu_bones_per_s().map(|r| r * self.bytes_per_bone()[3])
    }

    pub fn fraction_of_copy(&self) -> Option<f64> {
        Some(self.effective_bytes_per_s()? / self.copy_bytes_per_s?)
    }

    /// The bones per second the modelled traffic would allow at the copy kernel's bandwidth.
    pub fn ceiling_bones_per_s(&self) -> Option<f64> {
        Some(self.copy_bytes_per_s? / self.bytes_per_bone()[3])
    }

    /// CPU twin time over GPU time.
    pub fn gpu_speedup(&self) -> Option<f64> {
        Some(self.cpu_ms? / self.gpu?.ms())
    }

    fn csv(&self) -> String {
        let f = |x: Option<f64>| x.map_or(String::new(), |x| format!("{x:.6}"));
        let e = |x: Option<f64>| x.map_or(String::new(), |x| format!("{x:.4e}"));
        let passes = self.gpu.and_then(|g| g.passes_ms);
        let pass = |k: usize| f(passes.map(|p| p[k]));
        let bytes = self.bytes_per_bone();
        let gpu_time = match self.gpu {
            None => "",
            Some(g) if g.passes_ms.is_some() => "timestamps",
            Some(_) => "wall",
        };
        let cells = [
            self.instances.to_string(),
            self.bones.to_string(),
            self.layer_space.to_string(),
            self.frames.to_string(),
            pass(0),
            pass(1),
            pass(2),
            f(self.gpu.map(|g| g.ms())),
            gpu_time.to_string(),
            f(self.gpu.map(|g| g.wall_ms)),
            e(self.gpu_bones_per_s()),
            format!("{:.3}", bytes[0]),
            format!("{:.3}", bytes[1]),
            format!("{:.3}", bytes[2]),
            format!("{:.3}", bytes[3]),
            f(self.effective_bytes_per_s().map(|b| b / 1e9)),
            f(self.gpu.and(self.copy_bytes_per_s).map(|b| b / 1e9)),
            f(self.fraction_of_copy()),
            e(self.gpu.and(self.ceiling_bones_per_s())),
            f(self.cpu_ms),
            if self.cpu_ms.is_some() {
                self.cpu_threads.to_string()
            } else {
                String::new()
            },
            e(self.cpu_bones_per_s()),
            f(self.gpu_speedup()),
            csv_text(&self.adapter),
        ];
        cells.join(",")
    }
}

/// A CSV cell: quoted when it holds a comma, a quote or a line break.
fn csv_text(s: &str) -> String {
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

/// The printed table's header lines.
pub fn table_header() -> String {
    let top = format!(
        "{:>9} {:>5} | {:>10} {:>10} {:>10} {:>10} {:>10} | {:>15} | {:>6} {:>8} {:>7} | {:>10} {:>15} {:>7}",
        "instances", "bones", "sample ms", "layers ms", "hier. ms", "GPU ms", "wall ms",
        "GPU rate", "B/bone", "GB/s", "of copy", "CPU ms", "CPU rate", "GPU/CPU"
    );
    let rule = "-".repeat(top.chars().count());
    format!("{top}\n{rule}")
}

/// One row of the printed table.
pub fn table_row(row: &Row) -> String {
    let ms = |x: Option<f64>| x.map_or("-".to_string(), |x| format!("{x:.3}"));
    let passes = row.gpu.and_then(|g| g.passes_ms);
    let pass = |k: usize| ms(passes.map(|p| p[k]));
    let rate_of = |r: Option<f64>| r.map_or("-".to_string(), |r| rate(r, 1.0));
    format!(
        "{:>9} {:>5} | {:>10} {:>10} {:>10} {:>10} {:>10} | {:>15} | {:>6.1} {:>8} {:>7} | {:>10} {:>15} {:>7}",
        row.instances,
        row.bones,
        pass(0),
        pass(1),
        pass(2),
        ms(row.gpu.map(|g| g.ms())),
        ms(row.gpu.map(|g| g.wall_ms)),
        rate_of(row.gpu_bones_per_s()),
        row.bytes_per_bone()[3],
        row.effective_bytes_per_s()
            .map_or("-".to_string(), |b| format!("{:.2}", b / 1e9)),
        row.fraction_of_copy()
            .map_or("-".to_string(), |f| format!("{:.1}%", f * 100.0)),
        ms(row.cpu_ms),
        rate_of(row.cpu_bones_per_s()),
        row.gpu_speedup()
            .map_or("-".to_string(), |s| format!("{s:.2}x")),
    )
}

/// An output file opened before the measurements, so that a bad path fails at once.
pub struct Output {
    pub path: PathBuf,
    file: File,
}

impl Output {
    /// Creates `path` (and its folder).
    pub fn create(path: &Path) -> Result<Self, Error> {
        let io = |source| Error::Io {
            path: path.to_path_buf(),
            source,
        };
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(io)?;
        }
        let file = File::create(path).map_err(io)?;
        Ok(Self {
            path: path.to_path_buf(),
            file,
        })
    }

    pub fn write(&mut self, bytes: &[u8]) -> Result<(), Error> {
        self.file
            .write_all(bytes)
            .and_then(|()| self.file.flush())
            .map_err(|source| Error::Io {
                path: self.path.clone(),
                source,
            })
    }
}

/// The CSV, written row by row (a long sweep leaves what it measured if it is stopped).
pub struct Csv(pub Output);

impl Csv {
    pub fn create(path: &Path) -> Result<Self, Error> {
        let mut out = Output::create(path)?;
        out.write(format!("{CSV_HEADER}\n").as_bytes())?;
        Ok(Self(out))
    }

    pub fn row(&mut self, row: &Row) -> Result<(), Error> {
        self.0.write(format!("{}\n", row.csv()).as_bytes())
    }
}

/// Bones per second against instances, per skeleton size: the GPU, the copy-kernel ceiling
/// (its bandwidth over the modelled bytes per bone) and the CPU twin.
pub fn plot(rows: &[Row], title: &str) -> LogPlot {
    let mut sizes: Vec<usize> = Vec::new();
    for r in rows {
        if !sizes.contains(&r.bones) {
            sizes.push(r.bones);
        }
    }
    let points = |bones: usize, f: &dyn Fn(&Row) -> Option<f64>| -> Vec<(f64, f64)> {
        rows.iter()
            .filter(|r| r.bones == bones)
            .filter_map(|r| Some((r.instances as f64, f(r)?)))
            .collect()
    };
    let suffix = |bones: usize| {
        if sizes.len() > 1 {
            format!(", {bones} bones")
        } else {
            String::new()
        }
    };
    type Figure = fn(&Row) -> Option<f64>;
    let gpu: Figure = Row::gpu_bones_per_s;
    let ceiling: Figure = |r| r.gpu.and(r.ceiling_bones_per_s());
    let cpu: Figure = Row::cpu_bones_per_s;
    let kinds = [("GPU", gpu), ("copy ceiling", ceiling), ("CPU twin", cpu)];
    let mut plot = LogPlot::new(title, "instances", "bones per second");
    for &bones in &sizes {
        for (name, figure) in &kinds {
            let pts = points(bones, figure);
            if !pts.is_empty() {
                plot = plot.series(format!("{name}{}", suffix(bones)), pts);
            }
        }
    }
    plot
}
