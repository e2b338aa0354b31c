// Runs the browser tests (web/test/index.html) and screenshots the demo in the system's
// headless Chromium through the system's chromedriver (WebDriver over HTTP: no browser is
// downloaded). WebGPU runs on SwiftShader, Chromium's CPU Vulkan.
//
//   node web/test/run.mjs [--only tests|demo] [--demo-instances N] [--screenshot PATH]
//
// Prints one line per test and a closing "N passed, N failed"; exits 1 on any failure.
import { spawn } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { serve } from '../serve.mjs';

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const args = process.argv.slice(2);
const option = (name, fallback) => {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : fallback;
};
const only = option('--only', null);
const demoInstances = Number(option('--demo-instances', 10000));
const screenshot = path.resolve(repo, option('--screenshot', 'docs/web_demo.png'));
const outDir = path.join(repo, 'crates/posegpu-web/target/web-fixtures');
const chromium = process.env.CHROMIUM ?? '/usr/bin/chromium';
const chromedriver = process.env.CHROMEDRIVER ?? '/usr/bin/chromedriver';
export const FLAGS = [
  '--headless=new', '--enable-unsafe-webgpu', '--enable-features=Vulkan', '--use-vulkan=swiftshader',
  '--use-webgpu-adapter=swiftshader', '--enable-unsafe-swiftshader', '--window-size=1280,720',
  // The canvas's swap chain needs ANGLE on SwiftShader too: without it Chromium finds no
  // shared-image backing for a WebGPU canvas ("Could not find SharedImageBackingFactory ...
  // WebgpuSwapChainTexture") and loses the device at the first present.
  '--use-angle=swiftshader',
  '--disable-dev-shm-usage', '--hide-scrollbars',
  // SwiftShader draws 10,000 characters in seconds a frame: past the GPU watchdog's limit.
  '--disable-gpu-watchdog',
  ...(process.getuid?.() === 0 ? ['--no-sandbox'] : []),
  ...(process.env.CHROMIUM_FLAGS ? process.env.CHROMIUM_FLAGS.split(' ') : []),
];

const sleep = (ms) => new Promise((ok) => setTimeout(ok, ms));

function freePort() {
  return new Promise((ok) => {
    const s = net.createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => ok(port));
    });
  });
}

/** A chromedriver of our own, and a WebDriver session in Chromium. */
async function browser() {
  const port = await freePort();
  const extra = process.env.CHROMEDRIVER_ARGS ? process.env.CHROMEDRIVER_ARGS.split(' ') : [];
  const driver = spawn(chromedriver, [`--port=${port}`, ...extra], { stdio: ['ignore', 'ignore', 'inherit'] });
  const base = `http://127.0.0.1:${port}`;
  const call = async (method, url, body) => {
    const response = await fetch(base + url, {
      method, headers: { 'content-type': 'application/json' }, body: body && JSON.stringify(body),
    });
    const json = await response.json();
    if (!response.ok) throw new Error(`${method} ${url}: ${JSON.stringify(json.value ?? json).slice(0, 2000)}`);
    return json.value;
  };
  for (let i = 0; ; i++) {
    try {
      await call('GET', '/status');
      break;
    } catch (e) {
      if (i > 100) throw new Error(`chromedriver did not start: ${e.message}`);
      await sleep(100);
    }
  }
  const session = await call('POST', '/session', {
    capabilities: {
      alwaysMatch: {
        browserName: 'chrome',
        'goog:chromeOptions': { binary: chromium, args: FLAGS },
        'goog:loggingPrefs': { browser: 'ALL' },
        timeouts: { script: 600000, pageLoad: 120000 },
      },
    },
  });
  const id = session.sessionId;
  const s = (m, p, b) => call(m, `/session/${id}${p}`, b);
  return {
    go: (url) => s('POST', '/url', { url }),
    run: (script, ...a) => s('POST', '/execute/sync', { script, args: a }),
    screenshot: async () => Buffer.from(await s('GET', '/screenshot'), 'base64'),
    logs: () => s('POST', '/se/log', { type: 'browser' }).catch(() => []),
    version: session.capabilities?.browserVersion,
    close: async () => {
      await s('DELETE', '').catch(() => {});
      driver.kill();
    },
  };
}

