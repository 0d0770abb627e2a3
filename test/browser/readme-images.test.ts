// The README's two pictures, drawn from a real demo run (the CLI on examples/buggy-calc with the scripted
// model, in the real engine): docs/images/report.png is that run's report.html, docs/images/pr-thread.png the
// pull request thread agent-ci writes for it (the PR description from `agent-ci publish`, then the Action's
// comment), its Markdown rendered as GitHub renders it.
//
// The pictures must not go stale silently. docs/images/images.json records, per picture, the sha256 of what
// it was drawn from (the page's HTML) with the run's own values (ids, times, durations, base commit) set to
// fixed ones; this test runs the demo again and fails when the renderer now writes something else. Pixels
// are never compared (fonts differ between machines). `npm run images` (AGENT_CI_UPDATE_IMAGES=1) draws the
// pictures again in Debian's Chromium and records their sources.
import { createHash } from "node:crypto";
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildCommentBody, commentMarker } from "../../src/action/comment.js";
import { DEFAULT_LINK_ISSUE } from "../../src/publish/pull-request.js";
import { commitTitle, issueLine, pullBody, runBranch } from "../../src/publish/pull-text.js";
import { createRedactor, parseReport, renderHtml, type RunReport } from "../../src/report/index.js";
import { launchChromium } from "../support/chromium.js";
import { runDemo } from "../support/demo-run.js";
import { threadPageHtml } from "../support/github-thread-page.js";

const IMAGES = fileURLToPath(new URL("../../docs/images/", import.meta.url));
const SOURCES = join(IMAGES, "images.json");
const UPDATE = process.env.AGENT_CI_UPDATE_IMAGES === "1";
const REGENERATE = "run `npm run images` to regenerate the pictures and docs/images/images.json";
/** The pictures go into the README: small enough to load at once. */
const MAX_IMAGE_BYTES = 200_000;
/** The fonts the pictures are drawn with (scripts/browser-deps.sh installs them). */
const FONTS = [
  "/usr/share/fonts/truetype/liberation2/LiberationSans-Regular.ttf",
  "/usr/share/fonts/truetype/noto/NotoColorEmoji.ttf",
];
/** Where the thread's links point: the one placeholder owner the docs use. */
const REPOSITORY = "https://github.com/OWNER/calc";
const ISSUE = 12;
const PULL = 13;

interface DemoRun {
  report: RunReport;
  patchText: string;
}

/** The run with its own values fixed: what the renderer writes for it then depends on the renderer only. */
function normalise(run: DemoRun): DemoRun {
  const { runId } = run.report;
  const fixedText = (text: string) =>
    text
      .replaceAll(runId, "RUN-ID")
      .replace(/\(\d+(?:\.\d+)?ms\)/g, "(1ms)")
      .replace(/duration_ms \d+(?:\.\d+)?/g, "duration_ms 1");
  const FIXED: Record<string, unknown> = {
    startedAt: "2026-01-01T00:00:00.000Z",
    endedAt: "2026-01-01T00:00:01.000Z",
    date: "2026-01-01",
    durationMs: 1,
    startOffsetMs: 1,
    resultChars: 1,
    baseCommit: "0".repeat(40),
    sha256: "0".repeat(64),
  };
  const walk = (value: unknown, key = ""): unknown => {
    if (key in FIXED) return FIXED[key];
    if (typeof value === "string") return fixedText(value);
    if (Array.isArray(value)) return value.map((item) => walk(item));
    if (value && typeof value === "object")
      return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, walk(v, k)]));
    return value;
  };
  const report = walk(run.report) as RunReport;
  // The image's tag and id follow the sandbox's recipe, its architecture and the runtime the machine.
  report.image = report.image && {
    ...report.image,
    name: "agent-ci-sandbox",
    id: "sha256:0",
    architecture: "amd64",
  };
  report.hardening = report.hardening && { ...report.hardening, runtime: "runc" };
  return { report, patchText: fixedText(run.patchText) };
}

/** report.html of the run, as the CLI writes it. */
function reportPage(run: DemoRun): string {
  return renderHtml(run.report, { patchText: run.patchText, redactor: createRedactor() });
}

/** The pull request `agent-ci publish` opens for the run, then the Action's comment on it. */
function threadPage(run: DemoRun): string {
  const { report, patchText } = run;
  const redactor = createRedactor();
  const actions = `${REPOSITORY}/actions/runs/1`;
  const finalMessage = [...report.turns].reverse().find((turn) => turn.text?.trim())?.text ?? "";
  const comment = buildCommentBody({
    marker: commentMarker("agent-ci", "agent"),
    report,
    patchText,
    findings: report.patch.secretFindings,
    artifactUrl: `${actions}/artifacts/1`,
    runUrl: actions,
    redactor,
    finalMessage,
  });
  return threadPageHtml({
    title: commitTitle(report),
    number: PULL,
    author: "github-actions",
    base: "main",
    head: runBranch(report.runId),
    commits: 1,
    files: report.patch.files.length,
    posts: [
      {
        author: "github-actions",
        bot: true,
        action: "opened this pull request",
        markdown: redactor.redact(pullBody(report, issueLine(ISSUE, DEFAULT_LINK_ISSUE), {}, [])),
      },
      { author: "github-actions", bot: true, action: "commented", markdown: comment },
    ],
  });
}

