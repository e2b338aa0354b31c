import type { Group, Matrix4, Object3D, SkinnedMesh, StorageBufferAttribute, BufferGeometry, Uint16BufferAttribute, WebGPURenderer } from 'three/webgpu';
import type { Asset, GpuCrowd, GpuEvaluator } from './index.js';

export interface CrowdMeshOptions {
  /** false: every instance at the origin (an evaluator has no placements). Default: a crowd's root motion. */
  placements?: boolean;
  /** Wrap placements into the rectangle [min, min + size) on x and z (a treadmill for demos). */
  wrap?: { min: [number, number]; size: [number, number] };
}

/** Instanced meshes skinned from posegpu's buffers, one per SkinnedMesh of `model` and output chunk. */
export function crowdMeshes(renderer: WebGPURenderer, posed: GpuCrowd | GpuEvaluator, model: Object3D, asset: Asset, options?: CrowdMeshOptions): Group;
/** A storage attribute bound to a GPUBuffer of the renderer's device (never dispose it). */
export function externalStorage(renderer: WebGPURenderer, buffer: GPUBuffer): StorageBufferAttribute;
/** The world matrix of the nodes above the skeleton's roots. */
export function skeletonRoot(mesh: SkinnedMesh, asset: Asset): Matrix4;
/** skinIndex renumbered from the skin's joints to posegpu's bone order. */
export function boneIndices(geometry: BufferGeometry, asset: Asset): Uint16BufferAttribute;
