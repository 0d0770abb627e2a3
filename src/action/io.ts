// The Action's side of the runner: inputs, log lines, annotations, outputs, the job summary and the step
// result. What reaches the log goes through one WorkflowLog (github/workflow-log.ts): a line for `info` is
// text, printed so that the runner never takes it for a workflow command whatever the model put in it;
// annotations, masks, groups and the failure are agent-ci's own commands. @actions/core reads the inputs,
// writes the outputs file and gets OIDC tokens. Everything printed passes the run's redactor first
// (`redactingIO`), so a token in an error message never reaches the log (RELIABILITY S8), even where the
// runner's own masking is absent (local runs, local-action).
import fs from "node:fs";
import * as core from "@actions/core";
import type { Redactor } from "../report/index.js";
import { actionLog, type WorkflowLog } from "../github/workflow-log.js";
import type { InputName } from "./inputs.js";
import type { OutputName } from "./outputs.js";

export interface AnnotationProps {
  title?: string;
  file?: string;
  startLine?: number;
}

export interface ActionIO {
  getInput(name: InputName): string;
  /** Text for the log, of any origin: never a workflow command. */
  info(line: string): void;
  warning(message: string, props?: AnnotationProps): void;
  notice(message: string, props?: AnnotationProps): void;
  setOutput(name: OutputName, value: string): void;
  /** Masks a value in the runner's log. */
  setSecret(value: string): void;
  /** The workflow's OIDC token for an audience (needs `permissions: id-token: write`). */
  getIDToken(audience: string): Promise<string>;
  /** Appends Markdown to the job summary; throws when GITHUB_STEP_SUMMARY is not set. */
  writeSummary(markdown: string): Promise<void>;
  group<T>(name: string, fn: () => Promise<T>): Promise<T>;
  setFailed(message: string): void;
}

/** An annotation's properties as the runner names them. */
const annotation = (props?: AnnotationProps) =>
  props && { title: props.title, file: props.file, line: props.startLine };

export function coreIO(log: WorkflowLog = actionLog()): ActionIO {
  return {
    getInput: (name) => core.getInput(name),
    info: (line) => log.text(line),
    warning: (message, props) => log.command({ name: "warning", message, properties: annotation(props) }),
    notice: (message, props) => log.command({ name: "notice", message, properties: annotation(props) }),
    setOutput: (name, value) => core.setOutput(name, value),
    setSecret: (value) => log.mask(value),
    getIDToken: (audience) => core.getIDToken(audience),
    // Appended to GITHUB_STEP_SUMMARY directly, as core.summary.write() does; core.summary caches the path
    // of the first file it saw, which is wrong for a second run in one process (tests, local-action).
    writeSummary: async (markdown) => {
      const file = process.env.GITHUB_STEP_SUMMARY;
      if (!file) throw new Error("GITHUB_STEP_SUMMARY is not set, so there is no job summary to write");
      await fs.promises.appendFile(file, markdown.endsWith("\n") ? markdown : `${markdown}\n`, {
        encoding: "utf8",
      });
    },
    group: async (name, fn) => {
      log.command({ name: "group", title: name });
      try {
        return await fn();
      } finally {
        log.command({ name: "endgroup" });
      }
    },
    setFailed: (message) => log.fail(message),
  };
}

/** The same IO with every message, title and output redacted. Inputs are read as given. */
export function redactingIO(io: ActionIO, redactor: Redactor): ActionIO {
  const r = redactor.redact;
  const props = (p?: AnnotationProps): AnnotationProps | undefined =>
    p
      ? {
          ...p,
          title: p.title === undefined ? undefined : r(p.title),
          file: p.file === undefined ? undefined : r(p.file),
        }
      : undefined;
  return {
    getInput: io.getInput,
    info: (line) => io.info(r(line)),
    warning: (message, p) => io.warning(r(message), props(p)),
    notice: (message, p) => io.notice(r(message), props(p)),
    setOutput: (name, value) => io.setOutput(name, r(value)),
    setSecret: io.setSecret,
    getIDToken: io.getIDToken,
    writeSummary: (markdown) => io.writeSummary(r(markdown)),
    group: io.group,
    setFailed: (message) => io.setFailed(r(message)),
  };
}
