// Drives the operator console in Debian's headless Chromium (puppeteer-core, no browser
// downloaded): opens its pages, records every console error, page error, failed request and
// refused answer, runs axe-core in the page, and writes screenshots under
// build/console-screenshots/ for a person to look at.
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import assert from 'node:assert/strict';
import puppeteer from 'puppeteer-core';

const require = createRequire(import.meta.url);
const HERE = path.dirname(fileURLToPath(import.meta.url));
export const SCREENSHOTS = path.resolve(HERE, '../../../build/console-screenshots');

// $CHROMIUM, or Debian's package (scripts/install-deps.sh --test installs it).
export const CHROMIUM = process.env.CHROMIUM || ['/usr/bin/chromium', '/usr/bin/chromium-browser'].find((p) => existsSync(p));

export async function launchBrowser() {
  if (!CHROMIUM) throw new Error('no chromium at /usr/bin/chromium: run scripts/install-deps.sh --test (or set CHROMIUM)');
  return puppeteer.launch({
    executablePath: CHROMIUM,
    headless: true,
    // --no-sandbox: CI runs as root, where Chromium's sandbox cannot start.
    args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage', '--no-first-run', '--window-size=1366,900'],
    defaultViewport: { width: 1366, height: 900 },
  });
}

// A new tab that records every request it makes (`requests`, "METHOD url") and what went wrong in it: console errors, uncaught page errors, requests
// that failed, and answers with an HTTP error status. `expectStatus(urlPart, status)` marks an
// answer as wanted (the 401 of a page that asks for a token); a request the page aborted itself
// (a live stream closed on leaving its page) is not a failure.
export async function openTab(browser) {
  const page = await browser.newPage();
  const problems = [];
  const expected = [];
  const requests = [];
  page.on('request', (request) => requests.push(`${request.method()} ${request.url()}`));
  page.on('console', (msg) => {
    if (msg.type() !== 'error') return;
    const url = msg.location()?.url || '';
    // Chromium logs every error status as a console error too; those are judged as answers below.
    if (/Failed to load resource: the server responded with a status of/.test(msg.text()) &&
        expected.some((e) => url.includes(e.urlPart))) return;
    problems.push(`console error: ${msg.text()} (${url})`);
  });
  page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
  page.on('requestfailed', (request) => {
    const reason = request.failure()?.errorText || '';
    if (reason === 'net::ERR_ABORTED') return;
    problems.push(`request failed: ${request.method()} ${request.url()} ${reason}`);
  });
  page.on('response', (response) => {
    const status = response.status();
    if (status < 400) return;
    if (expected.some((e) => response.url().includes(e.urlPart) && e.status === status)) return;
    problems.push(`HTTP ${status}: ${response.request().method()} ${response.url()}`);
  });
  return {
    page,
    problems,
    requests,
    expectStatus(urlPart, status) {
      expected.push({ urlPart, status });
    },
    assertClean(what) {
      assert.deepEqual(problems, [], `${what}: problems in the page`);
    },
  };
}

// axe-core's rules in the page (evaluated over DevTools, which the page's CSP does not govern);
// fails on any serious or critical violation, listing them.
const AXE_SOURCE = readFileSync(require.resolve('axe-core/axe.min.js'), 'utf8');
export async function assertAccessible(page, what) {
  await page.evaluate(AXE_SOURCE);
  const results = await page.evaluate(() => globalThis.axe.run(document, { resultTypes: ['violations'] }));
  const serious = results.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
  assert.deepEqual(
    serious.map((v) => `${v.id} (${v.impact}): ${v.help} — ${v.nodes.map((n) => n.target.join(' ')).slice(0, 3).join(', ')}`),
    [],
    `${what}: accessibility violations`,
  );
  return results.violations;
}

export async function screenshot(page, name) {
  mkdirSync(SCREENSHOTS, { recursive: true });
  await page.screenshot({ path: path.join(SCREENSHOTS, `${name}.png`), fullPage: true });
}

// Text of the first element matching `selector`, or null.
export function textOf(page, selector) {
  return page.$eval(selector, (el) => el.textContent).catch(() => null);
}
