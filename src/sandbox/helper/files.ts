// The helper's file operations, and the confinement every path goes through: a path is resolved inside the
// container (symlinks of existing components followed) and, when the request says `confine`, must end up in
// one of the roots (AGENT_CI_ROOTS: the workspace, and the outputs folder for reads).
import crypto from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { isInside } from "../../policy/inside-root.js";
import { SHARED_GROUP_ENV } from "./protocol.js";
import type { FileStat } from "../sandbox.js";
import { fail, type Handler } from "./serve.js";

const WORKSPACE = "/workspace";
const ROOTS = (process.env.AGENT_CI_ROOTS || WORKSPACE).split(":").filter(Boolean);
const MAX_LINK_HOPS = 40;
/** A new file's mode: group-writable where the workspace is shared with the agent's group (services, hooks). */
const NEW_FILE_MODE = process.env[SHARED_GROUP_ENV] ? 0o664 : 0o644;

const errorCode = (e: unknown): unknown => (e as NodeJS.ErrnoException | null)?.code;
const isMissing = (e: unknown): boolean => errorCode(e) === "ENOENT" || errorCode(e) === "ENOTDIR";

export function inRoots(p: string): boolean {
  return ROOTS.some((root) => isInside(p, root));
}

/**
 * Resolves symlinks of every existing component; the missing tail (for writes) is appended as is. A
 * dangling symlink is followed to where it points (a write would create its target there).
 */
function resolveReal(p: string): string {
  let head = path.resolve(WORKSPACE, p);
  let tail: string[] = [];
  for (let hops = 0; ;) {
    try {
      const real = fs.realpathSync.native(head);
      return tail.length ? path.join(real, ...tail.reverse()) : real;
    } catch (e) {
      if (!isMissing(e) || head === "/") throw e;
      let link: string | null = null;
      try {
        if (fs.lstatSync(head).isSymbolicLink()) link = fs.readlinkSync(head);
      } catch {
        // Missing: the component is part of the tail.
      }
      if (link !== null) {
        if (++hops > MAX_LINK_HOPS) throw fail("ELOOP", `too many levels of symbolic links: ${p}`);
        head = path.resolve(fs.realpathSync.native(path.dirname(head)), link, ...tail.reverse());
        tail = [];
        continue;
      }
      tail.push(path.basename(head));
      head = path.dirname(head);
    }
  }
}

/** The canonical path; with `confine`, one outside the roots is refused (EOUTSIDE). */
export function confined(p: string, confine: boolean | undefined): string {
  const real = resolveReal(p);
  if (confine && !inRoots(real))
    throw fail("EOUTSIDE", `${p} resolves to ${real}, outside ${ROOTS.join(", ")}`);
  return real;
}

function statInfo(st: fs.Stats, realPath: string, isSymlink: boolean): FileStat {
  const type = st.isFile() ? "file" : st.isDirectory() ? "directory" : "other";
  return { type, size: st.size, mtimeMs: st.mtimeMs, mode: st.mode & 0o7777, realPath, isSymlink };
}

export const stat: Handler<"stat"> = (req) => {
  const abs = path.resolve(WORKSPACE, req.path);
  let isSymlink: boolean;
  try {
    isSymlink = fs.lstatSync(abs).isSymbolicLink();
  } catch (e) {
    if (isMissing(e)) return { header: { stat: null } };
    throw e;
  }
  const real = confined(abs, req.confine);
  try {
    return { header: { stat: statInfo(fs.statSync(real), real, isSymlink) } };
  } catch (e) {
    if (isMissing(e)) return { header: { stat: null } };
    throw e;
  }
};

/** The canonical path (symlinks of existing components resolved, a missing tail appended), confined. */
export const resolve: Handler<"resolve"> = (req) => ({
  header: { realPath: confined(req.path, req.confine) },
});

export const read: Handler<"read"> = (req) => {
  const real = confined(req.path, req.confine);
  const st = fs.statSync(real);
  if (st.isDirectory()) throw fail("EISDIR", `EISDIR: illegal operation on a directory, read '${req.path}'`);
  if (!st.isFile()) throw fail("ENOTREG", `${req.path} is not a regular file`);
  // Whether the path asked for is itself a symlink (Edit and Write refuse to write through one).
  const asked = path.resolve(WORKSPACE, req.path);
  const isSymlink = real !== asked && fs.lstatSync(asked).isSymbolicLink();
  if (req.maxSize != null && st.size > req.maxSize)
    return { header: { stat: statInfo(st, real, isSymlink), bytes: 0 } };
  const start = Math.max(0, req.start || 0);
  const want = Math.max(0, Math.min(req.length == null ? st.size : req.length, st.size - start));
  const buf = Buffer.alloc(want);
  const fd = fs.openSync(real, fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW | fs.constants.O_NONBLOCK);
  try {
    let got = 0;
    while (got < want) {
      const n = fs.readSync(fd, buf, got, want - got, start + got);
      if (n === 0) break;
      got += n;
    }
    return { header: { stat: statInfo(st, real, isSymlink), bytes: got }, body: buf.subarray(0, got) };
  } finally {
    fs.closeSync(fd);
  }
};

