// Who may write the setup cache and whose entries a run may start from, fail-closed. A snapshot is code that
// later runs execute (installed packages, their scripts, a virtualenv's interpreter), so an entry is trusted
// only when the setup that made it ran trusted code: a push, schedule or workflow_dispatch on the default
// branch, or the CLI on the user's own tree. A run on a pull request's code may read trusted entries, and
// writes only to its own pull request's namespace, which no other run reads. Every entry names its producer
// in its labels, and a reader refuses one whose producer does not fit the namespace it sits in.

/** Where a run came from, as the face that started it knows: the CLI, or an Actions event. */
export type CacheOrigin =
  | { face: "cli"; ref?: string; commit?: string; runId: string }
  | {
      face: "action";
      event: string;
      /** GITHUB_REF: refs/heads/main, refs/pull/12/merge. */
      ref: string;
      /** The repository's default branch (its name, from the event's payload); undefined: not known. */
      defaultBranch: string | undefined;
      /** The pull request the run works on (pull_request*, or an issue_comment on a pull request). */
      pullRequest: number | undefined;
      commit: string;
      runId: string;
    };

/** Who made an entry, recorded in its labels. */
export interface CacheProducer {
  event: string;
  ref: string;
  commit: string;
  runId: string;
  /** The pull request whose namespace it was written to. */
  pullRequest?: number;
}

/** What a run may do with the cache: the namespaces it reads (first match wins) and the one it writes. */
export interface CacheScope {
  read: string[];
  /** Undefined: the run writes nothing (why says so). */
  write: string | undefined;
  why: string;
  producer: CacheProducer;
  /** refs/heads/<default branch>, where known: a trusted entry from an event must have been made there. */
  defaultRef: string | undefined;
}

export const TRUSTED_NAMESPACE = "trusted";
/** The events whose setup runs the default branch's code with the repository's own trust. */
export const TRUSTED_EVENTS: readonly string[] = ["push", "schedule", "workflow_dispatch"];
/** The CLI's event name in a producer. */
export const CLI_EVENT = "cli";
/** Events that run on a pull request's code, or on the text of one (the agent's trigger). */
const PULL_REQUEST_EVENTS: readonly string[] = [
  "pull_request",
  "pull_request_target",
  "pull_request_review",
  "pull_request_review_comment",
  "issue_comment",
];

export const pullRequestNamespace = (n: number): string => `pr-${n}`;

/** The run's scope, from where it came from. */
export function cacheScope(origin: CacheOrigin): CacheScope {
  if (origin.face === "cli") {
    const producer = {
      event: CLI_EVENT,
      ref: origin.ref ?? "",
      commit: origin.commit ?? "",
      runId: origin.runId,
    };
    return {
      read: [TRUSTED_NAMESPACE],
      write: TRUSTED_NAMESPACE,
      why: "the CLI on the user's own working tree",
      producer,
      defaultRef: undefined,
    };
  }
  const defaultRef = origin.defaultBranch ? `refs/heads/${origin.defaultBranch}` : undefined;
  const producer: CacheProducer = {
    event: origin.event,
    ref: origin.ref,
    commit: origin.commit,
    runId: origin.runId,
  };
  if (origin.pullRequest !== undefined && PULL_REQUEST_EVENTS.includes(origin.event)) {
    const own = pullRequestNamespace(origin.pullRequest);
    return {
      read: [own, TRUSTED_NAMESPACE],
      write: own,
      why: `${origin.event} on pull request #${origin.pullRequest}: its entries are read by that pull request's runs only`,
      producer: { ...producer, pullRequest: origin.pullRequest },
      defaultRef,
    };
  }
  const onDefault = defaultRef !== undefined && origin.ref === defaultRef;
  if (TRUSTED_EVENTS.includes(origin.event) && onDefault)
    return {
      read: [TRUSTED_NAMESPACE],
      write: TRUSTED_NAMESPACE,
      why: `${origin.event} on the default branch`,
      producer,
      defaultRef,
    };
  return {
    read: [TRUSTED_NAMESPACE],
    write: undefined,
    why: `${origin.event} on ${origin.ref || "an unknown ref"}: only ${TRUSTED_EVENTS.join(", ")} on the default branch, or the CLI, write trusted entries`,
    producer,
    defaultRef,
  };
}

/** The labels an entry carries: its key, namespace, format and producer. */
export const LABELS = {
  kind: "agent-ci.image",
  format: "agent-ci.setup.format",
  key: "agent-ci.setup.key",
  namespace: "agent-ci.setup.namespace",
  event: "agent-ci.setup.event",
  ref: "agent-ci.setup.ref",
  commit: "agent-ci.setup.commit",
  runId: "agent-ci.setup.run-id",
  pullRequest: "agent-ci.setup.pull-request",
  setupMs: "agent-ci.setup.setup-ms",
  /** A package-cache volume's kind (a volume is no image). */
  volume: "agent-ci.volume",
  platform: "agent-ci.setup.platform",
} as const;
export const SNAPSHOT_KIND = "setup-snapshot";
export const PACKAGE_CACHE_KIND = "package-cache";

