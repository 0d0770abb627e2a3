// Where an MCP server (a service) starts, as the run's container spec and the service's own prelude say
// (B3, B22): a home of its own, never /workspace, a tmpfs owned by its user below read-only directories
// only: the container's own on Docker, a volume of the run on Podman (which refuses a container tmpfs's
// owner options).
import { describe, expect, it } from "vitest";
import { containerSpec, type DockerSandboxOptions } from "../../../src/sandbox/container/spec.js";
import { DOCKER_PROFILE, PODMAN_PROFILE } from "../../../src/sandbox/engine/profile.js";
import { runEngineObjects } from "../../../src/sandbox/engine/run-objects.js";
import { serviceArgv, serviceEnv } from "../../../src/sandbox/container/service.js";

const options: DockerSandboxOptions = { runId: "r1", workspaceDir: "/tmp/ws", services: 2 };
const hostConfig = (profile: typeof DOCKER_PROFILE) =>
  containerSpec(options, "img", "tb", profile, undefined).HostConfig ?? {};

describe("a service's home", () => {
  it("B3 is a tmpfs of its own user's on Docker, one per service, and no volume there", () => {
    const docker = hostConfig(DOCKER_PROFILE);
    expect(docker.Tmpfs?.["/run/agent-ci-service-0"]).toMatch(/(^|,)uid=2000,gid=1000,mode=0700,size=/);
    expect(docker.Tmpfs?.["/run/agent-ci-service-1"]).toMatch(/(^|,)uid=2001,gid=1000,mode=0700,size=/);
    expect(docker.Mounts?.filter((m) => m.Target.includes("service"))).toEqual([]);
  });

  it("B22 is a volume of the run on Podman, one per service at the same place, and no container tmpfs there", () => {
    const podman = hostConfig(PODMAN_PROFILE);
    expect(Object.keys(podman.Tmpfs ?? {}).filter((k) => k.includes("service"))).toEqual([]);
    expect(podman.Mounts?.filter((m) => m.Target.includes("service"))).toEqual([
      expect.objectContaining({
        Type: "volume",
        Source: "agent-ci-r1-service-0",
        Target: "/run/agent-ci-service-0",
        VolumeOptions: { NoCopy: true },
      }),
      expect.objectContaining({ Source: "agent-ci-r1-service-1", Target: "/run/agent-ci-service-1" }),
    ]);
    expect(runEngineObjects("r1", 2).volumes).toEqual(
      expect.arrayContaining(["agent-ci-r1-service-0", "agent-ci-r1-service-1"]),
    );
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
  });
});
