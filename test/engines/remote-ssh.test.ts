// agent-ci against a remote engine over ssh: DOCKER_HOST=ssh://user@127.0.0.1:PORT. dockerode's ssh
// transport (docker-modem + ssh2) logs in with the keys of the ssh-agent at SSH_AUTH_SOCK and runs
// `docker system dial-stdio` on the far side, one ssh connection per API request. This test starts its
// own sshd on loopback (a throwaway host key, one authorized key) and its own ssh-agent, then runs a
// scripted fix through runAgent from source and through the bundled CLI (dist/, as users run it).
//
// Needs root (sshd's privilege separation), /usr/sbin/sshd, ssh-agent and the docker CLI (for
// dial-stdio); scripts/test.sh installs openssh-server in CI. Without them the suite is reported as
// skipped, with the reason in its name.
import { type ChildProcess, execFileSync, spawn, spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseReport } from "../../src/report/index.js";
import { createDockerClient } from "../../src/sandbox/engine/docker-client.js";
import { pingEngine } from "../../src/sandbox/engine/engine.js";
import { hasCommand } from "../support/host-command.js";
import { applyToCopy } from "../support/workspace.js";
import { EXAMPLE, labelled, runScripted } from "./support.js";
import { tempOut } from "../support/run-io.js";

/** In CI (`.ci/run` installs every prerequisite) a missing one fails the tests instead of skipping them. */
const IN_CI = process.env.CI === "true";

const SSHD = "/usr/sbin/sshd";
const missing = [
  process.getuid?.() === 0 ? "" : "root",
  fs.existsSync(SSHD) ? "" : "sshd (openssh-server)",
  hasCommand("ssh-agent") && hasCommand("ssh-add") && hasCommand("ssh-keygen") ? "" : "openssh-client",
  hasCommand("docker") ? "" : "the docker CLI (docker system dial-stdio)",
].filter(Boolean);
const ENV_KEYS = ["DOCKER_HOST", "DOCKER_TLS_VERIFY", "DOCKER_CERT_PATH", "SSH_AUTH_SOCK"] as const;

async function waitFor(check: () => boolean, what: string, ms = 10_000): Promise<void> {
  for (const end = Date.now() + ms; Date.now() < end;) {
    if (check()) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`${what} did not come up within ${ms / 1000} s`);
}

