// The part of npm's own semver parser (the `semver` package, bundled) that the Node.js choice uses. The
// package ships no types of its own.
declare module "semver" {
  /** The version, normalised (`v20.11.1` → `20.11.1`), or null when it is not one. */
  export function valid(version: string): string | null;
  /** The range, normalised, or null when it is not one (`20`, `>=18`, `^20.11 || 22`). */
  export function validRange(range: string): string | null;
  export function satisfies(version: string, range: string): boolean;
  /** The highest version in the list that satisfies the range, or null. */
  export function maxSatisfying(versions: readonly string[], range: string): string | null;
  export function prerelease(version: string): readonly (string | number)[] | null;
  export function major(version: string): number;
  export function rcompare(a: string, b: string): number;
}
