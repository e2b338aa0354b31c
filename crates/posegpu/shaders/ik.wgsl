// The IK pass (its place in the frame: frame_plan.rs), one invocation per instance: IK after
// retargeting. Each two-bone chain of the IK table, in order, turns its root and middle bones so
// that its end reaches the goal, weighted by the instance's IK layer (feet, hands). A chain's goal
// is the blend of its base samples' goals: a character source's clip gives its plan's goal record
// (record bone_count + chain, run by apply_plan), a clip baked from one (CLIP_GOALS) the keys of
// its track bone_count + chain (an in-place sample's goal relative to its root-motion bone, carried
// onto the locked one), any other sample the end where it is, or for a carried chain (an IK-style
// leg) its foot bone wherever the pose put it. One invocation per instance: the chains run in the
// CPU's order, each seeing the ones before. CPU twin: src/cpu/ik.rs (the solver: src/drive/ik.rs).
// Spec: docs/pose-math.md, "IK after retargeting".

@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> frame: array<vec4<u32>>;
@group(0) @binding(7) var<storage, read_write> locals: array<Xform>;
// The IK table, 16-byte words: the IkHeader, the IkChains, their paths (four bone indices per
// word).
@group(0) @binding(8) var<storage, read> ik: array<vec4<u32>>;

// The table's head (IkHeader in src/layout/, which documents the fields).
struct IkHeader {
    chain_count: u32,
    pelvis: u32,
    pelvis_path_start: u32,
    pelvis_path_len: u32,
    max_drop: f32,
    attached: u32,
    _pad1: u32,
    _pad2: u32,
}

// One chain (IkChain in src/layout/, which documents the fields).
struct IkChain {
    root: u32,
    mid: u32,
    end: u32,
    goal_parent: u32,
    bend: vec3<f32>,
    flags: u32,
    path_start: u32,
    path_len: u32,
    goal_path_start: u32,
    goal_path_len: u32,
    up: vec3<f32>,
    rest_height: f32,
    contact_lo: f32,
    contact_hi: f32,
    toe: u32,
    slack: f32,
    tip: vec3<f32>,
    _pad2: u32,
}

const IK_HAND: u32 = 1u;
const IK_CARRIED: u32 = 2u;
const IK_TORSO: u32 = 4u;
const IK_ATTACHED: u32 = 8u;
const IK_NO_BONE: u32 = 0xffffffffu;
const IK_CHAIN_WORDS: u32 = 6u;
const IK_HEADER_WORDS: u32 = 2u;
const IK_MAX_CHAINS: u32 = 4u;
const PLAN_NO_GOAL: u32 = 8u;
// How much of the chain's bend direction (in root lengths) steadies the pose's own bend
// (BEND_BIAS in src/drive/ik.rs).
const BEND_BIAS: f32 = 0.05;
// The most of its length a chain stretches to (MAX_REACH in src/drive/ik.rs).
const MAX_REACH: f32 = 0.999;

fn ik_header() -> IkHeader {
    let w0 = ik[0];
    let w1 = ik[1];
    return IkHeader(w0.x, w0.y, w0.z, w0.w, bitcast<f32>(w1.x), w1.y, w1.z, w1.w);
}

fn ik_chain(i: u32) -> IkChain {
    let w = IK_HEADER_WORDS + i * IK_CHAIN_WORDS;
    let w0 = ik[w];
    let w1 = ik[w + 1u];
    let w2 = ik[w + 2u];
    let w3 = ik[w + 3u];
    let w4 = ik[w + 4u];
    let w5 = ik[w + 5u];
    return IkChain(w0.x, w0.y, w0.z, w0.w, bitcast<vec3<f32>>(w1.xyz), w1.w, w2.x, w2.y, w2.z,
        w2.w, bitcast<vec3<f32>>(w3.xyz), bitcast<f32>(w3.w), bitcast<f32>(w4.x),
        bitcast<f32>(w4.y), w4.z, bitcast<f32>(w4.w), bitcast<vec3<f32>>(w5.xyz), w5.w);
}

