// The assembly of a run's sandbox, as an ordered sequence of named steps, each timed: the engine, the
// images, the container (with the egress sidecar beside it), its start, the copy-in with the helper's
// start, the checks (hardening read back, tools found), the baseline, the setup commands. Each engine
// object is recorded as it is made (run-objects.ts), so a step that fails removes everything made before
// it. The sandbox is built once every fact it holds is known; the last steps run through it.
import fs from "node:fs";
import path from "node:path";
import type Docker from "dockerode";
import {
  copySummary,
  detectHostPacker,
  type PackSummary,
  planWorkspaceCopy,
  WorkspaceError,
} from "./copy/archive.js";
import { HelperChannel } from "./helper/channel.js";
import { CA_BUNDLE, CA_DIR, CA_FILE, commandEnv, type CommandSettings } from "./container/command-env.js";
import {
  containerSpec,
  type DockerSandboxOptions,
  limitsInsideOf,
  type ReachedEngine,
  runtimeOf,
  usesEgress,
  workspaceMountOptions,
} from "./container/spec.js";
import { createWorkspaceVolume } from "./copy/copier.js";
import { createServiceHomeVolumes } from "./container/service.js";
import { createEgressVolume, EgressSidecar } from "./egress/sidecar.js";
import {
  connectEngine,
  engineElsewhere,
  pingEngine,
  reapOrphans,
  requireRuntime,
  withTimeout,
} from "./engine/engine.js";
import {
  AGENT_UID,
  AGENT_USER,
  containerUlimits,
  type EngineProfile,
  KEEPER_USER,
} from "./engine/profile.js";
import { assessHardening, type Hardening, readOomKills, runtimeMismatch } from "./container/hardening.js";
import { HelperLink } from "./helper/link.js";
import type { ExecOpRequest, ResponseHeader } from "./helper/protocol.js";
import { type ResolvedImage, resolveImage, userImage } from "./image/image.js";
import { PrebuiltImages } from "./image/prebuilt.js";
import { PhaseClock, type PhaseTiming, type StartRecord } from "./phase-clock.js";
import { RunObjects } from "./engine/run-objects.js";
import { EngineError, type Sandbox, SandboxFsError, WORKSPACE_ROOT } from "./sandbox.js";
import { ensureToolbelt, TOOLBELT_BIN, toolbeltProgram } from "./image/toolbelt.js";
import type { NodeChoice } from "./node/node-choice.js";
import {
  ensureNodeVolume,
  NEEDS_GLIBC,
  NODE_BIN,
  NODE_DIR,
  NODE_MANIFEST,
  type NodeVolume,
} from "./node/volume.js";
import { copyIn, type CopyTarget } from "./copy/copy-in.js";
import { planSetupCache, runSetupPhase, type SetupCacheRecord } from "./setup/phase.js";

export { SETUP_CALLER } from "./setup/phase.js";
import { oneShotExec } from "./engine/exec.js";

/** The run's Node.js as the sandbox has it: the choice, and the npm beside it where the official build is mounted. */
export interface NodeInSandbox extends NodeChoice {
  npm?: string;
  /** The engine's volume that holds it (mounted ones only). */
  volume?: string;
}

/** Where the tools of a run are found: which of the programs agent-ci's tools need the image has itself. */
export interface ToolSource {
  name: string;
  from: "image" | "agent-ci";
  path: string;
}
/** Programs reported by where they come from (the Bash tool finds the image's first). */
const REPORTED_TOOLS = ["bash", "git", "rg", "node", "tar", "python3", "go"];

/** Where images keep their CA bundle (Debian and Alpine; Fedora and its kin). */
const IMAGE_CA_BUNDLES = ["/etc/ssl/certs/ca-certificates.crt", "/etc/pki/tls/certs/ca-bundle.crt"];

/**
 * What a started sandbox is made of (DockerSandbox's fields say what each is), each part fixed once made:
 * the helper's connection (link) aside.
 */
export interface SandboxParts {
  container: Docker.Container;
  image: ResolvedImage;
  emulated: boolean;
  commands: CommandSettings;
  link: HelperLink;
  objects: RunObjects;
  egress: EgressSidecar | undefined;
  copy: PackSummary;
  copiedBy: "copier" | "stream";
  hardening: Hardening;
  tools: ToolSource[];
  /** The Bash tool's Node.js and why (undefined: a user image's own, which no option changed). */
  node: NodeInSandbox | undefined;
  /** The cgroup's OOM-kill count at the start (undefined: the engine does not expose it). */
  oomKills: number | undefined;
  /** The assembly's steps; complete when the sandbox is handed out. */
  phases: readonly PhaseTiming[];
  /** What the setup cache did: the key and lookup now, the restore or the write once the setup step ran. */
  setupCache: SetupCacheRecord | undefined;
}

