import { createRequire as __agentCiCreateRequire } from "node:module";
import { fileURLToPath as __agentCiFileURLToPath } from "node:url";
import { dirname as __agentCiDirname } from "node:path";
const require = __agentCiCreateRequire(import.meta.url);
const __filename = __agentCiFileURLToPath(import.meta.url);
const __dirname = __agentCiDirname(__filename);
import{a,b,c,d,e,f,g,h,i,j,k,l,m,n,o,p,q,r,t as s}from"./action-chunk-JLNO6G2V.js";import"./action-chunk-FFI4DGQI.js";import"./action-chunk-U6W3ELK5.js";s();export{c as EventStreamCodec,m as EventStreamMarshaller,r as EventStreamSerde,b as HeaderMarshaller,a as Int64,d as MessageDecoderStream,e as MessageEncoderStream,f as SmithyMessageDecoderStream,g as SmithyMessageEncoderStream,k as UniversalEventStreamMarshaller,n as eventStreamSerdeProvider,h as getChunkedStream,j as getMessageUnmarshaller,i as getUnmarshalledStream,p as iterableToReadableStream,o as readableStreamToIterable,q as resolveEventStreamSerdeConfig,l as universalEventStreamSerdeProvider};
//# sourceMappingURL=action-chunk-I6BFPKIT.js.map
