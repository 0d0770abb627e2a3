// agent-ci's version, from package.json (inlined by the bundler for dist/).
import pkg from "../package.json" with { type: "json" };

export const AGENT_CI_VERSION: string = pkg.version;