const PICTURES = { "report.png": reportPage, "pr-thread.png": threadPage } as const;
type Picture = keyof typeof PICTURES;

const sha256 = (text: string) => createHash("sha256").update(text).digest("hex");

/** What each picture is drawn from, for this renderer: the hash of its page for the normalised run. */
function sources(run: DemoRun): Record<Picture, string> {
  const fixed = normalise(run);
  return {
    "report.png": sha256(PICTURES["report.png"](fixed)),
    "pr-thread.png": sha256(PICTURES["pr-thread.png"](fixed)),
  };
}

async function draw(browser: Browser, run: DemoRun, dir: string): Promise<void> {
  for (const font of FONTS)
    if (!existsSync(font)) throw new Error(`${font} is missing: run scripts/browser-deps.sh as root`);
  const page = await browser.newPage({ viewport: { width: 1200, height: 900 }, colorScheme: "light" });
  const problems: string[] = [];
  page.on("pageerror", (error) => problems.push(error.message));
  page.on("request", (request) => {
    if (!request.url().startsWith("file:")) problems.push(`request: ${request.url()}`);
  });

  const reportFile = join(dir, "report.html");
  writeFileSync(reportFile, reportPage(run));
  await page.goto(pathToFileURL(reportFile).href);
  await page.waitForSelector("html[data-ready=true]");
  // The Edit call selected, its details scrolled to their end: the decision, then the fix as a diff.
  const edit = run.report.toolCalls.find((call) => call.tool === "Edit");
  if (!edit) throw new Error("the demo run made no Edit call");
  await page.locator(`.call-row[data-call-id="${edit.id}"]`).click();
  await page.locator("#call-details").evaluate((e) => e.scrollTo(0, e.scrollHeight));
  await page.evaluate("window.scrollTo(0, 0)");
  // Scrolled to the top, the section's box is where it is in the page.
  const bottom = await page.locator("#calls-section").evaluate((e) => e.getBoundingClientRect().bottom);
  await page.screenshot({
    path: join(IMAGES, "report.png"),
    fullPage: true,
    clip: { x: 0, y: 0, width: 1200, height: Math.ceil(bottom) + 16 },
  });

  const threadFile = join(dir, "pr-thread.html");
  writeFileSync(threadFile, threadPage(run));
  await page.goto(pathToFileURL(threadFile).href);
  await page.locator("#thread").screenshot({ path: join(IMAGES, "pr-thread.png") });
  await page.close();
  expect(problems).toEqual([]);
}

describe("the README's pictures (docs/images/)", () => {
  let work: string;
  let run: DemoRun;
  let browser: Browser | undefined;

  beforeAll(() => {
    work = mkdtempSync(join(tmpdir(), "agent-ci-images-"));
    const out = join(work, "out");
    const demo = runDemo(out);
    if (demo.status !== 0) throw new Error(`the demo run failed (exit ${demo.status}): ${demo.stderr}`);
    run = {
      report: parseReport(readFileSync(join(out, "report.json"), "utf8")),
      patchText: readFileSync(join(out, "patch.diff"), "utf8"),
    };
  });

  afterAll(async () => {
    await browser?.close();
    if (work) rmSync(work, { recursive: true, force: true });
  });

  it("were drawn from what the renderers write now for the demo run", async () => {
    const current = sources(run);
    if (UPDATE) {
      browser = await launchChromium();
      await draw(browser, run, work);
      const record = Object.fromEntries(
        Object.entries(current).map(([name, sha]) => [name, { sourceSha256: sha }]),
      );
      writeFileSync(SOURCES, `${JSON.stringify(record, null, 2)}\n`);
    }
    const recorded = JSON.parse(readFileSync(SOURCES, "utf8")) as Record<string, { sourceSha256?: string }>;
    for (const name of Object.keys(PICTURES) as Picture[]) {
      const file = join(IMAGES, name);
      expect(existsSync(file), `docs/images/${name} is missing: ${REGENERATE}`).toBe(true);
      expect(statSync(file).size, `docs/images/${name} is too large for the README`).toBeLessThan(
        MAX_IMAGE_BYTES,
      );
      expect(
        recorded[name]?.sourceSha256,
        `docs/images/${name} shows what the renderer wrote before it changed: ${REGENERATE}`,
      ).toBe(current[name]);
    }
  });

  it("are shown in the README", () => {
    const readme = readFileSync(fileURLToPath(new URL("../../README.md", import.meta.url)), "utf8");
    for (const name of Object.keys(PICTURES)) expect(readme).toContain(`src="docs/images/${name}"`);
  });

  it("normalises every value of the run's own: two runs give the same sources", () => {
    const second = join(work, "second");
    const demo = runDemo(second);
    expect(demo.status, demo.stderr).toBe(0);
    const again: DemoRun = {
      report: parseReport(readFileSync(join(second, "report.json"), "utf8")),
      patchText: readFileSync(join(second, "patch.diff"), "utf8"),
    };
    expect(again.report.runId).not.toBe(run.report.runId);
    expect(sources(again)).toEqual(sources(run));
  });
});
