/** The Actions' entries: dist/<name>.js from each source. */
export const ACTION_ENTRIES: { index: string; publish: string; choose: string };
export type ActionName = keyof typeof ACTION_ENTRIES;
/** The name of the Actions' shared chunks. */
export const ACTION_CHUNK_PREFIX: string;
/** dist/index.js when it bundled everything in one file, unminified (bytes). */
export const ACTION_WHOLE_BYTES: number;
/** The ceiling of the JavaScript each entry can load (bytes). */
export const CEILINGS: Record<ActionName, number>;
/** The ceiling of dist/'s committed files together (bytes). */
export const DIST_CEILING: number;
/** The files `entry` loads (names in `dist`): with `dynamic`, every one it can reach; else its static imports'. */
export function closure(dist: string, entry: string, options: { dynamic: boolean }): string[];
/** What a job parses before the Action's first line. */
export function loadedAtStart(dist: string, entry: string): string[];
/** The modules bundled into these files, from their source maps, as paths from the checkout. */
export function modulesOf(dist: string, files: readonly string[]): string[];
/** The files in `dist` that git does not ignore in dist/. */
export function committedFiles(dist: string): string[];
export interface EntrySizes {
  name: ActionName;
  entry: string;
  /** Every file it can load. */
  files: string[];
  bytes: number;
  atStartBytes: number;
  mapBytes: number;
  ceiling: number;
}
/** Each Action's sizes, and dist/'s committed total. */
export function bundleSizes(dist: string): {
  entries: EntrySizes[];
  committed: string[];
  committedBytes: number;
  ceiling: number;
};
