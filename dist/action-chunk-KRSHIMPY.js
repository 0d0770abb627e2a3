import { createRequire as __agentCiCreateRequire } from "node:module";
import { fileURLToPath as __agentCiFileURLToPath } from "node:url";
import { dirname as __agentCiDirname } from "node:path";
const require = __agentCiCreateRequire(import.meta.url);
const __filename = __agentCiFileURLToPath(import.meta.url);
const __dirname = __agentCiDirname(__filename);
import{a as p,c as b}from"./action-chunk-U6W3ELK5.js";var i=b((l,m)=>{var u=p("buffer"),e=u.Buffer;function a(r,f){for(var n in r)f[n]=r[n]}e.from&&e.alloc&&e.allocUnsafe&&e.allocUnsafeSlow?m.exports=u:(a(u,l),l.Buffer=o);function o(r,f,n){return e(r,f,n)}o.prototype=Object.create(e.prototype);a(e,o);o.from=function(r,f,n){if(typeof r=="number")throw new TypeError("Argument must not be a number");return e(r,f,n)};o.alloc=function(r,f,n){if(typeof r!="number")throw new TypeError("Argument must be a number");var t=e(r);return f!==void 0?typeof n=="string"?t.fill(f,n):t.fill(f):t.fill(0),t};o.allocUnsafe=function(r){if(typeof r!="number")throw new TypeError("Argument must be a number");return e(r)};o.allocUnsafeSlow=function(r){if(typeof r!="number")throw new TypeError("Argument must be a number");return u.SlowBuffer(r)}});export{i as a};
//# sourceMappingURL=action-chunk-KRSHIMPY.js.map
