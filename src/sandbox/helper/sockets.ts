// The helper's `attribute` operation: which tool call opened a loopback TCP connection to the egress
// forwarder. The forwarder knows the client's port but runs as another user, without capabilities, and may
// not look into the agent's processes; the helper is the agent's user and may.
import fs from "node:fs";
import { callerOfProcess } from "./processes.js";
import type { Handler } from "./serve.js";

/** A /proc/net/tcp address, `0100007F:0C38`: the port is the hex after the colon. */
const portOf = (address: string) => parseInt(address.slice(address.lastIndexOf(":") + 1), 16);

/** The inode of the socket whose local port is `port` and whose peer's is `peerPort`, IPv4 or IPv6. */
function socketInode(port: number, peerPort: number): string | undefined {
  for (const table of ["/proc/net/tcp", "/proc/net/tcp6"]) {
    let text: string;
    try {
      text = fs.readFileSync(table, "utf8");
    } catch {
      continue;
    }
    for (const line of text.split("\n").slice(1)) {
      const fields = line.trim().split(/\s+/);
      const [local, remote, inode] = [fields[1], fields[2], fields[9]];
      if (local && remote && inode && inode !== "0" && portOf(local) === port && portOf(remote) === peerPort)
        return inode;
    }
  }
  return undefined;
}

/** The processes holding socket `inode` open, among those whose descriptors this user may read. */
function holders(inode: string): number[] {
  const link = `socket:[${inode}]`;
  const found: number[] = [];
  let pids: string[];
  try {
    pids = fs.readdirSync("/proc").filter((name) => /^[0-9]+$/.test(name));
  } catch {
    return found;
  }
  for (const pid of pids) {
    if (Number(pid) === process.pid) continue;
    let fds: string[];
    try {
      fds = fs.readdirSync(`/proc/${pid}/fd`);
    } catch {
      continue; // Another user's, or gone.
    }
    for (const fd of fds) {
      try {
        if (fs.readlinkSync(`/proc/${pid}/fd/${fd}`) === link) {
          found.push(Number(pid));
          break;
        }
      } catch {
        // Closed meanwhile.
      }
    }
  }
  return found;
}

export const attribute: Handler<"attribute"> = (req) => {
  const inode = socketInode(req.port, req.peerPort);
  if (inode === undefined) return { header: { caller: null, pid: null } };
  const pids = holders(inode);
  for (const pid of pids) {
    const caller = callerOfProcess(pid);
    if (caller !== undefined) return { header: { caller, pid } };
  }
  return { header: { caller: null, pid: pids[0] ?? null } };
};
