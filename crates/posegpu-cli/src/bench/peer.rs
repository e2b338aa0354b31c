//! The PyTorch peer's workload (`benches/peers/torch_fk.py`): the plain 67-bone workload
//! ([`Workload::plain`]) written as flat little-endian arrays, with a sample of the CPU twin's
//! skinning matrices that the peer checks itself against. Both then compute the same poses:
//! every channel of a clip is keyed at the clip's shared times, so the dense per-key poses
//! written here are exactly the keys the library samples.

use std::path::Path;

use posegpu::glam::Mat4;
use posegpu::{ClipId, CpuEvaluator, Error, PoseBatch, Poses};
use serde_json::json;

use super::workload::{plain_asset, Workload, HUMANOID_BONES, SHARED_KEYS};

/// Instances of the sample the peer checks.
pub const SAMPLE: usize = 257;

/// The sample's frame time, seconds (any time: the sample spreads phases over every clip).
const SAMPLE_TIME: f32 = 0.37;

fn write(dir: &Path, name: &str, values: &[f32]) -> Result<(), Error> {
    let path = dir.join(name);
    std::fs::write(&path, bytemuck::cast_slice(values)).map_err(|source| Error::Io { path, source })
}

/// Writes the peer's workload into `dir` (created): `workload.json`, `inverse_bind.f32`,
/// `times.f32`, `values.f32` and `sample_skinning.f32` (the format is the peer's docstring).
pub fn export(dir: &Path) -> Result<(), Error> {
    std::fs::create_dir_all(dir).map_err(|source| Error::Io {
        path: dir.to_path_buf(),
        source,
    })?;
    let w = Workload::plain(HUMANOID_BONES, None)?;
    // The clips the workload's library holds (built alike).
    let (asset, _) = plain_asset(HUMANOID_BONES)?;
    let lib = &w.lib;
    let skeleton = lib.skeleton();
    let bones = skeleton.len();
    let rest = skeleton.rest();
    let mut times = Vec::new();
    let mut values = Vec::new();
    let mut clips = Vec::new();
    for (c, clip) in asset.clips.iter().enumerate() {
        let keys = clip.key_times();
        debug_assert!(keys.len() <= SHARED_KEYS);
        clips.push(json!({
            "name": lib.clip_names()[c],
            "duration": lib.clip_duration(ClipId(c as u32)),
            "first_key": times.len(),
            "keys": keys.len(),
        }));
        for &t in &keys {
            times.push(t);
            for x in clip.pose_at(rest, t) {
                values.extend(x.translation.to_array());
                values.extend(x.rotation.to_array());
                values.extend(x.scale.to_array());
            }
        }
    }
    let inverse_bind: Vec<f32> = skeleton
        .inverse_bind()
        .iter()
        // Rows of the affine part; identity where a bone has none, as the library does.
        .flat_map(|m| m.unwrap_or(Mat4::IDENTITY).transpose().to_cols_array()[..12].to_vec())
        .collect();
    let mut batch = PoseBatch::new();
    w.batch(SAMPLE, SAMPLE_TIME, &mut batch);
    let mut poses = Poses::default();
    CpuEvaluator::new(lib).evaluate(&batch, &mut poses)?;
    let samples: Vec<_> = (0..batch.len())
        .map(|i| {
            let base = batch.layers(i).next().flatten().expect("a base layer");
            let sample = base.samples().next().expect("one clip per instance");
            sample
        })
        .collect();
    let manifest = json!({
        "format": "posegpu-peer-1",
        "what": w.description,
        "bones": bones,
        "parents": (0..bones).map(|b| skeleton.parent(b).map_or(-1, |p| p as i64)).collect::<Vec<_>>(),
        "extent": skeleton.extent(),
        "tolerance": crate::check::TOLERANCE,
        "clips": clips,
        "key_count": times.len(),
        "sample": {
            "instances": samples.len(),
            "clip": samples.iter().map(|s| s.clip.0).collect::<Vec<_>>(),
            "time": samples.iter().map(|s| s.time).collect::<Vec<_>>(),
            "looping": true,
        },
    });
    write(dir, "inverse_bind.f32", &inverse_bind)?;
    write(dir, "times.f32", &times)?;
    write(dir, "values.f32", &values)?;
    write(
        dir,
        "sample_skinning.f32",
        bytemuck::cast_slice(&poses.skinning),
    )?;
    let path = dir.join("workload.json");
    let text = serde_json::to_string_pretty(&manifest).expect("JSON of plain values");
    std::fs::write(&path, text).map_err(|source| Error::Io { path, source })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The poses the peer rebuilds from the exported keys (each clip's pose at its key times,
    /// interpolated) are the library's: the CPU twin's locals at the sample's times.
    #[test]
    fn the_exported_keys_are_what_the_library_samples() {
        let w = Workload::plain(HUMANOID_BONES, None).unwrap();
        let (asset, _) = plain_asset(HUMANOID_BONES).unwrap();
        let rest = asset.skeleton.rest();
        let mut batch = PoseBatch::new();
        w.batch(SAMPLE, SAMPLE_TIME, &mut batch);
        let mut poses = Poses::default();
        CpuEvaluator::new(&w.lib)
            .evaluate(&batch, &mut poses)
            .unwrap();
        let mut worst = (0.0f32, 0, 0);
        for i in 0..batch.len() {
            let base = batch.layers(i).next().flatten().unwrap();
            let s = base.samples().next().unwrap();
            let clip = &asset.clips[s.clip.index()];
            let t = posegpu::map_time(s.time, w.lib.clip_duration(s.clip), true);
            for (b, x) in clip.pose_at(rest, t).iter().enumerate() {
                let y = poses.local(i, b);
                let d = (x.translation - y.translation)
                    .abs()
                    .max_element()
                    .max(1.0 - x.rotation.dot(y.rotation).abs());
                if d > worst.0 {
                    worst = (d, i, b);
                }
            }
        }
        assert!(
            worst.0 < 1e-5,
            "instance {} bone {}: {}",
            worst.1,
            worst.2,
            worst.0
        );
    }
}
