// How a commit says which run it holds: agent-ci publish ends each commit's message with the line
// `agent-ci run <id>`. Publish reads it to continue a branch, and a resumed run reads it to find the commit
// its record must reproduce; one definition for both.

/** The trailer agent-ci ends each publish commit's message with. */
export const RUN_TRAILER = "agent-ci run ";

/** The run id and summary an agent-ci publish commit's message carries, or undefined for another commit. */
export function parseRunCommit(message: string): { runId: string; summary: string } | undefined {
  const lines = message.trimEnd().split("\n");
  const last = lines.at(-1) ?? "";
  if (!last.startsWith(RUN_TRAILER)) return undefined;
  // Only what runBranch could have made a branch of: an id with a backtick or a mention is not agent-ci's.
  const runId = last.slice(RUN_TRAILER.length).trim();
  if (!/^[A-Za-z0-9._-]{1,200}$/.test(runId)) return undefined;
  // The title line, then the summary; agent-ci's own issue line (pull-request.ts's issueLine) is not the run's.
  const body = lines.slice(1, -1);
  while (body.length && /^(?:|Fixes #\d+|Opened from #\d+)$/.test(body.at(-1) ?? "")) body.pop();
  return { runId, summary: body.join("\n").trim() };
}
