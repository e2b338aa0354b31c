//! The WGSL stages: one file per stage, each compiled with `common.wgsl` and the shared files it
//! names prepended, and the bind group layout each declares, written out here so that a
//! pipeline's layout is explicit (a test checks it against the shader's own declarations).

use crate::frame_plan::Stage;

/// Types and math shared by every stage.
pub(crate) const COMMON: &str = include_str!("../../shaders/common.wgsl");

/// Compressed clips' packed blocks, prepended before `clip.wgsl`.
const PACKED: &str = include_str!("../../shaders/packed.wgsl");

/// Clip sampling, prepended to the stages that sample clips.
const CLIP: &str = include_str!("../../shaders/clip.wgsl");

/// An instance's local pose at one bone, prepended to the stages that build it.
const LOCAL_POSE: &str = include_str!("../../shaders/local_pose.wgsl");

/// Crowd playback state, prepended to the crowd stages.
const PLAYBACK: &str = include_str!("../../shaders/playback.wgsl");

/// What a binding of group 0 holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Binding {
    Uniform,
    Storage { read_only: bool },
}

use Binding::{Storage, Uniform};

const RO: Binding = Storage { read_only: true };
const RW: Binding = Storage { read_only: false };

/// One stage's shader: its name (and file), the shared files it uses, its source, its group-0
/// bindings in binding order, and the shader stages that see them.
pub(crate) struct Shader {
    pub name: &'static str,
    pub shared: &'static [&'static str],
    pub body: &'static str,
    pub bindings: &'static [(u32, Binding)],
    pub visibility: wgpu::ShaderStages,
}

const COMPUTE: wgpu::ShaderStages = wgpu::ShaderStages::COMPUTE;

/// The bindings of a stage that reads the frame and the library's tables: a uniform, the
/// frame, bindings 2, 4, 5 and 6 (`clip.wgsl`'s tables), then two of the stage's own.
const fn tables(seventh: Binding, eighth: Binding) -> [(u32, Binding); 8] {
    [
        (0, Uniform),
        (1, RO),
        (2, RO),
        (4, RO),
        (5, RO),
        (6, RO),
        (7, seventh),
        (8, eighth),
    ]
}

/// Every stage. The pose stages read the library's tables (the clip table, `times`, `values`,
/// `retarget`) at bindings 2, 4, 5 and 6, where `clip.wgsl` declares them.
pub(crate) const STAGES: &[Shader] = &[
    Shader {
        name: "sample",
        shared: &[PACKED, CLIP, LOCAL_POSE],
        body: include_str!("../../shaders/sample.wgsl"),
        // params, frame, clip table, times, values, retarget, locals, deltas
        bindings: &tables(RW, RW),
        visibility: COMPUTE,
    },
    Shader {
        name: "fused",
        shared: &[PACKED, CLIP, LOCAL_POSE],
        body: include_str!("../../shaders/fused.wgsl"),
        // params, frame, clip table, times, values, retarget, locals, component, skinning
        bindings: &[
            (0, Uniform),
            (1, RO),
            (2, RO),
            (4, RO),
            (5, RO),
            (6, RO),
            (7, RW),
            (8, RW),
            (9, RW),
        ],
        visibility: COMPUTE,
    },
    Shader {
        name: "layers",
        shared: &[],
        body: include_str!("../../shaders/layers.wgsl"),
        // params, frame, parents, locals, deltas
        bindings: &[(0, Uniform), (1, RO), (2, RO), (3, RW), (4, RW)],
        visibility: COMPUTE,
    },
    Shader {
        name: "inertialize",
        shared: &[PACKED, CLIP],
        body: include_str!("../../shaders/inertialize.wgsl"),
        // params, frame, clip table, times, values, retarget, locals, inertia
        bindings: &tables(RW, RW),
        visibility: COMPUTE,
    },
    Shader {
        name: "ik",
        shared: &[PACKED, CLIP],
        body: include_str!("../../shaders/ik.wgsl"),
        // params, frame, clip table, times, values, retarget, locals, ik
        bindings: &tables(RW, RO),
        visibility: COMPUTE,
    },
    Shader {
        name: "curves",
        shared: &[PACKED, CLIP],
        body: include_str!("../../shaders/curves.wgsl"),
        // params, frame, clip table, times, values, retarget, curve table, curves
        bindings: &tables(RO, RW),
        visibility: COMPUTE,
    },
    Shader {
        name: "hierarchy",
        shared: &[],
        body: include_str!("../../shaders/hierarchy.wgsl"),
        // params, parents, inverse_bind, locals, component, skinning
        bindings: &[(0, Uniform), (1, RO), (2, RO), (3, RO), (4, RW), (5, RW)],
        visibility: COMPUTE,
    },
    Shader {
        name: "advance",
        shared: &[PLAYBACK],
        body: include_str!("../../shaders/advance.wgsl"),
        // crowd, structure, players, frame, finished, notify table, events
        bindings: &[
            (0, Uniform),
            (1, RO),
            (2, RW),
            (3, RW),
            (4, RW),
            (5, RO),
            (6, RW),
        ],
        visibility: COMPUTE,
    },
    Shader {
        name: "root_motion",
        shared: &[PACKED, CLIP, PLAYBACK],
        body: include_str!("../../shaders/root_motion.wgsl"),
        // crowd, structure, clip table, times, values, retarget, players, motion
        bindings: &tables(RO, RW),
        visibility: COMPUTE,
    },
    Shader {
        name: "resolve",
        shared: &[PACKED, CLIP],
        body: include_str!("../../shaders/resolve.wgsl"),
        // params, frame (each sample's search written after the entries), clip table, times,
        // values, retarget
        bindings: &[(0, Uniform), (1, RW), (2, RO), (4, RO), (5, RO), (6, RO)],
        visibility: COMPUTE,
    },
    #[cfg(feature = "render")]
    Shader {
        name: "skin",
        shared: &[],
        body: include_str!("../../shaders/skin.wgsl"),
        // view, chunk, skinning, placements
        bindings: &[(0, Uniform), (1, Uniform), (2, RO), (3, RO)],
        visibility: wgpu::ShaderStages::VERTEX_FRAGMENT,
    },
];

