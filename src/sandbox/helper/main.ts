// agent-ci's in-container helper. agent-ci starts it once per container (the toolbelt's
// `/opt/agent-ci/bin/node -e <its bundle>`, one docker exec: helper/source.ts) and sends it framed requests
// on stdin, or on the host's Unix socket once told to connect to it (the `channel` operation); it answers
// the same way. One docker exec costs ~60 ms before a command even runs, so every tool call goes through
// this long-lived process instead, which spawns the command (each in its own process group) in a few
// milliseconds. It runs on the toolbelt's Node (Debian's 18) and is bundled with no dependencies.
import fs from "node:fs";
import net from "node:net";
import type { FrameError } from "./framing.js";
import { type HelloHeader, type ReadyHeader, SHARED_GROUP_ENV } from "./protocol.js";
import * as files from "./files.js";
import * as processes from "./processes.js";
import * as sockets from "./sockets.js";
import { fail, type Handler, type Handlers, serve } from "./serve.js";

// A workspace shared with the agent's group: what the commands create stays editable by the group's other users.
if (process.env[SHARED_GROUP_ENV]) process.umask(0o002);

/** What the kernel says about this process: the hardening as seen from inside the container. */
const ping: Handler<"ping"> = () => {
  const status = fs.readFileSync("/proc/self/status", "utf8");
  const field = (name: string) => (status.match(new RegExp(`^${name}:\\s*(.*)$`, "m"))?.[1] ?? "").trim();
  return {
    header: {
      pid: process.pid,
      node: process.version,
      uid: process.getuid!(),
      capEff: field("CapEff"),
      noNewPrivs: field("NoNewPrivs"),
      seccomp: field("Seccomp"),
    },
  };
};

// The host's direct socket (channel.ts), where the engine runs on the host's kernel: the helper connects,
// says the token it was given here, and serves what comes on it as it does stdin. Closed by the host (it
// gave up waiting), it is dropped; stdin still works.
const channel: Handler<"channel"> = (req) =>
  new Promise((resolve, reject) => {
    const socket = net.connect(req.path);
    socket.once("error", (e) => reject(fail("ECHANNEL", `cannot connect to ${req.path}: ${e.message}`)));
    socket.once("connect", () => {
      socket.removeAllListeners("error");
      socket.on("error", () => socket.destroy());
      serve(HANDLERS, socket, socket, brokenStream).send({ id: 0, hello: req.token } satisfies HelloHeader);
      resolve({ header: {} });
    });
  });

const HANDLERS: Handlers = {
  ping,
  stat: files.stat,
  resolve: files.resolve,
  read: files.read,
  write: files.write,
  remove: files.remove,
  "share-workspace": files.shareWorkspace,
  exec: processes.exec,
  "bg-start": processes.startBackground,
  "bg-read": processes.readBackground,
  "bg-kill": processes.killBackground,
  "kill-all": () => {
    processes.killAll();
    return { header: {} };
  },
  attribute: sockets.attribute,
  channel,
};

// The host sends frames only: anything else means the two ends are out of step, and no answer could be
// matched to its request any more. The helper says why (the host shows its last words) and ends.
function brokenStream(error: FrameError): void {
  process.stderr.write(`agent-ci helper: ${error.message}\n`);
  processes.killAll();
  process.exit(1);
}

const stdio = serve(HANDLERS, process.stdin, process.stdout, brokenStream);
process.stdin.on("end", () => {
  processes.killAll();
  process.exit(0);
});
stdio.send({ id: 0, ok: true, ready: true, pid: process.pid, node: process.version } satisfies ReadyHeader);
