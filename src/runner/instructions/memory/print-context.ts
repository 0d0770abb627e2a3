// `agent-ci run --print-context`: the first request's system prompt and first user message, built exactly as a
// run builds them (the policy's mode, the memory, the git snapshot, a structured-output instruction), without
// calling the model or starting a container.
import { reviewJsonSchema } from "../../../review/findings.js";
import { reviewPrompt, reviewTarget } from "../../../review/review-task.js";
import type { RunConfig } from "../../config.js";
import { preparePolicy } from "../../run/policy-setup.js";
import { readSchema, StructuredOutputSpec } from "../../model/structured-output.js";
import { takeGitSnapshot } from "./git-snapshot.js";
import { prepareModelContext, renderFirstRequest } from "./model-context.js";

export async function printContext(config: RunConfig): Promise<string> {
  const snapshot = takeGitSnapshot(config.workspace, { subjects: !config.untrustedHistory });
  const policy = preparePolicy(config);
  const review =
    config.task === "review" && config.reviewBase
      ? reviewTarget(config.workspace, config.reviewBase, config.reviewHead)
      : undefined;
  const structured = review
    ? await StructuredOutputSpec.compile(reviewJsonSchema(), "review")
    : config.outputSchema === undefined
      ? undefined
      : await (({ schema, name }) => StructuredOutputSpec.compile(schema, name))(
          readSchema(config.outputSchema),
        );
  const told = prepareModelContext(config, policy.policy.mode, structured, await snapshot);
  const prompt = review ? reviewPrompt(review, config.prompt) : config.prompt;
  const problems = told.problems.map((p) => `(memory: ${p.path}: ${p.reason})`);
  return [renderFirstRequest(told, prompt), ...problems].join("\n");
}
