//! The check's table: one row per stage.

use posegpu::Error;

use super::Measured;

/// One stage's outcome.
pub struct Row {
    pub stage: String,
    pub instances: usize,
    pub bones: usize,
    /// The largest GPU-vs-CPU deviation over the skeleton's size (NaN when the stage failed
    /// before comparing).
    pub deviation: f32,
    pub tolerance: f32,
    pub ok: bool,
    /// Why a stage failed other than by its deviation: an error, or events that differ.
    pub note: Option<String>,
}

impl Row {
    pub(crate) fn new(stage: &str, measured: Result<Measured, Error>) -> Self {
        match measured {
            Ok(m) => Self {
                stage: stage.to_string(),
                instances: m.instances,
                bones: m.bones,
                deviation: m.deviation,
                tolerance: m.tolerance,
                // NaN fails too.
                ok: m.deviation <= m.tolerance && m.note.is_none(),
                note: m.note,
            },
            Err(e) => Self {
                stage: stage.to_string(),
                instances: 0,
                bones: 0,
                deviation: f32::NAN,
                tolerance: super::TOLERANCE,
                ok: false,
                note: Some(format!("error: {e}")),
            },
        }
    }

    pub fn line(&self) -> String {
        let mut line = format!(
            "{:<58} {:>9} {:>6} {:>10.2e} {:>9.1e}  {}",
            self.stage,
            self.instances,
            self.bones,
            self.deviation,
            self.tolerance,
            if self.ok { "ok" } else { "FAIL" }
        );
        if let Some(note) = &self.note {
            line += &format!(" ({note})");
        }
        line
    }
}

pub fn header() -> String {
    format!(
        "{:<58} {:>9} {:>6} {:>10} {:>9}  result\n(deviation: largest GPU-vs-CPU difference over \
         the skeleton's size, translations relative, rotations, scales, skinning entries)",
        "stage", "instances", "bones", "deviation", "tolerance"
    )
}
