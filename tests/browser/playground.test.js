'use strict';
// The playground page served by the real `advisor2048 serve` at GET / (ADVISOR_URL, started by run.sh).

const test = require('node:test');
const assert = require('node:assert/strict');
const lib = require('./lib');

const EXAMPLE = '[[0,0,2,2],[0,4,8,16],[2,4,8,32],[128,64,32,1024]]';
const num = (s) => Number(String(s).replace(/[^\d.eE+-]/g, ''));

async function openPlayground() {
  const b = await lib.openBrowser();
  await b.page.goto(`${lib.advisorUrl()}/`);
  await b.page.waitForSelector('#board .cell');
  return b;
}

test('playground: the example board, classic, depth 3 -> right, with the value chart and the breakdown table', {
  timeout: 60_000,
}, async () => {
  const b = await openPlayground();
  try {
    const { page } = b;
    await page.fill('#paste', EXAMPLE);
    await page.click('#load');
    assert.equal(await page.textContent('#as-rows'), EXAMPLE);
    await page.selectOption('#profile', 'classic');
    await page.fill('#depth', '3');
    await page.click('#best');
    await page.waitForFunction(() => document.getElementById('direction').textContent.includes('right'));

    const bars = await page.$$eval('#chart .bar', (els) =>
      els.map((e) => ({ dir: e.dataset.dir, best: e.classList.contains('best'), value: e.querySelector('.num').textContent })),
    );
    assert.deepEqual(bars.map((x) => x.dir), ['up', 'down', 'left', 'right']);
    assert.deepEqual(bars.filter((x) => x.best).map((x) => x.dir), ['right']);
    // The search issue's golden values for this board (classic, depth 3).
    const golden = { up: 1081.5864, down: 1155.0509, left: 1124.2152, right: 1159.2054 };
    for (const x of bars) assert.ok(Math.abs(num(x.value) - golden[x.dir]) < 2e-3, `${x.dir}: ${x.value}`);

    const rows = await page.$$eval('#breakdown tbody tr', (trs) => trs.map((tr) => tr.cells[0].textContent));
    assert.ok(rows.length >= 4, `breakdown has ${rows.length} rows`);
    assert.ok(rows.includes('empty'), `breakdown rows: ${rows.join(', ')}`);
    assert.match(await page.textContent('#breakdown-title'), /after right/);
    assert.match(await page.textContent('#breakdown thead'), /classic/);
    assert.match(await page.textContent('#stats'), /depth 3/);

    // The reach odds per direction (the default play's, asked for by default): the service's own chances, the
    // position's row first, the next two milestones (2048 and 4096) shaded.
    const direct = await (await fetch(`${lib.advisorUrl()}/best-move`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ board: JSON.parse(EXAMPLE), profile: 'classic', depth: 3, odds: true }),
    })).json();
    assert.equal(await page.isVisible('#odds-table'), true);
    const oddsRows = await page.$$eval('#odds-table tbody tr', (trs) =>
      trs.map((tr) => ({ dir: tr.dataset.dir, cells: [...tr.cells].slice(1).map((td) => td.textContent) })));
    assert.deepEqual(oddsRows.map((r) => r.dir), ['position', 'up', 'down', 'left', 'right']);
    const pct = (p) => `${(100 * p).toFixed(p < 0.1 ? 1 : 0)}%`;
    assert.deepEqual(oddsRows[0].cells, direct.odds.chances.map((c) => pct(c.chance)));
    for (const r of oddsRows.slice(1)) {
      const m = direct.moves.find((x) => x.direction === r.dir);
      assert.deepEqual(r.cells, m.legal ? m.odds.map((c) => pct(c.chance)) : Array(6).fill('\u2014'), r.dir);
      if (m.legal) assert.ok(r.cells.every((c) => /^\d+(\.\d)?%$/.test(c)), `${r.dir}: ${r.cells}`);
    }
    const shaded = await page.$$eval('#odds-table thead th.next', (ths) => ths.map((th) => th.textContent));
    assert.deepEqual(shaded, ['2048', '4096']);
    assert.match(await page.textContent('#odds-caption'), /default play \(learned, up to 9 plies within 40000 nodes/);
    await lib.screenshot(page, 'playground.png');
    assert.deepEqual(b.errors, [], 'page errors');
  } finally {
    await b.close();
  }
});