export const write: Handler<"write"> = (req, body) => {
  const real = confined(req.path, req.confine);
  const dir = path.dirname(real);
  fs.mkdirSync(dir, { recursive: true });
  // mkdir may have walked through a symlink created since we resolved: check the parent again.
  const realDir = fs.realpathSync.native(dir);
  if (req.confine && !inRoots(realDir)) throw fail("EOUTSIDE", `${req.path} resolves outside the workspace`);
  const target = path.join(realDir, path.basename(real));
  let mode = req.mode ?? NEW_FILE_MODE;
  try {
    const st = fs.lstatSync(target);
    if (st.isSymbolicLink()) throw fail("ESYMLINK", `${req.path} became a symlink; not writing through it`);
    if (st.isDirectory())
      throw fail("EISDIR", `EISDIR: illegal operation on a directory, write '${req.path}'`);
    if (!st.isFile()) throw fail("ENOTREG", `${req.path} is not a regular file`);
    if (req.mode == null) mode = st.mode & 0o7777;
  } catch (e) {
    if (errorCode(e) !== "ENOENT") throw e;
  }
  // Written beside the target and renamed over it: a full disk never leaves a half-written file.
  const tmp = path.join(
    realDir,
    `.${path.basename(target)}.agent-ci-${crypto.randomBytes(4).toString("hex")}`,
  );
  const flags = fs.constants.O_WRONLY | fs.constants.O_CREAT | fs.constants.O_EXCL | fs.constants.O_NOFOLLOW;
  const fd = fs.openSync(tmp, flags, 0o600);
  try {
    fs.writeSync(fd, body);
    fs.fchmodSync(fd, mode);
  } catch (e) {
    fs.closeSync(fd);
    fs.rmSync(tmp, { force: true });
    throw e;
  }
  fs.closeSync(fd);
  fs.renameSync(tmp, target);
  return { header: { stat: statInfo(fs.statSync(target), target, false) } };
};

/** A mode with the owner's read, write and search bits given to the group as well. */
export const groupLikeOwner = (mode: number): number => (mode & ~0o070) | ((mode & 0o700) >> 3);

/**
 * The hooks' helper, after each hook: what the hook made in the workspace stays the agent's to read and edit,
 * and the patch's to include. A hook's umask is 002, but a formatter that writes a private temporary file
 * (mktemp, mode 0600) and moves it over the original leaves a file of the hooks' user that the agent's user
 * cannot even read; the group (the agent's) is given what the owner has. Nothing is followed out of the
 * workspace: a symlink is never an entry to change or walk into, and an entry is changed through a descriptor
 * opened without following one, only when that descriptor is on the workspace's own filesystem (a directory
 * swapped for a link after it was listed leads elsewhere, such as the hooks' home in /tmp, and is left alone).
 */
export const shareWorkspace: Handler<"share-workspace"> = () => {
  if (!process.env[SHARED_GROUP_ENV]) return { header: { changed: 0 } };
  const uid = process.getuid!();
  const device = fs.lstatSync(WORKSPACE).dev;
  let changed = 0;
  const share = (entry: string, st: fs.Stats): void => {
    const flags = fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW | fs.constants.O_NONBLOCK;
    let fd: number;
    try {
      fd = fs.openSync(entry, st.isDirectory() ? flags | fs.constants.O_DIRECTORY : flags);
    } catch {
      return; // gone, replaced by a link, or not readable by its owner: nothing the group could use
    }
    try {
      const held = fs.fstatSync(fd);
      if (held.dev !== device || held.uid !== uid || !(held.isFile() || held.isDirectory())) return;
      const mode = held.mode & 0o7777;
      if (groupLikeOwner(mode) === mode) return;
      fs.fchmodSync(fd, groupLikeOwner(mode));
      changed += 1;
    } finally {
      fs.closeSync(fd);
    }
  };
  const dirs = [WORKSPACE];
  for (let dir = dirs.pop(); dir !== undefined; dir = dirs.pop()) {
    let names: string[];
    try {
      names = fs.readdirSync(dir);
    } catch {
      continue; // not ours to list, or gone
    }
    for (const name of names) {
      const entry = path.join(dir, name);
      let st: fs.Stats;
      try {
        st = fs.lstatSync(entry);
      } catch {
        continue;
      }
      if (st.dev !== device || !(st.isFile() || st.isDirectory())) continue;
      if (st.uid === uid && groupLikeOwner(st.mode & 0o7777) !== (st.mode & 0o7777)) share(entry, st);
      if (st.isDirectory()) dirs.push(entry);
    }
  }
  return { header: { changed } };
};

export const remove: Handler<"remove"> = (req) => {
  const abs = path.resolve(WORKSPACE, req.path);
  const real = path.join(confined(path.dirname(abs), req.confine), path.basename(abs));
  fs.rmSync(real, { force: true, recursive: Boolean(req.recursive) });
  return { header: {} };
};
