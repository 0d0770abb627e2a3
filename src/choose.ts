// The choose Action's entry (choose/action.yml `main: ../dist/choose.js`). The logic is in action/choose.ts.
import { run } from "./action/choose.js";

await run();