/// The shader of `stage`: the registry of compute stages, one arm per [`Stage`] (a test checks
/// that each arm names its stage's file).
pub(crate) fn shader(stage: Stage) -> &'static Shader {
    &STAGES[match stage {
        Stage::Sample => 0,
        Stage::Fused => 1,
        Stage::Layers => 2,
        Stage::Inertialize => 3,
        Stage::Ik => 4,
        Stage::Curves => 5,
        Stage::Hierarchy => 6,
        Stage::Advance => 7,
        Stage::RootMotion => 8,
        Stage::Resolve => 9,
    }]
}

/// The draw stage's shader (`skin.wgsl`), the last of [`STAGES`].
#[cfg(feature = "render")]
pub(crate) fn skin() -> &'static Shader {
    &STAGES[STAGES.len() - 1]
}

/// The full source of a stage as compiled: `common.wgsl`, the shared files it uses, then the
/// stage file.
pub(crate) fn source(stage: &Shader) -> String {
    let mut src = COMMON.to_string();
    for part in stage.shared.iter().chain([&stage.body]) {
        src.push('\n');
        src.push_str(part);
    }
    src
}

/// The stage's group-0 layout, exactly as [`Shader::bindings`] declares it.
pub(crate) fn bind_group_layout(device: &wgpu::Device, stage: &Shader) -> wgpu::BindGroupLayout {
    let entries: Vec<_> = stage
        .bindings
        .iter()
        .map(|&(binding, kind)| wgpu::BindGroupLayoutEntry {
            binding,
            visibility: stage.visibility,
            ty: wgpu::BindingType::Buffer {
                ty: match kind {
                    Binding::Uniform => wgpu::BufferBindingType::Uniform,
                    Binding::Storage { read_only } => {
                        wgpu::BufferBindingType::Storage { read_only }
                    }
                },
                has_dynamic_offset: false,
                min_binding_size: None,
            },
            count: None,
        })
        .collect();
    device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
        label: Some(stage.name),
        entries: &entries,
    })
}