/** Waits until `script` returns a truthy value (polling), or fails after `seconds`. */
async function until(b, script, seconds, what) {
  const end = Date.now() + seconds * 1000;
  for (;;) {
    const value = await b.run(script);
    if (value) return value;
    if (Date.now() > end) throw new Error(`timed out after ${seconds} s waiting for ${what}`);
    await sleep(500);
  }
}

async function printLogs(b) {
  for (const entry of await b.logs()) console.log(`  [console ${entry.level}] ${entry.message}`);
}

async function runTests(b, origin, results) {
  await b.go(`${origin}/web/test/index.html`);
  await until(b, 'return window.__done === true', 900, 'the tests');
  for (const r of await b.run('return window.__results')) {
    results.push(r);
    console.log(`${r.ok ? 'ok' : 'FAILED'} - ${r.name} (${(r.ms / 1000).toFixed(1)} s): ${r.detail}`);
  }
}

async function runDemo(b, origin, results) {
  const record = (name, ok, detail) => {
    results.push({ name, ok, detail });
    console.log(`${ok ? 'ok' : 'FAILED'} - ${name}: ${detail}`);
  };
  await b.go(`${origin}/web/demo/index.html?n=${demoInstances}&aa=0${process.env.DEMO_QUERY ?? ''}`);
  const ready = 'const d = window.__demo; return d && (d.error || (d.ready && d.frames >= 3))';
  await until(b, ready, 900, 'the demo to draw 3 frames');
  const error = await b.run('return window.__demo.error');
  if (error) {
    record('demo page', false, error);
    return;
  }
  // Paused between frames for each screenshot (a frame of 10,000 characters on SwiftShader takes
  // longer than chromedriver waits for the compositor), a second of play between them.
  const probe = `const d = window.__demo; await d.pause(); const p = await d.readPlacements();
    return { frames: d.frames, fps: d.fps, crowdMs: d.crowdMs, renderMs: d.renderMs,
      adapter: d.adapter, first: Array.from(p.slice(0, 3)),
      hud: document.getElementById('hud').textContent };`;
  const a = await b.run(`return (async () => { ${probe} })()`);
  const first = await b.screenshot();
  await b.run('window.__demo.resume()');
  const start = Date.now();
  await until(b, `return window.__demo.frames >= ${a.frames + 2}`, 900, 'two more frames');
  await sleep(Math.max(0, 1000 - (Date.now() - start)));
  const c = await b.run(`return (async () => { ${probe} })()`);
  const later = await b.screenshot();
  mkdirSync(path.dirname(screenshot), { recursive: true });
  writeFileSync(screenshot, first);
  writeFileSync(path.join(outDir, 'web_demo_later.png'), later);
  const moved = Math.hypot(c.first[0] - a.first[0], c.first[2] - a.first[2]);
  record('demo page renders', first.length > 10000,
    `${demoInstances} instances; ${path.relative(repo, screenshot)} (${first.length} bytes); ${a.hud.replace(/\n/g, ' | ')}`);
  record('demo characters move', moved > 0 && !first.equals(later),
    `instance 0 walked ${moved.toFixed(3)} between frames ${a.frames} and ${c.frames}; screenshots ${first.equals(later) ? 'identical' : 'differ'} (later one: ${path.relative(repo, path.join(outDir, 'web_demo_later.png'))}); FPS ${c.fps.toFixed(2)}, crowd GPU ${c.crowdMs?.toFixed(3)} ms, render GPU ${c.renderMs?.toFixed?.(3) ?? 'n/a'} ms`);
}

async function main() {
  mkdirSync(outDir, { recursive: true });
  const server = await serve(0);
  const origin = `http://127.0.0.1:${server.address().port}`;
  const b = await browser();
  console.log(`chromium ${b.version}; flags: ${FLAGS.join(' ')}`);
  const results = [];
  try {
    if (only !== 'demo') await runTests(b, origin, results);
    if (only !== 'tests') await runDemo(b, origin, results);
  } catch (e) {
    results.push({ name: 'runner', ok: false, detail: e.message });
    console.log(`FAILED - runner: ${e.message}`);
  } finally {
    if (results.some((r) => !r.ok) || process.env.POSEGPU_WEB_LOGS) await printLogs(b);
    await b.close();
    server.close();
  }
  const failed = results.filter((r) => !r.ok).length;
  console.log(`${results.length - failed} passed, ${failed} failed`);
  process.exit(failed === 0 ? 0 : 1);
}

main();
