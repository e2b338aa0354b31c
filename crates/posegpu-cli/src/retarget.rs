//! `posegpu retarget`: clips of one skeleton converted offline to another (UE's
//! RemapTracksToNewSkeleton), written as a .glb that keeps the target's meshes and skins.

use std::path::PathBuf;
use std::process::ExitCode;

use posegpu::export::{write_glb, Template};
use posegpu::retarget::{remap_clip, BoneMapping};
use posegpu::{Clip, Error, Rig};

#[derive(clap::Args)]
pub struct RetargetArgs {
    /// The file whose clips are converted (.glb, .gltf or .bvh).
    source: PathBuf,
    /// The clip to convert: a name or an index.
    #[arg(long, required_unless_present = "all", conflicts_with = "all")]
    animation: Option<String>,
    /// Convert every clip of SOURCE.
    #[arg(long)]
    all: bool,
    /// The skeleton to convert to (.glb, .gltf or .bvh).
    #[arg(long)]
    target: PathBuf,
    /// The .glb to write: TARGET's skeleton (and, for a glTF target, its meshes, skins and
    /// materials) with the converted clips.
    #[arg(long)]
    out: PathBuf,
    /// A rig JSON file whose `bone_map` and `strip_prefixes` pair the bones (its modes do not
    /// apply offline). Default: names only.
    #[arg(long)]
    rig: Option<PathBuf>,
}

pub fn run(args: &RetargetArgs) -> Result<ExitCode, Error> {
    let rig = match &args.rig {
        Some(path) => Rig::load(path)?,
        None => Rig::default(),
    };
    let source = posegpu::import::load(&args.source)?;
    let target = posegpu::import::load(&args.target)?;
    let mapping = BoneMapping::new(&source.skeleton, &target.skeleton, &rig)?;
    if mapping.matched_count() == 0 {
        return Err(Error::Rig {
            origin: args.target.display().to_string(),
            message: format!(
                "no bone matches a bone of {} by name; pair them with a rig's bone_map",
                args.source.display()
            ),
        });
    }
    let clips: Vec<&Clip> = match &args.animation {
        Some(name) => vec![&source.clips[Clip::find(&source.clips, name)?]],
        None => source.clips.iter().collect(),
    };
    let converted = clips
        .iter()
        .map(|c| remap_clip(c, &source.skeleton, &target.skeleton, &mapping))
        .collect::<Result<Vec<_>, _>>()?;
    let template = target.nodes.as_deref().map(|nodes| Template {
        path: &args.target,
        nodes,
    });
    write_glb(&args.out, &target.skeleton, &converted, template.as_ref())?;
    println!(
        "{}: {} clip(s) of {} on {} ({} of {} bones matched)",
        args.out.display(),
        converted.len(),
        args.source.display(),
        args.target.display(),
        mapping.matched_count(),
        target.skeleton.len()
    );
    Ok(ExitCode::SUCCESS)
}