fn ik_entry(i: u32) -> u32 {
    return ik[i / 4u][i % 4u];
}

// Component-space transforms met on a walk down a chain's path: the root's, the mid's and the
// end's, each with its parent's.
struct ChainPose {
    par_root: Xform,
    root: Xform,
    par_mid: Xform,
    mid: Xform,
    par_end: Xform,
    end: Xform,
}

fn walk_chain(base: u32, c: IkChain) -> ChainPose {
    var out = ChainPose(IDENTITY, IDENTITY, IDENTITY, IDENTITY, IDENTITY, IDENTITY);
    var x = IDENTITY;
    for (var k = 0u; k < c.path_len; k++) {
        let b = ik_entry(c.path_start + k);
        var cur = locals[base + b];
        if (k > 0u) {
            cur = compose(cur, x);
        }
        if (b == c.root) {
            out.par_root = x;
            out.root = cur;
        }
        if (b == c.mid) {
            out.par_mid = x;
            out.mid = cur;
        }
        if (b == c.end) {
            out.par_end = x;
            out.end = cur;
        }
        x = cur;
    }
    return out;
}

// The component-space transform of the last bone of a path.
fn walk_to(base: u32, start: u32, len: u32) -> Xform {
    var x = IDENTITY;
    for (var k = 0u; k < len; k++) {
        let l = locals[base + ik_entry(start + k)];
        if (k == 0u) {
            x = l;
        } else {
            x = compose(l, x);
        }
    }
    return x;
}

// The smallest rotation taking u's direction to v's; the identity where either is zero.
fn swing_to(u: vec3<f32>, v: vec3<f32>) -> vec4<f32> {
    let lu = length(u);
    let lv = length(v);
    if (!(lu > 0.0 && lv > 0.0)) {
        return vec4<f32>(0.0, 0.0, 0.0, 1.0);
    }
    return find_between_normals(u * (1.0 / lu), v * (1.0 / lv));
}

struct TwoBone {
    ok: bool,
    da: vec4<f32>,
    db: vec4<f32>,
}

// two_bone in src/drive/ik.rs.
fn two_bone(a: vec3<f32>, b: vec3<f32>, e: vec3<f32>, aim: vec3<f32>, pole_in: vec3<f32>)
    -> TwoBone {
    let lab = length(b - a);
    let lbc = length(e - b);
    let d = aim - a;
    let dist = length(d);
    if (!(lab > TINY && lbc > TINY && dist > TINY)) {
        return TwoBone(false, vec4<f32>(0.0, 0.0, 0.0, 1.0), vec4<f32>(0.0, 0.0, 0.0, 1.0));
    }
    let reach = clamp(dist, abs(lab - lbc), (lab + lbc) * MAX_REACH);
    let dir = d * (1.0 / dist);
    let line = (e - a) * (1.0 / max(length(e - a), TINY));
    let bent = (b - a) - line * dot(b - a, line);
    let pole = bent + pole_in * (BEND_BIAS * lab);
    var side = pole - dir * dot(pole, dir);
    let side_len = length(side);
    if (side_len > TINY) {
        side = side * (1.0 / side_len);
    } else {
        side = vec3<f32>(0.0);
    }
    let cos_a = clamp((lab * lab + reach * reach - lbc * lbc) / (2.0 * lab * reach), -1.0, 1.0);
    let sin_a = sqrt(max(1.0 - cos_a * cos_a, 0.0));
    let b_new = a + (dir * cos_a + side * sin_a) * lab;
    let e_new = a + dir * reach;
    let da = swing_to(b - a, b_new - a);
    let b1 = a + quat_rotate(da, b - a);
    let e1 = a + quat_rotate(da, e - a);
    return TwoBone(true, da, swing_to(e1 - b1, e_new - b1));
}

// A leg (its goal is in component space): the pelvis is lowered for it (lowers_pelvis in
// src/drive/ik.rs).
fn lowers_pelvis(c: IkChain) -> bool {
    return (c.flags & (IK_HAND | IK_TORSO)) == 0u;
}

