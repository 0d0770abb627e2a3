import js from "@eslint/js";
import tseslint from "typescript-eslint";

export default tseslint.config(
  {
    ignores: [
      "dist/**",
      "node_modules/**",
      "bench/results.json",
      "coverage/**",
      "agent-ci-out/**",
      "examples/**/repo/**",
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    rules: {
      "@typescript-eslint/no-explicit-any": "error",
      "@typescript-eslint/no-unused-vars": ["error", { argsIgnorePattern: "^_", varsIgnorePattern: "^_" }],
      "no-control-regex": "off",
    },
  },
  {
    // What agent-ci prints goes through src/github/workflow-log.ts, which keeps any text from being taken for
    // a workflow command by a runner reading the log; code that runs inside the container prints to agent-ci.
    files: ["src/**/*.ts"],
    ignores: [
      "src/github/workflow-log.ts",
      "src/sandbox/helper/**",
      "src/sandbox/egress/sidecar.ts",
      "src/sandbox/egress/proxy-main.ts",
    ],
    rules: {
      "no-console": "error",
      "no-restricted-syntax": [
        "error",
        {
          selector:
            "MemberExpression[object.object.name='process'][object.property.name=/^(stdout|stderr)$/][property.name='write']",
          message:
            "Print through a WorkflowLog (src/github/workflow-log.ts): its text can never be a workflow command.",
        },
        {
          selector:
            "MemberExpression[object.name='core'][property.name=/^(info|debug|notice|warning|error|setSecret|startGroup|endGroup|group|setFailed|setCommandEcho|issueCommand)$/]",
          message:
            "Print through a WorkflowLog (src/github/workflow-log.ts): its text can never be a workflow command.",
        },
      ],
    },
  },
  {
    files: ["**/*.js", "**/*.mjs"],
    languageOptions: { globals: { process: "readonly", console: "readonly", Buffer: "readonly" } },
  },
);
