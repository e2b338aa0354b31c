// The demo: 10,000 Mech_Mikes (anim-data) playing a mix of their own clips and a CMU walk
// retargeted onto them, moved by root motion, evaluated by posegpu on WebGPU and drawn by
// three.js's WebGPU renderer from posegpu's skinning buffers on the same device.
//
// URL parameters: n (instances, default 10000), device=posegpu|page (who opens the device),
// columns, size=WxH (fixed canvas size, for screenshots).
import * as THREE from 'three/webgpu';
import { GLTFLoader } from 'three/addons/loaders/GLTFLoader.js';
import {
  Context, Crowd, GpuCrowd, LibraryBuilder, gridAgents, initPosegpu, load, loadUrl,
} from 'posegpu-web';
import { crowdMeshes } from 'posegpu-web/three';

const params = new URLSearchParams(location.search);
const N = Number(params.get('n') ?? 10000);
const COLUMNS = Number(params.get('columns') ?? Math.ceil(Math.sqrt(N)));
const CHARACTER = '/anim-data/gltf/quaternius/Mech_Mike.glb';
const MOCAP = '/anim-data/bvh/cmu_walk_delfem2.bvh';
const hud = document.getElementById('hud');
if (params.has('debug')) {
  // Who destroys a device or a buffer: logged with the caller's stack.
  for (const type of [GPUDevice, GPUBuffer]) {
    const destroy = type.prototype.destroy;
    type.prototype.destroy = function () {
      console.error(`${type.name}.destroy ${this.label}`, new Error().stack);
      return destroy.call(this);
    };
  }
}
const state = { frames: 0, fps: 0, crowdMs: null, renderMs: null, adapter: '', error: null, ready: false };
window.__demo = state;

function show(lines) { hud.textContent = lines.join('\n'); }
const trace = params.has('debug') ? (what) => console.warn(`demo ${performance.now().toFixed(0)} ms: ${what}`) : () => {};

