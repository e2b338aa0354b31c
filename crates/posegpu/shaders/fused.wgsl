// Sampling, the layers that apply bone by bone, and the hierarchy in one pass, for batches that
// need no stage in between (no mesh-space layers, IK or inertialization) on skeletons of at
// most FUSED_BONES bones. A workgroup takes a block of `params.group_instances` instances, as
// many whole skeletons as its FUSED_POSES poses hold:
//   1. each bone's local pose (local_pose.wgsl) into workgroup memory, lanes over consecutive
//      (instance, bone) pairs;
//   2. the hierarchy level by level: the bones d steps below a root composed with their
//      parents once level d - 1 is done, a barrier between levels, each lane's bone, its
//      parent and its bone index read from the skeleton's task table in one load (no division
//      by the level's size or the skeleton's). Each bone is composed with its parent exactly as
//      the CPU twin does, so the results are the separate passes' own;
//   3. the outputs, lane by lane over consecutive 16-byte words (a warp's store fills whole
//      lines), the skinning matrices built into workgroup memory first. With SKIN_AT_COMPOSE
//      the lane that composes a bone writes its skinning matrix there and then instead (the
//      roots' before level 1): two barriers and a pass over the poses fewer, but each lane's
//      three rows land apart from its neighbours'.
// Each sample's key search comes from the resolve pass (resolve.wgsl), made once per frame.
// No local pose makes the round trip through memory that the separate passes' does.
// CPU twin: src/cpu/fused.rs.

@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> frame: array<vec4<u32>>;
@group(0) @binding(7) var<storage, read_write> locals: array<vec4<f32>>;
@group(0) @binding(8) var<storage, read_write> component: array<vec4<f32>>;
// Three rows (Mat3x4) or four columns (mat4x4) per bone: SkinningLayout.
@group(0) @binding(9) var<storage, read_write> skinning: array<vec4<f32>>;

// The batches this pass runs have no deferred layers: local_pose.wgsl's delta writes never run.
var<private> deltas: array<Xform, 1>;

// Which outputs are kept (Outputs), and the skinning layout.
override WRITE_LOCALS: bool = true;
override WRITE_COMPONENT: bool = true;
override SKIN_COLUMNS: bool = false;
// Each skinning matrix written by the lane that composes its bone, from the pose in its
// registers (GpuOptions::skin_at_compose), instead of built in workgroup memory after the
// walk and written in consecutive words.
override SKIN_AT_COMPOSE: bool = true;

const FUSED_BONES: u32 = 320u;
const FUSED_MAX_POSES: u32 = 1024u;
// The poses a workgroup holds (GpuOptions::fused_poses): `params.group_instances` skeletons.
override FUSED_POSES: u32 = FUSED_BONES;
// A task word: the bone's pose index in the block, its parent's, and the bone
// (src/library/tables.rs).
const TASK_POSE_MASK: u32 = 0x7ffu;
const TASK_PARENT_SHIFT: u32 = 11u;
const TASK_BONE_SHIFT: u32 = 22u;

// The occupancy probe (`posegpu bench --occupancy-pad`): this many more words of workgroup
// memory, so fewer workgroups fit an SM. If the pass's time stays flat as it grows, registers,
// not workgroup memory, limit how many are resident.
override OCCUPANCY_PAD_WORDS: u32 = 0u;
var<workgroup> occupancy_pad: array<u32, OCCUPANCY_PAD_WORDS + 1u>;

// The block's poses: local, then component space as the levels are walked, then (step 3)
// the skinning matrices' rows in the same places.
var<workgroup> poses: array<Xform, FUSED_POSES>;

// Entry `k` of the u32 array packed four per word from word `w` of the retarget table.
fn table_u32(w: u32, k: u32) -> u32 {
    return retarget[w + k / 4u][k % 4u];
}

// Bone `bone`'s inverse bind matrix. Row-major rows: lanes of neighbouring bones read
// neighbouring words.
fn inverse_bind(bone: u32) -> Mat3x4 {
    let r = params.inverse_bind_word + bone;
    let bones = params.bone_count;
    return Mat3x4(retarget_f32(r), retarget_f32(r + bones), retarget_f32(r + 2u * bones));
}

// Column `c` of the mat4x4 whose top three rows are `m` (SKIN_COLUMNS).
fn skinning_column(m: Mat3x4, c: u32) -> vec4<f32> {
    return vec4<f32>(m.r0[c], m.r1[c], m.r2[c], select(0.0, 1.0, c == 3u));
}

