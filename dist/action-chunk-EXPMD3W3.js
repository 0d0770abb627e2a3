import { createRequire as __agentCiCreateRequire } from "node:module";
import { fileURLToPath as __agentCiFileURLToPath } from "node:url";
import { dirname as __agentCiDirname } from "node:path";
const require = __agentCiCreateRequire(import.meta.url);
const __filename = __agentCiFileURLToPath(import.meta.url);
const __dirname = __agentCiDirname(__filename);
import{b as a}from"./action-chunk-6HCIKBAJ.js";import"./action-chunk-KHTK6SJM.js";import"./action-chunk-U6W3ELK5.js";export default a();
//# sourceMappingURL=action-chunk-EXPMD3W3.js.map