struct Turn {
    ok: bool,
    q: vec4<f32>,
}

// The torso's turn about the joint j1 of the spine bone below the chest (joint j2) that puts
// the neck's base n, moved rigidly with the chest, on the line from the pelvis toward the goal
// (torso_turn in src/drive/ik.rs).
fn torso_turn(pelvis: vec3<f32>, j1: vec3<f32>, j2: vec3<f32>, n: vec3<f32>, goal: vec3<f32>,
    w: f32) -> Turn {
    let none = Turn(false, vec4<f32>(0.0, 0.0, 0.0, 1.0));
    let lh = length(n - pelvis);
    let lw = length(goal - pelvis);
    if (!(lh > TINY && lw > TINY)) {
        return none;
    }
    let dv = (n - pelvis) * ((1.0 - w) / lh) + (goal - pelvis) * (w / lw);
    let ld = length(dv);
    if (!(ld > TINY)) {
        return none;
    }
    let d = dv * (1.0 / ld);
    let v = j2 - j1;
    let q = pelvis - (n - j2) - j1;
    let b = dot(q, d);
    let disc = b * b - dot(q, q) + dot(v, v);
    if (!(disc >= 0.0)) {
        return none;
    }
    let root = sqrt(disc);
    let near = q + d * (-b - root);
    let far = q + d * (-b + root);
    return Turn(true, swing_to(v, select(far, near, dot(near, v) > dot(far, v))));
}

// A chain's pose, a carried chain's end at the point its mid bone carries (pose in
// src/drive/ik.rs).
fn chain_pose(base: u32, c: IkChain) -> ChainPose {
    var p = walk_chain(base, c);
    if ((c.flags & IK_CARRIED) != 0u) {
        p.par_end = p.mid;
        p.end = compose(Xform(vec4<f32>(0.0, 0.0, 0.0, 1.0), vec4<f32>(c.tip, 0.0),
            vec4<f32>(1.0, 1.0, 1.0, 0.0)), p.mid);
    }
    return p;
}

// Where a sample without a goal puts a leg's end: where it is, or a carried chain's foot bone.
fn unplanned_end(base: u32, c: IkChain, p: ChainPose) -> Xform {
    if ((c.flags & IK_CARRIED) != 0u) {
        return walk_to(base, c.goal_path_start, c.goal_path_len);
    }
    return p.end;
}

// Where a leg's end aims toward its goal with weight w: only its height, all of it in contact
// and within the slack in the swing (leg_aim in src/drive/ik.rs).
fn leg_aim(c: IkChain, end: vec3<f32>, goal: vec3<f32>, w: f32) -> vec3<f32> {
    let along = dot(goal - end, c.up);
    let lift = dot(goal, c.up) - c.rest_height;
    let slack = c.slack * smoothstep(c.contact_lo, c.contact_hi, lift);
    return end + c.up * (sign(along) * max(abs(along) - slack, 0.0) * w);
}

// The aim, or where it lies beyond reach of the root joint a, moved across the ground toward
// the point under a until it is within reach at the same height (within_reach in
// src/drive/ik.rs).
fn within_reach(aim: vec3<f32>, a: vec3<f32>, reach: f32, up: vec3<f32>) -> vec3<f32> {
    let d = aim - a;
    if (dot(d, d) <= reach * reach) {
        return aim;
    }
    let along = dot(d, up);
    let across = d - up * along;
    let room = reach * reach - along * along;
    let len = length(across);
    if (room <= 0.0 || len <= TINY) {
        return aim;
    }
    return a + up * along + across * (sqrt(room) / len);
}

