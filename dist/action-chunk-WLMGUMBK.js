import { createRequire as __agentCiCreateRequire } from "node:module";
import { fileURLToPath as __agentCiFileURLToPath } from "node:url";
import { dirname as __agentCiDirname } from "node:path";
const require = __agentCiCreateRequire(import.meta.url);
const __filename = __agentCiFileURLToPath(import.meta.url);
const __dirname = __agentCiDirname(__filename);
var t="claude-sonnet-5-5",o=["text","json","stream-json"],s=["text","json"],n=["run","review"],e=["anthropic","bedrock","vertex"];export{t as a,o as b,s as c,n as d,e};
//# sourceMappingURL=action-chunk-WLMGUMBK.js.map
