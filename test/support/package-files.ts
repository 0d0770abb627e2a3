// What the npm package holds: the files `npm pack` puts in it, and the exact set it must hold.
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";

/** What `npm pack` puts in the package, as paths; dist/ must be built. */
export function packedFiles(cwd = "."): string[] {
  const out = execFileSync("npm", ["pack", "--dry-run", "--json", "--ignore-scripts"], {
    cwd,
    encoding: "utf8",
    stdio: ["ignore", "pipe", "ignore"],
  });
  return (JSON.parse(out) as Array<{ files: Array<{ path: string }> }>)[0]!.files.map((f) => f.path).sort();
}

/** Every file the package must carry, and nothing else: no sources, tests, maps or docs beyond the README. */
export function expectedPackageFiles(root = "."): string[] {
  const examples = fs
    .readdirSync(path.join(root, "examples"), { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => path.relative(root, path.join(e.parentPath, e.name)));
  // The CLI's chunks, as the build wrote them (names carry a content hash).
  const chunks = fs
    .readdirSync(path.join(root, "dist"))
    .filter((f) => /^cli-chunk-.+\.js$/.test(f))
    .map((f) => `dist/${f}`);
  return [
    ...chunks,
    "LICENSE",
    "README.md",
    "package.json",
    "bin/agent-ci.js",
    "dist/cli.js",
    "dist/THIRD_PARTY_NOTICES",
    "dist/tree-sitter-bash.wasm",
    "dist/web-tree-sitter.wasm",
    "Dockerfile.sandbox",
    "images.json",
    "toolbelt/Dockerfile",
    "toolbelt/collect.sh",
    "scripts/ensure-engine.sh",
    "schema/report.schema.json",
    ...examples,
  ].sort();
}
