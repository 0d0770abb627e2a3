// report.html in a real browser (Debian's Chromium, driven by playwright-core), opened from file:// as a
// downloaded artifact would be: no errors, no network, one bar per call, a click shows the call's details.
// Screenshots go to test-results/ (git-ignored) as build artifacts of this test.
import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL, fileURLToPath } from "node:url";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { renderHtml } from "../../src/report/html.js";
import { parseReport, type RunReport } from "../../src/report/schema.js";
import { launchChromium } from "../support/chromium.js";

const FIXTURES = fileURLToPath(new URL("../fixtures/report/", import.meta.url));
const RESULTS = fileURLToPath(new URL("../../test-results/", import.meta.url));

interface Opened {
  page: Page;
  report: RunReport;
  url: string;
  problems: string[];
  requests: string[];
}

let browser: Browser;
let workDir: string;

beforeAll(async () => {
  browser = await launchChromium();
  workDir = await mkdtemp(join(tmpdir(), "agent-ci-html-"));
  await mkdir(RESULTS, { recursive: true });
});

afterAll(async () => {
  await browser?.close();
  if (workDir) await rm(workDir, { recursive: true, force: true });
});

async function open(
  name: string,
  withPatch: boolean,
  viewport = { width: 1440, height: 900 },
  edit: (report: RunReport) => RunReport = (report) => report,
): Promise<Opened> {
  const report = edit(parseReport(await readFile(join(FIXTURES, `${name}.json`), "utf8")));
  const patchText = withPatch ? await readFile(join(FIXTURES, `${name}.diff`), "utf8") : undefined;
  const file = join(workDir, `${name}.html`);
  await writeFile(file, renderHtml(report, { patchText }));
  const url = pathToFileURL(file).href;
  const page = await browser.newPage({ viewport, colorScheme: "light" });
  const problems: string[] = [];
  const requests: string[] = [];
  page.on("console", (message) => {
    if (message.type() === "error" || message.type() === "warning")
      problems.push(`console.${message.type()}: ${message.text()}`);
  });
  page.on("pageerror", (error) => problems.push(`pageerror: ${error.message}`));
  page.on("dialog", (dialog) => {
    problems.push(`dialog: ${dialog.message()}`);
    void dialog.dismiss();
  });
  page.on("request", (request) => requests.push(request.url()));
  await page.goto(url, { waitUntil: "load" });
  await page.waitForSelector("html[data-ready=true]", { timeout: 10_000 });
  return { page, report, url, problems, requests };
}

