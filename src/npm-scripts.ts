// The package.json scripts a package manager runs by itself, as npm documents them (using-npm/scripts, "Life
// Cycle Operation Order", npm 11.19), for the two places that must know: the publish gate (a patch that adds
// or changes one runs on the next install) and verify (an install verify runs runs them too).

/** What `npm ci`, `npm install` and `npm rebuild` run, in order. */
export const NPM_INSTALL_SCRIPTS = [
  "preinstall",
  "install",
  "postinstall",
  "prepublish",
  "preprepare",
  "prepare",
  "postprepare",
] as const;

/**
 * Every script a package manager runs by itself on install, pack and publish:
 * - npm 11: the install scripts above; `npm pack` prepack, prepare, postpack; `npm publish` prepublishOnly,
 *   prepack, prepare, postpack, publish, postpublish; `npm cache add` and `npm diff` prepare; `dependencies`
 *   after any change to node_modules;
 * - pnpm 10 and 11 (pnpm.io, Scripts): those, and `pnpm:devPreinstall` before a local `pnpm install`;
 * - yarn 4 (yarnpkg.com, Lifecycle Scripts): prepack, postpack, prepublish, postinstall, and preinstall and
 *   install run with postinstall;
 * - and the uninstall scripts npm 6 and yarn 1 still run.
 */
export const LIFECYCLE_SCRIPTS = [
  ...NPM_INSTALL_SCRIPTS,
  "prepack",
  "postpack",
  "prepublishOnly",
  "publish",
  "postpublish",
  "dependencies",
  "pnpm:devPreinstall",
  "preuninstall",
  "uninstall",
  "postuninstall",
] as const;
