//! The contract with the shaders: every struct and scalar constant of `layout` matches its WGSL
//! twin.

use std::collections::HashSet;

use std::mem::offset_of;

use super::*;
use crate::gpu::shaders::{tests::module, STAGES};

/// A Rust type's layout as its WGSL twin must have it: the WGSL struct name, the size, and
/// each WGSL member's name with the byte offset of the Rust field it mirrors.
#[derive(Clone, Copy, Debug)]
struct StructLayout {
    pub wgsl: &'static str,
    pub size: usize,
    pub members: &'static [(&'static str, usize)],
}

/// `layout!(Type { wgsl_member: rust_field, ... })`.
macro_rules! layout {
    ($t:ident { $($wgsl:ident: $field:ident),* $(,)? }) => {
        StructLayout {
            wgsl: stringify!($t),
            size: size_of::<$t>(),
            members: &[$((stringify!($wgsl), offset_of!($t, $field))),*],
        }
    };
}

/// Every struct the shaders share with Rust.
const STRUCTS: &[StructLayout] = &[
    layout!(KeySearch {
        time_offset: time_offset,
        lo: lo,
        hi: hi,
        alpha: alpha
    }),
    layout!(Xform {
        r: rotation,
        t: translation,
        s: scale
    }),
    StructLayout {
        wgsl: "Mat3x4",
        size: size_of::<Mat3x4>(),
        members: &[("r0", 0), ("r1", 16), ("r2", 32)],
    },
    layout!(Params {
        bone_count: bone_count,
        instance_count: instance_count,
        root_bone: root_bone,
        curve_count: curve_count,
        root_up: root_up,
        root_parent: root_parent,
        levels: levels,
        group_instances: group_instances,
        parents_word: parents_word,
        inverse_bind_word: inverse_bind_word,
        tasks_word: tasks_word,
        level_starts_word: level_starts_word,
        resolved_word: resolved_word,
        task_instances: task_instances
    }),
    layout!(Head {
        first: first,
        layers: layers,
        slot: slot,
        slots: slots
    }),
    layout!(LayerEntry {
        kind_and_samples: kind_and_samples,
        weight: weight,
        extra: extra,
        mask: mask
    }),
    layout!(SampleEntry {
        clip_and_flags: clip_and_flags,
        time: time,
        weight: weight,
        root_lock: root_lock
    }),
    layout!(ClipData {
        duration: duration,
        channel_base: channel_base,
        retarget_base: retarget_base,
        flags: flags
    }),
    layout!(ChannelData {
        time_offset: time_offset,
        value_offset: value_offset,
        count: count,
        flags: flags
    }),
    layout!(BoneRetarget {
        source: source,
        mode: mode,
        flags: flags,
        length_ratio: length_ratio,
        source_ref: source_ref,
        target_ref: target_ref,
        relative: relative,
        orient_rotation: orient_rotation,
        orient_source: orient_source,
        orient_target: orient_target,
    }),
    layout!(BonePlan {
        pre: pre,
        post: post,
        outer_pre: outer_pre,
        outer_post: outer_post,
        twist_axis: twist_axis,
        fraction: fraction,
        t_rot: t_rot,
        t_inv_scale: t_inv_scale,
        t_k: t_k,
        t_w: t_w,
        path_start: path_start,
        t_const: t_const,
        path_len: path_len,
        t_sub: t_sub,
        chord_len: chord_len,
        swing: swing,
        parent_chord_len: parent_chord_len,
        parent_swing: parent_swing,
        modes: modes,
        scale: scale,
        t_cap: t_cap,
        t_wpre: t_wpre,
        t_wpost: t_wpost,
        t_par_inv: t_par_inv,
        t_yaw_axis: t_yaw_axis,
        source_rest: source_rest,
    }),
    layout!(IkHeader {
        chain_count: chain_count,
        pelvis: pelvis,
        pelvis_path_start: pelvis_path_start,
        pelvis_path_len: pelvis_path_len,
        max_drop: max_drop,
        attached: attached,
        _pad1: _pad1,
        _pad2: _pad2,
    }),
    layout!(IkChain {
        root: root,
        mid: mid,
        end: end,
        goal_parent: goal_parent,
        bend: bend,
        flags: flags,
        path_start: path_start,
        path_len: path_len,
        goal_path_start: goal_path_start,
        goal_path_len: goal_path_len,
        up: up,
        rest_height: rest_height,
        contact_lo: contact_lo,
        contact_hi: contact_hi,
        toe: toe,
        slack: slack,
        tip: tip,
        _pad2: _pad2,
    }),
    layout!(CrowdParams {
        dt: dt,
        group_count: group_count,
        tracks: tracks,
        segments: segments,
        root_up: root_up,
        root_bone: root_bone,
        root_parent: root_parent,
        bone_count: bone_count,
        pad0: pad0,
        pad1: pad1,
        pad2: pad2
    }),
    layout!(PlayerData {
        track: track,
        flags: flags,
        entry: entry,
        _pad0: _pad0,
        position: position,
        start_position: start_position,
        weight: weight,
        interrupted: interrupted,
        rate: rate,
        basis: basis,
        scale: scale,
        bias: bias,
        clamp_min: clamp_min,
        clamp_max: clamp_max,
        step_start: step_start,
        step_travel: step_travel,
    }),
    layout!(GroupData {
        first_player: first_player,
        player_count: player_count,
        flags: flags,
        instance: instance
    }),
    layout!(TrackData {
        first_segment: first_segment,
        segment_count: segment_count,
        length: length,
        flags: flags
    }),
    layout!(SegmentData {
        clip: clip,
        track_start: track_start,
        clip_start: clip_start,
        length: length
    }),
    layout!(RootMotionData {
        delta: delta,
        placement: placement
    }),
    #[cfg(feature = "render")]
    layout!(ViewUniform {
        view_proj: view_proj,
        root: root,
        light: light
    }),
    #[cfg(feature = "render")]
    layout!(ChunkUniform {
        bones: bones,
        first: first,
        placement_first: placement_first,
        placement_stride: placement_stride,
        matrix_words: matrix_words
    }),
];

