// The browser tests of the posegpu-web package: run in headless Chromium (WebGPU on
// SwiftShader) by web/test/run.mjs, against the native CPU twin's numbers that
// `posegpu-web-fixtures expected` wrote (crates/posegpu-web/src/fixtures.rs says what each is).
// Results go to window.__results; window.__done is set at the end.
import {
  Context, Crowd, GpuCrowd, GpuEvaluator, Library, LibraryBuilder, evaluateCpu, gridAgents, initPosegpu,
  load,
} from 'posegpu-web';

const FIXTURES = '/crates/posegpu-web/target/web-fixtures/expected.json';
const results = [];
window.__results = results;
const log = document.getElementById('log');

function note(line) {
  log.textContent += `${line}\n`;
}

async function test(name, body) {
  const start = performance.now();
  try {
    const detail = await body();
    results.push({ name, ok: true, detail: detail ?? '', ms: performance.now() - start });
  } catch (e) {
    results.push({ name, ok: false, detail: String(e?.stack ?? e), ms: performance.now() - start });
  }
  const r = results[results.length - 1];
  note(`${r.ok ? 'ok' : 'FAILED'} ${name}: ${r.detail}`);
}

function check(condition, message) {
  if (!condition) throw new Error(message);
}

async function bytes(url) {
  const response = await fetch(url);
  check(response.ok, `${url}: HTTP ${response.status}`);
  return new Uint8Array(await response.arrayBuffer());
}

/** FNV-1a (64 bits) of bytes, as 16 hex digits: `fixtures::hash`. */
function fnv1a(bytes) {
  let h = 0xcbf29ce484222325n;
  for (const b of bytes) h = BigInt.asUintN(64, (h ^ BigInt(b)) * 0x100000001b3n);
  return h.toString(16).padStart(16, '0');
}

/** The promise rejects; its message is returned. */
async function rejection(promise) {
  try {
    await promise;
  } catch (e) {
    return String(e?.message ?? e);
  }
  throw new Error('resolved, expected a rejection');
}

function thrown(body) {
  try {
    body();
  } catch (e) {
    return String(e?.message ?? e);
  }
  throw new Error('returned, expected an error');
}

/** The largest difference of placements (10 floats: t xyz, r xyzw, s xyz), translations over `extent`. */
function placementDeviation(a, b, extent) {
  check(a.length === b.length, `${a.length} placement floats against ${b.length}`);
  let worst = 0;
  for (let i = 0; i < a.length; i += 10) {
    for (let k = 0; k < 3; k++) worst = Math.max(worst, Math.abs(a[i + k] - b[i + k]) / extent);
    let same = 0;
    let flipped = 0;
    for (let k = 3; k < 7; k++) {
      same = Math.max(same, Math.abs(a[i + k] - b[i + k]));
      flipped = Math.max(flipped, Math.abs(a[i + k] + b[i + k]));
    }
    worst = Math.max(worst, Math.min(same, flipped));
  }
  return worst;
}

function retargeted(fx, mike, mocap, compress) {
  // fixtures::retargeted_library, through the JavaScript API.
  const builder = new LibraryBuilder(mike);
  if (compress !== undefined) builder.compress(compress);
  builder.addClips(mike, ['Walk', 'Run', 'Idle']);
  const source = builder.addCharacterSource('mocap', mocap);
  builder.addClipsFrom(source, mocap);
  return builder.build();
}

