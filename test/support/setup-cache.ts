// What the setup-cache engine tests share: the runs they play (the CLI on its own tree, an issue comment on a
// pull request), and the removal of the snapshots they made, found by their keys.
import type Docker from "dockerode";
import { LABELS, type CacheOrigin } from "../../src/setup-cache/trust.js";

/** The CLI on the user's own working tree: writes trusted entries. */
export const CLI_ORIGIN: CacheOrigin = {
  face: "cli",
  runId: "test",
  ref: "refs/heads/main",
  commit: "c0ffee",
};

/** An issue comment on pull request `n`: reads trusted entries, writes only `pr-<n>`. */
export const prOrigin = (n: number): CacheOrigin => ({
  face: "action",
  event: "issue_comment",
  ref: "refs/heads/main",
  defaultBranch: "main",
  pullRequest: n,
  commit: "badc0de",
  runId: `run-${n}`,
});

/** Removes every snapshot image whose key is one of `keys`, children first (a forged entry sits on another). */
export async function removeSnapshots(docker: Docker, keys: readonly string[]): Promise<void> {
  const images = await docker.listImages({
    all: true,
    filters: { label: [`${LABELS.kind}=setup-snapshot`] },
  });
  const ours = images.filter((i) => keys.includes(i.Labels?.[LABELS.key] ?? ""));
  ours.sort((a, b) => b.Created - a.Created);
  for (const image of ours) await docker.getImage(image.Id).remove({ force: true });
}
