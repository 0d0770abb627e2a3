import { createRequire as __agentCiCreateRequire } from "node:module";
import { fileURLToPath as __agentCiFileURLToPath } from "node:url";
import { dirname as __agentCiDirname } from "node:path";
const require = __agentCiCreateRequire(import.meta.url);
const __filename = __agentCiFileURLToPath(import.meta.url);
const __dirname = __agentCiDirname(__filename);
import{a,b}from"./action-chunk-2B5SBSPZ.js";import"./action-chunk-MVPUYDIG.js";import"./action-chunk-U6W3ELK5.js";export{a as identityTokenFromFile,b as identityTokenFromValue};
//# sourceMappingURL=action-chunk-4RUQXVJU.js.map