// How far a chain's root joint must move down `up` for its end to reach the aim (pelvis_drop
// in src/drive/ik.rs).
fn pelvis_drop(a: vec3<f32>, b: vec3<f32>, e: vec3<f32>, aim: vec3<f32>, up: vec3<f32>) -> f32 {
    let reach = (length(b - a) + length(e - b)) * MAX_REACH;
    let d = aim - a;
    if (dot(d, d) <= reach * reach) {
        return 0.0;
    }
    let along = dot(d, up);
    let across = dot(d, d) - along * along;
    if (across >= reach * reach) {
        return 0.0;
    }
    return max(-along - sqrt(reach * reach - across), 0.0);
}

// All of the drop the legs need up to max, fading to none at 1.5 max (capped_drop in
// src/drive/ik.rs).
fn capped_drop(needed: f32, max_drop: f32) -> f32 {
    if (needed <= max_drop) {
        return needed;
    }
    return max(max_drop * (3.0 - 2.0 * needed / max_drop), 0.0);
}

// The rotation turning the foot about the ankle so that the toe, v from the ankle, moves w of
// the way to the height of to_goal (toe_turn in src/drive/ik.rs).
fn toe_turn(v: vec3<f32>, to_goal: vec3<f32>, up: vec3<f32>, w: f32) -> vec4<f32> {
    let len = length(v);
    let h = clamp(dot(v, up) + dot(to_goal, up) * w, -len * MAX_REACH, len * MAX_REACH);
    let across = v - up * dot(v, up);
    let across_len = length(across);
    if (!(across_len > TINY)) {
        return vec4<f32>(0.0, 0.0, 0.0, 1.0);
    }
    return swing_to(v, across * (sqrt(len * len - h * h) / across_len) + up * h);
}

// A blended goal, and whether any sample had one (planned).
struct Goal {
    t: vec3<f32>,
    r: vec4<f32>,
    planned: bool,
}

// Whether `clip` has goal record `record`: a character source's clip where its plan has that
// goal, a clip baked from one (CLIP_GOALS) where that goal has keys. As has_goal in
// src/cpu/ik.rs.
fn has_goal(clip: ClipData, record: u32) -> bool {
    if ((clip.flags & CLIP_PLAN) != 0u) {
        return (retarget[plan_word(clip.retarget_base, record, 10u)].w & PLAN_NO_GOAL) == 0u;
    }
    if ((clip.flags & CLIP_COMPRESSED) != 0u) {
        return (clip.flags & CLIP_GOALS) != 0u && packed_present(clip, record);
    }
    return (clip.flags & CLIP_GOALS) != 0u && clip_channel(clip, record, 0u).count > 0u;
}

// Record `record` of `clip` at t as the IK stage reads it: a bone's local (below the bone
// count) or a goal; a plan clip runs its record, a baked clip samples its keys (the bone's, or
// the goal's after them). As clip_goal in src/cpu/ik.rs.
fn clip_goal(clip: ClipData, t: f32, record: u32) -> Xform {
    if ((clip.flags & CLIP_PLAN) != 0u) {
        return apply_plan(clip, t, record);
    }
    // A baked clip is the target's own (its bones read their own channels unchanged), so its
    // keys are read here directly: sample_clip_at would inline the whole sampling path again.
    var fill = IDENTITY;
    if (record < table_bones) {
        fill = target_reference(record);
    }
    if ((clip.flags & CLIP_COMPRESSED) != 0u) {
        return packed_local(clip, record, t, fill, true);
    }
    var search = NO_SEARCH;
    return sample_channels(clip_channel(clip, record, 0u), clip_channel(clip, record, 1u),
        clip_channel(clip, record, 2u), t, fill, &search);
}

