// An issue or pull request comment agent-ci wrote, found again by the hidden marker its body starts with, so a
// re-run updates (the Action's reply) or leaves alone (publish's note) what it wrote before instead of adding
// another. Only a comment the token's own login wrote counts (`GitHubApi.login`): anyone may start a comment
// with the marker. The newest page GitHub lists is read last; the search stops after MARKER_SEARCH_PAGES pages.
import { z } from "zod";
import type { GitHubApi } from "./api.js";

export const MARKER_SEARCH_PAGES = 10;

const ListedComment = z.object({
  id: z.number().int(),
  body: z.string().nullish(),
  html_url: z.string().optional(),
  user: z.object({ login: z.string() }).nullish(),
});

export interface MarkerComment {
  id: number;
  url?: string;
}

/** Whether a comment or review was written by `login` (GitHub's logins are case-insensitive). */
export function writtenBy(user: { login: string } | null | undefined, login: string | undefined): boolean {
  return login !== undefined && user?.login.toLowerCase() === login.toLowerCase();
}

/**
 * The newest comment on issue or pull request `number` whose body starts with `marker` and that the token's
 * login wrote, if any. When GitHub does not say who the token is, no comment is taken for agent-ci's.
 */
export async function findMarkerComment(
  api: GitHubApi,
  repository: { owner: string; repo: string },
  number: number,
  marker: string,
  permission: string,
): Promise<MarkerComment | undefined> {
  const login = await api.login();
  if (login === undefined) return undefined;
  let found: MarkerComment | undefined;
  for (let page = 1; page <= MARKER_SEARCH_PAGES; page += 1) {
    const response = await api.call(
      "GET /repos/{owner}/{repo}/issues/{issue_number}/comments",
      { owner: repository.owner, repo: repository.repo, issue_number: number, per_page: 100, page },
      { what: `looking for agent-ci's comment on #${number}`, permission },
    );
    const comments = z.array(ListedComment).safeParse(response.data);
    if (!comments.success) return found;
    for (const comment of comments.data)
      if (comment.body?.startsWith(marker) && writtenBy(comment.user, login))
        found = { id: comment.id, url: comment.html_url };
    if (comments.data.length < 100) return found;
  }
  return found;
}