describe("report.html in Chromium", () => {
  it("shows a run's attempts side by side, the chosen one marked, and why", async () => {
    const row = (attempt: number, verify: "passed" | "failed", changedLines: number) => ({
      attempt,
      dir: `attempt-${attempt}`,
      runId: `run-${attempt}`,
      started: true,
      exitReason: "completed" as const,
      outcome: verify === "passed" ? ("changes" as const) : ("verify_failed" as const),
      verify,
      deniedCalls: 0,
      changedLines,
      turns: 3,
      costUsd: 0.0123,
    });
    const { page, problems } = await open("small-fix", true, undefined, (report) => ({
      ...report,
      attempts: [row(1, "failed", 2), row(2, "passed", 3)],
      chosen: { attempt: 2, reason: "attempt 2 passed verify: the only one that did", verified: true },
    }));
    const panel = page.locator("#attempts");
    expect(await panel.locator("h2").innerText()).toBe("Chosen from 2 attempts");
    expect(await panel.innerText()).toContain("attempt 2: attempt 2 passed verify: the only one that did");
    expect(await panel.locator("tbody tr").count()).toBe(2);
    expect(await panel.locator("tr.selected").innerText()).toMatch(/^2\s+chosen\s+completed\s+passed/);
    expect(problems).toEqual([]);
    const plain = await open("small-fix", true);
    expect(await plain.page.locator("#attempts").count()).toBe(0);
    await page.close();
    await plain.page.close();
  });

  it("renders a 200-call run: no errors, no network, one bar per call, click shows details", async () => {
    const { page, report, url, problems, requests } = await open("long-run-200", true);
    expect(report.toolCalls).toHaveLength(200);
    expect(await page.locator(".call-bar").count()).toBe(report.toolCalls.length);
    expect(await page.locator(".call-row").count()).toBe(report.toolCalls.length);
    expect(await page.locator(".turn-bar").count()).toBe(report.turns.length);
    expect(await page.locator('.call-bar[data-status="denied"]').count()).toBe(report.denials.length);

    const target = report.toolCalls[34]!;
    await page.locator(`.call-bar[data-call-id="${target.id}"]`).click();
    const details = page.locator("#call-details");
    await expect.poll(() => details.getAttribute("data-call-id")).toBe(target.id);
    expect(await details.locator("h3").innerText()).toBe(`#${target.index + 1} ${target.tool}`);
    expect(await details.locator("#call-decision").innerText()).toContain("Bash(git push:*)");
    expect(await details.locator("#call-input").innerText()).toContain("git push --force origin main");
    expect(await page.locator(`.call-row.selected`).getAttribute("data-call-id")).toBe(target.id);

    await page.keyboard.press("ArrowRight");
    await expect.poll(() => details.getAttribute("data-call-id")).toBe(report.toolCalls[35]!.id);

    await page.locator('[data-filter="denied"]').click();
    expect(await page.locator(".call-row:visible").count()).toBe(report.denials.length);
    await page.locator('[data-filter="all"]').click();

    await page.locator('[data-color-mode="outcome"]').click();
    expect(await page.locator("#timeline").getAttribute("data-color")).toBe("outcome");
    await page.locator('[data-color-mode="tool"]').click();

    await page.locator(`.call-bar[data-call-id="${report.toolCalls[12]!.id}"]`).click();
    await page.setViewportSize({ width: 1440, height: 1750 });
    await page.evaluate("window.scrollTo(0, 0)");
    await page.screenshot({ path: join(RESULTS, "report-html.png") });
    await page.screenshot({ path: join(RESULTS, "report-html-full.png"), fullPage: true });
    expect(problems).toEqual([]);
    expect(requests).toEqual([url]);
    await page.close();
  });

  it("shows the patch as a diff per file and a call's own change", async () => {
    const { page, report, problems, requests, url } = await open("small-fix", true);
    expect(await page.locator("details.file").count()).toBe(report.patch.files.length);
    expect(await page.locator("table.diff tr.add").count()).toBeGreaterThanOrEqual(report.patch.added);
    expect(await page.locator("#outcome").innerText()).toContain("Changes ready");
    await page.locator('.call-row[data-call-id="toolu_04"]').click();
    expect(await page.locator("#call-details table.diff tr.add").innerText()).toContain("return a + b;");
    await page.screenshot({ path: join(RESULTS, "report-html-small-fix.png"), fullPage: true });
    expect(problems).toEqual([]);
    expect(requests).toEqual([url]);
    await page.close();
  });

  it("shows what the model was told in the header: memory files, the git snapshot, the system prompt", async () => {
    const { page, report, problems, requests, url } = await open("small-fix", true);
    const context = page.locator("#model-context");
    expect(await context.locator("summary").innerText()).toContain(
      "1 memory file at the start, 1 more as tools reached them",
    );
    await context.locator("summary").click();
    const text = await context.innerText();
    for (const file of report.context!.memory.files) expect(text).toContain(file.path);
    expect(text).toContain("beside toolu_01");
    expect(text).toContain("Current branch: fix-add (main branch: main)");
    expect(problems).toEqual([]);
    expect(requests).toEqual([url]);
    await page.close();
  });

  it("says in the container's card which Node.js the Bash tool had, and why", async () => {
    const withNode = (node: NonNullable<RunReport["image"]>["node"]) => (report: RunReport) => ({
      ...report,
      image: { ...report.image!, node },
    });
    const pinned = await open(
      "small-fix",
      false,
      undefined,
      withNode({
        source: ".nvmrc",
        file: ".nvmrc",
        spec: "20",
        version: "20.20.2",
        mounted: true,
        npm: "11.21.2",
      }),
    );
    const card = (page: Page) => page.locator(".card", { hasText: "Container" }).first().innerText();
    expect(await card(pinned.page)).toMatch(
      /Node\.js\s+20\.20\.2: \.nvmrc says 20, the official build with npm 11\.21\.2/,
    );
    expect(pinned.problems).toEqual([]);
    await pinned.page.close();
    const own = await open(
      "small-fix",
      false,
      undefined,
      withNode({ source: "image", version: "24.21.0", mounted: false }),
    );
    expect(await card(own.page)).toMatch(/Node\.js\s+24\.21\.0: the image's own/);
    await own.page.close();
  });

  it("shows the run's phases as their own lane, each bar with its duration, before the first call", async () => {
    const { page, report, problems, requests, url } = await open("small-fix", true);
    const phases = report.phases ?? [];
    expect(phases.length).toBeGreaterThan(0);
    expect(await page.locator(".tl-label", { hasText: "Phases" }).count()).toBe(1);
    const bars = page.locator(".phase-bar");
    expect(await bars.count()).toBe(phases.length);
    expect(await bars.evaluateAll((els) => els.map((e) => e.getAttribute("data-phase")))).toEqual(
      phases.map((p) => p.name),
    );
    expect(await page.locator('.phase-bar[data-phase="calls"]').getAttribute("title")).toContain("47.8 s");
    // Drawn where they happened: the images' bar begins left of the first call's.
    const left = (selector: string) =>
      page
        .locator(selector)
        .first()
        .evaluate((e) => e.getBoundingClientRect().left);
    expect(await left('.phase-bar[data-phase="images"]')).toBeLessThan(await left(".call-bar"));
    expect(problems).toEqual([]);
    expect(requests).toEqual([url]);
    await page.close();
  });

  it("nests each subagent's calls under its Task call: its own lane below the Task lane, indented rows in the list", async () => {
    const { page, report, problems, requests, url } = await open("subagents", false);
    const agents = report.subagents ?? [];
    expect(agents).toHaveLength(2);
    expect(await page.locator(".call-bar").count()).toBe(report.toolCalls.length);
    const labels = await page.locator(".tl-label").evaluateAll((els) =>
      els.map((e) => ({
        text: (e.firstElementChild?.textContent ?? "").trim(),
        parent: e.getAttribute("data-parent-call-id"),
      })),
    );
    // The Task lane, then one nested lane per subagent in the order their Task calls started; then the rest.
    const task = labels.findIndex((l) => l.text === "Task");
    expect(labels.slice(task, task + 3)).toEqual([
      { text: "Task", parent: null },
      ...agents.map((a) => ({ text: `\u21b3 ${a.type}`, parent: a.toolUseId })),
    ]);
    for (const agent of agents) {
      const own = report.toolCalls.filter((c) => c.parentToolUseId === agent.toolUseId);
      const lane = page.locator(`.tl-lane.sub[data-parent-call-id="${agent.toolUseId}"]`);
      expect(
        await lane.locator(".call-bar").evaluateAll((els) => els.map((e) => e.getAttribute("data-call-id"))),
      ).toEqual(own.map((c) => c.id));
      expect(await lane.locator(".agent-span").getAttribute("data-status")).toBe(agent.status);
      // The subagent's calls are not drawn again in the main loop's tool lanes.
      for (const c of own) expect(await page.locator(`.call-bar[data-call-id="${c.id}"]`).count()).toBe(1);
    }
    // Drawn inside their Task call's span: the first nested bar starts after the Task bar does.
    const left = (selector: string) =>
      page
        .locator(selector)
        .first()
        .evaluate((e) => e.getBoundingClientRect().left);
    const explore = agents[0]!.toolUseId;
    expect(await left(`.tl-lane.sub[data-parent-call-id="${explore}"] .call-bar`)).toBeGreaterThan(
      await left(`.call-bar[data-call-id="${explore}"]`),
    );
    expect(await page.locator(".agent-span").nth(1).getAttribute("title")).toContain("stopped");
    // The list keeps the tree: each subagent's rows follow its Task call's, marked with the agent.
    const rows = await page
      .locator(".call-row")
      .evaluateAll((els) =>
        els.map((e) => [
          e.getAttribute("data-call-id"),
          e.getAttribute("data-parent-call-id"),
          e.querySelector(".agent-tag")?.textContent ?? null,
        ]),
      );
    expect(rows).toEqual(report.toolCalls.map((c) => [c.id, c.parentToolUseId ?? null, c.agent ?? null]));
    await page.locator(`.tl-lane.sub[data-parent-call-id="${explore}"] .call-bar`).last().click();
    const details = page.locator("#call-details");
    await expect.poll(() => details.getAttribute("data-call-id")).toBe("toolu_explore_2_0");
    expect(await page.locator(".call-row.selected").getAttribute("class")).toContain("sub");
    await page.screenshot({ path: join(RESULTS, "report-html-subagents.png"), fullPage: true });
    expect(problems).toEqual([]);
    expect(requests).toEqual([url]);
    await page.close();
  });

  it("shows every rule whole: a 300-character rule without a space wraps inside its card, at any width", async () => {
    const long = `Bash(${"x".repeat(300)}:*)`;
    const source = `settings:${"nested/".repeat(30)}settings.json`;
    for (const width of [1440, 420]) {
      const { page, problems } = await open("small-fix", true, { width, height: 900 }, (report) => ({
        ...report,
        policy: {
          ...report.policy,
          rules: [...report.policy.rules, { text: long, behavior: "deny", source }],
          ignored: [{ text: long, source, reason: `unknown tool ${"y".repeat(200)}` }],
        },
        ...(report.hardening
          ? {
              hardening: {
                ...report.hardening,
                enforcedAt: [
                  ...report.hardening.enforcedAt,
                  { rule: long, source, where: "both" as const, how: "z".repeat(200) },
                ],
              },
            }
          : {}),
      }));
      // Measured in the page: no rules table is wider than its card, no card scrolls sideways, and every
      // cell's text fits inside the cell (nothing cut off or hidden behind a scrollbar).
      const tables = await page.locator("table.rules").evaluateAll((found) =>
        found.flatMap((table) => {
          const card = table.closest(".card");
          if (!card) return ["a rules table outside a card"];
          const name = card.querySelector("h3")?.textContent ?? "?";
          return [
            ...(table.scrollWidth > card.clientWidth
              ? [`${name}: table ${table.scrollWidth}px in a ${card.clientWidth}px card`]
              : []),
            ...(card.scrollWidth > card.clientWidth
              ? [`${name}: card scrolls (${card.scrollWidth}px > ${card.clientWidth}px)`]
              : []),
          ];
        }),
      );
      const cut = (what: string, outer: string) =>
        page.locator(what).evaluateAll(
          (found, selector) =>
            found.flatMap((element) => {
              const box = element.closest(selector)?.getBoundingClientRect();
              const right = element.getBoundingClientRect().right;
              const clipped = element.scrollWidth > element.clientWidth && element.tagName === "TD";
              return clipped || !box || right > box.right + 0.5
                ? [`"${(element.textContent ?? "").slice(0, 20)}…" (${element.tagName}) cut off`]
                : [];
            }),
          outer,
        );
      expect(tables).toEqual([]);
      // Every cell inside its card, and everything in a cell inside the cell.
      expect(await cut("table.rules td", ".card")).toEqual([]);
      expect(await cut("table.rules td *", "td")).toEqual([]);
      expect(await page.locator("table.rules").count()).toBeGreaterThanOrEqual(2);
      // The whole rule is there to read, as text.
      expect(await page.locator("table.rules").first().innerText()).toContain(long);
      await page.screenshot({ path: join(RESULTS, `report-html-rules-${width}.png`), fullPage: true });
      expect(problems).toEqual([]);
      await page.close();
    }
  });

  it("keeps hostile strings as text: no script runs, no markup is injected", async () => {
    const { page, problems, requests, url } = await open("denied-no-changes", false);
    await page.locator('.call-row[data-call-id="toolu_a3"]').click();
    expect(await page.locator("#call-input").innerText()).toContain("<script>alert(1)</script>");
    expect(await page.locator("#call-details script").count()).toBe(0);
    expect(await page.locator("#changes-section .empty").innerText()).toContain("no changes");
    await page.screenshot({ path: join(RESULTS, "report-html-denied.png"), fullPage: true });
    expect(problems).toEqual([]);
    expect(requests).toEqual([url]);
    await page.close();
  });

  it("renders a run that never started a container, on a narrow dark screen", async () => {
    const report = parseReport(await readFile(join(FIXTURES, "config-error.json"), "utf8"));
    const file = join(workDir, "config-error.html");
    await writeFile(file, renderHtml(report));
    const page = await browser.newPage({ viewport: { width: 420, height: 900 }, colorScheme: "dark" });
    const problems: string[] = [];
    page.on("pageerror", (error) => problems.push(error.message));
    page.on("console", (message) => {
      if (message.type() === "error") problems.push(message.text());
    });
    await page.goto(pathToFileURL(file).href);
    await page.waitForSelector("html[data-ready=true]");
    expect(await page.locator("#run-error").innerText()).toContain("InvalidRule");
    expect(await page.locator(".call-bar").count()).toBe(0);
    await page.screenshot({ path: join(RESULTS, "report-html-config-error-dark.png"), fullPage: true });
    expect(problems).toEqual([]);
    await page.close();
  });
});
