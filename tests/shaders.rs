//! Every WGSL stage parses and validates with naga, without a GPU.

use posegpu::gpu::shaders;

#[test]
fn every_stage_validates_with_naga() {
    for (stage, _, _) in shaders::STAGES {
        let module = shaders::validate(stage).unwrap_or_else(|e| panic!("{stage}.wgsl:\n{e}"));
        // Compute stages run `main`; the draw stage has a vertex and a fragment entry point.
        let expected: &[&str] = if *stage == "skin" {
            &["vs_main", "fs_main"]
        } else {
            &["main"]
        };
        for name in expected {
            assert!(
                module.entry_points.iter().any(|e| e.name == *name),
                "{stage}.wgsl has no `{name}` entry point"
            );
        }
    }
}

#[test]
fn every_shader_file_is_a_known_stage() {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/shaders");
    for entry in std::fs::read_dir(dir).unwrap() {
        let name = entry.unwrap().file_name().into_string().unwrap();
        let stage = name
            .strip_suffix(".wgsl")
            .expect("only .wgsl files in shaders/");
        assert!(
            ["common", "clip", "playback"].contains(&stage)
                || shaders::STAGES.iter().any(|(s, _, _)| *s == stage),
            "shaders/{name} is neither shared nor listed in posegpu::gpu::shaders::STAGES"
        );
    }
}

#[test]
fn a_broken_shader_is_reported_not_accepted() {
    let src = format!(
        "{}\nfn broken() -> f32 {{ return undefined_name; }}",
        shaders::COMMON
    );
    assert!(naga::front::wgsl::parse_str(&src).is_err());
}
