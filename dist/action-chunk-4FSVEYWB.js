import { createRequire as __agentCiCreateRequire } from "node:module";
import { fileURLToPath as __agentCiFileURLToPath } from "node:url";
import { dirname as __agentCiDirname } from "node:path";
const require = __agentCiCreateRequire(import.meta.url);
const __filename = __agentCiFileURLToPath(import.meta.url);
const __dirname = __agentCiDirname(__filename);
import{a,b,c,d,e,f,g}from"./action-chunk-ZV42BKWO.js";import"./action-chunk-U6W3ELK5.js";export{a as child_process,b as crypto,c as fs,d as os,e as path,f as stream,g as util};
//# sourceMappingURL=action-chunk-4FSVEYWB.js.map
