import { createRequire as __agentCiCreateRequire } from "node:module";
import { fileURLToPath as __agentCiFileURLToPath } from "node:url";
import { dirname as __agentCiDirname } from "node:path";
const require = __agentCiCreateRequire(import.meta.url);
const __filename = __agentCiFileURLToPath(import.meta.url);
const __dirname = __agentCiDirname(__filename);
function t(r){return r.replaceAll("%","%25").replaceAll("\r","%0D").replaceAll(`
`,"%0A")}function g(r){return t(r).replaceAll(":","%3A").replaceAll(",","%2C")}function p(r){switch(r.name){case"add-mask":return`::add-mask::${t(r.value)}`;case"group":return`::group::${t(r.title)}`;case"endgroup":return"::endgroup::";default:{let e=Object.entries(r.properties??{}).filter(([,n])=>n!==void 0&&n!=="").map(([n,u])=>`${n}=${g(String(u))}`);return`::${r.name}${e.length?` ${e.join(",")}`:""}::${t(r.message)}`}}}var i=String.raw`\0-\x08\x0e-\x1f\x7f-\x84\x86-\x9f\p{Default_Ignorable_Code_Point}`,c=String.raw`[\t\v\f \u0085\u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000${i}]*`,s=new RegExp(String.raw`(^|[\r\n])(${c})(?=:[${i}]*:)`,"gu"),a=new RegExp(String.raw`#([${i}]*)#([${i}]*)\[`,"gu");function l(r){return r.replace(s,"$1$2\\").replace(a,"#$1#$2\\[")}function d(r){return r.replace(s,"$1$2\\").replace(a,"#$1#$2\\u005b")}var o=class{runner;write;masked;constructor(e){this.write=e.write,this.runner=e.runner,this.masked=e.masked??new Set}text(e){this.lines(this.runner?l(e):e)}json(e){this.lines(this.runner?d(e):e)}command(e){this.lines(p(e))}fail(e){process.exitCode=1,this.command({name:"error",message:e})}mask(e){!this.runner||!e.trim()||this.masked.has(e)||(this.masked.add(e),this.command({name:"add-mask",value:e}))}lines(e){this.write(e.endsWith(`
`)?e:`${e}
`)}};function m(){return new o({write:r=>process.stdout.write(r),runner:!0})}export{m as a};
//# sourceMappingURL=action-chunk-FR54Y6C3.js.map
