import { createRequire as __agentCiCreateRequire } from "node:module";
import { fileURLToPath as __agentCiFileURLToPath } from "node:url";
import { dirname as __agentCiDirname } from "node:path";
const require = __agentCiCreateRequire(import.meta.url);
const __filename = __agentCiFileURLToPath(import.meta.url);
const __dirname = __agentCiDirname(__filename);
import{c as e}from"./action-chunk-MVPUYDIG.js";function f(t){if(!t)throw new e("Identity token file path is empty");return async()=>{let{fs:r}=await import("./action-chunk-4FSVEYWB.js"),i;try{i=await r.promises.readFile(t,"utf-8")}catch(o){throw new e(`Failed to read identity token file at ${t}: ${o}`)}let n=i.trim();if(!n)throw new e(`Identity token file at ${t} is empty`);return n}}function y(t){if(!t)throw new e("Identity token value is empty");return()=>t}export{f as a,y as b};
//# sourceMappingURL=action-chunk-2B5SBSPZ.js.map
