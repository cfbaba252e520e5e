'use strict';
// The playground's game review (GET / on the real `advisor2048 serve`, ADVISOR_URL, started by run.sh): a record in,
// POST /analyze, then the game stepped through move by move with the loss chart and the worst moves.

const fs = require('node:fs');
const path = require('node:path');
const test = require('node:test');
const assert = require('node:assert/strict');
const lib = require('./lib');

const SEARCH = { profile: 'classic', depth: 2 };
const num = (s) => Number(String(s).replace(/[^\d.eE+-]/g, ''));

async function post(pathname, body) {
  const res = await fetch(`${lib.advisorUrl()}${pathname}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  const json = await res.json();
  assert.equal(res.status, 200, `${pathname}: ${JSON.stringify(json).slice(0, 400)}`);
  return json;
}

/**
 * A game of `n` moves played through POST /best-move: the search's choice, except at the `bad` moves, where the legal
 * direction it values least; after each move a 2 appears on the first empty cell (row-major), so the record is one game.
 */
async function gameWithBadMoves(n, bad, start = [[0, 0, 0, 0], [0, 0, 0, 0], [0, 2, 0, 0], [0, 0, 0, 2]]) {
  let board = start;
  const moves = [];
  const played = new Map();
  while (moves.length < n) {
    const a = await post('/best-move', Object.assign({ board }, SEARCH));
    assert.ok(a.direction, `game over after ${moves.length} moves`);
    const legal = a.moves.filter((m) => m.legal);
    let m = legal.find((x) => x.direction === a.direction);
    if (bad.includes(moves.length)) {
      assert.ok(legal.length > 1, `move ${moves.length} is forced: pick other bad moves`);
      m = legal.reduce((lo, x) => (x.value < lo.value ? x : lo));
      played.set(moves.length, { played: m.direction, best: a.direction });
    }
    moves.push({ board, direction: m.direction });
    const next = m.board.map((r) => r.slice());
    const empty = next.flat().indexOf(0);
    if (empty >= 0) next[empty >> 2][empty & 3] = 2;
    board = next;
  }
  return { moves, played };
}

async function openPlayground() {
  const b = await lib.openBrowser();
  await b.page.goto(`${lib.advisorUrl()}/`);
  await b.page.waitForSelector('#board .cell');
  await b.page.selectOption('#profile', 'classic');
  await b.page.fill('#depth', '2');
  return b;
}

const waitReviewOrError = (page) =>
  page.waitForFunction(() => !document.getElementById('review-view').hidden || !document.getElementById('error').hidden);

const shownRows = async (page) => JSON.parse(await page.textContent('#as-rows'));

test('playground review: a pasted record with three bad moves, the loss chart, the worst moves one click away, ' +
  'stepping with the buttons, the chart and the keys', { timeout: 90_000 }, async () => {
  const BAD = [7, 15, 24];
  const { moves, played } = await gameWithBadMoves(32, BAD);
  const direct = await post('/analyze', Object.assign({ moves }, SEARCH));
  const b = await openPlayground();
  try {
    const { page } = b;
    await page.fill('#record', JSON.stringify({ moves }));
    await page.click('#review');
    await waitReviewOrError(page);
    assert.equal(await page.isVisible('#error'), false, `review failed: ${await page.textContent('#error')}`);
    assert.match(await page.textContent('#last-request'), /POST \/analyze/);

    // The summary and the chart: one bar for each move that lost something, exactly the bad ones.
    assert.equal(await page.textContent('#review-accuracy'), `${(100 * direct.summary.accuracy).toFixed(1)}%`);
    assert.equal(direct.summary.grades.best, 32 - BAD.length);
    const bars = await page.$$eval('#loss-chart rect[data-i]', (rs) => rs.map((r) => Number(r.dataset.i)));
    assert.deepEqual(bars, BAD);
    const worst = direct.summary.worst;
    const buttons = await page.$$eval('#review-worst button', (bs) => bs.map((x) => Number(x.dataset.i)));
    assert.deepEqual(buttons, worst.map((w) => w.index));
    assert.deepEqual([...buttons].sort((x, y) => x - y), BAD);
    // The review opens at the worst move; the tallest bar is that move.
    const tallest = await page.$$eval('#loss-chart rect[data-i]', (rs) =>
      Number(rs.reduce((hi, r) => (Number(r.getAttribute('height')) > Number(hi.getAttribute('height')) ? r : hi)).dataset.i));
    assert.equal(tallest, worst[0].index);

    /** What the page shows for the move it is on. */
    const shown = async () => ({
      label: await page.textContent('#step-label'),
      rows: await shownRows(page),
      grade: await page.textContent('#review-grade'),
      best: await page.$eval('#review-values .bar.best', (e) => e.dataset.dir),
      played: await page.$eval('#review-values .bar.played', (e) => e.dataset.dir),
      values: await page.$$eval('#review-values .bar', (bs) =>
        bs.map((x) => [x.dataset.dir, x.querySelector('.num').textContent])),
    });
    const expect = (i) => {
      const m = direct.moves[i];
      return { label: `move ${i + 1} of 32`, rows: moves[i].board, grade: m.grade, best: m.best, played: m.played };
    };
    const check = async (i) => {
      const s = await shown();
      const { values, ...rest } = s;
      assert.deepEqual(rest, expect(i), `move ${i}`);
      for (const [dir, text] of values) {
        const v = direct.moves[i].values[dir];
        if (v === null) assert.equal(text, 'illegal');
        else assert.ok(Math.abs(num(text) - v) < 1e-3, `move ${i} ${dir}: ${text} vs ${v}`);
      }
    };
    await check(worst[0].index);
    await lib.screenshot(page, 'playground-review.png');
    if (process.env.ADVISOR_DOCS_SCREENSHOT) {
      // The README's picture: `ADVISOR_DOCS_SCREENSHOT=1 bash tests/browser/run.sh` refreshes it.
      await page.screenshot({ path: path.join(lib.REPO, 'docs', 'playground-review.png'), fullPage: true });
    }
    for (const [bad, p] of played) {
      assert.deepEqual({ played: direct.moves[bad].played, best: direct.moves[bad].best }, p, `move ${bad}`);
    }

    // Each worst move is one click away.
    for (const w of worst) {
      await page.click(`#review-worst button[data-i="${w.index}"]`);
      await check(w.index);
      assert.equal(await page.getAttribute('#review-worst button.on', 'data-i'), String(w.index));
    }
    // Buttons, keys and the chart.
    await page.click('#step-first');
    await check(0);
    await page.click('#step-next');
    await page.click('#step-next');
    await check(2);
    await page.click('#step-prev');
    await check(1);
    await page.locator('body').press('End');
    await check(31);
    await page.locator('body').press('ArrowLeft');
    await check(30);
    await page.locator('#loss-chart').scrollIntoViewIfNeeded();
    const box = await page.locator('#loss-chart').boundingBox();
    const slot = (560 - 8) / 32;
    await page.mouse.click(box.x + 4 + (BAD[1] + 0.5) * slot, box.y + box.height / 2);
    await check(BAD[1]);
    assert.equal(await page.$eval('#step-slider', (e) => e.value), String(BAD[1]));
    assert.deepEqual(b.errors, [], 'page errors');
  } finally {
    await b.close();
  }
});

