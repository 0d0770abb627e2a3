import { createRequire as __agentCiCreateRequire } from "node:module";
import { fileURLToPath as __agentCiFileURLToPath } from "node:url";
import { dirname as __agentCiDirname } from "node:path";
const require = __agentCiCreateRequire(import.meta.url);
const __filename = __agentCiFileURLToPath(import.meta.url);
const __dirname = __agentCiDirname(__filename);
import{o as a}from"./action-chunk-K4WFIXH5.js";import"./action-chunk-MVPUYDIG.js";import"./action-chunk-U6W3ELK5.js";export{a as oidcFederationProvider};
//# sourceMappingURL=action-chunk-3UXVUD2N.js.map
