import { createRequire as __agentCiCreateRequire } from "node:module";
import { fileURLToPath as __agentCiFileURLToPath } from "node:url";
import { dirname as __agentCiDirname } from "node:path";
const require = __agentCiCreateRequire(import.meta.url);
const __filename = __agentCiFileURLToPath(import.meta.url);
const __dirname = __agentCiDirname(__filename);
import*as o from"node:child_process";import*as r from"node:crypto";import*as m from"node:fs";import*as s from"node:os";import*as t from"node:path";import*as p from"node:stream";import*as a from"node:util";export{o as a,r as b,m as c,s as d,t as e,p as f,a as g};
//# sourceMappingURL=action-chunk-ZV42BKWO.js.map