/** What the last steps (baseline, setup) need of the sandbox they run through. */
export interface Assembled extends Sandbox {
  recordBaseline(): Promise<void>;
}

/**
 * Checks the workspace is a directory and starts listing what is copied in; the listing runs while the engine
 * prepares the container.
 */
function planCopy(options: DockerSandboxOptions): ReturnType<typeof planWorkspaceCopy> {
  const workspace = path.resolve(options.workspaceDir);
  const st = fs.statSync(workspace, { throwIfNoEntry: false });
  if (!st) throw new WorkspaceError(`workspace ${options.workspaceDir} does not exist`);
  if (!st.isDirectory()) throw new WorkspaceError(`workspace ${options.workspaceDir} is not a directory`);
  // The copy is listed and checked while the engine prepares the container (an error here, such as a
  // workspace over the limit, ends the start before anything is copied).
  const planning = planWorkspaceCopy(workspace, {
    includeIgnored: options.includeIgnored,
    maxFiles: options.maxCopyFiles,
    maxBytes: options.maxCopyBytes,
    exclude: options.excludeFromCopy,
    worldReadable: options.readOnlyWorkspace,
  });
  planning.catch(() => undefined);
  // The host's tar and zstd are asked for their versions meanwhile too (the stream copy packs with them).
  if (!options.packer) void detectHostPacker();
  return planning;
}

/**
 * Starts the container once the sidecar has, connects it to the egress proxy, and installs the CAs it must
 * trust.
 */
async function startContainer(
  docker: Docker,
  made: Awaited<ReturnType<typeof createContainer>>,
  options: DockerSandboxOptions,
): Promise<EgressSidecar | undefined> {
  const { container } = made;
  await made.sidecarStarted;
  const starting = withTimeout("a container start", container.start());
  options.whileStarting?.();
  await starting;
  const egress = await made.egress;
  await egress?.connect(container, KEEPER_USER);
  // --ca-cert's CAs, and the run's own CA where the proxy answers for a host a secret is injected for.
  const cas = [options.caCertPem, egress?.interceptionCaPem].filter((pem): pem is string => Boolean(pem));
  if (cas.length) await installCaCert(docker, container, cas.join("\n"));
  return egress;
}

/**
 * Copies the workspace in while the helper starts and /tmp is made writable; says which credential files were
 * held back, and shares the workspace with the agent's group when asked.
 */
async function copyWorkspaceIn(
  into: CopyTarget,
  link: HelperLink,
  commands: CommandSettings,
  planning: ReturnType<typeof planWorkspaceCopy>,
): Promise<{ copy: PackSummary; copiedBy: "copier" | "stream" }> {
  const { docker, container, options } = into;
  const plan = await planning;
  for (const held of plan.credentialFiles)
    options.progress?.(
      held.removed
        ? `credentials removed before the copy-in: ${held.path} (${held.removed.join(", ")})`
        : `held back from the sandbox: ${held.path} (${held.reason})`,
    );
  // The helper touches /tmp only when it serves a command (the checks' first): once it answers, it says
  // whether /tmp is already everyone's, and only a /tmp that is not is made so. The helper, the longer of
  // the two (a Node.js start in the container), is asked for first.
  const [, copiedBy] = await Promise.all([
    link.start().then(() => makeTmpWritable(docker, container, link)),
    copyIn(into, plan),
  ]);
  if (options.sharedWorkspace && !options.readOnlyWorkspace) await shareWorkspace(link, commands);
  return { copy: await copySummary(plan), copiedBy };
}

