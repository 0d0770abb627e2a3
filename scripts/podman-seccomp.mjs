// Writes a seccomp profile for Podman that blocks what Docker's default profile blocks for a container
// without CAP_SYS_ADMIN: new namespaces (unshare, setns, clone with namespace flags, clone3) and the
// mount family, and keyctl. Podman's own default (containers-common's seccomp.json) allows them all, so
// an unprivileged agent can create a user namespace; agent-ci probes for that and refuses to run
// (docs/ENGINES.md). Serve Podman with this profile and agent-ci runs with every setting in place:
//
//   node scripts/podman-seccomp.mjs > /etc/containers/agent-ci-seccomp.json
//   printf '[containers]\nseccomp_profile = "/etc/containers/agent-ci-seccomp.json"\n' > agent-ci-containers.conf
//   CONTAINERS_CONF=$PWD/agent-ci-containers.conf podman system service --time=0 unix:///run/podman/podman.sock
//
// (scripts/podman-engine.sh does this with AGENT_CI_PODMAN_SECCOMP=strict.) Usage:
//   node scripts/podman-seccomp.mjs [podman's profile, default /usr/share/containers/seccomp.json]
import fs from "node:fs";

const source = process.argv[2] ?? "/usr/share/containers/seccomp.json";
const profile = JSON.parse(fs.readFileSync(source, "utf8"));
if (!Array.isArray(profile.syscalls))
  throw new Error(`${source} is not a seccomp profile (no syscalls list)`);

const BLOCKED = new Set([
  "clone",
  "clone3",
  "unshare",
  "setns",
  "keyctl",
  "mount",
  "umount",
  "umount2",
  "pivot_root",
  "mount_setattr",
  "move_mount",
  "open_tree",
  "fsopen",
  "fsconfig",
  "fsmount",
  "fspick",
]);
const unconditional = (rule) =>
  rule.action === "SCMP_ACT_ALLOW" &&
  !rule.args?.length &&
  !Object.keys(rule.includes ?? {}).length &&
  !Object.keys(rule.excludes ?? {}).length;

let removed = 0;
for (const rule of profile.syscalls) {
  if (!unconditional(rule)) continue;
  const kept = rule.names.filter((name) => !BLOCKED.has(name));
  removed += rule.names.length - kept.length;
  rule.names = kept;
}
profile.syscalls = profile.syscalls.filter((rule) => rule.names.length);
// As Docker's profile: clone only without namespace flags (CLONE_NEWNS|NEWUTS|NEWIPC|NEWUSER|NEWPID|NEWNET
// |NEWCGROUP = 0x7E020000), and clone3 answered with ENOSYS so that libc falls back to clone.
profile.syscalls.push(
  {
    names: ["clone"],
    action: "SCMP_ACT_ALLOW",
    args: [{ index: 0, value: 0x7e020000, valueTwo: 0, op: "SCMP_CMP_MASKED_EQ" }],
  },
  { names: ["clone3"], action: "SCMP_ACT_ERRNO", errnoRet: 38, args: [] },
);
process.stderr.write(`podman-seccomp: ${removed} unconditional allows removed from ${source}\n`);
process.stdout.write(JSON.stringify(profile, null, 1) + "\n");
