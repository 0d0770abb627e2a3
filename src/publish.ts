// The publish Action's entry (publish/action.yml `main: ../dist/publish.js`). The logic is in
// publish/action.ts, which local-action and the tests import directly. Source maps on before the minified
// bundle loads, as in index.ts.
process.setSourceMapsEnabled(true);
const { run } = await import("./publish/action.js");

await run();