/** The checks once the workspace is in: hardening read back, OOM-kill count, the tools the image has. */
async function checkContainer(
  container: Docker.Container,
  link: HelperLink,
  commands: CommandSettings,
  copy: PackSummary,
  made: Awaited<ReturnType<typeof createContainer>>,
  options: DockerSandboxOptions,
  egress: EgressSidecar | undefined,
): Promise<Pick<SandboxParts, "hardening" | "oomKills" | "tools">> {
  // Each check is a request of its own to the helper or the engine: all are asked at once.
  const [hardening, egressRuntime, oomKills, tools] = await Promise.all([
    readBackHardening(container, link, commands, made.requested, options),
    egress?.runtime(),
    readOomKills(async (request) => (await probe(link, commands, request)).stdout),
    findTools(link, commands),
    refreshWorkspaceIndex(link, commands, copy, options),
    made.node && checkNode(link, commands, made.node),
  ]);
  if (egress) hardening.egressRuntime = egressRuntime;
  return { hardening, oomKills, tools };
}

/** What the engine step and the images step need: the run's configuration, no more. */
export type EngineStartOptions = Pick<
  DockerSandboxOptions,
  "image" | "imageRegistry" | "runtime" | "toolbeltVolume" | "progress" | "startRecord"
>;

/** The engine reached and the run's image and toolbelt made ready: what the rest of the start builds on. */
export interface EngineReady extends ReachedEngine {
  image: ResolvedImage;
  emulated: boolean;
  toolbelt: string;
}

/**
 * The start's first two steps, which need only the run's configuration: the engine reached, then the image
 * and the toolbelt made ready. A run begins them before it is prepared (run-stages.ts) and hands them to the
 * start (`begun`); a start given none begins them itself.
 */
export class EngineStart {
  /** Filled as the steps go: the start goes on recording into it. */
  readonly record: StartRecord;
  /** Resolves once the engine has answered; rejects as the start would (no engine, a runtime it lacks). */
  readonly reached: Promise<ReachedEngine>;
  readonly ready: Promise<EngineReady>;
  private imagesBegun = false;
  private dropped = false;

  constructor(options: EngineStartOptions) {
    this.record = options.startRecord ?? { phases: [] };
    const clock = new PhaseClock(this.record);
    this.reached = clock.run("engine", () => reachEngine(options));
    this.ready = this.reached.then(async (reached) => {
      if (this.dropped) throw new EngineError("the run ended before its images were needed");
      this.imagesBegun = true;
      const made = await clock.run("images", () => images(reached.docker, reached.engine, options));
      return { ...reached, ...made };
    });
    this.reached.catch(() => undefined);
    this.ready.catch(() => undefined);
  }

  /**
   * The run ended before its sandbox was asked for (a configuration error): images not begun are not begun,
   * and ones being made are waited for, so that no toolbelt volume is left half filled. Never rejects.
   */
  async drop(): Promise<void> {
    this.dropped = true;
    if (this.imagesBegun) await this.ready.catch(() => undefined);
  }
}

/**
 * The engine, checked: reachable, with the runtime asked for. Orphans of dead runs are cleared while the
 * start goes on (`reaping`: awaited before the sandbox is handed out); none of them is this run's.
 */
export async function reachEngine(options: Pick<DockerSandboxOptions, "runtime">): Promise<ReachedEngine> {
  const docker = await connectEngine();
  const runtime = runtimeOf(options);
  const engine = await pingEngine(docker);
  if (runtime) await requireRuntime(docker, runtime);
  const reaping = reapOrphans(docker).catch(() => []);
  return { docker, engine, reaping };
}

/** The connection to the helper inside the container, over the channel made with it. */
function helperLink(
  docker: Docker,
  made: Awaited<ReturnType<typeof createContainer>>,
  options: DockerSandboxOptions,
  image: ResolvedImage,
  emulated: boolean,
): HelperLink {
  return new HelperLink(docker, made.container, made.channel, {
    passEnv: options.env,
    addressSpaceBytes: limitsInsideOf(options)?.addressSpaceBytes,
    emulatedArchitecture: emulated ? image.architecture : undefined,
    sharedGroup: Boolean(options.sharedWorkspace && !options.readOnlyWorkspace),
    progress: options.progress,
  });
}

/** How commands run in the container: the image's environment, git's safe directory, the CAs, the proxy. */
function commandSettings(
  options: DockerSandboxOptions,
  image: ResolvedImage,
  profile: EngineProfile,
  egress: EgressSidecar | undefined,
  node: NodeInSandbox | undefined,
): CommandSettings {
  return {
    imageEnv: image.env,
    ...(node?.volume ? { nodeBin: NODE_BIN } : {}),
    safeDirectory: profile.workspaceNotAgents || Boolean(options.readOnlyWorkspace),
    passEnv: options.env,
    caCert: Boolean(options.caCertPem || egress?.interceptionCaPem),
    egress,
  };
}

