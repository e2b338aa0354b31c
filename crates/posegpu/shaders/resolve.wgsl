// Each sample resolved once per frame, one invocation per instance: the key search of every
// clip sample it plays (sample_search in clip.wgsl, over its clip's reference times at its
// time), written to the frame buffer after the entries (word `params.resolved_word + e` for the
// sample at entry `e`). The sampling and fused passes start every bone of the sample from it,
// so no bone searches the reference times and no workgroup waits on a lane that does.
// CPU twin: src/cpu/resolve.rs.

@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read_write> frame: array<vec4<u32>>;

@compute @workgroup_size(64)
fn main(
    @builtin(workgroup_id) wg: vec3<u32>,
    @builtin(num_workgroups) num_wg: vec3<u32>,
    @builtin(local_invocation_index) local_index: u32,
) {
    let instance = invocation_index(wg, num_wg, local_index);
    if (instance >= params.instance_count) {
        return;
    }
    let head = as_head(frame[instance]);
    var e = head.first;
    for (var l = 0u; l < head.layers; l++) {
        let n = layer_samples(as_layer(frame[e]));
        for (var k = 1u; k <= n; k++) {
            let search = sample_search(as_sample(frame[e + k]));
            frame[params.resolved_word + e + k] = search_word(search);
        }
        e += 1u + n;
    }
}
