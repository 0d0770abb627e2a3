import { createRequire as __agentCiCreateRequire } from "node:module";
import { fileURLToPath as __agentCiFileURLToPath } from "node:url";
import { dirname as __agentCiDirname } from "node:path";
const require = __agentCiCreateRequire(import.meta.url);
const __filename = __agentCiFileURLToPath(import.meta.url);
const __dirname = __agentCiDirname(__filename);
import{a as c,c as r}from"./action-chunk-U6W3ELK5.js";var t=r(e=>{"use strict";Object.defineProperty(e,"__esModule",{value:!0});e.execAsync=void 0;var s=c("child_process"),i=c("util");e.execAsync=i.promisify(s.exec)});export{t as a};
//# sourceMappingURL=action-chunk-FLLJF4DC.js.map