// A chain's goal from goal record `record` (its goal, or its toe goal): the blend of the base
// samples' goals (component space; a sample without one gives `end`, where the end or the toe
// is), as blend_goal in src/drive/ik.rs.
fn blend_goal(base: u32, first: u32, count: u32, sum: f32, record: u32, c: IkChain, end: Xform,
    has_frame: bool, goal_frame: Xform) -> Goal {
    var goal_t = vec3<f32>(0.0);
    var goal_r = vec4<f32>(0.0);
    var planned = false;
    for (var k = 0u; k < count; k++) {
        let s = as_sample(frame[first + k]);
        if (s.weight <= ZERO_WEIGHT) {
            continue;
        }
        let f = s.weight / sum;
        var g = end;
        let clip = clip_data(s.clip_and_flags & ~INSTANCE_LOOP);
        if (has_goal(clip, record)) {
            planned = true;
            let looping = (s.clip_and_flags & INSTANCE_LOOP) != 0u;
            let t = map_time(s.time, clip.duration, looping);
            // The goal, and for an in-place sample's component-space goal also the clip's
            // own (unlocked) root-motion bone: one call site, so that the sampling code is
            // inlined once.
            let relock = s.root_lock != 0u && !has_frame;
            var r0 = IDENTITY;
            for (var q = 0u; q < select(1u, 2u, relock); q++) {
                let x = clip_goal(clip, t, select(record, root_bone, q == 1u));
                if (q == 0u) {
                    g = x;
                } else {
                    r0 = x;
                }
            }
            if (has_frame) {
                g = compose(g, goal_frame);
            } else if (relock) {
                // At the height the clip gives it: the floor does not move with the lock.
                let h = dot(g.t.xyz, c.up);
                let root_then = compose(r0, params.root_parent);
                let root_now = compose(locals[base + root_bone], params.root_parent);
                g = compose(relative(g, root_then), root_now);
                g.t = vec4<f32>(g.t.xyz + c.up * (h - dot(g.t.xyz, c.up)), 0.0);
            }
        }
        goal_t += g.t.xyz * f;
        let r = select(-g.r, g.r, dot(goal_r, g.r) >= 0.0);
        goal_r += r * f;
    }
    return Goal(goal_t, goal_r, planned);
}

// The local rotation putting a bone at component-space rotation cs under a parent at
// component-space transform parent: normalize(Rp⁻¹ ⊗ cs), reflected as the matrix path reflects
// a child's where the parent is mirrored (local_rotation in src/transform/mirror.rs).
fn local_rotation(parent: Xform, cs: vec4<f32>) -> vec4<f32> {
    let q = normalize_quat(quat_mul(quat_conj(parent.r), cs));
    if (all(parent.s.xyz >= vec3<f32>(0.0))) {
        return q;
    }
    let d = select(vec3<f32>(1.0), vec3<f32>(-1.0), parent.s.xyz < vec3<f32>(0.0));
    return vec4<f32>(q.xyz * d * (d.x * d.y * d.z), q.w);
}

// x turned to rotation r in its own space (its translation and scale kept).
fn turned(x: Xform, r: vec4<f32>) -> Xform {
    return Xform(r, x.t, x.s);
}

// Whether some weighted base sample has goal record `record` (the instance plays a retargeted
// clip); the `planned` of blend_goal without the goals (planned in src/drive/ik.rs).
fn any_planned(first: u32, count: u32, record: u32) -> bool {
    for (var k = 0u; k < count; k++) {
        let s = as_sample(frame[first + k]);
        let clip = clip_data(s.clip_and_flags & ~INSTANCE_LOOP);
        if (s.weight > ZERO_WEIGHT && has_goal(clip, record)) {
            return true;
        }
    }
    return false;
}

// An IK_ATTACHED chain's foot bone (goal_parent, the last of its goal path) moved to the point
// its mid bone carries, its local rotation and scale kept, so that the bones below it follow
// (Chains::attach in src/drive/ik.rs).
fn attach_foot(base: u32, c: IkChain) {
    let at = compose(Xform(IDENTITY.r, vec4<f32>(c.tip, 0.0), IDENTITY.s), walk_chain(base, c).mid);
    let parent = walk_to(base, c.goal_path_start, max(c.goal_path_len, 1u) - 1u);
    let moved = quat_rotate(quat_conj(parent.r), at.t.xyz - parent.t.xyz);
    locals[base + c.goal_parent].t = vec4<f32>(moved * safe_recip3(parent.s.xyz), 0.0);
}

