// What a run takes from its sandbox at the end: the patch, and what report.json records of the sandbox
// itself (the copy-in, the image, the hardening read back; the egress ledger is the egress capability's).
import { Hardening as HardeningSchema, type RunReportInput } from "../../report/index.js";
import type { SandboxParts } from "../../sandbox/assemble.js";
import type { DockerSandbox } from "../../sandbox/docker-sandbox.js";
import type { PreparedPolicy } from "./policy-setup.js";

/** The hardening fields report.json records, taken from the sandbox's read-back by the schema itself. */
const RecordedHardening = HardeningSchema.omit({ enforcedAt: true });

/**
 * A container's hardening as report.json records it (the agent's, the egress sidecar's): the schema names the
 * fields it records; the read-back has more (the probe's raw values).
 */
export function recordedHardening(read: SandboxParts["hardening"]) {
  return RecordedHardening.parse({ ...read, seccomp: read.seccomp === "2" ? "default" : read.seccomp });
}

type RecordedWorkspace = RunReportInput["workspace"];

/** What the record reads of a sandbox: a started one's, or the parts of one whose start failed after it was built. */
type RecordedParts = Pick<SandboxParts, "copy" | "image" | "emulated" | "tools" | "hardening" | "node">;

/** The sandbox's part of report.json; a run that never had a sandbox records an empty copy and nothing else. */
export function sandboxRecord(
  sandbox: RecordedParts | undefined,
  enforcedAt: NonNullable<RunReportInput["hardening"]>["enforcedAt"],
): {
  copy: Pick<
    RecordedWorkspace,
    "filesCopied" | "bytesCopied" | "skipped" | "credentialFilesHeldBack" | "ignoredLeftOut"
  >;
  image: RunReportInput["image"];
  hardening: RunReportInput["hardening"];
} {
  if (!sandbox)
    return {
      copy: { filesCopied: 0, bytesCopied: 0, skipped: [] },
      image: undefined,
      hardening: undefined,
    };
  return {
    copy: {
      filesCopied: sandbox.copy.files,
      bytesCopied: sandbox.copy.bytes,
      skipped: sandbox.copy.skipped,
      credentialFilesHeldBack: sandbox.copy.credentialFiles.length ? sandbox.copy.credentialFiles : undefined,
      ignoredLeftOut: sandbox.copy.ignoredLeftOut,
    },
    image: {
      name: sandbox.image.name,
      id: sandbox.image.id,
      architecture: sandbox.image.architecture,
      emulated: sandbox.emulated,
      tools: sandbox.tools,
      node: sandbox.node && {
        source: sandbox.node.source,
        spec: sandbox.node.spec,
        file: sandbox.node.file,
        version: sandbox.node.version,
        mounted: sandbox.node.mounted,
        npm: sandbox.node.npm,
      },
    },
    hardening: { ...recordedHardening(sandbox.hardening), enforcedAt },
  };
}

export interface PatchOut {
  /** For summaries and the report's rendering (bytes that are not UTF-8 shown as U+FFFD). */
  text: string;
  /** The patch exactly as git made it: what is written to patch.diff and applied (T7: never re-encoded). */
  bytes: Buffer;
  /** Why there is no patch or only part of one, in plain words for the report. */
  note?: string;
  excluded: Array<{ path: string; reason: string }>;
}

export async function exportPatch(
  sandbox: DockerSandbox | undefined,
  policy: PreparedPolicy | undefined,
  log: (line: string) => void,
): Promise<PatchOut> {
  if (!sandbox)
    return {
      text: "",
      bytes: Buffer.alloc(0),
      note: "no sandbox was started, so there is no patch",
      excluded: [],
    };
  try {
    const exported = await sandbox.exportPatch(policy?.protectFromPatch);
    for (const x of exported.excluded) log(`left out of the patch: ${x.path} (${x.reason})`);
    return { text: exported.patch.toString("utf8"), bytes: exported.patch, excluded: exported.excluded };
  } catch (e) {
    log(`the patch could not be exported: ${(e as Error).message}`);
    return {
      text: "",
      bytes: Buffer.alloc(0),
      note: `no patch: it could not be exported from the container (${(e as Error).message})`,
      excluded: [],
    };
  }
}
