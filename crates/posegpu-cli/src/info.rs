//! `posegpu info FILE`: the bone tree and the clips; with `--against SOURCE`, how SOURCE's
//! bones drive FILE's when its clips are retargeted.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use posegpu::retarget::{BoneMapping, Rig};
use posegpu::retarget::{PlanOptions, RetargetPlan};
use posegpu::{AnimLibrary, BindOrigin, Error, Skeleton, TranslationMode};

use crate::method::{RestArg, Runtime};

#[derive(clap::Args)]
pub struct InfoArgs {
    /// A .glb, .gltf or .bvh file (with --against: the retarget target).
    file: PathBuf,
    /// Show how this source file's clips drive FILE: each character's humanoid roles and why,
    /// then per bone of FILE its counterpart(s) in SOURCE and how it moves.
    #[arg(long, value_name = "SOURCE")]
    against: Option<PathBuf>,
    /// With --against: as `eval --rig` (absent: the character retargeting; a rig that sets
    /// translation modes, `humanoid` or a mode name: UE's per-bone modes and their caches).
    #[arg(long, requires = "against")]
    rig: Option<String>,
    /// Compress each clip's keys (per-track bit rates, the worst error at virtual vertices
    /// within TOL of the skeleton's height; default 3e-4) and print per clip its bytes raw (as
    /// ACL counts them), packed, the ratio and the largest error.
    #[arg(long, value_name = "TOL", num_args = 0..=1, require_equals = true,
          default_missing_value = "3e-4", conflicts_with = "against")]
    compress: Option<f32>,
    #[command(flatten)]
    rest: RestArg,
}

pub fn run(args: &InfoArgs) -> Result<ExitCode, Error> {
    match &args.against {
        Some(source) => match Runtime::from_arg(args.rig.as_deref(), args.rest)? {
            Runtime::Character(rig) => characters(&args.file, source, &rig),
            Runtime::Modes(rig) => against(&args.file, source, &rig),
        },
        None => match args.compress {
            Some(tolerance) => compress(&args.file, tolerance),
            None => tree(&args.file),
        },
    }
}

/// One line per clip: `  NAME: keys: RAW bytes raw, PACKED bytes compressed (R:1), largest
/// error E of the skeleton's height`.
fn compress(file: &Path, tolerance: f32) -> Result<ExitCode, Error> {
    let asset = posegpu::import::load(file)?;
    for r in posegpu::compress::compression_report(&asset, tolerance)? {
        println!(
            "  {}: keys: {} bytes raw, {} bytes compressed ({:.1}:1), largest error {:.1e} of the skeleton's height",
            r.name,
            r.raw_bytes,
            r.packed_bytes,
            r.ratio(),
            r.worst_error
        );
    }
    Ok(ExitCode::SUCCESS)
}

