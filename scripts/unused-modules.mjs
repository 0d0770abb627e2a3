// Modules of bundled libraries that agent-ci never runs, replaced in the bundle by a stub that throws if it
// ever is: their code would otherwise be parsed and run at every run's first engine call.
// - dockerode's BuildKit session (lib/session.js) is used only by `buildImage` with `version: "2"`, which
//   agent-ci does not ask for (image.ts builds with the classic builder); it loads gRPC and protobuf.js, over
//   half of the engine client's code, and compiles its protocol files as it loads.
// - dockerode's BuildKit output decoder (lib/buildkit.js, protobuf.js) serves `docker.followProgress`;
//   agent-ci follows pulls and builds with `docker.modem.followProgress`.
const DOCKERODE = /[\\/]dockerode[\\/]lib[\\/]docker\.js$/;
const UNUSED = [
  { name: "dockerode-buildkit-session", module: "./session", importer: DOCKERODE },
  { name: "dockerode-buildkit-decoder", module: "./buildkit", importer: DOCKERODE },
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
      build.onLoad({ filter: /.*/, namespace: "unused" }, (args) => ({
        contents: `module.exports = function unused() { throw new Error(${JSON.stringify(`${args.path} is not bundled with agent-ci`)}); };`,
        loader: "js",
      }));
    },
  };
}
