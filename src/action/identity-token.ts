// Keyless sign-in to the Anthropic API (workload identity federation, as claude-code-action does it): the
// workflow's GitHub OIDC token, fetched through the Actions runtime (@actions/core's getIDToken, needs
// `permissions: id-token: write`), is written to a file the model client's credential chain reads at every
// exchange (the SDK's identityTokenFromFile). GitHub's tokens live minutes while a run may last an hour, so the
// file is rewritten before the token it holds expires; the exchange itself is the SDK's (runner/model/credentials.ts).
// Every token fetched is masked; the file is the runner's temp, never the workspace, and is removed at the end.
import fs from "node:fs";
import path from "node:path";
import { ActionInputError } from "./inputs.js";

/** How often the file gets a fresh token: GitHub's OIDC tokens are valid for a few minutes more than this. */
export const IDENTITY_TOKEN_REFRESH_MS = 4 * 60_000;

export interface IdentityTokenFileOptions {
  /** The file the model client reads the token from. */
  file: string;
  /** The audience asked for (`anthropic_oidc_audience`). */
  audience: string;
  /** GitHub's OIDC token for an audience (@actions/core's getIDToken). */
  idToken: (audience: string) => Promise<string>;
  /** Masks a value in the runner's log. */
  setSecret: (value: string) => void;
  warn: (line: string) => void;
  /** Default IDENTITY_TOKEN_REFRESH_MS; tests shorten it. */
  refreshMs?: number;
  /** Told after each rewrite (tests wait for it). */
  onRefresh?: () => void;
}

export interface IdentityTokenFile {
  /** Stops the refresh; the file's folder is removed by the step's cleanup. */
  stop(): void;
}

/** Writes the first token (failing the step with what to fix when there is none), then keeps the file fresh. */
export async function startIdentityTokenFile(options: IdentityTokenFileOptions): Promise<IdentityTokenFile> {
  const write = async () => {
    const token = await options.idToken(options.audience);
    options.setSecret(token);
    // Written aside and renamed, so the client never reads half a token.
    const temp = path.join(path.dirname(options.file), `.${path.basename(options.file)}.${process.pid}.tmp`);
    fs.writeFileSync(temp, token, { mode: 0o600 });
    fs.renameSync(temp, options.file);
  };
  try {
    await write();
  } catch (error) {
    throw new ActionInputError(
      `anthropic_federation_rule_id: could not get the workflow's OIDC token (${(error as Error).message}); the job needs "permissions: id-token: write"`,
      { cause: error },
    );
  }
  let stopped = false;
  const timer = setInterval(() => {
    write().then(
      () => options.onRefresh?.(),
      // A refresh still under way when the step ends finds its folder gone: nothing to say then.
      (error: Error) =>
        stopped || options.warn(`could not refresh the workflow's OIDC token: ${error.message}`),
    );
  }, options.refreshMs ?? IDENTITY_TOKEN_REFRESH_MS);
  timer.unref();
  return {
    stop: () => {
      stopped = true;
      clearInterval(timer);
    },
  };
}
