// Stage 3 (after the layers), one invocation per instance: IK after retargeting. Each two-bone
// chain of the IK table, in order, turns its root and middle bones so that its end reaches the
// goal, weighted by the instance's IK layer (feet, hands). A chain's goal is the blend of its
// base samples' goals: a character source's clip gives its plan's goal record (record
// bone_count + chain, run by apply_plan; an in-place sample's relative to its bone 0, carried
// onto the locked one), any other sample the end where it is; a carried
// chain (an IK-style leg) reaches its foot bone wherever the pose put it. One invocation per
// instance: the chains run in the CPU's order, each seeing the ones before. CPU twin:
// src/cpu/ik.rs (the solver: src/retarget/ik.rs). Spec: docs/pose-math.md, "IK after retargeting".

@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> frame: array<vec4<u32>>;
@group(0) @binding(7) var<storage, read_write> locals: array<Xform>;
// The IK table, 16-byte words: [chain count, 0, 0, 0], the IkChains, their paths (four bone
// indices per word).
@group(0) @binding(8) var<storage, read> ik: array<vec4<u32>>;

// One chain (IkChain in src/layout.rs, which documents the fields).
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
    _pad0: u32,
    _pad1: u32,
    tip: vec3<f32>,
    _pad2: u32,
}

const IK_HAND: u32 = 1u;
const IK_CARRIED: u32 = 2u;
const IK_NO_BONE: u32 = 0xffffffffu;
const IK_CHAIN_WORDS: u32 = 6u;
const PLAN_NO_GOAL: u32 = 8u;
const TINY: f32 = 1e-8;
// How much of the chain's bend direction (in root lengths) steadies the pose's own bend
// (BEND_BIAS in src/retarget/ik.rs).
const BEND_BIAS: f32 = 0.05;
// The most of its length a chain stretches to (MAX_REACH in src/retarget/ik.rs).
const MAX_REACH: f32 = 0.999;

