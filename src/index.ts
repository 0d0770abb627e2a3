// The Action's entry (action.yml `main: dist/index.js`): runs the Action. The logic is in action/main.ts,
// which local-action and the tests import directly.
import { run } from "./action/main.js";

await run();
