import { createRequire as __agentCiCreateRequire } from "node:module";
import { fileURLToPath as __agentCiFileURLToPath } from "node:url";
import { dirname as __agentCiDirname } from "node:path";
const require = __agentCiCreateRequire(import.meta.url);
const __filename = __agentCiFileURLToPath(import.meta.url);
const __dirname = __agentCiDirname(__filename);
var t="agent-ci-out",i={completed:0,output_error:1,config_error:2,engine_error:3,api_error:4,max_turns:5,budget:5,timeout:5,context_window:5,max_denials:5,verify_failed:6,schema_invalid:7,cancelled:130};export{t as a,i as b};
//# sourceMappingURL=action-chunk-HQQBO2L6.js.map