/**
 * Creates, hardens, fills and baselines the run's container, and builds the sandbox with `build`. On any
 * failure nothing is left behind.
 */
export async function assembleSandbox<S extends Assembled>(
  options: DockerSandboxOptions,
  build: (parts: SandboxParts) => S,
): Promise<S> {
  const planning = planCopy(options);
  const begun = options.begun ?? new EngineStart(options);
  const { record } = begun;
  const { docker, engine, reaping, image, emulated, toolbelt } = await begun.ready;
  const clock = new PhaseClock(record);
  const profile = engine.profile;
  const objects = new RunObjects(docker, options.runId);
  try {
    const cache = await planSetupCache(docker, options, image);
    record.setupCache = cache?.record;
    // A hit starts from the snapshot: the base image with what setup left, restored in the setup step.
    const runImage = cache?.entry ? { ...image, name: cache.entry.image } : image;
    const made = await clock.run("container", async () => {
      const node = await projectNode(docker, options, image, toolbelt, profile);
      return createContainer(docker, objects, options, profile, runImage, toolbelt, node);
    });
    const { container } = made;
    const egress = await clock.run("start", () => startContainer(docker, made, options));
    const link = helperLink(docker, made, options, image, emulated);
    objects.closeWithRun(link);
    const commands = commandSettings(options, image, profile, egress, made.node);
    const { copy, copiedBy } = await clock.run("copy-in", () =>
      copyWorkspaceIn(
        { docker, container, objects, options, profile, image: image.name, toolbelt },
        link,
        commands,
        planning,
      ),
    );
    const checked = await clock.run("checks", () =>
      checkContainer(container, link, commands, copy, made, options, egress),
    );
    record.parts = {
      container,
      image,
      emulated,
      commands,
      link,
      objects,
      egress,
      copy,
      copiedBy,
      ...checked,
      node: made.node ?? options.node,
      phases: clock.phases,
      setupCache: cache?.record,
    };
    const sandbox = build(record.parts);
    await clock.run("baseline", () => sandbox.recordBaseline());
    const setup = options.setup ?? [];
    const copied = async () => new Set((await planning).entries.map((e) => e.rel));
    if (setup.length)
      await clock.run("setup", () =>
        runSetupPhase(sandbox, setup, {
          docker,
          container,
          link,
          egress,
          options,
          image,
          plan: cache,
          copied,
          storing: (saving) => (record.setupCacheStoring = saving),
        }),
      );
    await reaping;
    return sandbox;
  } catch (e) {
    await Promise.all([objects.remove(), reaping]);
    throw e;
  }
}

/**
 * The project's Node.js where the run asked for an official build (`options.node` mounted): its volume for
 * the image's architecture, filled from the npm registry on first use. Undefined: the image's own runs.
 */
async function projectNode(
  docker: Docker,
  options: DockerSandboxOptions,
  image: ResolvedImage,
  toolbelt: string,
  profile: EngineProfile,
): Promise<NodeInSandbox | undefined> {
  const choice = options.node;
  if (!choice?.mounted || !choice.version) return undefined;
  const ready: NodeVolume = await ensureNodeVolume(docker, {
    version: choice.version,
    architecture: image.architecture,
    image: image.name,
    toolbeltVolume: toolbelt,
    ulimits: containerUlimits(profile),
    progress: options.progress,
  });
  return { ...choice, npm: ready.npm || undefined, volume: ready.volume };
}

/**
 * The project's Node.js answers on the Bash tool's PATH as the version it was filled with: a volume whose fill
 * was cut short, or a build that does not run in this image, ends the start here.
 */
async function checkNode(link: HelperLink, commands: CommandSettings, node: NodeInSandbox): Promise<void> {
  const { header, stdout } = await probe(link, commands, {
    script: `test -f ${NODE_DIR}/${NODE_MANIFEST} && node --version`,
    cwd: "/",
    timeoutMs: 60_000,
  });
  if (header.exitCode === 0 && stdout.trim() === `v${node.version}`) return;
  throw new EngineError(
    `Node.js ${node.version} from the volume ${node.volume} does not answer in this image (${(stdout.trim() || `exit ${header.exitCode}`).slice(-300)}): ` +
      `${NEEDS_GLIBC}; or the volume's fill was cut short: remove it (docker volume rm ${node.volume}) and run again`,
  );
}

