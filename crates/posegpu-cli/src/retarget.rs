//! `posegpu retarget`: clips converted offline to another character and written as .glb files
//! that keep the target's meshes and skins. By default through the character retargeting of
//! `posegpu::retarget` (any humanoid onto any humanoid); `--method ue` is UE's
//! RemapTracksToNewSkeleton, exactly. Many sources at once (files, folders, lists), split over
//! the workers of a batch job with `--shard I/N`.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use posegpu::export::{write_glb, Template};
use posegpu::retarget::Rig;
use posegpu::retarget::{bake_clip, remap_clip, BoneMapping, PlanOptions, RetargetPlan};
use posegpu::{Asset, Clip, Error, RestPose};

use crate::method::{IkArgs, Method, RestArg};

#[derive(clap::Args)]
pub struct RetargetArgs {
    /// The files whose clips are converted (.glb, .gltf or .bvh), folders of them (searched
    /// recursively), or `@LIST`: a text file naming one path a line.
    #[arg(required = true, num_args = 1..)]
    sources: Vec<String>,
    /// The clip to convert: a name or an index.
    #[arg(long, required_unless_present = "all", conflicts_with = "all")]
    animation: Option<String>,
    /// Convert every clip of each source.
    #[arg(long)]
    all: bool,
    /// The character to convert to (.glb, .gltf or .bvh).
    #[arg(long)]
    target: PathBuf,
    /// The .glb to write, for one source file; a folder for several (one SOURCE_STEM.glb each).
    /// Each holds TARGET's skeleton (and, for a glTF target, its meshes, skins and materials)
    /// with the converted clips.
    #[arg(long)]
    out: PathBuf,
    /// `character`: the characters' humanoid roles, world frames and rest poses (any tool onto
    /// any tool); `ue`: UE's RemapTracksToNewSkeleton between skeletons whose bone names match.
    #[arg(long, value_enum, default_value = "character")]
    method: Method,
    /// A rig JSON file: its `bone_map` and `strip_prefixes` pair bones that names and roles do
    /// not (its translation modes are for run time and do not apply offline).
    #[arg(long)]
    rig: Option<PathBuf>,
    #[command(flatten)]
    rest: RestArg,
    /// Print, per converted clip, how closely the result follows the source in the world: per
    /// limb the direction error, feet and hips heights, travel, sliding.
    #[arg(long)]
    report: bool,
    /// Convert only this worker's share of the sources: `I/N` takes every N-th source from the
    /// I-th (counting from 0) of the sorted list, so N workers (a Kubernetes indexed Job, a Slurm
    /// array) split a library without talking to each other.
    #[arg(long, value_name = "I/N", value_parser = parse_shard)]
    shard: Option<(usize, usize)>,
    /// Leave sources whose output already exists (a retried job picks up where it stopped).
    #[arg(long)]
    skip_existing: bool,
    #[command(flatten)]
    ik: IkArgs,
}

fn parse_shard(s: &str) -> Result<(usize, usize), String> {
    let bad = || format!("'{s}' is not I/N with 0 <= I < N (e.g. 3/16)");
    let (i, n) = s.split_once('/').ok_or_else(bad)?;
    let (i, n): (usize, usize) = (
        i.trim().parse().map_err(|_| bad())?,
        n.trim().parse().map_err(|_| bad())?,
    );
    if n == 0 || i >= n {
        return Err(bad());
    }
    Ok((i, n))
}