/// A scalar constant's value as Rust has it.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Constant {
    U32(u32),
    F32(f32),
}

/// Every scalar constant the shaders share with Rust, by its WGSL name.
const CONSTANTS: &[(&str, Constant)] = {
    use crate::layout::{NO_ROTATION, ZERO_WEIGHT};
    use crate::math::{ORIENT_PRECISION, TINY};
    use crate::TranslationMode;
    use Constant::{F32, U32};
    &[
        ("WORKGROUP_SIZE", U32(WORKGROUP_SIZE)),
        ("BONE_BLOCK", U32(BONE_BLOCK)),
        ("FUSED_BONES", U32(FUSED_BONES)),
        ("FUSED_MAX_POSES", U32(FUSED_MAX_POSES)),
        ("TASK_POSE_MASK", U32(TASK_POSE_MASK)),
        ("TASK_PARENT_SHIFT", U32(TASK_PARENT_SHIFT)),
        ("TASK_BONE_SHIFT", U32(TASK_BONE_SHIFT)),
        ("NO_TIMES", U32(NO_TIMES)),
        ("LAYER_KIND_MASK", U32(LAYER_KIND_MASK)),
        ("LAYER_SAMPLES_SHIFT", U32(LAYER_SAMPLES_SHIFT)),
        ("LAYER_BASE", U32(LAYER_BASE)),
        ("LAYER_LOCAL", U32(LAYER_LOCAL)),
        ("LAYER_MESH", U32(LAYER_MESH)),
        ("LAYER_DYNAMIC_LOCAL", U32(LAYER_DYNAMIC_LOCAL)),
        ("LAYER_DYNAMIC_MESH", U32(LAYER_DYNAMIC_MESH)),
        ("LAYER_IK", U32(LAYER_IK)),
        ("LAYER_BLEND_LOCAL", U32(LAYER_BLEND_LOCAL)),
        ("LAYER_BLEND_MESH", U32(LAYER_BLEND_MESH)),
        ("LAYER_INERTIALIZE", U32(LAYER_INERTIALIZE)),
        ("PLAN_NO_GOAL", U32(PLAN_NO_GOAL)),
        ("IK_HAND", U32(IK_HAND)),
        ("IK_CARRIED", U32(IK_CARRIED)),
        ("IK_TORSO", U32(IK_TORSO)),
        ("IK_ATTACHED", U32(IK_ATTACHED)),
        ("IK_NO_BONE", U32(IK_NO_BONE)),
        ("IK_CHAIN_WORDS", U32(IK_CHAIN_WORDS)),
        ("IK_HEADER_WORDS", U32(IK_HEADER_WORDS)),
        ("IK_MAX_CHAINS", U32(IK_MAX_CHAINS)),
        ("INSTANCE_LOOP", U32(INSTANCE_LOOP)),
        ("ROOT_LOCK_MASK", U32(ROOT_LOCK_MASK)),
        ("ROOT_LOCK_REF_POSE", U32(ROOT_LOCK_REF_POSE)),
        ("ROOT_LOCK_FIRST_FRAME", U32(ROOT_LOCK_FIRST_FRAME)),
        ("ROOT_LOCK_ZERO", U32(ROOT_LOCK_ZERO)),
        ("ROOT_TRANSLATION_SHIFT", U32(ROOT_TRANSLATION_SHIFT)),
        ("ROOT_ROTATION_SHIFT", U32(ROOT_ROTATION_SHIFT)),
        ("ROOT_AXES_ALL", U32(ROOT_AXES_ALL)),
        ("ROOT_AXES_PLANE", U32(ROOT_AXES_PLANE)),
        ("ROOT_AXES_NONE", U32(ROOT_AXES_NONE)),
        ("CLIP_ADDITIVE", U32(CLIP_ADDITIVE)),
        ("CHANNEL_STEP", U32(CHANNEL_STEP)),
        ("CHANNEL_STRIDE_SHIFT", U32(CHANNEL_STRIDE_SHIFT)),
        ("KEYS_PRESENT", U32(KEYS_PRESENT)),
        ("KEYS_MOVING", U32(KEYS_MOVING)),
        ("KEYS_STEP", U32(KEYS_STEP)),
        ("KEYS_OWN_TIMES", U32(KEYS_OWN_TIMES)),
        ("KEYS_STRIDE_SHIFT", U32(KEYS_STRIDE_SHIFT)),
        ("CLIP_SOURCES_SHIFT", U32(CLIP_SOURCES_SHIFT)),
        ("RETARGET_ORIENT", U32(RETARGET_ORIENT)),
        ("CLIP_PLAN", U32(CLIP_PLAN)),
        ("CLIP_GOALS", U32(CLIP_GOALS)),
        ("CLIP_COMPRESSED", U32(CLIP_COMPRESSED)),
        ("PACKED_HEADER_WORDS", U32(PACKED_HEADER_WORDS)),
        ("PACKED_UNIFORM", U32(PACKED_UNIFORM)),
        ("PACKED_SEGMENTED", U32(PACKED_SEGMENTED)),
        ("PACKED_QUANTIZED_SHIFT", U32(PACKED_QUANTIZED_SHIFT)),
        ("PACKED_SEGMENT_KEYS", U32(PACKED_SEGMENT_KEYS)),
        ("RATE_SHIFT", U32(RATE_SHIFT)),
        ("RATE_MASK", U32(RATE_MASK)),
        ("RATE_CONSTANT", U32(RATE_CONSTANT)),
        ("RATE_RAW", U32(RATE_RAW)),
        ("RATE_STEP_SHIFT", U32(RATE_STEP_SHIFT)),
        ("BONE_PRESENT", U32(BONE_PRESENT)),
        ("PACKED_DESCRIPTOR_WORDS", U32(PACKED_DESCRIPTOR_WORDS)),
        ("PACKED_INDEX_SHIFT", U32(PACKED_INDEX_SHIFT)),
        ("RETARGET_WORDS", U32(RETARGET_WORDS)),
        ("PLAN_WORDS", U32(PLAN_WORDS)),
        ("PLAN_ROTATION", U32(PLAN_ROTATION)),
        ("PLAN_REFERENCE", U32(PLAN_REFERENCE)),
        ("PLAN_MAPPED", U32(PLAN_MAPPED)),
        ("PLAN_CHAIN", U32(PLAN_CHAIN)),
        ("PLAN_SEGMENT_END", U32(PLAN_SEGMENT_END)),
        ("PLAN_DRIVEN", U32(PLAN_DRIVEN)),
        ("PATH_INVERSE", U32(PATH_INVERSE)),
        ("PATH_BONE", U32(PATH_BONE)),
        ("PATH_MIRROR_SHIFT", U32(PATH_MIRROR_SHIFT)),
        ("PATH_MIRRORED", U32(PATH_MIRRORED)),
        ("MIRROR_PATTERN_BITS", U32(MIRROR_PATTERN_BITS)),
        ("MIRROR_PATTERN", U32(MIRROR_PATTERN)),
        ("PLAN_MIRROR_SHIFT", U32(PLAN_MIRROR_SHIFT)),
        ("MODE_SKELETON", U32(TranslationMode::Skeleton as u32)),
        (
            "MODE_ANIMATION_SCALED",
            U32(TranslationMode::AnimationScaled as u32),
        ),
        (
            "MODE_ANIMATION_RELATIVE",
            U32(TranslationMode::AnimationRelative as u32),
        ),
        (
            "MODE_ORIENT_AND_SCALE",
            U32(TranslationMode::OrientAndScale as u32),
        ),
        ("PLAYER_LOOP", U32(PLAYER_LOOP)),
        ("GROUP_SYNC", U32(GROUP_SYNC)),
        ("GROUP_ROOT_MOTION", U32(GROUP_ROOT_MOTION)),
        ("GROUP_MONTAGES_ONLY", U32(GROUP_MONTAGES_ONLY)),
        ("GROUP_IGNORE_MOTION", U32(GROUP_IGNORE_MOTION)),
        ("GROUP_TRANSITIONS", U32(GROUP_TRANSITIONS)),
        ("GROUP_LOCK_SHIFT", U32(GROUP_LOCK_SHIFT)),
        ("TRACK_MONTAGE", U32(TRACK_MONTAGE)),
        ("EVENT_NOTIFY", U32(EVENT_NOTIFY)),
        ("EVENT_LOOPED", U32(EVENT_LOOPED)),
        ("EVENT_SEGMENT", U32(EVENT_SEGMENT)),
        ("MAX_EVENT_LAPS", U32(MAX_EVENT_LAPS)),
        ("ZERO_WEIGHT", F32(ZERO_WEIGHT)),
        ("NO_OFFSET", F32(crate::layout::NO_OFFSET)),
        ("NO_ROTATION", F32(NO_ROTATION)),
        ("TINY", F32(TINY)),
        ("BEND_BIAS", F32(BEND_BIAS)),
        ("MAX_REACH", F32(MAX_REACH)),
        ("ORIENT_PRECISION", F32(ORIENT_PRECISION)),
    ]
};

