import { createRequire as __agentCiCreateRequire } from "node:module";
import { fileURLToPath as __agentCiFileURLToPath } from "node:url";
import { dirname as __agentCiDirname } from "node:path";
const require = __agentCiCreateRequire(import.meta.url);
const __filename = __agentCiFileURLToPath(import.meta.url);
const __dirname = __agentCiDirname(__filename);
import{i as t,j as i}from"./action-chunk-OLQNEUB4.js";import{c as d,f as n}from"./action-chunk-U6W3ELK5.js";var a=d(e=>{Object.defineProperty(e,"__esModule",{value:!0});e.getMachineId=void 0;var u=(i(),n(t));async function r(){u.diag.debug("could not read machine-id: unsupported platform")}e.getMachineId=r});export default a();
//# sourceMappingURL=action-chunk-CO4JETT7.js.map