pub fn run(args: &RetargetArgs) -> Result<ExitCode, Error> {
    let rig = args.rest.apply(match &args.rig {
        Some(path) => Rig::load(path)?,
        None => Rig::default(),
    });
    let target = posegpu::import::load(&args.target)?;
    let mut sources = posegpu::import::expand_paths(&args.sources)?;
    let single = args.sources.len() == 1 && Path::new(&args.sources[0]).is_file();
    if !single {
        // One output per stem: two sources of one name in different folders would overwrite
        // each other's result, so that is refused before anything is written.
        let mut stems = std::collections::BTreeMap::new();
        for source in &sources {
            let stem = source.file_stem().unwrap_or_default().to_owned();
            if let Some(first) = stems.insert(stem, source) {
                return Err(Error::Io {
                    path: source.clone(),
                    source: std::io::Error::new(
                        std::io::ErrorKind::AlreadyExists,
                        format!(
                            "has the same name as {}: both would be written to one .glb in {}",
                            first.display(),
                            args.out.display()
                        ),
                    ),
                });
            }
        }
    }
    if let Some((i, n)) = args.shard {
        sources = sources.into_iter().skip(i).step_by(n).collect();
    }
    if !single && !sources.is_empty() {
        std::fs::create_dir_all(&args.out).map_err(|e| Error::Io {
            path: args.out.clone(),
            source: e,
        })?;
    }
    let mut failed = 0;
    for source in &sources {
        let out = if single {
            args.out.clone()
        } else {
            let stem = source.file_stem().unwrap_or_default();
            args.out.join(stem).with_extension("glb")
        };
        if args.skip_existing && out.exists() {
            println!("{}: exists, skipped", out.display());
            continue;
        }
        match convert(args, &rig, source, &target, &out) {
            Ok(()) => {}
            // One file stands alone: its error is the command's. In a batch, the others go on.
            Err(e) if single => return Err(e),
            Err(e) => {
                eprintln!("error: {}: {e}", source.display());
                failed += 1;
            }
        }
    }
    if failed > 0 {
        eprintln!("{failed} of {} sources failed", sources.len());
        return Ok(ExitCode::FAILURE);
    }
    Ok(ExitCode::SUCCESS)
}

/// Converts the chosen clips of `source_file` and writes them onto the target at `out`.
fn convert(
    args: &RetargetArgs,
    rig: &Rig,
    source_file: &Path,
    target: &Asset,
    out: &Path,
) -> Result<(), Error> {
    let source = posegpu::import::load(source_file)?;
    let clips: Vec<&Clip> = match &args.animation {
        Some(name) => vec![&source.clips[Clip::find(&source.clips, name)?]],
        None => source.clips.iter().collect(),
    };
    if clips.is_empty() {
        return Err(Error::UnknownAnimation {
            name: "(any)".into(),
            available: format!("none: {} has no animations", source_file.display()),
        });
    }
    let (converted, how) = match args.method {
        Method::Character => {
            let plan = RetargetPlan::new(&source, target, &PlanOptions::from_rig(rig))?;
            let converted = clips
                .iter()
                .map(|c| bake_clip(&plan, &source, c, &target.skeleton, args.ik.weights()))
                .collect::<Result<Vec<_>, _>>()?;
            if args.report {
                for clip in &clips {
                    let report = posegpu::retarget::quality::measure(
                        &source,
                        target,
                        &plan,
                        clip,
                        &posegpu::retarget::quality::frame_times(clip, 400),
                        args.ik.weights(),
                    )?;
                    println!(
                        "{} [{}] on {}:\n{report}",
                        source_file.display(),
                        clip.name(),
                        args.target.display()
                    );
                }
            }
            (converted, "character retargeting".to_string())
        }
        Method::Ue => {
            let mapping = BoneMapping::new(&source.skeleton, &target.skeleton, rig)?;
            if mapping.matched_count() == 0 {
                return Err(Error::Rig {
                    origin: args.target.display().to_string(),
                    message: format!(
                        "no bone matches a bone of {} by name; pair them with a rig's bone_map \
                         (or use --method character)",
                        source_file.display()
                    ),
                });
            }
            let converted = clips
                .iter()
                .map(|c| {
                    let rest = rig.rest.unwrap_or(RestPose::Nodes);
                    remap_clip(
                        c,
                        &source.skeleton.with_rest_as(rest),
                        &target.skeleton.with_rest_as(rest),
                        &mapping,
                    )
                })
                .collect::<Result<Vec<_>, _>>()?;
            let how = format!(
                "UE remap, {} of {} bones matched",
                mapping.matched_count(),
                target.skeleton.len()
            );
            (converted, how)
        }
    };
    let template = target.nodes.as_deref().map(|nodes| Template {
        path: &args.target,
        nodes,
    });
    write_glb(out, &target.skeleton, &converted, template.as_ref())?;
    println!(
        "{}: {} clip(s) of {} on {} ({how})",
        out.display(),
        converted.len(),
        source_file.display(),
        args.target.display(),
    );
    Ok(())
}
