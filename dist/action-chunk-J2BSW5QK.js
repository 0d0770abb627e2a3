import { createRequire as __agentCiCreateRequire } from "node:module";
import { fileURLToPath as __agentCiFileURLToPath } from "node:url";
import { dirname as __agentCiDirname } from "node:path";
const require = __agentCiCreateRequire(import.meta.url);
const __filename = __agentCiFileURLToPath(import.meta.url);
const __dirname = __agentCiDirname(__filename);
import{o as a}from"./action-chunk-E67C6BGR.js";import"./action-chunk-LCMISE7V.js";import"./action-chunk-U6W3ELK5.js";export{a as oidcFederationProvider};
//# sourceMappingURL=action-chunk-J2BSW5QK.js.map
