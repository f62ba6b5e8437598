// SPDX-License-Identifier: MIT
// viewers.js - open rtdiag's pictures in real viewers, in headless Chromium
// (Debian's /usr/bin/chromium driven by playwright-core; no browser is
// downloaded), and check what a person would see.
//
//   node viewers.js NODE_MODULES SHOTS schema FILE.speedscope.json...
//   node viewers.js NODE_MODULES SHOTS speedscope FILE EXPECT_NAME...
//   node viewers.js NODE_MODULES SHOTS svg FILE.svg TITLE HOT_FRAME SEARCH
//
// schema: every file validates against speedscope's file-format-schema.json.
// speedscope: speedscope's own page (its npm release, served on localhost)
//   loads FILE; the page shows no error, and each EXPECT_NAME is found in
//   the page (the profile and thread selector, the sandwich view's table).
// svg: the SVG opened in Chromium shows TITLE and HOT_FRAME; a click on
//   HOT_FRAME widens it (zoom); search for SEARCH colours matches and
//   prints "Matched: N%"; reset undoes both.
// A screenshot of each page goes to SHOTS. Exit 0 when all holds.
'use strict';
const path = require('path');
const fs = require('fs');
const http = require('http');
const [nm, shots, mode, ...rest] = process.argv.slice(2);
const req = (m) => require(path.join(nm, m));

function fail(msg) {
  console.error('viewers: FAIL: ' + msg);
  process.exit(1);
}

async function browser() {
  const { chromium } = req('playwright-core');
  const dir = fs.mkdtempSync('/tmp/rtd-chromium-');
  const ctx = await chromium.launchPersistentContext(dir, {
    executablePath: '/usr/bin/chromium',
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking',
           '--disable-component-update', '--no-first-run', '--disable-sync',
           '--use-gl=angle', '--use-angle=swiftshader', '--enable-unsafe-swiftshader'],
    viewport: { width: 1280, height: 800 },
  });
  ctx.cleanupDir = dir;
  return ctx;
}

async function close(ctx) {
  await ctx.close();
  fs.rmSync(ctx.cleanupDir, { recursive: true, force: true });
}

function schema(files) {
  const Ajv = req('ajv');
  const s = JSON.parse(fs.readFileSync(path.join(nm, 'speedscope/dist/release/file-format-schema.json')));
  const ajv = new Ajv({ strict: false, allErrors: true });
  const validate = ajv.compile(s);
  for (const f of files) {
    const d = JSON.parse(fs.readFileSync(f, 'utf8'));
    if (!validate(d))
      fail(f + ': ' + ajv.errorsText(validate.errors));
    console.log('ok: ' + path.basename(f) + ' validates against speedscope\'s schema (' +
                d.profiles.length + ' profiles, ' + d.shared.frames.length + ' frames)');
  }
}

function serve(root, file) {
  return new Promise((resolve) => {
    const srv = http.createServer((q, r) => {
      const u = decodeURIComponent(q.url.split('?')[0].split('#')[0]);
      const p = u === '/profile' ? file : path.join(root, path.normalize(u).replace(/^(\.\.[/\\])+/, ''));
      fs.readFile(p, (err, data) => {
        if (err) { r.writeHead(404); r.end(); return; }
        const types = { '.html': 'text/html', '.js': 'text/javascript', '.css': 'text/css',
                        '.wasm': 'application/wasm', '.png': 'image/png' };
        r.writeHead(200, { 'Content-Type': types[path.extname(p)] || 'application/octet-stream' });
        r.end(data);
      });
    });
    srv.listen(0, '127.0.0.1', () => resolve(srv));
  });
}