/** The run's image and a toolbelt for its architecture, made ready together. */
async function images(
  docker: Docker,
  engine: { architecture: string; profile: EngineProfile },
  options: EngineStartOptions,
): Promise<{ image: ResolvedImage; emulated: boolean; toolbelt: string }> {
  // The toolbelt is built for the image's architecture: a user image of another one (arm64 on an x86-64
  // engine, run under emulation) gets a toolbelt of its own. The default image is the engine's.
  // agent-ci's own images come pulled by digest where the release published them, else built here.
  const prebuilt = PrebuiltImages.forRun(options.imageRegistry);
  const resolving = resolveImage(docker, options.image, options.progress, prebuilt);
  const architecture = userImage(options.image) ? (await resolving).architecture : engine.architecture;
  const emulated = Boolean(architecture) && architecture !== engine.architecture;
  if (emulated)
    options.progress?.(
      `the image is for ${architecture} and the engine runs ${engine.architecture}: its programs and agent-ci's run under emulation, several times slower`,
    );
  const [image, toolbelt] = await Promise.all([
    resolving,
    options.toolbeltVolume ??
      ensureToolbelt(docker, options.progress, {
        prebuilt,
        ulimits: containerUlimits(engine.profile),
        architecture: emulated ? architecture : undefined,
      }),
  ]);
  return { image, emulated, toolbelt };
}

/**
 * The egress sidecar (where the network goes through it) and the run's container, created together; the
 * sidecar goes on starting while the container is created and filled, and both mount its volume.
 */
async function createContainer(
  docker: Docker,
  objects: RunObjects,
  options: DockerSandboxOptions,
  profile: EngineProfile,
  image: ResolvedImage,
  toolbelt: string,
  node: NodeInSandbox | undefined,
): Promise<{
  container: Docker.Container;
  channel: HelperChannel | undefined;
  /** The project's Node.js, where the run mounts one. */
  node: NodeInSandbox | undefined;
  /** The hardening asked for, read back once the container runs. */
  requested: Docker.HostConfig;
  egress: Promise<EgressSidecar> | undefined;
  /** Resolves once the sidecar's container started (or its start failed). */
  sidecarStarted: Promise<void> | undefined;
}> {
  // The sidecar's container starts before the run's: the first to mount a new volume gives it its owner on
  // Podman, and the proxy (root, no capabilities) must be able to make its socket there.
  let egress: Promise<EgressSidecar> | undefined;
  let sidecarStarted: Promise<void> | undefined;
  if (usesEgress(options)) {
    await createEgressVolume(docker, options.runId);
    let started = () => {};
    sidecarStarted = new Promise<void>((resolve) => (started = resolve));
    egress = EgressSidecar.start(
      docker,
      options.runId,
      image.name,
      toolbelt,
      options.egress ?? { given: [], rules: [], privateHosts: [], hosts: {}, injections: [] },
      containerUlimits(profile),
      started,
      options.allowWeakHardening,
      options.caCertPem,
    );
    objects.addEgress(egress);
    // A sidecar that fails before its container starts: the run's start goes on, and meets the failure later.
    void egress.catch(() => {}).finally(started);
  }
  let channel = options.helperChannel === "stream" ? undefined : HelperChannel.open();
  if (channel) objects.closeWithRun(channel);
  if (profile.workspaceVolume) {
    objects.addWorkspaceVolume();
    await createWorkspaceVolume(docker, options.runId, workspaceMountOptions(options, profile));
  }
  if (profile.serviceHomes === "volume" && options.services) {
    objects.addServiceHomeVolumes(options.services);
    await createServiceHomeVolumes(docker, options.runId, options.services);
  }
  const spec = () => containerSpec(options, image.name, toolbelt, profile, channel, node?.volume);
  const create = () => withTimeout("a container create", docker.createContainer(spec()));
  const container = await create().catch((e: unknown) => {
    // The engine does not see this host's files: no channel, the helper uses the exec stream.
    if (!channel || !engineElsewhere(e)) throw e;
    channel.close();
    channel = undefined;
    return create();
  });
  objects.addContainer(container);
  return { container, channel, node, requested: spec().HostConfig ?? {}, egress, sidecarStarted };
}