fn tree(file: &Path) -> Result<ExitCode, Error> {
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
    print_bind(s);
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
        if !clip.curves().is_empty() {
            let names: Vec<&str> = clip.curves().iter().map(|c| c.name.as_str()).collect();
            println!("      curves: {}", names.join(", "));
        }
        if !clip.notifies().is_empty() {
            let marks: Vec<String> = clip
                .notifies()
                .iter()
                .map(|n| format!("{} at {:.3} s", n.name, n.time))
                .collect();
            println!("      notifies: {}", marks.join(", "));
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// Indentation stops growing this deep: a line then says its depth, so the output stays linear
/// in the bone count (a 100,000-deep chain prints 100,000 short lines).
const TREE_INDENT_DEPTH: usize = 32;

fn print_tree(s: &Skeleton) {
    use std::io::Write;
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    let mut depth = vec![0usize; s.len()];
    for (i, name) in s.names().iter().enumerate() {
        depth[i] = s.parent(i).map_or(0, |p| depth[p] + 1);
        let t = s.rest()[i].translation;
        let deep = if depth[i] > TREE_INDENT_DEPTH {
            format!("…(depth {}) ", depth[i])
        } else {
            String::new()
        };
        // A closed pipe (`| head`) ends the listing; nothing else can fail here.
        let _ = writeln!(
            out,
            "  {:indent$}{deep}{i} {} (rest offset {:.4} {:.4} {:.4})",
            "",
            if name.is_empty() { "<unnamed>" } else { name },
            t.x,
            t.y,
            t.z,
            indent = 2 * depth[i].min(TREE_INDENT_DEPTH)
        );
    }
}

/// How far the node transforms are from the bind pose, which bones kept their nodes, and
/// which pose retargeting measures from.
fn print_bind(s: &Skeleton) {
    let Some(space) = s.bind_space() else {
        println!("bind pose: none in the file (retargeting measures from the node transforms)");
        return;
    };
    let label = |b: usize| match s.names()[b].as_str() {
        "" => format!("<unnamed {b}>"),
        n => n.to_string(),
    };
    let posed = s.posed_bones(1.0);
    match posed.first() {
        None => println!(
            "bind pose: the node transforms (within 1 degree per joint; matrices in {} space)",
            space.describe()
        ),
        Some(&(_, worst)) => {
            let shown: Vec<String> = posed
                .iter()
                .take(12)
                .map(|&(b, a)| format!("{} {a:.1}", label(b)))
                .collect();
            println!(
                "bind pose: the nodes are posed away from it: {} joints turn by more than 1 \
                 degree, {worst:.1} at most ({}{}); rebuilt from the skin's inverse bind \
                 matrices (in {} space). Retargeting measures from the bind pose (--rest \
                 nodes: from the node transforms).",
                posed.len(),
                shown.join(", "),
                if posed.len() > shown.len() {
                    ", ..."
                } else {
                    ""
                },
                space.describe()
            );
        }
    }
    for (origin, why) in [
        (
            BindOrigin::Singular,
            "a singular or non-finite inverse bind matrix",
        ),
        (
            BindOrigin::NoMatrix,
            "no inverse bind matrix (not a joint of the skin)",
        ),
    ] {
        let bones: Vec<String> = (0..s.len())
            .filter(|&b| s.bind_origin()[b] == origin)
            .map(label)
            .collect();
        if !bones.is_empty() {
            println!(
                "  {} bones keep their node transform in the bind pose, {why}: {}",
                bones.len(),
                bones.join(", ")
            );
        }
    }
}

/// Both characters' humanoid roles, then the plan: per target bone its counterpart(s) and how
/// it moves, and why.
fn characters(target_file: &Path, source_file: &Path, rig: &Rig) -> Result<ExitCode, Error> {
    let target = posegpu::import::load(target_file)?;
    let source = posegpu::import::load(source_file)?;
    // The plan recognises both characters; their roles are printed from it.
    let plan = RetargetPlan::new(&source, &target, &PlanOptions::from_rig(rig))?;
    for (file, asset, character) in [
        (source_file, &source, plan.source()),
        (target_file, &target, plan.target()),
    ] {
        let roles = character.humanoid.describe(&asset.skeleton);
        println!("{}: {roles}", file.display());
    }
    // The target's IK-style feet: which stay on their shins, and why.
    let names = target.skeleton.names();
    for h in plan.foot_holds() {
        println!(
            "{}: IK-style foot '{}' (shin '{}'): {h}",
            target_file.display(),
            names[h.foot],
            names[h.shin]
        );
    }
    println!(
        "{} driven by {}:\n{}",
        target_file.display(),
        source_file.display(),
        plan.describe(&source.skeleton, &target.skeleton)
    );
    Ok(ExitCode::SUCCESS)
}

/// Per target bone: its source bone and how it matched, its mode, and the cache values.
fn against(target_file: &Path, source_file: &Path, rig: &Rig) -> Result<ExitCode, Error> {
    let target = posegpu::import::load(target_file)?.skeleton;
    let source = posegpu::import::load(source_file)?.skeleton;
    // The library keeps the caches; how each bone matched is the mapping's, made here as
    // `add_source` makes it.
    let mapping = BoneMapping::new(&source, &target, rig)?;
    let mut builder = AnimLibrary::builder(&target);
    let id = builder.add_source(&source_file.display().to_string(), &source, None, rig)?;
    let lib = builder.build();
    let name = |s: &Skeleton, i: usize| {
        let n = &s.names()[i];
        if n.is_empty() {
            format!("<unnamed {i}>")
        } else {
            n.clone()
        }
    };
    println!(
        "{} driven by {}: {} of {} target bones matched",
        target_file.display(),
        source_file.display(),
        mapping.matched_count(),
        target.len()
    );
    for (i, (m, cache)) in mapping
        .matches()
        .iter()
        .zip(lib.retarget_caches(id))
        .enumerate()
    {
        let mode = cache.mode;
        let detail = match (mode, cache.orient_scale) {
            (TranslationMode::AnimationScaled, _) => format!(" ratio {:.4}", cache.length_ratio),
            (TranslationMode::OrientAndScale, Some(k)) => format!(" k {k:.4}"),
            (TranslationMode::OrientAndScale, None) => " (no entry: same translation)".to_string(),
            _ => String::new(),
        };
        match m {
            Some((s, kind)) => println!(
                "  {i:3} {} <- {} ({}), {mode}{detail}",
                name(&target, i),
                name(&source, *s),
                kind.name()
            ),
            None => println!(
                "  {i:3} {} <- none: keeps its reference pose",
                name(&target, i)
            ),
        }
    }
    let unused = mapping.unused_sources();
    if !unused.is_empty() {
        let names: Vec<_> = unused.iter().map(|&s| name(&source, s)).collect();
        println!(
            "source bones driving nothing (ignored): {}",
            names.join(", ")
        );
    }
    Ok(ExitCode::SUCCESS)
}
