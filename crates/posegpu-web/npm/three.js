// posegpu-web/three: draws a posegpu crowd with three.js's WebGPU renderer, skinned in the
// vertex stage straight from posegpu's skinning buffers (and placed by its root-motion
// buffers) on the same GPUDevice: no copy through the CPU, no three.js Skeleton.
//
// three.js r187 has no instanced skinned mesh, so each glTF SkinnedMesh becomes one instanced
// Mesh per output chunk whose node material reads the chunk's GPUBuffers as storage buffers:
// a StorageBufferAttribute whose GPU buffer is posegpu's (three creates a buffer only for an
// attribute that has none).
import {
  Group, InstancedBufferGeometry, Matrix4, Mesh, MeshStandardNodeMaterial, StorageBufferAttribute,
  Uint16BufferAttribute,
} from 'three/webgpu';
import {
  Fn, attribute, floor, instanceIndex, normalLocal, normalGeometry, positionGeometry, storage,
  uint, uniform, vec3, vec4,
} from 'three/tsl';

/**
 * A storage attribute bound to an existing GPUBuffer of `renderer`'s device, read as `vec4`s.
 * Never dispose it: three would destroy posegpu's buffer.
 */
export function externalStorage(renderer, buffer) {
  const attr = new StorageBufferAttribute(new Float32Array(4), 4);
  attr.name = buffer.label || 'posegpu';
  renderer.backend.get(attr).buffer = buffer;
  return attr;
}

/** The matrix of the nodes above the skeleton's roots (posegpu's "root", applied after skinning). */
export function skeletonRoot(skinnedMesh, asset) {
  skinnedMesh.updateWorldMatrix(true, false);
  const bones = skinnedMesh.skeleton.bones;
  const parents = asset.parents;
  const index = asset.sourceIndex;
  for (let b = 0; b < parents.length; b++) {
    if (parents[b] === -1 && index[b] < bones.length && bones[index[b]].parent) {
      const p = bones[index[b]].parent;
      p.updateWorldMatrix(true, false);
      return p.matrixWorld.clone();
    }
  }
  return new Matrix4();
}

/** `skinIndex` renumbered from the skin's joints to posegpu's bones (parents first). */
export function boneIndices(geometry, asset) {
  const index = asset.sourceIndex;
  const jointToBone = new Uint16Array(Math.max(0, ...index) + 1);
  index.forEach((joint, bone) => { jointToBone[joint] = bone; });
  const joints = geometry.getAttribute('skinIndex');
  const out = new Uint16Array(joints.count * 4);
  for (let v = 0; v < joints.count; v++) {
    for (let k = 0; k < 4; k++) out[v * 4 + k] = jointToBone[joints.getComponent(v, k)] ?? 0;
  }
  return new Uint16BufferAttribute(out, 4);
}

/** Rotates `v` by the unit quaternion `q` (xyzw). */
const rotate = (q, v) => {
  const u = q.xyz;
  return v.add(u.cross(u.cross(v).add(v.mul(q.w))).mul(2));
};

/**
 * The vertex stage of one chunk: `p = root · Σ w · skinning[i · bones + bone] · (pos, 1)`, then
 * the placement `t + r ⊗ (s ∘ p)` from the root-motion records (96 bytes: delta, placement).
 */
