// The choose Action's entry (choose/action.yml `main: ../dist/choose.js`). The logic is in action/choose.ts.
// Source maps on before the minified bundle loads, as in index.ts.
process.setSourceMapsEnabled(true);
const { run } = await import("./action/choose.js");

await run();
