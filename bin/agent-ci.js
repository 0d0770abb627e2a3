#!/usr/bin/env node
// The `agent-ci` command: the bundled CLI in dist/ (run `npm run build` in a clone of the repository).
import { main } from "../dist/cli.js";

await main();
