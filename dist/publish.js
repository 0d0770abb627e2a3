import { createRequire as __agentCiCreateRequire } from "node:module";
import { fileURLToPath as __agentCiFileURLToPath } from "node:url";
import { dirname as __agentCiDirname } from "node:path";
const require = __agentCiCreateRequire(import.meta.url);
const __filename = __agentCiFileURLToPath(import.meta.url);
const __dirname = __agentCiDirname(__filename);
process.setSourceMapsEnabled(!0);var{run:a}=await import("./action-chunk-KIX55XGO.js");await a();
//# sourceMappingURL=publish.js.map