/// Structs the shaders keep to themselves (locals of one stage, never in a buffer).
const SHADER_PRIVATE: &[&str] = &[
    // Read word by word from a packed block (layout/packed.rs reads the same words).
    "PackedHeader",
    "Located",
    "Blend",
    "KeyPair",
    "PathFold",
    "ChainPose",
    "TwoBone",
    "Turn",
    "Goal",
    "Step",
    "Crossing",
    "MeshApplied",
    "VertexIn",
    "VertexOut",
];

/// Where the structs and scalar constants of `module` (the stage `stage`) differ from
/// their Rust twins; the names found go to `seen`.
fn contract_errors(
    module: &naga::Module,
    stage: &str,
    seen: &mut HashSet<&'static str>,
) -> Vec<String> {
    let mut layouter = naga::proc::Layouter::default();
    layouter
        .update(module.to_ctx())
        .expect("naga lays the types out");
    let mut errors = Vec::new();
    for (handle, ty) in module.types.iter() {
        let (Some(name), naga::TypeInner::Struct { members, .. }) = (&ty.name, &ty.inner) else {
            continue;
        };
        let Some(rust) = STRUCTS.iter().find(|s| s.wgsl == name) else {
            if !SHADER_PRIVATE.contains(&name.as_str()) {
                errors.push(format!(
                    "{stage}.wgsl: struct {name} has no Rust twin in layout::STRUCTS \
                     (nor is it listed as shader-private)"
                ));
            }
            continue;
        };
        seen.insert(rust.wgsl);
        let size = layouter[handle].size as usize;
        if size != rust.size {
            errors.push(format!(
                "{stage}.wgsl: struct {name} is {size} bytes, its Rust twin {} bytes",
                rust.size
            ));
        }
        for m in members {
            let field = m.name.as_deref().unwrap_or("(unnamed)");
            match rust.members.iter().find(|(n, _)| *n == field) {
                None => errors.push(format!(
                    "{stage}.wgsl: {name}.{field} has no Rust field in layout::STRUCTS"
                )),
                Some(&(_, offset)) if offset != m.offset as usize => errors.push(format!(
                    "{stage}.wgsl: {name}.{field} is at byte {}, its Rust field at byte \
                     {offset}",
                    m.offset
                )),
                Some(_) => {}
            }
        }
        for (field, _) in rust.members {
            if !members.iter().any(|m| m.name.as_deref() == Some(field)) {
                errors.push(format!(
                    "{stage}.wgsl: {name}.{field} is in layout::STRUCTS but not in the shader"
                ));
            }
        }
    }
    for (_, c) in module.constants.iter() {
        let Some(name) = &c.name else { continue };
        let value = match module.global_expressions[c.init] {
            naga::Expression::Literal(naga::Literal::U32(v)) => Constant::U32(v),
            naga::Expression::Literal(naga::Literal::F32(v)) => Constant::F32(v),
            naga::Expression::Literal(other) => {
                errors.push(format!(
                    "{stage}.wgsl: const {name} = {other:?}: shared constants are u32 or f32"
                ));
                continue;
            }
            _ => continue, // composites (IDENTITY, BLEND_EMPTY) are shader-only values
        };
        match CONSTANTS.iter().find(|(n, _)| n == name) {
            None => errors.push(format!(
                "{stage}.wgsl: const {name} has no Rust twin in layout::CONSTANTS"
            )),
            Some((n, rust)) if *rust != value => errors.push(format!(
                "{stage}.wgsl: const {name} is {value:?}, its Rust twin {rust:?}"
            )),
            Some((n, _)) => {
                seen.insert(n);
            }
        }
    }
    errors
}

