// Parts of bundled libraries that agent-ci never runs, replaced in the bundle by a stub that throws if it
// ever is (unusedModulesPlugin), or runs only for a remote engine, loaded on first use (lazySshPlugin): their
// code would otherwise be parsed and run at every run's first engine call.
// - dockerode's BuildKit session (lib/session.js) is used only by `buildImage` with `version: "2"`, which
//   agent-ci does not ask for (image.ts builds with the classic builder); it loads gRPC and protobuf.js, over
//   half of the engine client's code, and compiles its protocol files as it loads.
// - dockerode's BuildKit output decoder (lib/buildkit.js, protobuf.js) serves `docker.followProgress`;
//   agent-ci follows pulls and builds with `docker.modem.followProgress`.
// - apache-arrow, which @azure/storage-blob imports (`import()`) to read a container's blob list in the Arrow
//   format; the Action's artifact upload (@actions/artifact) uploads blobs and never lists them. It was a
//   quarter of a megabyte of the Action's committed chunks. Its stub throws when it is loaded, as the parser
//   reads a name from it rather than calling it.
// - unzip-stream, which @actions/artifact imports to unpack a downloaded artifact; the Action only uploads
//   (the choose Action reads artifacts actions/download-artifact downloaded). With its polyfills (es-abstract
//   and its kin) it was a tenth of a megabyte of the Action's chunks.
import fs from "node:fs";
import path from "node:path";

const DOCKERODE = /[\\/]dockerode[\\/]lib[\\/]docker\.js$/;
const AZURE_BLOB_LIST_ARROW = /[\\/]@azure[\\/]storage-blob[\\/].*[\\/]blobListArrowParser\.js$/;
const ARTIFACT_DOWNLOAD = /[\\/]@actions[\\/]artifact[\\/].*[\\/]download-artifact\.js$/;
const UNUSED = [
  { name: "dockerode-buildkit-session", module: "./session", importer: DOCKERODE },
  { name: "dockerode-buildkit-decoder", module: "./buildkit", importer: DOCKERODE },
  {
    name: "azure-blob-list-arrow",
    module: "apache-arrow",
    importer: AZURE_BLOB_LIST_ARROW,
    throwsOnLoad: true,
  },
  { name: "actions-artifact-unzip", module: "unzip-stream", importer: ARTIFACT_DOWNLOAD },
];

export function unusedModulesPlugin() {
  return {
    name: "unused-modules",
    setup(build) {
      for (const { name, module, importer } of UNUSED) {
        const filter = new RegExp(`^${module.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&")}$`);
        build.onResolve({ filter }, (args) =>
          importer.test(args.importer) ? { path: name, namespace: "unused" } : undefined,
        );
      }
      build.onLoad({ filter: /.*/, namespace: "unused" }, (args) => {
        const error = `throw new Error(${JSON.stringify(`${args.path} is not bundled with agent-ci`)});`;
        return {
          contents: UNUSED.find((u) => u.name === args.path)?.throwsOnLoad
            ? error
            : `module.exports = function unused() { ${error} };`,
          loader: "js",
        };
      });
    },
  };
}

// zod carries its error messages in some sixty languages (half of its size in the bundle), reachable only as
// `z.locales.*`, which nothing here calls: agent-ci speaks English, zod's default, which zod loads itself
// (classic/schemas.js imports locales/en.js). The list of locales keeps English alone, so the run's start
// parses half as much of zod.
export function zodEnglishOnlyPlugin() {
  return {
    name: "zod-english-only",
    setup(build) {
      build.onLoad({ filter: /[\\/]zod[\\/]v4[\\/]locales[\\/]index\.js$/ }, (args) => ({
        contents: 'export { default as en } from "./en.js";\n',
        loader: "js",
        resolveDir: path.dirname(args.path),
      }));
    },
  };
}

// docker-modem loads its ssh:// transport (ssh2, tweetnacl, bcrypt-pbkdf, asn1: 0.7 MB, over two thirds of the
// engine client) when it loads, though only a DOCKER_HOST of ssh:// calls it. Its `require('./ssh')` becomes a
// function that requires it on the first call: esbuild runs a bundled CommonJS module's body on its first
// require, so an engine on a socket or TCP never runs ssh2's. The build fails if docker-modem's line changes.
const MODEM = /[\\/]docker-modem[\\/]lib[\\/]modem\.js$/;
const EAGER_SSH = "ssh = require('./ssh'),";
const LAZY_SSH = "ssh = function (options) { return require('./ssh')(options); },";

export function lazySshPlugin() {
  return {
    name: "lazy-ssh",
    setup(build) {
      build.onLoad({ filter: MODEM }, (args) => {
        const source = fs.readFileSync(args.path, "utf8");
        if (!source.includes(EAGER_SSH))
          throw new Error(`${args.path} no longer has "${EAGER_SSH}": update lazySshPlugin`);
        return {
          contents: source.replace(EAGER_SSH, LAZY_SSH),
          loader: "js",
          resolveDir: path.dirname(args.path),
        };
      });
    },
  };
}
