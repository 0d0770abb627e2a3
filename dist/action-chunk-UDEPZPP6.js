import { createRequire as __agentCiCreateRequire } from "node:module";
import { fileURLToPath as __agentCiFileURLToPath } from "node:url";
import { dirname as __agentCiDirname } from "node:path";
const require = __agentCiCreateRequire(import.meta.url);
const __filename = __agentCiFileURLToPath(import.meta.url);
const __dirname = __agentCiDirname(__filename);
import{a as d}from"./action-chunk-FLLJF4DC.js";import{i as s,j as u}from"./action-chunk-OLQNEUB4.js";import{a as i,c as n,f as c}from"./action-chunk-U6W3ELK5.js";var h=n(t=>{Object.defineProperty(t,"__esModule",{value:!0});t.getMachineId=void 0;var a=i("fs"),o=d(),r=(u(),c(s));async function g(){try{return(await a.promises.readFile("/etc/hostid",{encoding:"utf8"})).trim()}catch(e){r.diag.debug(`error reading machine id: ${e}`)}try{return(await(0,o.execAsync)("kenv -q smbios.system.uuid")).stdout.trim()}catch(e){r.diag.debug(`error reading machine id: ${e}`)}}t.getMachineId=g});export default h();
//# sourceMappingURL=action-chunk-UDEPZPP6.js.map
