import { createRequire as __agentCiCreateRequire } from "node:module";
import { fileURLToPath as __agentCiFileURLToPath } from "node:url";
import { dirname as __agentCiDirname } from "node:path";
const require = __agentCiCreateRequire(import.meta.url);
const __filename = __agentCiFileURLToPath(import.meta.url);
const __dirname = __agentCiDirname(__filename);
throw new Error("azure-blob-list-arrow is not bundled with agent-ci");
//# sourceMappingURL=action-chunk-QHDOT7PO.js.map
