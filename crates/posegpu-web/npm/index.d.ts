export * from './wasm/posegpu_web.js';
import type { Asset } from './wasm/posegpu_web.js';

/** Fetches and instantiates the wasm module once (the URL of posegpu_web_bg.wasm by default). */
export function initPosegpu(moduleOrPath?: string | URL | Request | BufferSource | WebAssembly.Module): Promise<void>;

/** Fetches a .glb, .gltf (embedded buffers) or .bvh file and loads it; the format comes from the name unless given. */
export function loadUrl(url: string, format?: 'glb' | 'gltf' | 'bvh'): Promise<Asset>;
