// Who may start a run (RELIABILITY G8): an actor with write access to the repository (admin, maintain or
// write, read through the REST API), or a bot the workflow lists in `allowed_bots`. Everyone else is
// refused with the reason logged; a check that cannot run fails the step. workflow_dispatch and schedule need no check: only people with write
// access can dispatch a workflow, and a schedule is the repository's own.
import { z } from "zod";
import type { GitHubContext } from "../github/context.js";
import type { ActionEvent } from "./event.js";
import { GitHubApiError, type GitHubApi } from "../github/api.js";

export type ActorDecision = { allowed: true; why: string } | { allowed: false; reason: string };

export const WRITE_PERMISSIONS = ["admin", "maintain", "write"] as const;

const PermissionResponse = z.object({ permission: z.string(), role_name: z.string().optional() });

export function isBotLogin(login: string): boolean {
  return /\[bot\]$/i.test(login);
}

/** Pure: the decision for a bot actor (listed or not); undefined for people. */
export function botDecision(
  actor: string,
  actorType: string | undefined,
  allowedBots: readonly string[],
): ActorDecision | undefined {
  if (!isBotLogin(actor) && actorType !== "Bot") return undefined;
  const name = actor.toLowerCase().replace(/\[bot\]$/, "");
  if (allowedBots.includes("*") || allowedBots.includes(name))
    return { allowed: true, why: `${actor} is listed in allowed_bots` };
  return {
    allowed: false,
    reason: `${actor} is a bot and is not listed in allowed_bots; runs started by bots are refused by default`,
  };
}

/** Pure: the decision from a permission level as the API reports it. */
export function permissionDecision(actor: string, permission: string, roleName?: string): ActorDecision {
  const level =
    roleName && (WRITE_PERMISSIONS as readonly string[]).includes(roleName) ? roleName : permission;
  if ((WRITE_PERMISSIONS as readonly string[]).includes(level))
    return { allowed: true, why: `${actor} has ${level} access` };
  return {
    allowed: false,
    reason: `${actor} has ${level || "no"} access to the repository; agent-ci runs only for actors with write access (or bots listed in allowed_bots)`,
  };
}

function actorOf(event: ActionEvent, ctx: GitHubContext): { login: string; type?: string } {
  const senderType = (ctx.payload.sender as { type?: unknown } | undefined)?.type;
  return { login: ctx.actor || event.sender, type: typeof senderType === "string" ? senderType : undefined };
}

export async function checkActor(
  api: GitHubApi,
  ctx: GitHubContext,
  event: ActionEvent,
  allowedBots: readonly string[],
): Promise<ActorDecision> {
  if (event.kind === "manual")
    return { allowed: true, why: `${event.trigger} runs need write access to start` };
  const actor = actorOf(event, ctx);
  if (!actor.login) return { allowed: false, reason: "the actor is unknown (GITHUB_ACTOR is empty)" };
  const bot = botDecision(actor.login, actor.type, allowedBots);
  if (bot) return bot;
  try {
    const response = await api.call(
      "GET /repos/{owner}/{repo}/collaborators/{username}/permission",
      { owner: ctx.owner, repo: ctx.repo, username: actor.login },
      { what: `reading ${actor.login}'s permission`, permission: "contents: read" },
    );
    const parsed = PermissionResponse.safeParse(response.data);
    if (!parsed.success)
      return {
        allowed: false,
        reason: `the permission of ${actor.login} could not be read (unexpected API answer)`,
      };
    return permissionDecision(actor.login, parsed.data.permission, parsed.data.role_name);
  } catch (error) {
    if (error instanceof GitHubApiError && error.failure.kind === "not_found")
      return { allowed: false, reason: `${actor.login} is not a collaborator of the repository` };
    // Fail closed, and loudly: a check that cannot run (bad token, missing permission) fails the step.
    throw error;
  }
}
