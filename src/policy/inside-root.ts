// Is a path inside a root: the one check, for the policy's paths, the in-container helper's confinement and
// the runner's reading of workspace paths. Lexical, on normalised absolute POSIX paths (resolve symlinks
// first where the files are at hand). No imports: the helper's bundle takes this file as it is.

/** `root` itself or below it: `/workspace-evil` is not inside `/workspace` (P3). */
export function isInside(path: string, root: string): boolean {
  if (root === "/") return true;
  return path === root || path.startsWith(`${root}/`);
}

/** The path below `root` ("" for the root itself), or undefined outside it. */
export function relativeToRoot(path: string, root: string): string | undefined {
  if (!isInside(path, root)) return undefined;
  return path === root ? "" : path.slice(root.length + 1);
}