async function main() {
  await initPosegpu();
  const glbBytes = new Uint8Array(await (await fetch(CHARACTER)).arrayBuffer());
  const mike = await load(glbBytes, 'glb', 'Mech_Mike.glb');
  const mocap = await loadUrl(MOCAP);
  trace('loaded');

  // The library: three of Mike's clips, then the walk through a character plan.
  const builder = new LibraryBuilder(mike);
  builder.addClips(mike, ['Walk', 'Run', 'Idle']);
  const source = builder.addCharacterSource('cmu', mocap);
  builder.addClipsFrom(source, mocap);
  const library = builder.build();
  trace('library built');

  const spacing = Math.max(1, mike.extent * 1.1);
  const crowd = new Crowd(library);
  crowd.addAll(gridAgents(library, N, COLUMNS, spacing));

  // One device for both: posegpu's handed to three.js, or the page's (three.js's) adopted.
  let renderer;
  let context;
  const size = params.get('size')?.split('x').map(Number);
  const antialias = params.get('aa') !== '0';
  if (params.get('device') === 'page') {
    renderer = new THREE.WebGPURenderer({ antialias, trackTimestamp: true });
    await renderer.init();
    context = await Context.fromDevice(renderer.backend.device);
  } else {
    context = await Context.create();
    renderer = new THREE.WebGPURenderer({ device: context.device, antialias, trackTimestamp: true });
    await renderer.init();
  }
  const info = context.device.adapterInfo ?? {};
  state.adapter = `${context.adapter} ${[info.vendor, info.architecture, info.description].filter(Boolean).join(' ')}`;
  trace('context');
  context.device.lost.then((info) => {
    state.error = `device lost: ${info.reason} ${info.message}`;
    show([`error: ${state.error}`]);
  });
  const gpuCrowd = await GpuCrowd.create(context, library, crowd, { outputs: 'skinning' });
  trace('gpu crowd');

  if (size) renderer.setSize(size[0], size[1], true); else renderer.setSize(innerWidth, innerHeight);
  renderer.setPixelRatio(size ? 1 : devicePixelRatio);
  document.body.appendChild(renderer.domElement);

  const scene = new THREE.Scene();
  scene.background = new THREE.Color(0x9fb3c8);
  scene.fog = new THREE.Fog(0x9fb3c8, spacing * 20, spacing * 90);
  scene.add(new THREE.HemisphereLight(0xe8f0ff, 0x40352a, 2.2));
  const sun = new THREE.DirectionalLight(0xffffff, 2.5);
  sun.position.set(1, 2, 1.5);
  scene.add(sun);

  const rows = Math.ceil(N / COLUMNS);
  const width = COLUMNS * spacing;
  const depth = rows * spacing;
  const min = [-spacing / 2, -spacing / 2];
  const floor = new THREE.Mesh(
    new THREE.PlaneGeometry(width * 1.5, depth * 1.5),
    new THREE.MeshStandardNodeMaterial({ color: 0x6d7a63, roughness: 0.95 }),
  );
  floor.rotation.x = -Math.PI / 2;
  floor.position.set(min[0] + width / 2, 0, min[1] + depth / 2);
  scene.add(floor);
  const grid = new THREE.GridHelper(Math.max(width, depth) * 1.5, Math.round(Math.max(COLUMNS, rows) * 1.5), 0x4a5545, 0x58654f);
  grid.position.set(floor.position.x, 0.01, floor.position.z);
  scene.add(grid);

  const gltf = await new GLTFLoader().parseAsync(glbBytes.buffer, '');
  trace('gltf parsed');
  scene.add(crowdMeshes(renderer, gpuCrowd, gltf.scene, mike, { wrap: { min, size: [width, depth] } }));

  const aspect = (size ? size[0] / size[1] : innerWidth / innerHeight);
  const camera = new THREE.PerspectiveCamera(50, aspect, spacing * 0.1, spacing * 400);
  camera.position.set(min[0] - spacing * 3, spacing * 3.2, min[1] - spacing * 3);
  camera.lookAt(min[0] + spacing * 6, 0, min[1] + spacing * 6);
  addEventListener('resize', () => {
    if (size) return;
    renderer.setSize(innerWidth, innerHeight);
    camera.aspect = innerWidth / innerHeight;
    camera.updateProjectionMatrix();
  });

  let last = performance.now();
  let windowStart = last;
  let windowFrames = 0;
  let timing = null;
  let renderTiming = null;
  state.readPlacements = () => gpuCrowd.readPlacements();
  state.ready = true;
  trace('ready');
  const frame = async () => {
    const now = performance.now();
    const dt = Math.min((now - last) / 1000, 0.1);
    last = now;
    // Timed steps one at a time (each reads its timestamps back); plain steps in between.
    if (timing === null) {
      timing = gpuCrowd.stepTimed(dt).then((t) => { state.crowdMs = t?.totalMs ?? null; timing = null; });
    } else {
      gpuCrowd.step(dt);
    }
    renderer.render(scene, camera);
    if (renderTiming === null && renderer.hasFeature('timestamp-query')) {
      renderTiming = renderer.resolveTimestampsAsync(THREE.TimestampQuery.RENDER)
        .then((ms) => { if (typeof ms === 'number') state.renderMs = ms; })
        .catch(() => {})
        .finally(() => { renderTiming = null; });
    }
    state.frames++;
    trace(`frame ${state.frames}`);
    windowFrames++;
    if (now - windowStart >= 1000) {
      state.fps = (windowFrames * 1000) / (now - windowStart);
      windowStart = now;
      windowFrames = 0;
    }
    const ms = (v) => (v === null ? 'n/a' : `${v.toFixed(2)} ms`);
    show([
      `posegpu + three.js WebGPU — ${N.toLocaleString('en')} × Mech_Mike (${library.boneCount} bones)`,
      `adapter: ${state.adapter}`,
      `clips: Walk, Run, Idle + CMU walk retargeted (character plan), root motion`,
      `FPS ${state.fps.toFixed(1)}   crowd GPU ${ms(state.crowdMs)}   render GPU ${ms(state.renderMs)}`,
    ]);
    if (pausing) {
      // Stopped between frames, the GPU idle: a screenshot then sees a finished frame.
      await context.device.queue.onSubmittedWorkDone();
      pausing();
      pausing = null;
      return;
    }
    requestAnimationFrame(frame);
  };
  let pausing = null;
  // For tests: stop after the frame in flight; go on (the clock then skips the pause).
  state.pause = () => new Promise((done) => { pausing = done; });
  state.resume = () => {
    last = performance.now();
    requestAnimationFrame(frame);
  };
  requestAnimationFrame(frame);
}

main().catch((e) => {
  state.error = String(e?.message ?? e);
  hud.classList.add('error');
  show([`error: ${state.error}`]);
  console.error(e);
});