async function main() {
  await initPosegpu();
  const fx = await (await fetch(FIXTURES)).json();
  const mikeBytes = await bytes(`/anim-data/${fx.character}`);
  const mike = await load(mikeBytes, 'glb', fx.character);
  const mocap = await load(await bytes(`/anim-data/${fx.mocap}`), 'bvh', fx.mocap);
  const { extent, tolerance } = fx;
  let context = null;

  await test('adapter', async () => {
    context = await Context.create();
    const adapter = context.adapter;
    check(adapter.includes('BrowserWebGpu'), `not WebGPU: ${adapter}`);
    const info = context.device.adapterInfo ?? {};
    return `${adapter}; GPUAdapterInfo vendor "${info.vendor}", architecture "${info.architecture}", description "${info.description}", fallback ${info.isFallbackAdapter}; timestamps ${context.hasTimestamps}`;
  });

  await test('poses of a real character on the GPU match the native CPU twin', async () => {
    const lib = Library.fromAsset(mike);
    const n = fx.poses.samples.length;
    const gpu = await GpuEvaluator.create(context, lib, n, { outputs: 'all' });
    gpu.evaluate(fx.poses.samples);
    const poses = await gpu.readBack();
    check(poses.instanceCount === n, `${poses.instanceCount} instances read back`);
    const d = poses.componentDeviation(fx.poses.component, extent);
    check(d <= tolerance, `deviation ${d} over the tolerance ${tolerance}`);
    // The check can fail: the same poses against the next instance's numbers.
    const bones = lib.boneCount;
    const shifted = fx.poses.component.slice(12 * bones).concat(fx.poses.component.slice(0, 12 * bones));
    const wrong = poses.componentDeviation(shifted, extent);
    check(wrong > 100 * tolerance, `shifted instances only ${wrong} apart`);
    return `${n} instances x ${bones} bones of ${fx.character}: ${d.toExponential(2)} of the size (tolerance ${tolerance.toExponential(2)}; shifted ${wrong.toExponential(2)})`;
  });

  await test('the wasm CPU twin matches the native CPU twin', async () => {
    const lib = Library.fromAsset(mike);
    const poses = evaluateCpu(lib, fx.poses.samples);
    const d = poses.componentDeviation(fx.poses.component, extent);
    check(d <= tolerance, `deviation ${d} over the tolerance ${tolerance}`);
    return d === 0 ? 'bit-identical' : `${d.toExponential(2)} of the size`;
  });

  await test('a compressed library decodes bit-identically to the native twin', async () => {
    const own = ['Walk', 'Run', 'Idle'];
    const fingerprint = mike.compressionFingerprint(fx.compressed.tolerance, own);
    check(fingerprint === fx.compressed.fingerprint, `compressor: ${fingerprint}, native ${fx.compressed.fingerprint}`);
    const builder = new LibraryBuilder(mike);
    builder.compress(fx.compressed.tolerance);
    builder.addClips(mike, own);
    const lib = builder.build();
    check(lib.assetBytes === fx.compressed.assetBytes, `${lib.assetBytes} table bytes, native ${fx.compressed.assetBytes}`);
    const hashes = evaluateCpu(lib, fx.compressed.samples).hashes();
    for (const key of ['locals', 'component', 'skinning']) {
      check(hashes[key] === fx.compressed[key], `${key}: ${hashes[key]}, native ${fx.compressed[key]}`);
    }
    // And the GPU plays the compressed keys within the tolerance of the twin.
    const n = fx.compressed.samples.length;
    const gpu = await GpuEvaluator.create(context, lib, n);
    gpu.evaluate(fx.compressed.samples);
    const d = (await gpu.readBack()).componentDeviation(evaluateCpu(lib, fx.compressed.samples).component, extent);
    check(d <= tolerance, `GPU against the twin: ${d}`);
    return `compressor fingerprint ${fingerprint} equal; ${lib.assetBytes} table bytes; CPU twin hashes ${hashes.locals}/${hashes.component}/${hashes.skinning} equal to native; GPU ${d.toExponential(2)} from the twin`;
  });

  await test('a compressed retargeted library matches the native twin', async () => {
    const lib = retargeted(fx, mike, mocap, fx.compressed.tolerance);
    const cpu = evaluateCpu(lib, fx.retargeted.samples);
    const dCpu = cpu.componentDeviation(fx.retargeted.component, extent);
    check(dCpu <= tolerance, `wasm CPU twin ${dCpu} from native`);
    const gpu = await GpuEvaluator.create(context, lib, fx.retargeted.samples.length);
    gpu.evaluate(fx.retargeted.samples);
    const dGpu = (await gpu.readBack()).componentDeviation(fx.retargeted.component, extent);
    check(dGpu <= tolerance, `GPU ${dGpu} from native`);
    // Reported, not asserted: the BVH's rotations come from sin/cos (libm differs).
    const glb = fnv1a(mocap.exportGlb('cmu.glb'));
    const fp = mocap.compressionFingerprint(fx.compressed.tolerance);
    return `wasm twin ${dCpu.toExponential(2)}, GPU ${dGpu.toExponential(2)} from native; the BVH as imported ${glb === fx.retargeted.mocapGlb ? 'bit-identical' : `differs in its bits (${glb} vs ${fx.retargeted.mocapGlb})`}, its compression ${fp === fx.retargeted.mocapFingerprint ? 'identical' : 'differs accordingly'}`;
  });

  await test('a crowd steps with root motion on the GPU', async () => {
    const lib = retargeted(fx, mike, mocap);
    const crowd = new Crowd(lib);
    crowd.addAll(fx.crowd.agents);
    const gpu = await GpuCrowd.create(context, lib, crowd, { outputs: 'componentAndSkinning' });
    const start = await gpu.readPlacements();
    for (let s = 0; s < fx.crowd.steps; s++) {
      gpu.step(fx.crowd.dt);
      crowd.advance(fx.crowd.dt);
    }
    const moved = await gpu.readPlacements();
    let least = Infinity;
    for (let i = 0; i < moved.length; i += 10) {
      least = Math.min(least, Math.hypot(moved[i] - start[i], moved[i + 2] - start[i + 2]));
    }
    check(least > 0.05 * extent, `an instance moved only ${least}`);
    const dGpu = placementDeviation(moved, fx.crowd.placements, extent);
    check(dGpu <= 1e-3, `GPU placements ${dGpu} from the native twin's`);
    const dTwin = placementDeviation(crowd.placements(), fx.crowd.placements, extent);
    check(dTwin <= tolerance, `wasm twin placements ${dTwin} from the native twin's`);
    const poses = await gpu.readPoses();
    const dPose = poses.componentDeviation(crowd.evaluate().component, extent);
    check(dPose <= tolerance, `crowd poses ${dPose} from the wasm twin's`);
    const chunk = gpu.chunks[0];
    check(chunk.skinning instanceof GPUBuffer && chunk.rootMotion instanceof GPUBuffer, 'chunks hold GPUBuffers');
    check((chunk.skinning.usage & GPUBufferUsage.STORAGE) !== 0, 'the skinning buffer is a storage buffer');
    check(chunk.skinning.size >= chunk.count * lib.boneCount * 48, `skinning buffer of ${chunk.skinning.size} bytes`);
    return `${fx.crowd.agents.length} agents, ${fx.crowd.steps} steps: each moved at least ${least.toFixed(3)} (${(least / extent).toFixed(3)} of the size); GPU placements ${dGpu.toExponential(2)} from native, wasm twin ${dTwin.toExponential(2)}, poses ${dPose.toExponential(2)}`;
  });

  await test("the page's own GPUDevice (WebGPU default limits)", async () => {
    const adapter = await navigator.gpu.requestAdapter();
    const device = await adapter.requestDevice();
    const ctx = await Context.fromDevice(device);
    check(ctx.device === device, 'the context holds the page device');
    check(Object.prototype.hasOwnProperty.call(navigator, 'gpu') === false, 'navigator.gpu restored');
    const lib = retargeted(fx, mike, mocap);
    const crowd = new Crowd(lib);
    crowd.addAll(gridAgents(lib, 300, 20, 6));
    // Bindings of 256 KiB: the library's tables fit, 127 instances' skinning a chunk.
    const gpu = await GpuCrowd.create(ctx, lib, crowd, { outputs: 'skinning', maxBindingSize: 256 * 1024 });
    for (let s = 0; s < fx.crowd.steps; s++) {
      gpu.step(fx.crowd.dt);
      crowd.advance(fx.crowd.dt);
    }
    const d = placementDeviation(await gpu.readPlacements(), crowd.placements(), extent);
    check(d <= 1e-3, `placements ${d} from the wasm twin's`);
    const chunks = gpu.chunks;
    check(chunks.length === 3, `${chunks.length} chunk(s) with 256 KiB bindings`);
    check(chunks.every((c) => c.skinning.size <= 256 * 1024), 'chunks within the binding size');
    return `300 agents in ${chunks.length} chunks of at most ${Math.max(...chunks.map((c) => c.count))} instances; placements ${d.toExponential(2)} from the wasm twin's; the device's limits: ${device.limits.maxStorageBuffersPerShaderStage} storage buffers a stage, ${device.limits.maxStorageBufferBindingSize} bytes a binding, ${device.limits.maxComputeWorkgroupStorageSize} bytes of workgroup memory`;
  });

  await test('crowd GPU time per step, 10,000 instances (the demo crowd)', async () => {
    // fixtures::retargeted_library and the demo's grid: the crowd `posegpu-web-fixtures bench` times natively.
    const lib = retargeted(fx, mike, mocap);
    const crowd = new Crowd(lib);
    crowd.addAll(gridAgents(lib, 10000, 100, 6));
    const gpu = await GpuCrowd.create(context, lib, crowd, { outputs: 'skinning' });
    check(context.hasTimestamps, 'no timestamp queries');
    await gpu.stepTimed(1 / 60);
    const totals = [];
    let passes = null;
    for (let k = 0; k < 10; k++) {
      const t = await gpu.stepTimed(1 / 60);
      totals.push(t.totalMs);
      passes = t.passes;
    }
    const sorted = [...totals].sort((a, b) => a - b);
    const median = sorted[sorted.length >> 1];
    check(median > 0, `median ${median}`);
    const each = passes.map((p) => `${p.pass} ${p.ms.toFixed(3)}`).join(', ');
    return `10000 x ${lib.boneCount} bones, 10 steps: GPU ${median.toFixed(3)} ms per step (median; min ${sorted[0].toFixed(3)}, max ${sorted[sorted.length - 1].toFixed(3)}); last step's passes (ms): ${each}`;
  });

  await test('bad files and bad calls reject with posegpu messages', async () => {
    const seen = [];
    for (const bad of fx.badFiles) {
      const data = bad.text !== null ? new TextEncoder().encode(bad.text) : mikeBytes.slice(0, bad.prefix);
      const message = await rejection(load(data, bad.format, bad.name));
      check(message === bad.message, `${bad.name}: "${message}", native "${bad.message}"`);
      seen.push(message);
    }
    const lib = Library.fromAsset(mike);
    const nope = thrown(() => lib.findClip('Moonwalk'));
    check(nope.includes('Moonwalk'), `findClip: ${nope}`);
    const crowd = new Crowd(lib);
    const empty = await rejection(GpuCrowd.create(context, lib, crowd));
    check(empty.includes('no instances'), `empty crowd: ${empty}`);
    crowd.add({ players: [{ clip: 'Walk' }] });
    const gpu = await GpuCrowd.create(context, lib, crowd);
    const dt = thrown(() => gpu.step(-1));
    check(dt.includes('time step -1'), `step(-1): ${dt}`);
    const spec = thrown(() => crowd.add({ players: [{ clip: 'Walk', speed: 2 }] }));
    check(spec.includes('speed'), `unknown field: ${spec}`);
    const format = await rejection(load(mikeBytes, 'fbx'));
    check(format.includes('fbx'), `format: ${format}`);
    return [...seen, nope, empty, dt, spec, format].map((m) => JSON.stringify(m)).join('; ');
  });
}

main()
  .catch((e) => results.push({ name: 'setup', ok: false, detail: String(e?.stack ?? e) }))
  .finally(() => { window.__done = true; note('done'); });
