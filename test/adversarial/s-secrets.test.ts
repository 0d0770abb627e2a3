// RELIABILITY S (secrets), end to end. The harness plants fresh fake secrets in the CLI's environment
// (ANTHROPIC_API_KEY, GITHUB_TOKEN, ACTIONS_* and values agent-ci does not know about) and a host sentinel
// holding an SSH key and git credentials, and checks every output for them after each test. These tests add
// what the scan cannot see: what the container itself saw (its environment, the copied repository), token
// formats agent-ci does not know in advance, and encoded forms of known values. The Action's side (comment
// bodies, the artifact, Octokit errors) is in test/action.
import { execFileSync } from "node:child_process";
import crypto from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { describe, expect } from "vitest";
import { BASE_ENV } from "../../src/sandbox/docker-sandbox.js";
import { fake, startFakeAnthropic } from "../support/fake-anthropic.js";
import { containerOf, docker, until, useHarness, type RunResult, type ScriptCall } from "./harness.js";
import { rowTester, type Row } from "./rows.js";

const ROWS = [
  {
    id: "S1",
    what: "ANTHROPIC_API_KEY, GITHUB_TOKEN, ACTIONS_* in the host environment never enter the container",
  },
  {
    id: "S2",
    what: "persisted checkout credentials (extraheader, URL user:pass, .npmrc tokens) are stripped before copy-in",
  },
  {
    id: "S3",
    what: "token formats in tool output (ghp_, ghs_, github_pat_, sk-ant-, AKIA, xoxb-, JWT) are redacted everywhere, next to ANSI too",
  },
  {
    id: "S4",
    what: "a known value base64-, URL-, hex-encoded, reversed, or split across output chunks is redacted",
  },
  {
    id: "S5",
    what: "a secret in the patch is flagged in the report; the Action withholds it",
    alsoSee: [
      {
        file: "test/action/secrets.test.ts",
        test: "a patch holding the token is withheld from the artifact and the comment, with warnings (S5)",
      },
      { file: "test/action/comment.test.ts", test: "leaves a patch with a secret out, with a notice (S5)" },
    ],
  },
  {
    id: "S6",
    what: "the model writes a secret into a comment or PR body",
    covered: [
      { file: "test/action/comment.test.ts", test: "redacts every known secret in the body" },
      {
        file: "test/action/secrets.test.ts",
        test: "appear in no request body, artifact file, summary, output or log line of a model run",
      },
    ],
  },
  { id: "S7", what: "ACTIONS_STEP_DEBUG=true and text output: still no raw secret" },
  {
    id: "S8",
    what: "errors that echo credentials: an API error with the key, a DOCKER_HOST with a password",
  },
  {
    id: "S9",
    what: "network probes from inside: 169.254.169.254, metadata.google.internal, the host gateway",
  },
] as const satisfies readonly Row[];

const h = useHarness();
const { test, checkTable } = rowTester(ROWS);
const bash = (command: string, extra: Record<string, unknown> = {}): ScriptCall => ({
  name: "Bash",
  input: { command, ...extra },
});
const ALNUM = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
const rand = (n: number, alphabet = ALNUM) =>
  Array.from(crypto.randomBytes(n), (b) => alphabet[b % alphabet.length]).join("");
const SUSPICIOUS_NAME = /TOKEN|KEY|SECRET|PASSWORD|ANTHROPIC|GITHUB|ACTIONS_|AWS_|NPM_/;

/** Every file the run wrote, and what it printed. */
function everything(run: RunResult): string {
  const files = fs.readdirSync(run.outDir, { recursive: true }).map((f) => path.join(run.outDir, String(f)));
  return [
    run.stdout,
    run.stderr,
    ...files.filter((f) => fs.statSync(f).isFile()).map((f) => fs.readFileSync(f, "utf8")),
  ].join("\n");
}