// The skinning matrix of the bone of `task`, in the block from pose `base`, posed at `pose`
// (component space), written where the batch's pose index puts it.
fn write_skinning(base: u32, task: u32, pose: Xform) {
    let m = skinning_matrix(pose, inverse_bind(task >> TASK_BONE_SHIFT));
    let at = base + (task & TASK_POSE_MASK);
    if (SKIN_COLUMNS) {
        for (var c = 0u; c < 4u; c++) {
            skinning[at * 4u + c] = skinning_column(m, c);
        }
    } else {
        skinning[at * 3u] = m.r0;
        skinning[at * 3u + 1u] = m.r1;
        skinning[at * 3u + 2u] = m.r2;
    }
}

// Word `part` of an Xform (r, t, s).
fn xform_word(x: Xform, part: u32) -> vec4<f32> {
    if (part == 0u) {
        return x.r;
    }
    if (part == 1u) {
        return x.t;
    }
    return x.s;
}

@compute @workgroup_size(64)
fn main(
    @builtin(workgroup_id) wg: vec3<u32>,
    @builtin(num_workgroups) num_wg: vec3<u32>,
    @builtin(local_invocation_index) local_index: u32,
) {
    let bones = params.bone_count;
    let first = (wg.y * num_wg.x + wg.x) * params.group_instances;
    // The same for every lane: a workgroup past the last instance still meets every barrier.
    let count = min(params.group_instances, max(params.instance_count, first) - first);
    let total = count * bones;
    let base = first * bones;
    set_library(params.bone_count, params.root_bone, params.root_up.xyz);
    if (OCCUPANCY_PAD_WORDS > 0u) {
        occupancy_pad[min(local_index, OCCUPANCY_PAD_WORDS)] = count;
    }

    for (var k = local_index; k < total; k += WORKGROUP_SIZE) {
        poses[k] = bone_pose(base + k);
    }
    workgroupBarrier();
    if (WRITE_LOCALS) {
        for (var w = local_index; w < total * 3u; w += WORKGROUP_SIZE) {
            locals[base * 3u + w] = xform_word(poses[w / 3u], w % 3u);
        }
        workgroupBarrier();
    }

    if (SKIN_AT_COMPOSE) {
        // The roots are in component space as sampled; level 1 only reads their poses, so no
        // barrier follows.
        let roots = table_u32(params.level_starts_word, 1u);
        for (var k = local_index; k < count * roots; k += WORKGROUP_SIZE) {
            let task = table_u32(params.tasks_word, k);
            write_skinning(base, task, poses[task & TASK_POSE_MASK]);
        }
    }
    for (var d = 1u; d < params.levels; d++) {
        let lo = table_u32(params.level_starts_word, d);
        let n = table_u32(params.level_starts_word, d + 1u) - lo;
        // The level's tasks for a block of `task_instances`; this block's first `count`
        // instances' come first.
        let tasks = params.task_instances * lo;
        for (var k = local_index; k < count * n; k += WORKGROUP_SIZE) {
            let task = table_u32(params.tasks_word, tasks + k);
            let at = task & TASK_POSE_MASK;
            let pose = compose(poses[at], poses[(task >> TASK_PARENT_SHIFT) & TASK_POSE_MASK]);
            poses[at] = pose;
            if (SKIN_AT_COMPOSE) {
                write_skinning(base, task, pose);
            }
        }
        workgroupBarrier();
    }

    if (WRITE_COMPONENT) {
        for (var w = local_index; w < total * 3u; w += WORKGROUP_SIZE) {
            component[base * 3u + w] = xform_word(poses[w / 3u], w % 3u);
        }
    }
    if (SKIN_AT_COMPOSE) {
        return;
    }
    // Every lane is done reading the poses before they turn into matrices.
    workgroupBarrier();
    // The lane's bone steps by WORKGROUP_SIZE % bones, wrapping: one division per lane, not
    // one per matrix.
    let step = WORKGROUP_SIZE % bones;
    var bone = local_index % bones;
    for (var k = local_index; k < total; k += WORKGROUP_SIZE) {
        let m = skinning_matrix(poses[k], inverse_bind(bone));
        poses[k] = Xform(m.r0, m.r1, m.r2);
        bone += step;
        if (bone >= bones) {
            bone -= bones;
        }
    }
    workgroupBarrier();
    if (SKIN_COLUMNS) {
        for (var w = local_index; w < total * 4u; w += WORKGROUP_SIZE) {
            let m = poses[w / 4u];
            skinning[base * 4u + w] = skinning_column(Mat3x4(m.r, m.t, m.s), w % 4u);
        }
    } else {
        for (var w = local_index; w < total * 3u; w += WORKGROUP_SIZE) {
            skinning[base * 3u + w] = xform_word(poses[w / 3u], w % 3u);
        }
    }
}