test('playground: the editor (palette, typing, hex) and evaluate', { timeout: 60_000 }, async () => {
  const b = await openPlayground();
  try {
    const { page } = b;
    assert.match(await page.textContent('#version'), /^v/);

    await page.click('#clear');
    await page.click('#palette button:has-text("1024")');
    await page.click('#board .cell[data-i="0"]');
    await page.click('#palette button:has-text("1024")'); // brush off
    await page.fill('#board .cell[data-i="1"]', '1024');
    await page.press('#board .cell[data-i="2"]', 'ArrowUp'); // empty -> 2
    await page.press('#board .cell[data-i="2"]', 'ArrowUp'); // 2 -> 4
    assert.equal(await page.textContent('#as-rows'), '[[1024,1024,4,0],[0,0,0,0],[0,0,0,0],[0,0,0,0]]');
    assert.equal(await page.textContent('#as-hex'), 'aa20000000000000');
    await page.fill('#paste', '0000000000000112');
    await page.click('#load');
    assert.equal(await page.textContent('#as-rows'), '[[0,0,0,0],[0,0,0,0],[0,0,0,0],[0,2,2,4]]');

    // Evaluate: the evaluator issue's golden total for the example board.
    await page.click('#example');
    await page.selectOption('#profile', 'classic');
    await page.click('#evaluate');
    await page.waitForSelector('#breakdown tfoot');
    const total = await page.$eval('#breakdown tfoot tr td:last-child', (td) => td.textContent);
    assert.ok(Math.abs(num(total) - 1125.1164) < 1e-3, `total ${total}`);
    assert.equal(await page.locator('#chart .bar').count(), 4);
    assert.deepEqual(b.errors, [], 'page errors');
  } finally {
    await b.close();
  }
});

test('playground: simulate, and the seeded auto-play replayed on the board', { timeout: 120_000 }, async () => {
  const b = await openPlayground();
  try {
    const { page } = b;
    await page.click('#clear');
    await page.fill('#depth', '2');
    await page.fill('#games', '2');
    await page.fill('#max-moves', '30');
    await page.fill('#seed', '7');
    await page.click('#simulate');
    await page.waitForFunction(
      () => document.querySelectorAll('#sim-games tbody tr').length > 0 || !document.getElementById('error').hidden,
    );
    assert.equal(await page.isVisible('#error'), false, `simulate failed: ${await page.textContent('#error')}`);
    assert.equal(await page.locator('#sim-games tbody tr').count(), 2);

    await page.fill('#max-moves', '20');
    await page.click('#autoplay');
    await page.waitForFunction(
      () => /score \d+/.test(document.getElementById('stats').textContent) || !document.getElementById('error').hidden,
      null,
      { timeout: 30_000 },
    );
    assert.equal(await page.isVisible('#error'), false, `auto-play failed: ${await page.textContent('#error')}`);
    const tiles = await page.$$eval('#board .cell', (cells) => cells.filter((c) => c.value !== '').length);
    assert.ok(tiles >= 3, `the board shows ${tiles} tiles after the replay`);
    assert.match(await page.textContent('#stats'), /move 20 of 20/);
    await lib.screenshot(page, 'playground-autoplay.png');
    assert.deepEqual(b.errors, [], 'page errors');
  } finally {
    await b.close();
  }
});

test('playground: a full 64-bit seed goes out and comes back with every digit', { timeout: 60_000 }, async () => {
  const seed = '18446744073709551557'; // above 2^53: Number() would round it
  // The game seeds the service derives, read from the raw answer text (no JSON.parse, so no rounding).
  const raw = await (await fetch(`${lib.advisorUrl()}/simulate`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: `{"games":2,"seed":${seed},"depth":1,"max_moves":5}`,
  })).text();
  const expected = [...raw.matchAll(/"seed":(\d+)/g)].map((m) => m[1]);
  assert.equal(expected.length, 2, raw.slice(0, 300));
  assert.ok(expected.some((s) => !Number.isSafeInteger(Number(s))), `derived seeds ${expected} are all small`);

  const b = await openPlayground();
  try {
    const { page } = b;
    await page.click('#clear');
    await page.fill('#depth', '1');
    await page.fill('#games', '2');
    await page.fill('#max-moves', '5');
    await page.fill('#seed', seed);
    await page.click('#simulate');
    await page.waitForFunction(
      () => document.querySelectorAll('#sim-games tbody tr').length > 0 || !document.getElementById('error').hidden,
    );
    assert.equal(await page.isVisible('#error'), false, `simulate failed: ${await page.textContent('#error')}`);
    assert.match(await page.textContent('#last-request'), new RegExp(`"seed": ${seed}\\b`));
    const shown = await page.$$eval('#sim-games tbody tr td:first-child', (tds) => tds.map((td) => td.textContent));
    assert.deepEqual(shown, expected);
    assert.deepEqual(b.errors, [], 'page errors');
  } finally {
    await b.close();
  }
});

test('playground: a paste that is not a board, and the service\'s problem details with their pointer', {
  timeout: 60_000,
}, async () => {
  const b = await openPlayground();
  try {
    const { page } = b;
    await page.fill('#paste', 'hello');
    await page.click('#load');
    assert.match(await page.textContent('#error'), /expected 16 values/);
    await page.fill('#depth', 'deep');
    await page.click('#best');
    await page.waitForFunction(() => /\/depth/.test(document.getElementById('error').textContent));
    assert.equal(await page.isVisible('#error'), true);
    await lib.screenshot(page, 'playground-error.png');
    assert.deepEqual(b.errors, [], 'page errors');
  } finally {
    await b.close();
  }
});
