// The Action's entry (action.yml `main: dist/index.js`): runs the Action. The logic is in action/main.ts,
// which local-action and the tests import directly. The bundle is minified: source maps are turned on before
// its code loads (`import()`, a chunk of its own), so that a stack names src/ files and lines (node24 Actions
// cannot pass --enable-source-maps; this is the same switch).
process.setSourceMapsEnabled(true);
const { run, workLeftBehind } = await import("./action/main.js");

await run();
// A call to the Actions cache that was given up on (a service that never answered) may still hold a socket
// open: the step ends when its run did, not when the socket does.
if (workLeftBehind()) process.exit();
