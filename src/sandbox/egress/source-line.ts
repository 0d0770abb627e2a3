// The line the run's forwarder (sidecar.ts) writes first on each connection it hands to the proxy: the port
// the client connected from inside the run's container, which is what agent-ci traces to the client's
// process. A connection that does not start with it (nothing but the forwarder should reach the socket, but
// the socket is in a volume the container mounts) is served as it came, with no source.
import type { Socket } from "node:net";

/** What a caller (a tool_use id, "setup") may look like on the proxy's wire: credentials and attributions. */
export const CALLER = /^[A-Za-z0-9_.-]{1,128}$/;

export const SOURCE_PREFIX = "agent-ci-source ";
const PREFIX = SOURCE_PREFIX;
/** The longest well-formed line: the prefix, five digits, the newline. */
const MAX_LINE = PREFIX.length + 6;

/**
 * Reads the source line off `socket`, if it starts with one, and leaves the socket paused with every other
 * byte still to be read (unshifted), for the HTTP server it is handed to next.
 */
export function readSourceLine(socket: Socket): Promise<number | undefined> {
  return new Promise((resolve) => {
    let data = Buffer.alloc(0);
    const done = (port: number | undefined, consumed: number) => {
      socket.off("data", onData);
      socket.off("end", onEnd);
      socket.pause();
      const rest = data.subarray(consumed);
      if (rest.length) socket.unshift(rest);
      resolve(port);
    };
    const onData = (chunk: Buffer) => {
      data = Buffer.concat([data, chunk]);
      const head = data.subarray(0, PREFIX.length).toString("latin1");
      if (!PREFIX.startsWith(head)) return done(undefined, 0);
      const newline = data.indexOf(10);
      if (newline === -1) {
        if (data.length >= MAX_LINE) done(undefined, 0);
        return;
      }
      const match = new RegExp(`^${PREFIX}(\\d{1,5})$`).exec(data.subarray(0, newline).toString("latin1"));
      const port = match ? Number(match[1]) : 0;
      done(port >= 1 && port <= 65535 ? port : undefined, match ? newline + 1 : 0);
    };
    const onEnd = () => done(undefined, 0);
    socket.on("data", onData);
    socket.on("end", onEnd);
  });
}
