//! WGSL sources, one file per stage, each prefixed with the shared `common.wgsl`.

/// Types and math shared by every stage.
pub const COMMON: &str = include_str!("../../shaders/common.wgsl");

/// Clip sampling, prepended to the stages that sample clips.
pub const CLIP: &str = include_str!("../../shaders/clip.wgsl");

/// Crowd playback state, prepended to the crowd stages.
pub const PLAYBACK: &str = include_str!("../../shaders/playback.wgsl");

/// The stages: (name, shared files prepended after `common.wgsl`, the stage's own file).
pub const STAGES: &[(&str, &[&str], &str)] = &[
    ("sample", &[CLIP], include_str!("../../shaders/sample.wgsl")),
    ("layers", &[], include_str!("../../shaders/layers.wgsl")),
    (
        "hierarchy",
        &[],
        include_str!("../../shaders/hierarchy.wgsl"),
    ),
    (
        "advance",
        &[PLAYBACK],
        include_str!("../../shaders/advance.wgsl"),
    ),
    (
        "root_motion",
        &[CLIP, PLAYBACK],
        include_str!("../../shaders/root_motion.wgsl"),
    ),
    ("skin", &[], include_str!("../../shaders/skin.wgsl")),
    ("copy", &[], include_str!("../../shaders/copy.wgsl")),
];

/// The full source of a stage as compiled: `common.wgsl`, the shared files it uses, then the
/// stage file.
pub fn source(stage: &str) -> String {
    let (_, shared, body) = STAGES
        .iter()
        .find(|(name, _, _)| *name == stage)
        .unwrap_or_else(|| panic!("no shader stage named '{stage}'"));
    let mut src = COMMON.to_string();
    for part in shared.iter().chain([body]) {
        src.push('\n');
        src.push_str(part);
    }
    src
}

/// Parses and validates a stage with naga (no GPU needed).
pub fn validate(stage: &str) -> Result<naga::Module, String> {
    let src = source(stage);
    let module = naga::front::wgsl::parse_str(&src).map_err(|e| e.emit_to_string(&src))?;
    naga::valid::Validator::new(
        naga::valid::ValidationFlags::all(),
        naga::valid::Capabilities::empty(),
    )
    .validate(&module)
    .map_err(|e| e.emit_to_string(&src))?;
    Ok(module)
}
