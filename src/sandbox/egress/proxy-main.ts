// The egress sidecar's program: bundled into one CommonJS file (scripts/embedded.mjs), written into the
// sidecar container and run on the toolbelt's Node. Its configuration comes in AGENT_CI_EGRESS (JSON);
// it prints one JSON line per event on stdout — `{"ready":socket}` once listening, `{"entry":…}` per
// connection attempt, `{"sync":n}` in answer to a `sync n` line on stdin (everything before it has been
// printed), which agent-ci uses to read a tool call's connections when the call ends.
import fs from "node:fs";
import readline from "node:readline";
import type { DomainRule } from "../../policy/network.js";
import { createEgressProxy } from "./proxy.js";

/** Written by agent-ci from a validated RunConfig (sidecar.ts); the sidecar carries no schema library. */
export interface EgressSidecarConfig {
  /** The Unix socket to listen on, in the volume the run's container shares. */
  socket: string;
  rules: DomainRule[];
  privateHosts: string[];
}

const config = JSON.parse(process.env.AGENT_CI_EGRESS ?? "{}") as EgressSidecarConfig;
const emit = (event: unknown) => process.stdout.write(`${JSON.stringify(event)}\n`);

const server = createEgressProxy({
  rules: config.rules,
  privateHosts: config.privateHosts,
  onEntry: (entry) => emit({ entry }),
});
server.on("clientError", (_err, socket) => socket.destroy());
fs.rmSync(config.socket, { force: true });
server.listen(config.socket, () => {
  // The run's forwarder runs as another user: it must be able to connect.
  fs.chmodSync(config.socket, 0o666);
  emit({ ready: config.socket });
});

readline.createInterface({ input: process.stdin }).on("line", (line) => {
  const match = /^sync (\d{1,15})$/.exec(line);
  if (match) emit({ sync: Number(match[1]) });
});
// agent-ci closed the stream (it ended the run, or died): the sidecar has no reason to stay.
process.stdin.on("end", () => process.exit(0));
