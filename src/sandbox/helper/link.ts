// The host's connection to the in-container exec helper: started after the copy-in, started again after
// `--setup` and whenever the helper was killed, and moved onto the direct socket where it can be. The one
// part of a running sandbox that changes while it runs.
import type Docker from "dockerode";
import { CHANNEL_SOCKET, type ChannelListener, channelToken, type HelperChannel } from "./channel.js";
import { BASE_ENV, envList } from "../container/command-env.js";
import { withTimeout } from "../engine/engine.js";
import { startExec } from "../engine/exec.js";
import { AGENT_USER } from "../engine/profile.js";
import { HelperClient } from "./client.js";
import { ADDRESS_SPACE_ENV, SHARED_GROUP_ENV } from "./protocol.js";
import { HELPER_JS } from "./source.js";
import { EngineError, OUTPUTS_DIR, SandboxGoneError, WORKSPACE_ROOT } from "../sandbox.js";
import { FALLBACK_PATH, TOOLBELT_BIN, TOOLBELT_DIR, toolbeltProgram } from "../image/toolbelt.js";

/** What the helper's start needs to know of the run. */
export interface HelperSettings {
  /** `--env NAME`: the helper's own environment carries them (its commands inherit it). */
  passEnv?: Readonly<Record<string, string>>;
  /** RLIMIT_AS of each script the helper starts (where the runtime's kernel does not see the cgroups: hardening.ts). */
  addressSpaceBytes?: number;
  /** The image runs under emulation (its architecture named): Node starts many times slower. */
  emulatedArchitecture?: string;
  /** The workspace is shared with other users of the agent's group (services, hooks): new files are group-writable. */
  sharedGroup?: boolean;
  progress?: (line: string) => void;
}

export class HelperLink {
  private current: HelperClient | undefined;
  /** How the helper's requests travel: the direct socket (channel.ts), or the engine's exec stream. */
  way: "socket" | "stream" = "stream";
  /** Helpers started again after one was killed (the count the report shows). */
  restarts = 0;

  /** `channel`: the socket's directory, mounted into the container; dropped once it did not work for this run. */
  constructor(
    private readonly docker: Docker,
    private readonly container: Docker.Container,
    private channel: HelperChannel | undefined,
    private readonly settings: HelperSettings,
  ) {}

  /** The helper answering now. */
  get client(): HelperClient {
    if (!this.current) throw new SandboxGoneError("the sandbox's exec helper has not started");
    return this.current;
  }

  get alive(): boolean {
    return this.current?.alive ?? false;
  }

  /** The helper's own environment (its commands get theirs with each request). */
  private helperEnv(): Record<string, string> {
    return {
      ...BASE_ENV,
      PATH: `${TOOLBELT_BIN}:${FALLBACK_PATH}`,
      ...this.settings.passEnv,
      AGENT_CI_ROOTS: `${WORKSPACE_ROOT}:${OUTPUTS_DIR}`,
      ...(this.settings.sharedGroup ? { [SHARED_GROUP_ENV]: "1" } : {}),
      ...(this.settings.addressSpaceBytes
        ? { [ADDRESS_SPACE_ENV]: String(Math.floor(this.settings.addressSpaceBytes / 1024)) }
        : {}),
    };
  }

  /**
   * Starts a helper process as `user` on the exec stream and waits for it to be ready. `prelude`, a bash
   * script, runs first and ends with `exec "$@"` (the helper); `env` is laid over the helper's environment.
   */
  private async spawnHelper(
    user: string,
    env: Record<string, string>,
    prelude?: string,
  ): Promise<HelperClient> {
    const helper = [toolbeltProgram("node"), "-e", HELPER_JS];
    const { stream } = await startExec(this.container, {
      cmd: prelude === undefined ? helper : [toolbeltProgram("bash"), "-c", prelude, "helper", ...helper],
      user,
      env: envList({ ...this.helperEnv(), ...env }),
      stdin: true,
      workingDir: "/",
    });
    const emulated = this.settings.emulatedArchitecture;
    const client = new HelperClient(stream, (s, out, err) => this.docker.modem.demuxStream(s, out, err));
    try {
      // Node.js starts in well under a second; under emulation it takes seconds, more on a loaded host.
      await withTimeout("the exec helper's start", client.ready, emulated ? 120_000 : 30_000);
    } catch (e) {
      client.close();
      throw new EngineError(
        `the exec helper did not start in the container (from agent-ci's toolbelt at ${TOOLBELT_DIR}${emulated ? `; the image is for ${emulated}, run under emulation` : ""}): ${(e as Error).message}`,
      );
    }
    return client;
  }

  /** Starts a helper as the agent user (the one before it, if any, is gone) and moves it onto the socket. */
  async start(): Promise<void> {
    this.current = await this.spawnHelper(AGENT_USER, {});
    this.way = "stream";
    if (this.channel) await this.connectChannel(this.channel, this.current);
  }

  /**
   * A second helper as another user (the hooks' own, hook-host.ts), on the exec stream: the agent's commands
   * cannot signal, trace or read it.
   */
  startAs(user: string, env: Record<string, string>, prelude: string): Promise<HelperClient> {
    return this.spawnHelper(user, env, prelude);
  }

  /**
   * Moves the helper's requests onto the direct socket. Where it cannot connect (an engine in a VM that
   * shares the path but not its sockets), the run goes on over the exec stream and stops trying.
   */
  private async connectChannel(channel: HelperChannel, helper: HelperClient): Promise<void> {
    const token = channelToken();
    let listening: ChannelListener | undefined;
    try {
      listening = await channel.listen(token);
      const asked = await helper.request("channel", { path: CHANNEL_SOCKET, token });
      if (!asked.ok) throw new Error(asked.header.message);
      helper.adopt(
        await withTimeout(
          "the helper's connection to its channel",
          listening.connection,
          this.settings.emulatedArchitecture ? 60_000 : 10_000,
        ),
      );
      this.way = "socket";
    } catch (e) {
      if (e instanceof SandboxGoneError) throw e;
      this.channel = undefined;
      channel.close();
      this.settings.progress?.(
        `the exec helper could not use agent-ci's local socket (${(e as Error).message}); its requests go through the engine's exec stream`,
      );
    } finally {
      listening?.close();
    }
  }

  close(): void {
    this.current?.close();
    this.channel?.close();
  }
}