/// The stage's pipeline layout: its one bind group.
pub(crate) fn pipeline_layout(
    device: &wgpu::Device,
    group: &wgpu::BindGroupLayout,
) -> wgpu::PipelineLayout {
    device.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
        label: None,
        bind_group_layouts: &[Some(group)],
        immediate_size: 0,
    })
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// Parses and validates a stage with naga (no GPU needed).
    pub(crate) fn module(stage: &Shader) -> naga::Module {
        let src = source(stage);
        let module = naga::front::wgsl::parse_str(&src)
            .unwrap_or_else(|e| panic!("{}.wgsl:\n{}", stage.name, e.emit_to_string(&src)));
        naga::valid::Validator::new(
            naga::valid::ValidationFlags::all(),
            naga::valid::Capabilities::empty(),
        )
        .validate(&module)
        .unwrap_or_else(|e| panic!("{}.wgsl:\n{}", stage.name, e.emit_to_string(&src)));
        module
    }

    #[test]
    fn every_stage_validates_with_naga() {
        for stage in STAGES {
            let module = module(stage);
            // Compute stages run `main`; the draw stage has a vertex and a fragment entry point.
            let expected: &[&str] = if stage.name == "skin" {
                &["vs_main", "fs_main"]
            } else {
                &["main"]
            };
            for name in expected {
                assert!(
                    module.entry_points.iter().any(|e| e.name == *name),
                    "{}.wgsl has no `{name}` entry point",
                    stage.name
                );
            }
        }
    }

    #[test]
    fn the_registry_gives_each_stage_its_own_shader() {
        for stage in Stage::ALL {
            assert_eq!(shader(stage).name, stage.name());
        }
        #[cfg(feature = "render")]
        assert_eq!(skin().name, "skin");
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
                ["common", "packed", "clip", "local_pose", "playback"].contains(&stage)
                    || STAGES.iter().any(|s| s.name == stage)
                    || (stage == "skin" && cfg!(not(feature = "render"))),
                "shaders/{name} is neither shared nor listed in STAGES"
            );
        }
    }

    #[test]
    fn every_stage_and_shared_file_has_a_cpu_twin_of_the_same_name() {
        let src = concat!(env!("CARGO_MANIFEST_DIR"), "/src");
        let shared = ["packed", "clip", "local_pose", "playback"];
        for name in STAGES.iter().map(|s| s.name).chain(shared) {
            // playback.wgsl reads the crowd's state; its twin lives beside that state.
            let twin = match name {
                "playback" => std::path::Path::new(src).join("playback/state.rs"),
                _ => std::path::Path::new(src).join(format!("cpu/{name}.rs")),
            };
            assert!(
                twin.is_file(),
                "{name}.wgsl has no CPU twin {}",
                twin.display()
            );
        }
    }

    #[test]
    fn a_broken_shader_is_reported_not_accepted() {
        let src = format!("{COMMON}\nfn broken() -> f32 {{ return undefined_name; }}");
        assert!(naga::front::wgsl::parse_str(&src).is_err());
    }

    /// The group-0 bindings a module declares, as [`Binding`]s, in binding order.
    fn declared_bindings(module: &naga::Module) -> Vec<(u32, Binding)> {
        let mut out: Vec<(u32, Binding)> = module
            .global_variables
            .iter()
            .filter_map(|(_, g)| {
                let b = g.binding.as_ref()?;
                assert_eq!(b.group, 0, "{:?} is outside group 0", g.name);
                let kind = match g.space {
                    naga::AddressSpace::Uniform => Binding::Uniform,
                    naga::AddressSpace::Storage { access } => Binding::Storage {
                        read_only: !access.contains(naga::StorageAccess::STORE),
                    },
                    other => panic!("{:?} is bound in address space {other:?}", g.name),
                };
                Some((b.binding, kind))
            })
            .collect();
        out.sort_by_key(|(b, _)| *b);
        out
    }

    #[test]
    fn every_stage_declares_the_bind_group_layout_rust_builds() {
        for stage in STAGES {
            assert_eq!(
                declared_bindings(&module(stage)),
                stage.bindings,
                "{}.wgsl's group 0 differs from STAGES",
                stage.name
            );
            let storage = stage
                .bindings
                .iter()
                .filter(|(_, b)| matches!(b, Binding::Storage { .. }))
                .count();
            assert!(
                storage <= 8,
                "{} binds {storage} storage buffers (the default limit is 8)",
                stage.name
            );
        }
    }

    /// A browser's device has WebGPU's default limits unless the page asks for more; every
    /// stage, every path compiled in, fits them: storage and uniform buffers per stage,
    /// bindings, workgroup size and workgroup memory.
    #[test]
    fn every_stage_fits_webgpu_default_limits() {
        use crate::gpu::shader_stats::ShaderStats;
        use crate::gpu::specialize::{specialize, Paths};
        let limits = wgpu::Limits::default();
        for stage in STAGES.iter().filter(|s| s.name != "skin") {
            let count = |uniform: bool| {
                (stage.bindings.iter())
                    .filter(|(_, b)| matches!(b, Binding::Uniform) == uniform)
                    .count() as u32
            };
            let name = stage.name;
            assert!(
                count(false) <= limits.max_storage_buffers_per_shader_stage,
                "{name}"
            );
            assert!(
                count(true) <= limits.max_uniform_buffers_per_shader_stage,
                "{name}"
            );
            let last = stage.bindings.iter().map(|(b, _)| *b).max().unwrap_or(0);
            assert!(last < limits.max_bindings_per_bind_group, "{name}");
            let module = module(stage);
            let entry = module
                .entry_points
                .iter()
                .find(|e| e.name == "main")
                .unwrap();
            let [x, y, z] = entry.workgroup_size;
            assert!(
                x * y * z <= limits.max_compute_invocations_per_workgroup,
                "{name}"
            );
            assert!(x <= limits.max_compute_workgroup_size_x, "{name}");
            let specialized = specialize(stage, &Paths::ALL.constants()).unwrap();
            let (stats, _) = ShaderStats::of(&specialized).unwrap();
            let memory = u64::from(limits.max_compute_workgroup_storage_size);
            assert!(stats.workgroup_bytes <= memory, "{name}: {stats:?}");
        }
    }
}
