// The publish Action's entry (publish/action.yml `main: ../dist/publish.js`). The logic is in
// publish/action.ts, which local-action and the tests import directly.
import { run } from "./publish/action.js";

await run();
