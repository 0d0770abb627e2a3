// The hardening read-back as a pure comparison: no engine, one row per setting that can fail to hold.
import { describe, expect, it } from "vitest";
import {
  assessHardening,
  HOST_TASKS_PER_GUEST_TASK,
  hostPidsLimit,
  type InspectedHardening,
  type InsideProbe,
  limitsInside,
  type RequestedHardening,
  runtimeMismatch,
} from "../../../src/sandbox/container/hardening.js";

const requested: RequestedHardening = {
  PidsLimit: 512,
  Memory: 4 * 1024 ** 3,
  NanoCpus: 2e9,
  NetworkMode: "none",
};
const applied: InspectedHardening = {
  ReadonlyRootfs: true,
  CapDrop: ["ALL"],
  NetworkMode: "none",
  PidsLimit: 512,
  Memory: 4 * 1024 ** 3,
  NanoCpus: 2e9,
  Init: true,
  Privileged: false,
  Runtime: "runc",
};
const inside: InsideProbe = {
  uid: 1000,
  capEff: "0000000000000000",
  noNewPrivs: "1",
  seccomp: "2",
  userNamespaceOpen: false,
};
const context = { user: "1000:1000", workspaceWritableByAgent: true };

describe("assessHardening", () => {
  it("finds nothing missing when every requested setting holds", () => {
    const h = assessHardening(requested, applied, inside, context);
    expect(h.missing).toEqual([]);
    expect(h).toMatchObject({
      uid: 1000,
      noNewPrivileges: true,
      readonlyRootfs: true,
      pidsLimit: 512,
      init: true,
      runtime: "runc",
    });
  });

  it.each<[string, Partial<InspectedHardening>, Partial<InsideProbe>, string]>([
    ["root user", {}, { uid: 0 }, "non-root user"],
    ["an unknown user", {}, { uid: null }, "non-root user"],
    [
      "capabilities left",
      {},
      { capEff: "00000000a80425fb" },
      "capabilities dropped (CapEff 00000000a80425fb)",
    ],
    ["no-new-privileges off", {}, { noNewPrivs: "0" }, "no-new-privileges"],
    ["a writable root", { ReadonlyRootfs: false }, {}, "read-only root filesystem"],
    ["a short CapDrop list", { CapDrop: ["CAP_NET_RAW"] }, {}, "CapDrop ALL"],
    ["no CapDrop", { CapDrop: null }, {}, "CapDrop ALL"],
    ["the pids limit ignored", { PidsLimit: null }, {}, "pids limit 512 (got null)"],
    ["another memory limit", { Memory: 0 }, {}, "memory limit 4294967296 (got 0)"],
    ["no CPU limit", { NanoCpus: 0 }, {}, "CPU limit 2000000000 (got 0)"],
    ["no init", { Init: null }, {}, "init process"],
    ["privileged", { Privileged: true }, {}, "unprivileged"],
    ["a network", { NetworkMode: "bridge" }, {}, "network none"],
    ["seccomp off", {}, { seccomp: "0" }, "seccomp filter"],
    [
      "user namespaces open",
      {},
      { userNamespaceOpen: true },
      "user namespaces blocked (the engine's seccomp profile allows unshare -U)",
    ],
  ])("names %s", (_what, host, probe, missing) => {
    expect(
      assessHardening(requested, { ...applied, ...host }, { ...inside, ...probe }, context).missing,
    ).toEqual([missing]);
  });

  it("accepts Podman's capability list in place of ALL", () => {
    const podmanCaps = [
      "CAP_CHOWN",
      "CAP_DAC_OVERRIDE",
      "CAP_FOWNER",
      "CAP_FSETID",
      "CAP_KILL",
      "CAP_NET_BIND_SERVICE",
      "CAP_SETFCAP",
      "CAP_SETGID",
      "CAP_SETPCAP",
      "CAP_SETUID",
      "CAP_SYS_CHROOT",
    ];
    expect(assessHardening(requested, { ...applied, CapDrop: podmanCaps }, inside, context).missing).toEqual(
      [],
    );
  });

  it("does not ask for network none when the run has a network", () => {
    expect(
      assessHardening(
        { ...requested, NetworkMode: "bridge" },
        { ...applied, NetworkMode: "bridge" },
        inside,
        context,
      ).missing,
    ).toEqual([]);
  });
});

