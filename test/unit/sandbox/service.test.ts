// Where an MCP server (a service) starts, as the run's container spec and the service's own prelude say
// (B3): a home of its own, never /workspace, on Docker a tmpfs owned by its user below read-only
// directories only; on Podman, which refuses a tmpfs's owner options, one it makes in /tmp.
import { describe, expect, it } from "vitest";
import { containerSpec, type DockerSandboxOptions } from "../../../src/sandbox/container-spec.js";
import { DOCKER_PROFILE, PODMAN_PROFILE } from "../../../src/sandbox/engine-profile.js";
import { serviceArgv, serviceEnv } from "../../../src/sandbox/service.js";

const options: DockerSandboxOptions = { runId: "r1", workspaceDir: "/tmp/ws", services: 2 };
const tmpfs = (profile: typeof DOCKER_PROFILE) =>
  containerSpec(options, "img", "tb", profile, undefined).HostConfig?.Tmpfs ?? {};

describe("a service's home", () => {
  it("B3 is a tmpfs of its own user's on Docker, one per service, and none on Podman", () => {
    const docker = tmpfs(DOCKER_PROFILE);
    expect(docker["/run/agent-ci-service-0"]).toMatch(/(^|,)uid=2000,gid=1000,mode=0700$/);
    expect(docker["/run/agent-ci-service-1"]).toMatch(/(^|,)uid=2001,gid=1000,mode=0700$/);
    expect(Object.keys(tmpfs(PODMAN_PROFILE)).filter((k) => k.includes("service"))).toEqual([]);
  });

  it("B3 is the working directory and HOME, with PYTHONSAFEPATH and npm's user config there", () => {
    const argv = serviceArgv({
      index: 0,
      name: "s",
      command: "python3",
      args: ["-m", "srv"],
      env: {},
      caller: "c",
    });
    expect(argv.slice(-3)).toEqual(["python3", "-m", "srv"]);
    expect(argv.join(" ")).not.toContain("/workspace");
    expect(argv[2]).toContain('cd "$HOME" && exec "$@"');
    expect(serviceEnv(1)).toEqual({
      HOME: "/run/agent-ci-service-1",
      PYTHONSAFEPATH: "1",
      npm_config_userconfig: "/run/agent-ci-service-1/.npmrc",
    });
    expect(serviceEnv(1, false).HOME).toBe("/tmp/agent-ci-service-1");
  });
});