#[test]
fn every_shared_struct_and_constant_matches_its_rust_twin() {
    let mut seen = HashSet::new();
    let errors: Vec<String> = STAGES
        .iter()
        .flat_map(|s| contract_errors(&module(s), s.name, &mut seen))
        .collect();
    assert!(errors.is_empty(), "{}", errors.join("\n"));
    for name in STRUCTS
        .iter()
        .map(|s| s.wgsl)
        .chain(CONSTANTS.iter().map(|c| c.0))
    {
        assert!(seen.contains(name), "{name} is in layout/ but in no shader");
    }
}

#[test]
fn a_deliberate_mismatch_names_the_struct_and_the_field() {
    let src = "struct Xform { r: vec4<f32>, s: vec4<f32>, t: vec4<f32> }\n\
               struct Head { first: u32, layers: u32, slot: u32 }\n\
               const ZERO_WEIGHT: f32 = 1e-4;\n\
               const LAYER_BOGUS: u32 = 9u;\n\
               @group(0) @binding(0) var<storage, read> a: array<Xform>;\n\
               @group(0) @binding(1) var<storage, read> b: array<Head>;\n\
               @compute @workgroup_size(1) fn main() { _ = a[0]; _ = b[0]; }";
    let module = naga::front::wgsl::parse_str(src).unwrap();
    let errors = contract_errors(&module, "test", &mut HashSet::new()).join("\n");
    for expected in [
        "Xform.s is at byte 16, its Rust field at byte 32",
        "Xform.t is at byte 32, its Rust field at byte 16",
        "struct Head is 12 bytes, its Rust twin 16 bytes",
        "Head.slots is in layout::STRUCTS but not in the shader",
        "const ZERO_WEIGHT is F32(0.0001), its Rust twin F32(1e-5)",
        "const LAYER_BOGUS has no Rust twin",
    ] {
        assert!(
            errors.contains(expected),
            "missing '{expected}' in:\n{errors}"
        );
    }
}

#[test]
fn layouts_are_the_sizes_the_buffers_assume() {
    assert_eq!(size_of::<Xform>(), 48);
    assert_eq!(size_of::<Mat3x4>(), 48);
    assert_eq!(size_of::<BoneRetarget>(), 208);
    assert_eq!(size_of::<BonePlan>(), 272);
    assert_eq!(size_of::<PlayerData>(), 64);
    assert_eq!(size_of::<RootMotionData>(), 96);
    for entry in [
        size_of::<Head>(),
        size_of::<LayerEntry>(),
        size_of::<SampleEntry>(),
        size_of::<GroupData>(),
        size_of::<TrackData>(),
        size_of::<SegmentData>(),
    ] {
        assert_eq!(
            entry,
            size_of::<Entry>(),
            "16-byte words of a shared buffer"
        );
    }
}
