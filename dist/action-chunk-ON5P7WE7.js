import { createRequire as __agentCiCreateRequire } from "node:module";
import { fileURLToPath as __agentCiFileURLToPath } from "node:url";
import { dirname as __agentCiDirname } from "node:path";
const require = __agentCiCreateRequire(import.meta.url);
const __filename = __agentCiFileURLToPath(import.meta.url);
const __dirname = __agentCiDirname(__filename);
import{b as c,c as a}from"./action-chunk-46SYATCG.js";import{e as r}from"./action-chunk-U6W3ELK5.js";var n=r(c(),1),e=r(a(),1);function p(t){let i=typeof t.$schema=="string"&&t.$schema.includes("2020-12"),o={allErrors:!0,strict:!1};return(i?new e.Ajv2020(o):new n.Ajv(o)).compile(t)}export{p as compileSchema};
//# sourceMappingURL=action-chunk-ON5P7WE7.js.map