test('playground review: the last auto-played game, a /simulate file, and a record the service refuses', {
  timeout: 120_000,
}, async () => {
  const b = await openPlayground();
  try {
    const { page } = b;
    // Take the last auto-played game.
    assert.equal(await page.isDisabled('#review-last'), true, 'nothing auto-played yet');
    await page.click('#clear');
    await page.fill('#max-moves', '25');
    await page.fill('#seed', '11');
    await page.click('#autoplay');
    await page.waitForFunction(
      () => /move 25 of 25/.test(document.getElementById('stats').textContent) || !document.getElementById('error').hidden,
      null,
      { timeout: 30_000 },
    );
    await page.click('#review-last');
    await waitReviewOrError(page);
    assert.equal(await page.isVisible('#error'), false, `review failed: ${await page.textContent('#error')}`);
    const sent = JSON.parse((await page.textContent('#last-request')).replace(/^POST \/analyze\n/, ''));
    assert.equal(sent.game.trace.length, 25);
    assert.equal(sent.profile, 'classic');
    assert.equal(sent.depth, 2);
    assert.equal(await page.$eval('#step-slider', (e) => e.max), '24');
    await page.click('#step-first');
    assert.deepEqual(await shownRows(page), sent.game.trace[0].board);
    assert.match(await page.textContent('#review-summary'), /25 of 25 moves graded/);

    // A /simulate answer in a file (its NDJSON form: one line per game, then the summary).
    const ndjson = await (await fetch(`${lib.advisorUrl()}/simulate`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/x-ndjson' },
      body: JSON.stringify(Object.assign({ games: 1, seed: 5, max_moves: 12, trace: true }, SEARCH)),
    })).text();
    const file = path.join(lib.ARTIFACTS, 'simulate-game.ndjson');
    fs.mkdirSync(lib.ARTIFACTS, { recursive: true });
    fs.writeFileSync(file, ndjson);
    await page.setInputFiles('#record-file', file);
    await page.waitForFunction(() => /12 of 12 moves graded/.test(document.getElementById('review-summary').textContent));
    await page.click('#step-first');
    assert.deepEqual(await shownRows(page), JSON.parse(ndjson.split('\n')[0]).trace[0].board);

    // Not a record; then a record whose second move moves nothing: the problem and its pointer.
    await page.fill('#record', 'hello');
    await page.click('#review');
    await page.waitForFunction(() => !document.getElementById('error').hidden);
    assert.match(await page.textContent('#error'), /cannot read the record/);
    const still = [[0, 0, 0, 0], [0, 0, 0, 0], [0, 0, 0, 0], [0, 0, 2, 4]];
    await page.fill('#record', JSON.stringify({ moves: [{ board: still, direction: 'left' }, { board: [[2, 0, 0, 0], [0, 0, 0, 0], [0, 0, 0, 0], [2, 4, 0, 0]], direction: 'left' }] }));
    await page.click('#review');
    await page.waitForFunction(() => /\/moves\/1\/direction/.test(document.getElementById('error').textContent));
    await lib.screenshot(page, 'playground-review-error.png');
    assert.deepEqual(b.errors, [], 'page errors');
  } finally {
    await b.close();
  }
});

