// The policy's first Bash decision costs a hundred times the ones after it: the Bash grammar's WebAssembly and
// the analysis's JavaScript are compiled by V8 on their first call. Deciding a few representative command
// lines as soon as the parser is loaded, while the engine starts the container (PreparedPolicy's `loadParser`),
// moves that cost off the calls. The decisions are thrown away; the engine keeps no state between them.
import type { PolicyEngine } from "../../policy/evaluate.js";

/** Command lines of the shapes agents send most: a pipeline, a list, a redirect, a substitution, a loop. */
const SAMPLES = [
  "git status --short | wc -l",
  'cd src && grep -rn "x" . 2>/dev/null | head -20 > /tmp/out.txt',
  'for f in $(ls *.ts); do echo "$f"; done',
];

export function warmUpPolicy(engine: PolicyEngine): void {
  for (const command of SAMPLES) {
    try {
      engine.decide({ tool: "Bash", input: { command }, readOnly: false });
    } catch {
      // A warm-up only: the real call meets whatever this met, and reports it.
    }
  }
}