/**
 * The container's /tmp, where agent-ci keeps its state and the agent's commands their temporary files, made
 * writable by everyone (1777) before the helper serves a command. The engine mounts a tmpfs there but gives
 * it the mode of the image's own /tmp when it has one (mode=1777 does not win): a /tmp made by a plain mkdir
 * (755), owned by another user, or behind a symlink left the agent's user unable to write it. The tmpfs is
 * root's (the engine mounted it), and root may change the mode of what it owns without any capability. Most
 * images' /tmp is 1777 already: the helper's stat says so, and the exec (one more process the engine starts
 * while the workspace is copied in) is left out; anything else, an error included, gets it.
 */
async function makeTmpWritable(docker: Docker, container: Docker.Container, link: HelperLink): Promise<void> {
  const seen = await link.client.request("stat", { path: "/tmp/", confine: false }).catch(() => undefined);
  const stat = seen?.ok ? seen.header.stat : undefined;
  if (stat?.type === "directory" && stat.mode === 0o1777) return;
  const res = await oneShotExec(docker, container, [toolbeltProgram("chmod"), "1777", "/tmp/"], "0:0");
  if (res.exitCode !== 0)
    throw new EngineError(
      `the container's /tmp could not be made writable for the agent's user (the image's /tmp, or where it points, is not a directory agent-ci can use): ${res.output.trim()}`,
    );
}

async function installCaCert(docker: Docker, container: Docker.Container, pem: string): Promise<void> {
  const script = `umask 022 && mkdir -p ${CA_DIR} && cat > ${CA_FILE} && { for f in ${IMAGE_CA_BUNDLES.join(" ")}; do [ -f "$f" ] && cat "$f" && break; done; cat ${CA_FILE}; } > ${CA_BUNDLE}`;
  const argv = [toolbeltProgram("bash"), "-c", script];
  const res = await oneShotExec(docker, container, argv, KEEPER_USER, async (sink) => {
    sink.end(pem.endsWith("\n") ? pem : `${pem}\n`);
  });
  if (res.exitCode !== 0)
    throw new EngineError(`installing the --ca-cert certificate failed: ${res.output.trim()}`);
}

/**
 * A command of the checks, through the helper before the sandbox is built: its header (the helper's
 * error as a SandboxFsError) and its stdout.
 */
async function probe(
  link: HelperLink,
  commands: CommandSettings,
  request: Pick<ExecOpRequest, "argv" | "script" | "timeoutMs"> & { cwd?: string },
): Promise<{ header: ResponseHeader<"exec">; stdout: string }> {
  const res = await link.client.request("exec", {
    ...request,
    cwd: request.cwd ?? WORKSPACE_ROOT,
    env: commandEnv(commands, { argv: request.argv }),
  });
  if (!res.ok) throw new SandboxFsError(res.header.code, res.header.message, request.argv?.[0] ?? "bash");
  return { header: res.header, stdout: res.body.subarray(0, res.header.stdoutBytes ?? 0).toString("utf8") };
}

/**
 * What the engine applied and what holds inside, against what was asked; refused unless the user opted in
 * (`--allow-weak-hardening`). Its network mode says how the network is reached as the agent's phase sees it.
 */
