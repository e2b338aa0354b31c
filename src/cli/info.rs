//! `posegpu info FILE`: the bone tree and the clips.

use std::path::Path;
use std::process::ExitCode;

use posegpu::{Error, Skeleton};

pub fn run(file: &Path) -> Result<ExitCode, Error> {
    let asset = posegpu::import::load(file)?;
    let s = &asset.skeleton;
    println!(
        "{}: {} bones, depth {}, {} roots",
        file.display(),
        s.len(),
        s.depth(),
        s.parents().iter().filter(|p| **p < 0).count()
    );
    print_tree(s);
    println!("{} clips", asset.clips.len());
    for (i, clip) in asset.clips.iter().enumerate() {
        let (mut t, mut r, mut sc, mut keys) = (0, 0, 0, 0);
        for track in clip.tracks() {
            t += usize::from(track.translation.is_some());
            r += usize::from(track.rotation.is_some());
            sc += usize::from(track.scale.is_some());
            keys += track.translation.as_ref().map_or(0, |c| c.len())
                + track.rotation.as_ref().map_or(0, |c| c.len())
                + track.scale.as_ref().map_or(0, |c| c.len());
        }
        println!(
            "  [{i}] {}: {:.3} s, {} key times, {keys} keys; channels: {t} translation, {r} rotation, {sc} scale",
            clip.name(),
            clip.duration(),
            clip.key_count(),
        );
    }
    Ok(ExitCode::SUCCESS)
}

fn print_tree(s: &Skeleton) {
    let mut depth = vec![0usize; s.len()];
    for (i, name) in s.names().iter().enumerate() {
        depth[i] = s.parent(i).map_or(0, |p| depth[p] + 1);
        let t = s.rest()[i].translation;
        println!(
            "  {:indent$}{i} {} (rest offset {:.4} {:.4} {:.4})",
            "",
            if name.is_empty() { "<unnamed>" } else { name },
            t.x,
            t.y,
            t.z,
            indent = 2 * depth[i]
        );
    }
}