function skinningNode({ skin, motion, bones, layout, root, wrap }) {
  return Fn(() => {
    const index = attribute('skinIndex', 'uvec4');
    const weight = attribute('skinWeight', 'vec4');
    const p4 = vec4(positionGeometry, 1);
    const n4 = vec4(normalGeometry, 0);
    const base = instanceIndex.mul(uint(bones));
    const position = vec3(0).toVar();
    const normal = vec3(0).toVar();
    for (const c of ['x', 'y', 'z', 'w']) {
      const w = weight[c];
      const bone = base.add(index[c]);
      if (layout === 'columns4x4') {
        const at = bone.mul(4);
        const [c0, c1, c2, c3] = [0, 1, 2, 3].map((k) => skin.element(at.add(k)).xyz);
        position.addAssign(c0.mul(p4.x).add(c1.mul(p4.y)).add(c2.mul(p4.z)).add(c3).mul(w));
        normal.addAssign(c0.mul(n4.x).add(c1.mul(n4.y)).add(c2.mul(n4.z)).mul(w));
      } else {
        const at = bone.mul(3);
        const [r0, r1, r2] = [0, 1, 2].map((k) => skin.element(at.add(k)));
        position.addAssign(vec3(r0.dot(p4), r1.dot(p4), r2.dot(p4)).mul(w));
        normal.addAssign(vec3(r0.dot(n4), r1.dot(n4), r2.dot(n4)).mul(w));
      }
    }
    let p = root.mul(vec4(position, 1)).xyz;
    let n = root.mul(vec4(normal, 0)).xyz;
    if (motion) {
      const at = instanceIndex.mul(6);
      const r = motion.element(at.add(3));
      let t = motion.element(at.add(4)).xyz;
      const s = motion.element(at.add(5)).xyz;
      if (wrap) {
        // A treadmill for demos: placements wrapped into the floor's rectangle.
        const lo = vec3(wrap.min[0], 0, wrap.min[1]);
        const size = vec3(wrap.size[0], 1e30, wrap.size[1]);
        t = t.sub(lo).sub(floor(t.sub(lo).div(size)).mul(size)).add(lo);
      }
      p = rotate(r, p.mul(s)).add(t);
      n = rotate(r, n.div(s));
    }
    normalLocal.assign(n.normalize());
    return p;
  })();
}

/** A node material with the look of `source` (a glTF material) and posegpu's skinning. */
function crowdMaterial(source, positionNode) {
  const m = new MeshStandardNodeMaterial();
  for (const key of ['color', 'map', 'emissive', 'emissiveMap', 'roughness', 'metalness',
    'roughnessMap', 'metalnessMap', 'normalMap', 'vertexColors', 'side', 'transparent', 'opacity']) {
    if (source && source[key] !== undefined && source[key] !== null) {
      m[key] = source[key]?.isColor ? source[key].clone() : source[key];
    }
  }
  m.positionNode = positionNode;
  return m;
}

/**
 * The crowd drawn: for each SkinnedMesh under `model` (a glTF scene from GLTFLoader, of the
 * asset posegpu loaded) and each output chunk of `posed` (a GpuCrowd or GpuEvaluator), an
 * instanced Mesh skinned from the chunk's buffers. Placements come from a crowd's root motion
 * (`options.placements: false` to stand every instance at the origin, as an evaluator's).
 * `options.wrap = {min: [x, z], size: [w, d]}` wraps placements into a rectangle.
 * Rebuild it when the chunks change (an evaluator that grew); a crowd's never do.
 */
export function crowdMeshes(renderer, posed, model, asset, options = {}) {
  const group = new Group();
  group.name = 'posegpu crowd';
  model.updateMatrixWorld(true);
  const skinned = [];
  model.traverse((o) => { if (o.isSkinnedMesh) skinned.push(o); });
  if (skinned.length === 0) throw new Error('crowdMeshes: the model has no SkinnedMesh');
  const bones = posed.boneCount;
  for (const chunk of posed.chunks) {
    const skin = storage(externalStorage(renderer, chunk.skinning), 'vec4').toReadOnly();
    const usePlacements = options.placements !== false && chunk.rootMotion;
    const motion = usePlacements
      ? storage(externalStorage(renderer, chunk.rootMotion), 'vec4').toReadOnly()
      : null;
    for (const source of skinned) {
      const geometry = new InstancedBufferGeometry();
      geometry.index = source.geometry.index;
      for (const [name, attr] of Object.entries(source.geometry.attributes)) {
        geometry.setAttribute(name, attr);
      }
      geometry.setAttribute('skinIndex', boneIndices(source.geometry, asset));
      geometry.instanceCount = chunk.count;
      const root = uniform(skeletonRoot(source, asset));
      const node = skinningNode({
        skin, motion, bones, layout: chunk.skinningLayout, root, wrap: options.wrap,
      });
      const materials = Array.isArray(source.material) ? source.material : [source.material];
      const made = materials.map((m) => crowdMaterial(m, node));
      const mesh = new Mesh(geometry, Array.isArray(source.material) ? made : made[0]);
      mesh.frustumCulled = false;
      mesh.name = `${source.name} [${chunk.first}, ${chunk.first + chunk.count})`;
      group.add(mesh);
    }
  }
  return group;
}