@compute @workgroup_size(64)
fn main(
    @builtin(workgroup_id) wg: vec3<u32>,
    @builtin(num_workgroups) num_wg: vec3<u32>,
    @builtin(local_invocation_index) local_index: u32,
) {
    let instance = invocation_index(wg, num_wg, local_index);
    let chains = ik[0].x;
    if (instance >= params.instance_count || chains == 0u) {
        return;
    }
    let bones = params.bone_count;
    let base = instance * bones;
    let head = as_head(frame[instance]);
    set_library(params.bone_count, params.root_bone, params.root_up.xyz);
    // The IK layer: the instance's last, when it has one.
    var e = head.first;
    var last = e;
    for (var l = 0u; l < head.layers; l++) {
        last = e;
        e += 1u + layer_samples(as_layer(frame[e]));
    }
    let ik_layer = frame[last];
    let top = ik_header();
    // Without an IK layer, only feet that stay on their shins have work.
    var feet = 0.0;
    var hands = 0.0;
    if (head.layers > 0u && layer_kind(as_layer(ik_layer)) == LAYER_IK) {
        feet = bitcast<f32>(ik_layer.y);
        hands = bitcast<f32>(ik_layer.z);
    } else if (head.layers == 0u || top.attached == 0u) {
        return;
    }
    let first = head.first + 1u;
    let count = layer_samples(as_layer(frame[head.first]));
    var sum = 0.0;
    for (var k = 0u; k < count; k++) {
        let w = as_sample(frame[first + k]).weight;
        if (w > ZERO_WEIGHT) {
            sum += w;
        }
    }
    // The legs' goals, blended once before any chain runs: the pelvis drop needs them all.
    var leg_goals: array<vec3<f32>, IK_MAX_CHAINS>;
    var cached = 0u;
    var planned = 0u;
    if (top.pelvis != IK_NO_BONE) {
        var drop = 0.0;
        var up = vec3<f32>(0.0);
        for (var i = 0u; i < min(chains, IK_MAX_CHAINS); i++) {
            let c = ik_chain(i);
            let w = select(feet, hands, (c.flags & IK_HAND) != 0u);
            let on = w > ZERO_WEIGHT && ((c.flags & IK_CARRIED) != 0u || sum > 0.0);
            if (!on || !lowers_pelvis(c)) {
                continue;
            }
            let p = chain_pose(base, c);
            let g = blend_goal(base, first, count, sum, bones + i, c, unplanned_end(base, c, p),
                false, IDENTITY);
            leg_goals[i] = g.t;
            cached |= 1u << i;
            // A carried leg playing its own clips is not crouched for.
            if (!g.planned) {
                continue;
            }
            planned |= 1u << i;
            let aim = leg_aim(c, p.end.t.xyz, g.t, w);
            up = c.up;
            drop = max(drop, pelvis_drop(p.root.t.xyz, p.mid.t.xyz, p.end.t.xyz, aim, up));
        }
        drop = capped_drop(drop, top.max_drop);
        if (drop > 0.0) {
            let parent = walk_to(base, top.pelvis_path_start, top.pelvis_path_len);
            let moved = quat_rotate(quat_conj(parent.r), up * -drop);
            let at = base + top.pelvis;
            locals[at].t = vec4<f32>(locals[at].t.xyz + moved * safe_recip3(parent.s.xyz), 0.0);
        }
    }
    for (var i = 0u; i < chains; i++) {
        let c = ik_chain(i);
        // The chain's IK, then its attached foot: `break` leaves the chain's IK.
        loop {
            let hand = (c.flags & IK_HAND) != 0u;
            let carried = (c.flags & IK_CARRIED) != 0u;
            let w = select(feet, hands, hand);
            if (!(w > ZERO_WEIGHT && (carried || sum > 0.0))) {
                break;
            }
            if ((c.flags & IK_TORSO) != 0u) {
                // The torso: the spine bone below the chest turns, the chest keeps its turn.
                let t = walk_chain(base, c);
                let hips = walk_to(base, c.goal_path_start, c.goal_path_len);
                let pelvis = hips.t.xyz + quat_rotate(hips.r, hips.s.xyz * c.tip);
                let g = blend_goal(base, first, count, sum, bones + i, c, t.end, false, IDENTITY);
                let turn = torso_turn(pelvis, t.root.t.xyz, t.mid.t.xyz, t.end.t.xyz, g.t, w);
                if (g.planned && turn.ok) {
                    let root = quat_mul(turn.q, t.root.r);
                    locals[base + c.root].r = local_rotation(t.par_root, root);
                    locals[base + c.mid].r = local_rotation(turned(t.root, root), t.mid.r);
                }
                break;
            }
            let p = chain_pose(base, c);
            var goal: Goal;
            if (i < IK_MAX_CHAINS && (cached & (1u << i)) != 0u) {
                // A leg's goal from before the pelvis dropped (a sample without a goal keeps the
                // foot where the pose put it, not where the drop took it).
                let bit = 1u << min(i, IK_MAX_CHAINS - 1u);
                goal = Goal(leg_goals[min(i, IK_MAX_CHAINS - 1u)], p.end.r, (planned & bit) != 0u);
            } else if (hand) {
                let frame = walk_to(base, c.goal_path_start, c.goal_path_len);
                goal = blend_goal(base, first, count, sum, bones + i, c, p.end, true, frame);
            } else {
                goal = blend_goal(base, first, count, sum, bones + i, c, unplanned_end(base, c, p),
                    false, IDENTITY);
            }
            // Legs aim at their goal's height; a carried leg whose samples have no goal (its own
            // clips) reaches its foot bone.
            var aim = p.end.t.xyz + (goal.t - p.end.t.xyz) * w;
            if (!hand && (goal.planned || !carried)) {
                let a = p.root.t.xyz;
                let reach = (length(p.mid.t.xyz - a) + length(p.end.t.xyz - p.mid.t.xyz))
                    * MAX_REACH;
                aim = within_reach(leg_aim(c, p.end.t.xyz, goal.t, w), a, reach, c.up);
            }
            var end_rotation = p.end.r;
            if (hand) {
                let g0 = goal.r * (1.0 / length(goal.r));
                let g = select(-g0, g0, dot(p.end.r, g0) >= 0.0);
                let v = p.end.r * (1.0 - w) + g * w;
                end_rotation = v * (1.0 / length(v));
            }
            let sol = two_bone(p.root.t.xyz, p.mid.t.xyz, p.end.t.xyz, aim,
                quat_rotate(p.root.r, c.bend));
            if (!sol.ok) {
                break;
            }
            let dba = quat_mul(sol.db, sol.da);
            locals[base + c.root].r = local_rotation(p.par_root, quat_mul(sol.da, p.root.r));
            let par_mid = turned(p.par_mid, quat_mul(sol.da, p.par_mid.r));
            locals[base + c.mid].r = local_rotation(par_mid, quat_mul(dba, p.mid.r));
            if (!carried) {
                let par_end = turned(p.par_end, quat_mul(dba, p.par_end.r));
                locals[base + c.end].r = local_rotation(par_end, end_rotation);
            }
            if (!hand && !carried && c.toe != IK_NO_BONE) {
                // The foot turns about the ankle to bring the toe to its goal's height (toe goals
                // follow the chains' goals).
                let q = walk_chain(base, c);
                let toe = compose(locals[base + c.toe], q.end);
                let g = blend_goal(base, first, count, sum, bones + chains + i, c, toe, false,
                    IDENTITY);
                let v = toe.t.xyz - q.end.t.xyz;
                let turn = toe_turn(v, g.t - toe.t.xyz, c.up, w);
                locals[base + c.end].r = local_rotation(q.par_end, quat_mul(turn, q.end.r));
            }
            break;
        }
        // An attached foot follows its shin, where the instance plays a retargeted sample,
        // with the chain's IK weight or without.
        if ((c.flags & IK_ATTACHED) != 0u && any_planned(first, count, bones + i)) {
            attach_foot(base, c);
        }
    }
}
