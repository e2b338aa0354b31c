// A static server for the demo and the browser tests, on 127.0.0.1 only: the repository at /,
// ../shared/anim-data (or $POSEGPU_ANIM_DATA) at /anim-data/. `/` opens the demo.
import { createReadStream, promises as fs } from 'node:fs';
import { createServer } from 'node:http';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const animData = path.resolve(process.env.POSEGPU_ANIM_DATA ?? path.join(repo, '..', 'shared', 'anim-data'));
const types = {
  '.html': 'text/html; charset=utf-8', '.js': 'text/javascript', '.mjs': 'text/javascript',
  '.wasm': 'application/wasm', '.json': 'application/json', '.glb': 'model/gltf-binary',
  '.gltf': 'model/gltf+json', '.bin': 'application/octet-stream', '.bvh': 'text/plain',
  '.png': 'image/png', '.css': 'text/css', '.ts': 'text/plain', '.map': 'application/json',
};

/** The file a URL path names, inside the repository or anim-data; null outside them. */
function resolve(urlPath) {
  const clean = decodeURIComponent(urlPath.split('?')[0]);
  const [base, rest] = clean.startsWith('/anim-data/')
    ? [animData, clean.slice('/anim-data/'.length)]
    : [repo, clean.slice(1)];
  const file = path.resolve(base, rest);
  return file === base || file.startsWith(base + path.sep) ? file : null;
}

export function serve(port = 0) {
  const server = createServer(async (req, res) => {
    if (req.url === '/' || req.url === '') {
      res.writeHead(302, { location: '/web/demo/index.html' }).end();
      return;
    }
    const file = resolve(req.url);
    const stat = file && (await fs.stat(file).catch(() => null));
    if (!stat || !stat.isFile()) {
      res.writeHead(404, { 'content-type': 'text/plain' }).end(`not found: ${req.url}\n`);
      return;
    }
    res.writeHead(200, {
      'content-type': types[path.extname(file)] ?? 'application/octet-stream',
      'content-length': stat.size,
      'cache-control': 'no-store',
    });
    createReadStream(file).pipe(res);
  });
  return new Promise((ok, fail) => {
    server.once('error', fail);
    server.listen(port, '127.0.0.1', () => ok(server));
  });
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const server = await serve(Number(process.env.PORT ?? process.argv[2] ?? 8080));
  const { port } = server.address();
  console.log(`posegpu web demo: http://127.0.0.1:${port}/  (anim-data from ${animData})`);
}