describe("a runtime asked for by name", () => {
  // gVisor as read back on Debian's runsc: /proc has no NoNewPrivs line, the agent's process has no seccomp
  // filter of its own (its calls reach gVisor's kernel), and unshare -U succeeds inside it.
  const gvisorInside: InsideProbe = { ...inside, noNewPrivs: "", seccomp: "0", userNamespaceOpen: true };
  const gvisor: InspectedHardening = {
    ...applied,
    Runtime: "runsc",
    SecurityOpt: ["no-new-privileges:true"],
  };
  const asked = { ...requested, Runtime: "runsc" };

  it("is refused when the engine started another one", () => {
    expect(runtimeMismatch(asked, applied)).toMatch(/asked to run under the OCI runtime runsc .* under runc/);
    expect(runtimeMismatch(asked, { ...applied, Runtime: undefined })).toMatch(/under runc$/);
    expect(runtimeMismatch(asked, gvisor)).toBeUndefined();
    expect(runtimeMismatch(requested, gvisor)).toBeUndefined();
  });

  it("under gVisor, holds without the host kernel's checks, no-new-privileges as the engine applied it", () => {
    const h = assessHardening(asked, gvisor, gvisorInside, context);
    expect(h.missing).toEqual([]);
    expect(h.runtime).toBe("runsc");
    expect(h.noNewPrivileges).toBe(true);
    expect(h.seccomp).toMatch(/^runsc: /);
  });

  it("under gVisor, records the limits held inside its kernel, and misses a process limit a command does not get", () => {
    const limited = {
      ...asked,
      PidsLimit: hostPidsLimit("runsc", 512),
      Ulimits: [{ Name: "nproc", Hard: 512 }],
    };
    const held = { ...gvisor, PidsLimit: hostPidsLimit("runsc", 512) };
    const withLimits = { ...context, addressSpaceBytes: 2 ** 30 };
    const h = assessHardening(limited, held, { ...gvisorInside, maxProcesses: 512 }, withLimits);
    expect(h.missing).toEqual([]);
    expect(h.pidsLimit).toBe(512 * HOST_TASKS_PER_GUEST_TASK);
    expect(h.limitsInside).toMatchObject({ processes: 512, addressSpaceBytes: 2 ** 30 });
    const unlimited = assessHardening(limited, held, { ...gvisorInside, maxProcesses: null }, withLimits);
    expect(unlimited.missing).toEqual([
      "process limit inside the runtime's kernel 512 (RLIMIT_NPROC; got none)",
    ]);
    expect(limitsInside("runc", 512, 2 ** 30)).toBeUndefined();
    expect(hostPidsLimit("runc", 512)).toBe(512);
    expect(assessHardening(requested, applied, inside, withLimits).limitsInside).toBeUndefined();
  });

  it("under gVisor, still misses no-new-privileges the engine did not apply", () => {
    const h = assessHardening(asked, { ...gvisor, SecurityOpt: [] }, gvisorInside, context);
    expect(h.missing).toEqual(["no-new-privileges"]);
  });

  it("keeps the host kernel's checks for runsc not asked for (a default runtime is not vouched for by name)", () => {
    const h = assessHardening(requested, gvisor, gvisorInside, context);
    expect(h.missing).toEqual(
      expect.arrayContaining([
        "no-new-privileges",
        "seccomp filter",
        "user namespaces blocked (the engine's seccomp profile allows unshare -U)",
      ]),
    );
  });
});