test('playground review with reach odds: the chance-over-moves chart with one point a move, each move\'s milestones ' +
  'and the largest odds losses one click away', { timeout: 120_000 }, async () => {
  // From a mid-game board (4096, 2048, 1024 and 512 along the top): the next milestones are 8192 and 16384.
  const start = [[4096, 2048, 1024, 512], [0, 0, 0, 0], [0, 0, 2, 4], [0, 0, 0, 2]];
  const BAD = [12, 30, 47];
  const N = 60;
  const { moves } = await gameWithBadMoves(N, BAD, start);
  const direct = await post('/analyze', Object.assign({ moves, odds: true }, SEARCH));
  assert.ok(direct.summary.odds.largest_losses.length > 0, 'the bad moves cost no chance');
  const b = await openPlayground();
  try {
    const { page } = b;
    assert.equal(await page.isChecked('#odds'), true, 'the odds are asked for by default');
    await page.fill('#record', JSON.stringify({ moves }));
    await page.click('#review');
    await waitReviewOrError(page);
    assert.equal(await page.isVisible('#error'), false, `review failed: ${await page.textContent('#error')}`);
    const sent = JSON.parse((await page.textContent('#last-request')).replace(/^POST \/analyze\n/, ''));
    assert.equal(sent.odds, true);

    // The chart: one point a move, at the chance of the next milestone after the move played.
    assert.equal(await page.isVisible('#odds-chart'), true);
    const points = await page.$$eval('#odds-chart circle[data-i]', (cs) =>
      cs.map((c) => ({ i: Number(c.dataset.i), tile: Number(c.dataset.tile), chance: Number(c.dataset.chance), cy: Number(c.getAttribute('cy')) })));
    assert.equal(points.length, N);
    points.forEach((p, i) => {
      const first = direct.moves[i].odds[0];
      assert.deepEqual([p.i, p.tile, p.chance], [i, first.tile, first.after_played], `move ${i}`);
    });
    // A higher chance is drawn higher.
    const [lo, hi] = [points.reduce((a, p) => (p.chance < a.chance ? p : a)), points.reduce((a, p) => (p.chance > a.chance ? p : a))];
    if (hi.chance > lo.chance) assert.ok(hi.cy < lo.cy, `${JSON.stringify(hi)} is not above ${JSON.stringify(lo)}`);
    assert.ok(await page.locator('#odds-chart polyline.run').count() >= 1, 'no line through the points');

    // The largest odds losses, in the answer's order, each one click away with what the move cost.
    const listed = direct.summary.odds.largest_losses;
    const buttons = await page.$$eval('#review-odds-losses button', (bs) => bs.map((x) => Number(x.dataset.i)));
    assert.deepEqual(buttons, listed.map((l) => l.index));
    for (const l of listed) {
      await page.click(`#review-odds-losses button[data-i="${l.index}"]`);
      assert.equal(await page.textContent('#step-label'), `move ${l.index + 1} of ${N}`);
      const shown = await page.textContent('#review-odds');
      assert.ok(shown.includes(`this move cost ${(100 * l.loss).toFixed(1)} points of ${l.tile}`), shown);
    }
    // Each move's milestones: the chance before, after the move played and after the best.
    await page.click('#step-first');
    const first = direct.moves[0];
    const milestones = await page.$$eval('#review-odds [data-tile]', (ds) => ds.map((d) => Number(d.dataset.tile)));
    assert.deepEqual(milestones, first.odds.map((x) => x.tile));
    assert.deepEqual(milestones, [8192, 16384]);
    const text = await page.textContent('#review-odds');
    const pct = (p) => `${(100 * p).toFixed(p < 0.1 ? 1 : 0)}%`;
    for (const x of first.odds) {
      assert.ok(text.includes(`${pct(x.before)} before the move`), `${text} lacks ${x.before}`);
    }
    // A click on the chart goes to the move under it.
    await page.locator('#odds-chart').scrollIntoViewIfNeeded();
    const box = await page.locator('#odds-chart').boundingBox();
    const slot = (560 - 8) / N;
    await page.mouse.click(box.x + 4 + (BAD[1] + 0.5) * slot, box.y + box.height / 2);
    assert.equal(await page.textContent('#step-label'), `move ${BAD[1] + 1} of ${N}`);
    assert.equal(await page.$eval('#odds-cursor', (e) => Number(e.getAttribute('x1')).toFixed(1)), (4 + (BAD[1] + 0.5) * slot).toFixed(1));

    await page.click(`#review-odds-losses button[data-i="${listed[0].index}"]`);
    await lib.screenshot(page, 'playground-odds.png');
    if (process.env.ADVISOR_DOCS_SCREENSHOT) {
      // The picture of docs/odds.md: `ADVISOR_DOCS_SCREENSHOT=1 bash tests/browser/run.sh` refreshes it.
      await page.screenshot({ path: path.join(lib.REPO, 'docs', 'playground-odds.png'), fullPage: true });
    }

    // Without the box ticked the review asks for no odds and shows none.
    await page.uncheck('#odds');
    await page.click('#review');
    await page.waitForFunction(() => !/"odds"/.test(document.getElementById('last-request').textContent));
    await page.waitForFunction(() => document.getElementById('odds-review').hidden);
    assert.equal(await page.isVisible('#odds-losses-view'), false);
    assert.deepEqual(b.errors, [], 'page errors');
  } finally {
    await b.close();
  }
});