async function speedscope(file, names) {
  const root = path.join(nm, 'speedscope/dist/release');
  const srv = await serve(root, file);
  const base = 'http://127.0.0.1:' + srv.address().port;
  const ctx = await browser();
  const page = await ctx.newPage();
  const errors = [];
  page.on('pageerror', (e) => errors.push(String(e)));
  // a Chrome JSON slice speedscope could not end (an "E" whose name is
  // not the open slice's: "Doing nothing instead") nests everything after
  // it inside it ("Ending X instead" is the same name with other args:
  // ended all the same)
  page.on('console', (m) => {
    if (/Doing nothing instead|was still open at end/.test(m.text()) && errors.length < 5)
      errors.push(m.text());
  });
  await page.goto(base + '/index.html#profileURL=' + encodeURIComponent(base + '/profile'));
  // loaded when the toolbar names the profile and the canvas exists
  await page.waitForSelector('canvas', { timeout: 30000 });
  await page.waitForTimeout(1500);
  let text = await page.evaluate(() => document.body.innerText);
  if (/Something went wrong|Unrecognized format|Failed to load/i.test(text))
    fail(file + ': speedscope says: ' + text.slice(0, 300));
  const shot = path.join(shots, path.basename(file) + '.png');
  await page.screenshot({ path: shot });
  // the toolbar names the profile shown; the profile selector lists all
  // (one per thread); the sandwich view lists every function in a table
  let seen = text;
  const sel = page.locator('text=/\\(1\\/[0-9]+\\)/');
  if (await sel.count()) {
    await sel.first().click();
    await page.waitForTimeout(500);
    seen += await page.evaluate(() => document.body.innerText);
    await page.keyboard.press('Escape');
  }
  await page.locator('text=Sandwich').first().click();
  await page.waitForTimeout(800);
  seen += await page.evaluate(() => document.body.innerText);
  text = seen;
  for (const n of names) {
    if (!text.includes(n))
      fail(file + ': "' + n + '" not on speedscope\'s page; it shows: ' + text.slice(0, 600));
  }
  await page.screenshot({ path: shot.replace(/\.png$/, '-sandwich.png') });
  if (errors.length) fail(file + ': page errors: ' + errors.join('; '));
  console.log('ok: speedscope shows ' + path.basename(file) + ' (' + names.join(', ') +
              '); screenshot ' + shot);
  await close(ctx);
  srv.close();
}

async function svg(file, title, hot, term) {
  const ctx = await browser();
  const page = await ctx.newPage();
  const errors = [];
  page.on('pageerror', (e) => errors.push(String(e)));
  await page.goto('file://' + path.resolve(file));
  await page.waitForTimeout(300);
  const got = await page.evaluate(() => document.getElementById('title').textContent);
  if (got !== title) fail('title is "' + got + '", not "' + title + '"');
  // the hot frame: its <g> by its title's first line
  const info = (name) => page.evaluate((name) => {
    for (const g of document.querySelectorAll('g.f')) {
      const t = g.firstChild.textContent;
      if (t.substring(0, t.lastIndexOf('\n')) === name) {
        const r = g.childNodes[1], b = r.getBoundingClientRect();
        return { w: +r.getAttribute('width'), x: b.x + b.width / 2, y: b.y + b.height / 2,
                 text: g.lastChild.textContent, fill: r.getAttribute('fill'),
                 shown: g.style.display !== 'none' };
      }
    }
    return null;
  }, name);
  const before = await info(hot);
  if (!before) fail('no frame "' + hot + '" in the SVG');
  if (!before.text) fail('frame "' + hot + '" has no visible label');
  const shot = path.join(shots, path.basename(file) + '.png');
  await page.screenshot({ path: shot });
  // click zooms: the frame fills the width
  await page.mouse.click(before.x, before.y);
  await page.waitForTimeout(200);
  const after = await info(hot);
  if (!(after.w > before.w)) fail('click on "' + hot + '" did not zoom (' + before.w + ' -> ' + after.w + ')');
  await page.screenshot({ path: shot.replace(/\.png$/, '-zoom.png') });
  // search through the button: the prompt is answered with the term
  page.once('dialog', (d) => d.accept(term));
  await page.click('#search');
  await page.waitForTimeout(200);
  const matched = await page.evaluate(() => document.getElementById('matched').textContent);
  const pink = await page.evaluate(() =>
    [...document.querySelectorAll('g.f rect')].filter((r) => r.getAttribute('fill') === 'rgb(230,0,230)').length);
  if (!/^Matched: [0-9.]+%$/.test(matched) || pink < 1)
    fail('search "' + term + '" highlighted ' + pink + ' frames, says "' + matched + '"');
  await page.screenshot({ path: shot.replace(/\.png$/, '-search.png') });
  // reset: zoom and search undone
  await page.click('#unzoom');
  await page.click('#search');
  await page.waitForTimeout(200);
  const reset = await info(hot);
  const pink2 = await page.evaluate(() =>
    [...document.querySelectorAll('g.f rect')].filter((r) => r.getAttribute('fill') === 'rgb(230,0,230)').length);
  if (Math.abs(reset.w - before.w) > 0.2 || pink2) fail('reset did not restore the graph');
  if (errors.length) fail('page errors: ' + errors.join('; '));
  console.log('ok: ' + path.basename(file) + ' in Chromium: title, "' + hot + '" shown (' +
              before.w + ' px), click zooms to ' + after.w + ' px, search "' + term + '": ' +
              pink + ' frames, ' + matched + '; screenshot ' + shot);
  await close(ctx);
}

(async () => {
  try {
    if (mode === 'schema') schema(rest);
    else if (mode === 'speedscope') await speedscope(rest[0], rest.slice(1));
    else if (mode === 'svg') await svg(rest[0], rest[1], rest[2], rest[3]);
    else fail('unknown mode ' + mode);
  } catch (e) {
    fail(String(e && e.stack || e));
  }
})();