/** The producer's labels, as the writer of an entry or a package-cache volume sets them. */
function producerLabels(producer: CacheProducer): Record<string, string> {
  return {
    [LABELS.event]: producer.event,
    [LABELS.ref]: producer.ref,
    [LABELS.commit]: producer.commit,
    [LABELS.runId]: producer.runId,
    ...(producer.pullRequest !== undefined ? { [LABELS.pullRequest]: String(producer.pullRequest) } : {}),
  };
}

/** A package-cache volume's labels: its namespace, platform and the producer that made it. */
export function packageCacheLabels(
  volume: { namespace: string; platform: string },
  producer: CacheProducer,
): Record<string, string> {
  return {
    [LABELS.volume]: PACKAGE_CACHE_KIND,
    [LABELS.namespace]: volume.namespace,
    [LABELS.platform]: volume.platform,
    ...producerLabels(producer),
  };
}

/** An entry's labels, as the writer sets them. */
export function entryLabels(
  entry: { key: string; namespace: string; format: number; setupMs: number },
  producer: CacheProducer,
): Record<string, string> {
  return {
    [LABELS.kind]: SNAPSHOT_KIND,
    [LABELS.format]: String(entry.format),
    [LABELS.key]: entry.key,
    [LABELS.namespace]: entry.namespace,
    ...producerLabels(producer),
    [LABELS.setupMs]: String(Math.round(entry.setupMs)),
  };
}

/** A label's value in a reason: quoted and cut (labels on a shared engine are anyone's text). */
const shown = (value: string | undefined): string =>
  value === undefined ? "(none)" : JSON.stringify(value.slice(0, 80));

/**
 * Why an entry found under `namespace` for `key` may not be used (undefined: it may): every label must be
 * there and say what its place says, and its producer must be one that may write that namespace.
 */
export function refuseEntry(
  labels: Readonly<Record<string, string>> | undefined | null,
  expected: { key: string; namespace: string; format: number },
  scope: Pick<CacheScope, "defaultRef">,
): string | undefined {
  const l = labels ?? {};
  if (l[LABELS.kind] !== SNAPSHOT_KIND) return "it is not a setup snapshot";
  if (l[LABELS.format] !== String(expected.format))
    return `its format is ${shown(l[LABELS.format])}, not ${expected.format}`;
  if (l[LABELS.key] !== expected.key) return "its recorded key is not the key it is stored under";
  return refuseProducer(l, expected.namespace, scope);
}

/**
 * Why a package-cache volume found under `namespace` may not be restored (undefined: it may): it must be one,
 * for the platform its name says, and its producer must be one that may write that namespace.
 */
export function refusePackageCache(
  labels: Readonly<Record<string, string>> | undefined | null,
  expected: { namespace: string; platform: string },
  scope: Pick<CacheScope, "defaultRef">,
): string | undefined {
  const l = labels ?? {};
  if (l[LABELS.volume] !== PACKAGE_CACHE_KIND) return "it is not a package cache";
  if (l[LABELS.platform] !== expected.platform)
    return `its platform is ${shown(l[LABELS.platform])}, not ${expected.platform}`;
  return refuseProducer(l, expected.namespace, scope);
}

/** The namespace and producer an entry's labels record, against the namespace it sits in. */
function refuseProducer(
  l: Readonly<Record<string, string>>,
  namespace: string,
  scope: Pick<CacheScope, "defaultRef">,
): string | undefined {
  if (l[LABELS.namespace] !== namespace)
    return `it records the namespace ${shown(l[LABELS.namespace])}, not ${namespace}`;
  const event = l[LABELS.event] ?? "";
  const ref = l[LABELS.ref] ?? "";
  if (!l[LABELS.runId] || !event) return "it records no producer";
  if (namespace === TRUSTED_NAMESPACE) {
    if (event === CLI_EVENT) return undefined;
    if (!TRUSTED_EVENTS.includes(event))
      return `its producer's event ${shown(event)} may not write trusted entries`;
    if (!scope.defaultRef)
      return `its producer (${shown(event)}) cannot be checked against the default branch here`;
    if (ref !== scope.defaultRef) return `its producer ran on ${shown(ref)}, not ${scope.defaultRef}`;
    return undefined;
  }
  const pr = /^pr-(\d+)$/.exec(namespace)?.[1];
  if (pr === undefined) return `${namespace} is no namespace this run reads`;
  if (l[LABELS.pullRequest] !== pr) return `its producer worked on another pull request than #${pr}`;
  if (!PULL_REQUEST_EVENTS.includes(event))
    return `its producer's event ${shown(event)} is not a pull request's`;
  return undefined;
}
