// The publish Action's entry (publish/action.yml `main: ../dist/publish.js`). The logic is in
// pull-request/action.ts, which local-action and the tests import directly.
import { run } from "./pull-request/action.js";

await run();
