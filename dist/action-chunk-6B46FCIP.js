import { createRequire as __agentCiCreateRequire } from "node:module";
import { fileURLToPath as __agentCiFileURLToPath } from "node:url";
import { dirname as __agentCiDirname } from "node:path";
const require = __agentCiCreateRequire(import.meta.url);
const __filename = __agentCiFileURLToPath(import.meta.url);
const __dirname = __agentCiDirname(__filename);
import{a}from"./action-chunk-EA2FGPT6.js";import"./action-chunk-KRSHIMPY.js";import"./action-chunk-U6W3ELK5.js";export default a();
//# sourceMappingURL=action-chunk-6B46FCIP.js.map