describe.skipIf(missing.length > 0 && !IN_CI)(
  `agent-ci through ssh:// on loopback${missing.length ? ` (skipped: needs ${missing.join(", ")})` : ""}`,
  () => {
    const saved = Object.fromEntries(ENV_KEYS.map((k) => [k, process.env[k]]));
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "agent-ci-ssh-"));
    const agentSock = path.join(dir, "agent.sock");
    const log = path.join(dir, "sshd.log");
    const user = os.userInfo().username;
    let sshd: ChildProcess | undefined;
    let agent: ChildProcess | undefined;
    let port = 0;
    const logins = () =>
      fs.existsSync(log) ? (fs.readFileSync(log, "utf8").match(/Accepted publickey/g)?.length ?? 0) : 0;

    beforeAll(async () => {
      const localEngine = process.env.DOCKER_HOST;
      execFileSync("ssh-keygen", ["-q", "-t", "ed25519", "-N", "", "-f", path.join(dir, "host_key")]);
      execFileSync("ssh-keygen", ["-q", "-t", "ed25519", "-N", "", "-f", path.join(dir, "client_key")]);
      fs.copyFileSync(path.join(dir, "client_key.pub"), path.join(dir, "authorized_keys"));
      fs.mkdirSync("/run/sshd", { recursive: true, mode: 0o755 });
      port = 20_000 + Math.floor(Math.random() * 20_000);
      fs.writeFileSync(
        path.join(dir, "sshd_config"),
        [
          "ListenAddress 127.0.0.1",
          `Port ${port}`,
          `HostKey ${dir}/host_key`,
          `AuthorizedKeysFile ${dir}/authorized_keys`,
          "PasswordAuthentication no",
          "KbdInteractiveAuthentication no",
          "PermitRootLogin prohibit-password",
          "UsePAM no",
          "StrictModes no",
          `PidFile ${dir}/sshd.pid`,
          // The far side's docker CLI must reach the same engine as the tests' default.
          ...(localEngine ? [`SetEnv DOCKER_HOST=${localEngine}`] : []),
          "",
        ].join("\n"),
      );
      sshd = spawn(SSHD, ["-D", "-e", "-f", path.join(dir, "sshd_config")], {
        stdio: ["ignore", "ignore", fs.openSync(log, "a")],
      });
      agent = spawn("ssh-agent", ["-D", "-a", agentSock], { stdio: "ignore" });
      await waitFor(() => fs.existsSync(agentSock), "ssh-agent");
      execFileSync("ssh-add", ["-q", path.join(dir, "client_key")], {
        env: { ...process.env, SSH_AUTH_SOCK: agentSock },
      });
      await waitFor(
        () =>
          fs.existsSync(path.join(dir, "sshd.pid")) || /Server listening/.test(fs.readFileSync(log, "utf8")),
        "sshd",
      );
      process.env.DOCKER_HOST = `ssh://${user}@127.0.0.1:${port}`;
      process.env.SSH_AUTH_SOCK = agentSock;
      delete process.env.DOCKER_TLS_VERIFY;
      delete process.env.DOCKER_CERT_PATH;
    }, 60_000);

    afterAll(() => {
      for (const k of ENV_KEYS) {
        if (saved[k] === undefined) delete process.env[k];
        else process.env[k] = saved[k];
      }
      sshd?.kill();
      agent?.kill();
      fs.rmSync(dir, { recursive: true, force: true });
    });

    it("answers a ping through sshd and `docker system dial-stdio`", async () => {
      const before = logins();
      const engine = await pingEngine(createDockerClient());
      expect(engine.apiVersion).toMatch(/^\d+\.\d+$/);
      expect(logins()).toBeGreaterThan(before);
    });

    it("runs a scripted fix through runAgent (from source); the patch applies; no container is left", async () => {
      const before = logins();
      const run = await runScripted({
        script: path.join(EXAMPLE, "fix.script.json"),
        mode: "acceptEdits",
        allow: ["Bash(npm test)"],
      });
      expect(run.outcome.exitReason, run.logs.join("\n")).toBe("completed");
      expect(run.report?.toolCalls.map((c) => c.tool)).toEqual(["Bash", "Grep", "Read", "Edit", "Bash"]);
      const copy = applyToCopy(EXAMPLE, Buffer.from(run.patch));
      expect(fs.readFileSync(path.join(copy, "src/calc.js"), "utf8")).toContain(
        "return sum / values.length;",
      );
      // One ssh login per Engine API request.
      expect(logins() - before).toBeGreaterThan(5);
      expect(await labelled(createDockerClient(), run.outcome.runId)).toEqual([]);
    }, 180_000);

    it.skipIf(!fs.existsSync("dist/cli.js") && !IN_CI)(
      "runs it through the bundled CLI too (ssh2 is bundled; only its optional native add-ons are left out)",
      () => {
        const out = tempOut();
        const before = logins();
        const res = spawnSync(
          "node",
          [
            "bin/agent-ci.js",
            "run",
            "--workspace",
            EXAMPLE,
            "--script",
            path.join(EXAMPLE, "fix.script.json"),
            "--mode",
            "acceptEdits",
            "--allow",
            "Bash(npm test)",
            "--out",
            out,
          ],
          { encoding: "utf8", env: { ...process.env, ANTHROPIC_API_KEY: "" }, timeout: 170_000 },
        );
        expect(res.status, res.stderr).toBe(0);
        expect(parseReport(fs.readFileSync(path.join(out, "report.json"), "utf8")).exitReason).toBe(
          "completed",
        );
        expect(logins() - before).toBeGreaterThan(5);
      },
      180_000,
    );
  },
);
