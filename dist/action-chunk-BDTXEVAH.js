import { createRequire as __agentCiCreateRequire } from "node:module";
import { fileURLToPath as __agentCiFileURLToPath } from "node:url";
import { dirname as __agentCiDirname } from "node:path";
const require = __agentCiCreateRequire(import.meta.url);
const __filename = __agentCiFileURLToPath(import.meta.url);
const __dirname = __agentCiDirname(__filename);
var e=class extends Error{name="ConfigError"};export{e as a};
//# sourceMappingURL=action-chunk-BDTXEVAH.js.map