describe("S: secrets", () => {
  test("S1", "the host's tokens are in neither the container's environment nor any process's", async () => {
    const ws = h.workspace({ "a.txt": "a\n" });
    const handle = h.startCli({
      workspace: ws,
      mode: "bypassPermissions",
      turns: [
        [bash("env | cut -d= -f1 | sort")],
        [bash("cat /proc/self/environ | tr '\\0' '\\n' | cut -d= -f1")],
        [
          bash(
            "for p in /proc/[0-9]*; do cat $p/environ 2>/dev/null | tr '\\0' '\\n'; done | cut -d= -f1 | sort -u",
          ),
        ],
        [bash("sleep 3")],
      ],
    });
    await handle.waitFor(/"name":"Bash","input":\{"command":"sleep 3"/);
    // What the engine holds for the container (its /proc/1/environ): only agent-ci's allowlist.
    const info = await until(
      "the run's container",
      async () => containerOf(handle.runId() ?? "none"),
      20_000,
    );
    const inspected = await docker.getContainer(info.Id).inspect();
    const names = (inspected.Config.Env ?? []).map((e) => e.slice(0, e.indexOf("=")));
    const run = await handle.done;
    // The allowlist, plus what the image itself sets (ENV lines of Dockerfile.sandbox).
    for (const name of Object.keys(BASE_ENV)) expect(names).toContain(name);
    for (const name of names) expect(name, name).not.toMatch(SUSPICIOUS_NAME);
    for (const i of [0, 1, 2]) {
      expect(run.text(i)).toContain("PATH");
      for (const name of run.text(i).split("\n")) expect(name, name).not.toMatch(SUSPICIOUS_NAME);
    }
  });

  test(
    "S2",
    "checkout credentials in .git/config, remote URLs and .npmrc/.yarnrc.yml never reach the container",
    async () => {
      const token = `s2${rand(30)}`;
      const basic = Buffer.from(`x-access-token:${token}`).toString("base64");
      const ws = h.workspace(
        {
          "a.txt": "a\n",
          ".npmrc": `registry=https://registry.npmjs.org/\n//registry.npmjs.org/:_authToken=${token}\nalways-auth=true\n`,
          "pkg/.npmrc": `_auth=${basic}\n_password=${token}\n`,
          ".yarnrc.yml": `npmRegistryServer: "https://registry.example.com"\nnpmAuthToken: "${token}"\n`,
        },
        { git: true },
      );
      const git = (...args: string[]) => gitIn(ws, args);
      git("config", "http.https://github.com/.extraheader", `AUTHORIZATION: basic ${basic}`);
      git("remote", "add", "origin", `https://x-access-token:${token}@github.com/o/r.git`);
      h.workspace({}, { dir: ws }); // the test's own git config changes are the baseline
      const run = await h.cli({
        workspace: ws,
        mode: "bypassPermissions",
        turns: [
          [
            bash(
              "git config --get-regexp 'extraheader|url' ; cat .npmrc pkg/.npmrc .yarnrc.yml; grep -rc -F -e _authToken -e npmAuthToken -e _password . --include='*rc*' | grep -v ':0' | wc -l",
            ),
          ],
        ],
      });
      const seen = run.text(0);
      expect(seen).toContain("remote.origin.url https://github.com/o/r.git");
      expect(seen).toContain("registry=https://registry.npmjs.org/");
      expect(seen).toContain("always-auth=true");
      expect(seen).toMatch(/^0$/m);
      expect(everything(run)).not.toContain(token);
      expect(everything(run)).not.toContain(basic);
      expect(run.report?.workspace.skipped).toEqual([]);
      expect(run.report?.workspace.credentialFilesHeldBack?.map((h) => h.path).sort()).toEqual([
        ".git/config",
        ".npmrc",
        ".yarnrc.yml",
        "pkg/.npmrc",
      ]);
    },
  );

  test(
    "S3",
    "token formats in outputs are redacted in report.json, report.md, events and stdout, next to ANSI codes too",
    async () => {
      const tokens = {
        ghp: `ghp_${rand(36)}`,
        ghs: `ghs_${rand(36)}`,
        pat: `github_pat_${rand(22)}_${rand(59)}`,
        anthropic: ["sk", "ant", "api03", rand(60)].join("-"),
        akia: "AK" + "IA" + rand(16, "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567"),
        slack: ["xo" + "xb", "1234567890", rand(24)].join("-"),
        jwt: [
          Buffer.from('{"alg":"HS256"}').toString("base64url"),
          Buffer.from('{"sub":"ci-bot-x"}').toString("base64url"),
          rand(43),
        ].join("."),
      };
      const lines = Object.values(tokens);
      const ws = h.workspace({
        "tokens.txt": lines.join("\n") + "\n",
        "json.txt":
          JSON.stringify({ auth: tokens.ghp, nested: JSON.stringify({ key: tokens.anthropic }) }) + "\n",
      });
      const run = await h.cli({
        workspace: ws,
        mode: "bypassPermissions",
        turns: [
          [bash("cat tokens.txt json.txt")],
          [bash(`while read t; do printf '\\033[31m%s\\033[0m\\n' "$t"; done < tokens.txt`)],
          [{ name: "Read", input: { file_path: "/workspace/tokens.txt" } }],
          [{ name: "Grep", input: { pattern: "ghp_|sk-ant", output_mode: "content" } }],
        ],
      });
      const all = everything(run);
      for (const [kind, token] of Object.entries(tokens))
        expect(all.includes(token), `${kind} leaked`).toBe(false);
      expect(run.text(0)).toContain("***");
    },
  );

  test("S4", "encodings of a known secret, and one split across output chunks, are redacted", async () => {
    const known = h.secrets.env.GITHUB_TOKEN!;
    const forms = {
      base64: Buffer.from(known).toString("base64"),
      base64url: Buffer.from(known).toString("base64url"),
      url: encodeURIComponent(`${known}/x`),
      hex: Buffer.from(known).toString("hex"),
      reversed: [...known].reverse().join(""),
    };
    // The known value lands across the boundary of the helper's 16 KiB output chunks.
    const filler = "x".repeat(16_384 - 10);
    const ws = h.workspace({
      "enc.txt": Object.values(forms).join("\n") + "\n",
      "long.txt": `${filler}${known}\n`,
    });
    const run = await h.cli({
      workspace: ws,
      mode: "bypassPermissions",
      turns: [
        [bash("cat enc.txt")],
        [bash("cat long.txt")],
        [{ name: "Read", input: { file_path: "/workspace/enc.txt" } }],
      ],
    });
    const all = everything(run);
    for (const [kind, form] of Object.entries(forms))
      expect(all.includes(form), `${kind} form leaked`).toBe(false);
    expect(run.text(1).endsWith("***")).toBe(true);
  });

  test("S5", "a secret written into the patch is reported as a finding with a critical warning", async () => {
    const token = `ghp_${rand(36)}`;
    const ws = h.workspace({ "config.js": "export const token = process.env.TOKEN;\n" });
    const run = await h.cli({
      workspace: ws,
      mode: "acceptEdits",
      turns: [
        [{ name: "Read", input: { file_path: "/workspace/config.js" } }],
        [
          {
            name: "Edit",
            input: {
              file_path: "/workspace/config.js",
              old_string: "process.env.TOKEN",
              new_string: `"${token}"`,
            },
          },
        ],
      ],
    });
    expect(run.report?.patch.secretFindings).toEqual([
      expect.objectContaining({ file: "config.js", line: 1, kind: "github_token" }),
    ]);
    expect(run.report?.warnings).toContainEqual(
      expect.objectContaining({ kind: "secret_in_patch", severity: "critical" }),
    );
    // The patch itself is kept as made (it is the work product); the report and events never show the token.
    expect(run.patch).toContain(token);
    expect(fs.readFileSync(path.join(run.outDir, "report.json"), "utf8")).not.toContain(token);
    expect(fs.readFileSync(path.join(run.outDir, "events.jsonl"), "utf8")).not.toContain(token);
  });

  test(
    "S7",
    "with ACTIONS_STEP_DEBUG=true and text output, a model that echoes every known secret leaks none",
    async () => {
      const ws = h.workspace({ "a.txt": "a\n" });
      const s = h.secrets;
      const run = await h.cli({
        workspace: ws,
        mode: "bypassPermissions",
        format: "text",
        env: { ACTIONS_STEP_DEBUG: "true", RUNNER_DEBUG: "1" },
        turns: [
          {
            text: `Here is the key: ${s.anthropicKey}`,
            tools: [
              bash(
                `echo ${s.env.GITHUB_TOKEN} ${s.env.ACTIONS_RUNTIME_TOKEN}; echo ${s.env.GH_TOKEN} >&2; exit 3`,
              ),
            ],
          },
          [{ name: "Read", input: { file_path: `/workspace/${s.env.GITHUB_TOKEN}.txt` } }],
          [{ name: "Write", input: { file_path: "/workspace/b.txt", content: "b\n" } }],
        ],
        final: `Done. ${s.env.ACTIONS_ID_TOKEN_REQUEST_TOKEN}`,
      });
      expect(run.exitCode).toBe(0);
      expect(run.stdout).toContain("agent-ci: changes");
      // The harness checks stdout, stderr and every file for the planted values.
    },
  );

  test(
    "S8",
    "errors that carry credentials are redacted: the API echoing the key, a DOCKER_HOST with a password",
    async () => {
      const ws = h.workspace({ "a.txt": "a\n" });
      const key = h.secrets.anthropicKey;
      const api = await startFakeAnthropic({
        apiKey: key,
        turns: [
          fake.httpError(401, {
            type: "authentication_error",
            message: `invalid x-api-key ${key} (Authorization: Bearer ${key})`,
          }),
        ],
      });
      h.scanAlso("what the fake Messages API was sent (bodies)", () =>
        api.requests.map((r) => r.rawBody).join("\n"),
      );
      try {
        const apiRun = await h.cli({
          workspace: ws,
          prompt: "hello",
          format: "text",
          env: { ANTHROPIC_BASE_URL: api.url },
        });
        expect(apiRun.exitCode).toBe(4);
        expect(apiRun.report?.exitReason).toBe("api_error");
      } finally {
        await api.close();
      }
      const password = `pw${rand(30)}`;
      const hosts = [`tcp://admin:${password}@127.0.0.1:9`, `tcp://x:${h.secrets.env.GH_TOKEN}@127.0.0.1:9`];
      for (const dockerHost of hosts) {
        const run = await h.cli({
          workspace: ws,
          turns: [[bash("true")]],
          format: "text",
          env: { DOCKER_HOST: dockerHost },
        });
        expect(run.exitCode).toBe(3);
        expect(run.report?.error?.message).toMatch(/no Docker engine answers/);
        expect(everything(run)).not.toContain(password);
      }
    },
  );

  test(
    "S9",
    "metadata endpoints and the host gateway are unreachable; the probes are failed commands, not a crash",
    async () => {
      const ws = h.workspace({ "a.txt": "a\n" });
      const run = await h.cli({
        workspace: ws,
        mode: "bypassPermissions",
        turns: [
          [bash("curl -sS -m 3 http://169.254.169.254/latest/meta-data/ 2>&1", { timeout: 20_000 })],
          [bash("getent hosts metadata.google.internal; echo rc=$?", { timeout: 20_000 })],
          [
            bash(
              "(exec 3<>/dev/tcp/172.17.0.1/2375) 2>&1; (exec 3<>/dev/tcp/169.254.169.254/80) 2>&1; echo done",
              { timeout: 20_000 },
            ),
          ],
          [bash("cat /etc/resolv.conf 2>&1 | grep -c nameserver; ls /sys/class/net")],
        ],
      });
      expect(run.report?.exitReason).toBe("completed");
      expect(run.call(0).errorKind).toBe("command_failed");
      expect(run.text(0)).toMatch(
        /Couldn't connect|Network is unreachable|Failed to connect|Could not resolve/,
      );
      expect(run.text(1)).toContain("rc=2");
      expect(run.text(2)).toMatch(/Network is unreachable[\s\S]*Network is unreachable[\s\S]*done/);
      expect(run.text(3)).toMatch(/lo$/);
    },
  );

  checkTable();
});

function gitIn(cwd: string, args: string[]): void {
  execFileSync("git", args, { cwd, stdio: "pipe", env: { ...process.env, GIT_CONFIG_GLOBAL: "/dev/null" } });
}