async function readBackHardening(
  container: Docker.Container,
  link: HelperLink,
  commands: CommandSettings,
  requested: Docker.HostConfig,
  options: DockerSandboxOptions,
): Promise<Hardening> {
  const probeExec = (argv: string[]) =>
    link.client.request("exec", {
      argv,
      cwd: "/",
      env: commandEnv(commands, { argv: [] }),
      // Ends in milliseconds; the bound is for a wedged sandbox, not a loaded machine, where an exec under
      // gVisor can take seconds and a probe cut short reads as a limit not applied.
      timeoutMs: 60_000,
    });
  // The engine's view and the helper's, asked together. The process limit a command gets (RLIMIT_NPROC,
  // hard), as its shell says it: gVisor has no /proc/self/limits.
  const [info, ping, userns, nproc] = await Promise.all([
    withTimeout("a container inspect", container.inspect()),
    link.client.request("ping", {}),
    probeExec([toolbeltProgram("unshare"), "-U", "true"]),
    probeExec([toolbeltProgram("bash"), "-c", "ulimit -Hu"]),
  ]);
  // A runtime asked for by name is the boundary the user chose: no --allow-weak-hardening runs without it.
  const wrongRuntime = runtimeMismatch(requested, info.HostConfig);
  if (wrongRuntime) throw new EngineError(`${wrongRuntime}: refusing to start.`);
  if (!ping.ok) throw new SandboxFsError(ping.header.code, ping.header.message, "");
  const inside = ping.header;
  const nprocText =
    nproc.ok && nproc.header.exitCode === 0
      ? Buffer.from(nproc.body ?? [])
          .subarray(0, nproc.header.stdoutBytes)
          .toString("utf8")
          .trim()
      : "";
  const hardening = assessHardening(
    requested,
    info.HostConfig,
    {
      uid: inside.uid,
      capEff: inside.capEff,
      noNewPrivs: inside.noNewPrivs,
      seccomp: inside.seccomp,
      userNamespaceOpen: userns.ok && userns.header.exitCode === 0,
      maxProcesses: nprocText && /^\d+$/.test(nprocText) ? Number(nprocText) : null,
    },
    {
      user: AGENT_USER,
      workspaceWritableByAgent: !options.readOnlyWorkspace,
      addressSpaceBytes: limitsInsideOf(options)?.addressSpaceBytes,
    },
  );
  if (hardening.missing.length && !options.allowWeakHardening) {
    throw new EngineError(
      `the engine did not apply these sandbox settings: ${hardening.missing.join("; ")}. ` +
        "Use an engine that honours them, or pass --allow-weak-hardening to run anyway (the report will say so).",
    );
  }
  if (options.network === "allowlist")
    hardening.networkMode = "none (egress only through the allowlist proxy)";
  // The sandbox is handed out only once the setup ended, and with it the proxy it went through.
  if (usesEgress(options) && options.network === "setup")
    hardening.networkMode = "none (setup went through the egress proxy, ended before the agent)";
  return hardening;
}

/** Where each reported program comes from: the image's PATH first (as the Bash tool sees it), else the toolbelt. */
async function findTools(link: HelperLink, commands: CommandSettings): Promise<ToolSource[]> {
  const script = 'for t in "$@"; do printf "%s\\t%s\\n" "$t" "$(command -v "$t" || true)"; done';
  const { stdout } = await probe(link, commands, {
    script: `set -- ${REPORTED_TOOLS.join(" ")}; ${script}`,
    cwd: "/",
    timeoutMs: 10_000,
  });
  const tools: ToolSource[] = [];
  for (const line of stdout.split("\n")) {
    const [name, where] = line.split("\t");
    if (!name || !where) continue;
    const agentCis = where.startsWith(`${TOOLBELT_BIN}/`) || where.startsWith(`${NODE_BIN}/`);
    tools.push({ name, from: agentCis ? "agent-ci" : "image", path: where });
  }
  return tools;
}

/**
 * The copied tree group-writable (the agent owns it), so that services in its group may change it too. Only
 * what the agent owns: on Podman /workspace itself is the keeper's, opened to all already (copy-in.ts), and
 * the agent may not change its mode. Symlinks are left alone (chmod would change what they lead to).
 */
async function shareWorkspace(link: HelperLink, commands: CommandSettings): Promise<void> {
  const res = await probe(link, commands, {
    argv: [
      "find",
      WORKSPACE_ROOT,
      "-user",
      String(AGENT_UID),
      "!",
      "-type",
      "l",
      "-exec",
      "chmod",
      "g+w",
      "--",
      "{}",
      "+",
    ],
    cwd: "/",
    timeoutMs: 120_000,
  });
  if (res.header.exitCode !== 0)
    throw new EngineError(
      `making ${WORKSPACE_ROOT} group-writable for the MCP servers and hooks failed (exit ${res.header.exitCode})`,
    );
}

/**
 * Brings the workspace's own git index up to date with the copied files. Every copied file has a new
 * inode and ctime, so the index's stat data matches none of them: without this, the agent's first
 * `git status` re-hashes the whole tree (on 3,000 files, ~100 ms more than the ones after). Done while the
 * hardening read-back waits on the engine. Never fails the start: a repository git cannot refresh (a
 * worktree's `.git` file, a lock) is left as it was. Plan mode's tree is root's and stays so.
 */
async function refreshWorkspaceIndex(
  link: HelperLink,
  commands: CommandSettings,
  copy: PackSummary,
  options: DockerSandboxOptions,
): Promise<void> {
  if (!copy.isGitRepo || options.readOnlyWorkspace) return;
  const argv = [
    "git",
    "-c",
    "core.fsmonitor=false",
    "-c",
    "core.hooksPath=/dev/null",
    "update-index",
    "-q",
    "--refresh",
  ];
  await probe(link, commands, { argv, timeoutMs: 120_000 }).catch(() => undefined);
}
