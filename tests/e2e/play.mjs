// End-to-end test of the `bao serve` page in headless Chromium (run by tests/serve_e2e.rs):
// opens the page, plays moves by clicking holes and arrows, checks that the board changes and
// the engine answers, steps through the laps of a move, undoes, and saves a screenshot.
//
//   node tests/e2e/play.mjs URL SCREENSHOT.png      (CHROMIUM=/path/to/chromium to override)
import { chromium } from "playwright-core";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const [url, screenshot] = process.argv.slice(2);
if (!url || !screenshot) {
  console.error("usage: node play.mjs URL SCREENSHOT.png");
  process.exit(2);
}

function check(cond, message) {
  if (!cond) throw new Error(`check failed: ${message}`);
}

const profile = mkdtempSync(join(tmpdir(), "bao-e2e-"));
const context = await chromium.launchPersistentContext(profile, {
  executablePath: process.env.CHROMIUM || "/usr/bin/chromium",
  headless: true,
  viewport: { width: 1200, height: 860 },
  args: [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
  ],
  timeout: 60_000,
});

const problems = [];
try {
  const page = context.pages()[0] || (await context.newPage());
  page.setDefaultTimeout(30_000);
  page.on("pageerror", (e) => problems.push(`page error: ${e.message}`));
  // The refused move below answers 422, which Chromium also logs; anything else is a problem.
  page.on("console", (m) => {
    if (m.type() === "error" && !m.text().includes("status of 422")) problems.push(`console error: ${m.text()}`);
  });

  const count = (hole) => page.locator(`g[data-hole="${hole}"]`).getAttribute("data-count").then(Number);
  const plies = () => page.locator("body").getAttribute("data-plies").then(Number);
  const idleWithPlies = (n) => page.waitForFunction(
    (n) => document.body.dataset.busy === "0" && Number(document.body.dataset.plies) === n, n);

  await page.goto(url);
  // The page starts a Kiswahili game against the first engine, the person playing South.
  await page.waitForSelector('g[data-hole="A7"] .movable');
  check(await count("A7") === 2 && await count("A5") === 6 && await count("a5") === 6, "the Kiswahili start position");
  check((await page.textContent("#status")).includes("Your move"), "the status says it is our move");
  check(await page.locator("g[data-hole] rect").count() === 2, "two square nyumbas");

  // Move 1: click A7, then the left arrow: A7L.
  await page.click('g[data-hole="A7"]');
  await page.click('g.arrow[data-way="L"]');
  await idleWithPlies(2); // our move and the engine's answer
  const list = await page.locator("#movelist li").first().textContent();
  check(list.startsWith("A7L"), `move list starts with A7L: ${list}`);
  check(await count("A7") === 0, "A7 was emptied by A7L");
  check((await page.textContent("#engine-text")).includes("played"), "the engine's move is shown");
  check((await page.textContent("#status")).includes("Your move"), "our turn again after the engine answered");

  // Step through the engine's move: the board before it, then each step, then back.
  const lastTitle = await page.textContent("#steps-title");
  check(lastTitle.includes("by North"), `the last move is North's: ${lastTitle}`);
  await page.click("#step-first");
  check((await page.textContent("#step-text")).includes("before the move"), "step 0 is the board before");
  check(await count("A4") === 1, "before North's move A4 holds the seed A7L left there");
  await page.click("#step-next");
  check((await page.textContent("#step-text")).includes("hand"), "the first step is the hand seed");
  const steps = Number((await page.textContent("#step-count")).split("/")[1]);
  for (let k = 1; k < steps; k++) await page.click("#step-next");
  check((await page.textContent("#step-count")).startsWith(`${steps} /`), "stepped to the end");

  // Two more moves by clicking: the first movable hole, its first arrow, a choice if asked.
  for (let move = 0; move < 2; move++) {
    const before = await plies();
    const hole = await page.locator("g[data-hole]:has(.movable)").first().getAttribute("data-hole");
    await page.click(`g[data-hole="${hole}"]`);
    await page.locator("g.arrow").first().click();
    if (await page.isVisible("#choice")) await page.locator("#choice-buttons button").first().click();
    await page.waitForFunction((n) => document.body.dataset.busy === "0" && Number(document.body.dataset.plies) > n, before);
    const now = await plies();
    check(now === before + 2 || (await page.textContent("#status")).includes("wins"), `move ${move + 2} and its answer (${before} -> ${now})`);
  }

  // Undo takes back our move and the engine's answer.
  const before = await plies();
  await page.click("#undo");
  await idleWithPlies(before - 2);

  // The record downloads in `bao play`'s format.
  const href = await page.getAttribute("#download", "href");
  const record = await page.evaluate(async (h) => (await fetch(h)).json(), href);
  check(record.variant === "kiswahili" && record.moves.length === before - 2 && record.moves[0] === "A7L", `record ${JSON.stringify(record)}`);

  // An illegal typed move is refused with a message, and the board stays.
  await page.fill("#typed-move", "B3R"); // a back-row move: never legal in the namua stage
  await page.click('#typed button[type="submit"]');
  await page.waitForSelector("#error:not([hidden])");
  check((await page.textContent("#error")).includes("illegal"), "illegal typed move refused");
  check(await plies() === before - 2, "nothing changed");
  await page.evaluate(() => { document.getElementById("error").hidden = true; });

  // Step back one step of the last move, so the screenshot shows the stepping too.
  await page.click("#step-prev");
  await page.screenshot({ path: screenshot, fullPage: true });

  // Two people at one page: after A7L, North's a5 captures at hole 5, so the page asks which
  // kichwa the captured seed enters; the answer decides the move (a5R: it enters at a8).
  await page.selectOption("#opponent", "human");
  await page.click("#new");
  await idleWithPlies(0);
  await page.click('g[data-hole="A7"]');
  await page.click('g.arrow[data-way="L"]');
  await idleWithPlies(1);
  check((await page.textContent("#status")).includes("North to move"), "North's turn between two people");
  await page.click('g[data-hole="a5"]');
  await page.waitForSelector("#choice:not([hidden])");
  check((await page.textContent("#choice-question")).includes("captured seeds enter"), "the page asks for the kichwa");
  await page.screenshot({ path: screenshot.replace(/\.png$/, "-choice.png"), fullPage: true });
  await page.click('#choice-buttons button[data-choice="R"]');
  await idleWithPlies(2);
  check((await page.locator("#movelist li").first().textContent()).startsWith("A7L  a5R"), "a5R played");
  check(await count("a8") === 1 && await count("A4") === 0, "the captured seed went from A4 into a8");

  check(problems.length === 0, problems.join("; "));
  console.log(`e2e: ok, screenshots ${screenshot} and its -choice twin`);
} finally {
  await context.close();
  rmSync(profile, { recursive: true, force: true });
}
