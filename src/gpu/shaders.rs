//! WGSL sources, one file per stage, each prefixed with the shared `common.wgsl`.

/// Types and math shared by every stage.
pub const COMMON: &str = include_str!("../../shaders/common.wgsl");

/// The stages: (name, source without the common prefix).
pub const STAGES: &[(&str, &str)] = &[
    ("sample", include_str!("../../shaders/sample.wgsl")),
    ("layers", include_str!("../../shaders/layers.wgsl")),
    ("hierarchy", include_str!("../../shaders/hierarchy.wgsl")),
];

/// The full source of a stage as compiled: `common.wgsl` followed by the stage file.
pub fn source(stage: &str) -> String {
    let (_, body) = STAGES
        .iter()
        .find(|(name, _)| *name == stage)
        .unwrap_or_else(|| panic!("no shader stage named '{stage}'"));
    format!("{COMMON}\n{body}")
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
