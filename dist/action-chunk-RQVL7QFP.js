import { createRequire as __agentCiCreateRequire } from "node:module";
import { fileURLToPath as __agentCiFileURLToPath } from "node:url";
import { dirname as __agentCiDirname } from "node:path";
const require = __agentCiCreateRequire(import.meta.url);
const __filename = __agentCiFileURLToPath(import.meta.url);
const __dirname = __agentCiDirname(__filename);
var o="claude-sonnet-5-5",s=["text","json","stream-json"],e=["text","json"],t=["run","review"],n=[...t,"queue"],c=["anthropic","bedrock","vertex"],r=7;export{o as a,s as b,e as c,t as d,n as e,c as f,r as g};
//# sourceMappingURL=action-chunk-RQVL7QFP.js.map