fn ik_chain(i: u32) -> IkChain {
    let w = 1u + i * IK_CHAIN_WORDS;
    let w0 = ik[w];
    let w1 = ik[w + 1u];
    let w2 = ik[w + 2u];
    let w3 = ik[w + 3u];
    let w4 = ik[w + 4u];
    let w5 = ik[w + 5u];
    return IkChain(w0.x, w0.y, w0.z, w0.w, bitcast<vec3<f32>>(w1.xyz), w1.w, w2.x, w2.y, w2.z,
        w2.w, bitcast<vec3<f32>>(w3.xyz), bitcast<f32>(w3.w), bitcast<f32>(w4.x),
        bitcast<f32>(w4.y), w4.z, w4.w, bitcast<vec3<f32>>(w5.xyz), w5.w);
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

// two_bone in src/retarget/ik.rs.
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

fn local_rotation(parent: vec4<f32>, cs: vec4<f32>) -> vec4<f32> {
    return normalize_quat(quat_mul(quat_conj(parent), cs));
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
    if (head.layers == 0u || (ik_layer.x & 0xffu) != LAYER_IK) {
        return;
    }
    let feet = bitcast<f32>(ik_layer.y);
    let hands = bitcast<f32>(ik_layer.z);
    let count = layer_samples(as_layer(frame[head.first]));
    var sum = 0.0;
    for (var k = 0u; k < count; k++) {
        let w = as_sample(frame[head.first + 1u + k]).weight;
        if (w > ZERO_WEIGHT) {
            sum += w;
        }
    }
    for (var i = 0u; i < chains; i++) {
        let c = ik_chain(i);
        let hand = (c.flags & IK_HAND) != 0u;
        let carried = (c.flags & IK_CARRIED) != 0u;
        let w = select(feet, hands, hand);
        if (!(w > ZERO_WEIGHT && (carried || sum > 0.0))) {
            continue;
        }
        var p = walk_chain(base, c);
        if (carried) {
            p.par_end = p.mid;
            p.end = compose(Xform(vec4<f32>(0.0, 0.0, 0.0, 1.0), vec4<f32>(c.tip, 0.0),
                vec4<f32>(1.0, 1.0, 1.0, 0.0)), p.mid);
        }
        let has_frame = c.goal_parent != IK_NO_BONE;
        var goal_frame = IDENTITY;
        if (has_frame) {
            goal_frame = walk_to(base, c.goal_path_start, c.goal_path_len);
        }
        var goal_t = vec3<f32>(0.0);
        var goal_r = vec4<f32>(0.0);
        if (carried && has_frame) {
            // A carried chain's goal is its foot bone, wherever the pose put it.
            goal_t = goal_frame.t.xyz;
            goal_r = p.end.r;
        } else {
            for (var k = 0u; k < count; k++) {
                let s = as_sample(frame[head.first + 1u + k]);
                if (s.weight <= ZERO_WEIGHT) {
                    continue;
                }
                let f = s.weight / sum;
                var g = p.end;
                let clip = clip_data(s.clip_and_flags & ~INSTANCE_LOOP);
                if ((clip.flags & CLIP_PLAN) != 0u) {
                    let record = bones + i;
                    let modes = retarget[plan_word(clip.retarget_base, record, 10u)].w;
                    if ((modes & PLAN_NO_GOAL) == 0u) {
                        let looping = (s.clip_and_flags & INSTANCE_LOOP) != 0u;
                        let t = map_time(s.time, clip.duration, looping);
                        // The goal, and for an in-place sample's component-space goal also the
                        // clip's own (unlocked) root-motion bone: one call site, so that the
                        // sampling code is inlined once.
                        let relock = s.root_lock != 0u && !has_frame;
                        var r0 = IDENTITY;
                        for (var q = 0u; q < select(1u, 2u, relock); q++) {
                            let x = apply_plan(clip, t, select(record, root_bone, q == 1u));
                            if (q == 0u) {
                                g = x;
                            } else {
                                r0 = x;
                            }
                        }
                        if (has_frame) {
                            g = compose(g, goal_frame);
                        } else if (relock) {
                            // At the height the clip gives it: the floor does not move with
                            // the lock.
                            let h = dot(g.t.xyz, c.up);
                            let root_then = compose(r0, params.root_parent);
                            let root_now = compose(locals[base + root_bone], params.root_parent);
                            g = compose(relative(g, root_then), root_now);
                            g.t = vec4<f32>(g.t.xyz + c.up * (h - dot(g.t.xyz, c.up)), 0.0);
                        }
                    }
                }
                goal_t += g.t.xyz * f;
                let r = select(-g.r, g.r, dot(goal_r, g.r) >= 0.0);
                goal_r += r * f;
            }
        }
        // A leg moves its end's height to the goal's always, and across the ground only as far
        // as the goal is in contact: a swinging foot keeps the retargeted stride.
        var to_goal = goal_t - p.end.t.xyz;
        if (!hand && !carried) {
            let vertical = c.up * dot(to_goal, c.up);
            let lift = dot(goal_t, c.up) - c.rest_height;
            let contact = 1.0 - smoothstep(c.contact_lo, c.contact_hi, lift);
            to_goal = vertical + (to_goal - vertical) * contact;
        }
        let aim = p.end.t.xyz + to_goal * w;
        var end_rotation = p.end.r;
        if (hand) {
            let g0 = goal_r * (1.0 / length(goal_r));
            let g = select(-g0, g0, dot(p.end.r, g0) >= 0.0);
            let v = p.end.r * (1.0 - w) + g * w;
            end_rotation = v * (1.0 / length(v));
        }
        let sol = two_bone(p.root.t.xyz, p.mid.t.xyz, p.end.t.xyz, aim,
            quat_rotate(p.root.r, c.bend));
        if (!sol.ok) {
            continue;
        }
        let dba = quat_mul(sol.db, sol.da);
        locals[base + c.root].r = local_rotation(p.par_root.r, quat_mul(sol.da, p.root.r));
        locals[base + c.mid].r = local_rotation(quat_mul(sol.da, p.par_mid.r),
            quat_mul(dba, p.mid.r));
        if (!carried) {
            locals[base + c.end].r = local_rotation(quat_mul(dba, p.par_end.r), end_rotation);
        }
    }
}
