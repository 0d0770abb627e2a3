/**
 * The fake GitHub's GraphQL endpoint (POST /graphql): the one mutation publish sends, createCommitOnBranch,
 * spoken as GitHub's schema defines it and applied to a real bare repository (the one test/support/git-remote.ts
 * serves), so the commit it makes is fetched back over git like GitHub's.
 *
 * The request's document is parsed (operations, variable definitions, fields, variable arguments: what a
 * client sends; literals and fragments are answered with GitHub's "not supported here" parse error) and
 * checked against the schema's types as GitHub's documentation gives them:
 *
 *   createCommitOnBranch(input: CreateCommitOnBranchInput!): CreateCommitOnBranchPayload
 *   input CreateCommitOnBranchInput { branch: CommittableBranch!, clientMutationId: String,
 *     expectedHeadOid: GitObjectID!, fileChanges: FileChanges, message: CommitMessage! }
 *   input CommittableBranch { id: ID, repositoryNameWithOwner: String, branchName: String }
 *   input FileChanges { additions: [FileAddition!], deletions: [FileDeletion!] }
 *   input FileAddition { path: String!, contents: Base64String! }   input FileDeletion { path: String! }
 *   input CommitMessage { headline: String!, body: String }
 *   type CreateCommitOnBranchPayload { clientMutationId: String, commit: Commit, ref: Ref }
 *
 * An unknown field, a missing required one, a wrong type, contents that are not RFC 4648 base64: an answer
 * with `errors` as GitHub gives it (HTTP 200). Then GitHub's rules: the branch must exist and be at
 * expectedHeadOid (else STALE_DATA), paths are unique across additions and deletions, a deleted path must exist;
 * an added file is a regular file (the input has no mode). The commit is authored by the token's account
 * (github-actions[bot]), committed by GitHub, and signed (with an SSH key made for the fake: GitHub signs with
 * its own key; what the tests can see is that a signature is there).
 */
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";

export interface GraphQLMutationRecord {
  /** The variables' `input`, as sent. */
  input: unknown;
  /** The commit made, when one was. */
  oid?: string;
  errors?: unknown[];
}

export interface GraphQLOptions {
  /** owner/name → the bare repository the mutation writes to. */
  repositories: Record<string, string>;
  /** The server's web URL for `Commit.url` (https://github.example). */
  serverUrl: string;
}

// ---- A GraphQL document, as much of the language as a client's request uses ---------------------------

interface Token {
  kind: "punct" | "name" | "other";
  value: string;
  line: number;
  column: number;
}

function tokenize(source: string): Token[] {
  const tokens: Token[] = [];
  let line = 1;
  let lineStart = 0;
  for (let i = 0; i < source.length;) {
    const c = source[i] ?? "";
    if (c === "\n") {
      line += 1;
      lineStart = i + 1;
      i += 1;
    } else if (c === " " || c === "\t" || c === "\r" || c === "," || c === "\uFEFF") i += 1;
    else if (c === "#") while (i < source.length && source[i] !== "\n") i += 1;
    else if ("!$():=@[]{}|".includes(c)) {
      tokens.push({ kind: "punct", value: c, line, column: i - lineStart + 1 });
      i += 1;
    } else if (/[_A-Za-z]/.test(c)) {
      const start = i;
      while (i < source.length && /[_0-9A-Za-z]/.test(source[i] ?? "")) i += 1;
      tokens.push({ kind: "name", value: source.slice(start, i), line, column: start - lineStart + 1 });
    } else {
      tokens.push({ kind: "other", value: c, line, column: i - lineStart + 1 });
      i += 1;
    }
  }
  return tokens;
}

interface TypeRef {
  name: string;
  list: boolean;
  nonNull: boolean;
}
interface Field {
  name: string;
  args: Record<string, string>;
  selections?: Field[];
}
interface Operation {
  type: string;
  variables: Record<string, TypeRef>;
  selections: Field[];
}

class ParseError extends Error {}

function parseDocument(source: string): Operation {
  const tokens = tokenize(source);
  let at = 0;
  const peek = () => tokens[at];
  const fail = (): never => {
    const t = peek();
    throw new ParseError(
      t
        ? `Parse error on "${t.value}" (${t.kind === "name" ? "IDENTIFIER" : t.value}) at [${t.line}, ${t.column}]`
        : "Parse error on end of document",
    );
  };
  const punct = (value: string) => {
    const t = peek();
    if (t?.kind !== "punct" || t.value !== value) fail();
    at += 1;
  };
  const isPunct = (value: string) => peek()?.kind === "punct" && peek()?.value === value;
  const name = (): string => {
    const t = peek();
    if (t?.kind !== "name") return fail();
    at += 1;
    return t.value;
  };
  const type = (): TypeRef => {
    if (isPunct("[")) {
      punct("[");
      const inner = type();
      punct("]");
      const nonNull = isPunct("!");
      if (nonNull) punct("!");
      return { name: inner.name, list: true, nonNull };
    }
    const n = name();
    const nonNull = isPunct("!");
    if (nonNull) punct("!");
    return { name: n, list: false, nonNull };
  };
  const selectionSet = (): Field[] => {
    punct("{");
    const fields: Field[] = [];
    while (!isPunct("}")) {
      const fieldName = name();
      const args: Record<string, string> = {};
      if (isPunct("(")) {
        punct("(");
        while (!isPunct(")")) {
          const arg = name();
          punct(":");
          punct("$");
          args[arg] = name();
        }
        punct(")");
      }
      fields.push({ name: fieldName, args, selections: isPunct("{") ? selectionSet() : undefined });
    }
    punct("}");
    return fields;
  };
  const operationType = name();
  if (operationType !== "mutation" && operationType !== "query") fail();
  if (peek()?.kind === "name") name();
  const variables: Record<string, TypeRef> = {};
  if (isPunct("(")) {
    punct("(");
    while (!isPunct(")")) {
      punct("$");
      const variable = name();
      punct(":");
      variables[variable] = type();
    }
    punct(")");
  }
  const selections = selectionSet();
  if (at !== tokens.length) fail();
  return { type: operationType, variables, selections };
}

// ---- The schema's types publish touches ------------------------------------------------------------------

/** Output fields: a scalar (no selection) or an object type's fields. */
type OutputType = "scalar" | { [field: string]: OutputType };
const COMMIT: OutputType = {
  oid: "scalar",
  url: "scalar",
  abbreviatedOid: "scalar",
  message: "scalar",
  messageHeadline: "scalar",
  messageBody: "scalar",
};
const PAYLOAD: OutputType = {
  clientMutationId: "scalar",
  commit: COMMIT,
  ref: { name: "scalar", prefix: "scalar" },
};
const TYPE_NAMES = new Map<OutputType, string>([
  [COMMIT, "Commit"],
  [PAYLOAD, "CreateCommitOnBranchPayload"],
]);

type InputField = { type: string; list?: boolean; required?: boolean };
const INPUT_TYPES: Record<string, Record<string, InputField>> = {
  CreateCommitOnBranchInput: {
    branch: { type: "CommittableBranch", required: true },
    clientMutationId: { type: "String" },
    expectedHeadOid: { type: "GitObjectID", required: true },
    fileChanges: { type: "FileChanges" },
    message: { type: "CommitMessage", required: true },
  },
  CommittableBranch: {
    id: { type: "ID" },
    repositoryNameWithOwner: { type: "String" },
    branchName: { type: "String" },
  },
  FileChanges: {
    additions: { type: "FileAddition", list: true },
    deletions: { type: "FileDeletion", list: true },
  },
  FileAddition: {
    path: { type: "String", required: true },
    contents: { type: "Base64String", required: true },
  },
  FileDeletion: { path: { type: "String", required: true } },
  CommitMessage: { headline: { type: "String", required: true }, body: { type: "String" } },
};

/** RFC 4648 base64, padded, standard alphabet: what the Base64String scalar accepts (one pass, any size). */
function isBase64(text: string): boolean {
  if (text.length % 4 !== 0) return false;
  const padding = text.endsWith("==") ? 2 : text.endsWith("=") ? 1 : 0;
  for (let i = 0; i < text.length - padding; i++) {
    const c = text.charCodeAt(i);
    const ok = (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || (c >= 48 && c <= 57) || c === 43 || c === 47;
    if (!ok) return false;
  }
  return true;
}
const SCALARS: Record<string, (v: unknown) => boolean> = {
  String: (v) => typeof v === "string",
  ID: (v) => typeof v === "string",
  GitObjectID: (v) => typeof v === "string" && /^[0-9a-f]{40}$/.test(v),
  Base64String: (v) => typeof v === "string" && isBase64(v),
};

/** Problems of `value` as an input of `type`, each with its path (graphql-ruby's coercion, in short). */
function inputProblems(
  value: unknown,
  typeName: string,
  where: string[],
): Array<{ path: string[]; explanation: string }> {
  const scalar = SCALARS[typeName];
  if (scalar)
    return scalar(value)
      ? []
      : [
          {
            path: where,
            explanation: `Could not coerce value ${JSON.stringify(value)?.slice(0, 80)} to ${typeName}`,
          },
        ];
  const fields = INPUT_TYPES[typeName];
  if (!fields) return [{ path: where, explanation: `unknown type ${typeName}` }];
  if (typeof value !== "object" || value === null || Array.isArray(value))
    return [{ path: where, explanation: `Expected value to be an object` }];
  const problems: Array<{ path: string[]; explanation: string }> = [];
  for (const key of Object.keys(value))
    if (!(key in fields))
      problems.push({ path: [...where, key], explanation: `Field is not defined on ${typeName}` });
  for (const [key, field] of Object.entries(fields)) {
    const v = (value as Record<string, unknown>)[key];
    if (v === undefined || v === null) {
      if (field.required)
        problems.push({ path: [...where, key], explanation: "Expected value to not be null" });
      continue;
    }
    if (field.list) {
      if (!Array.isArray(v)) {
        problems.push({ path: [...where, key], explanation: "Expected value to be a list" });
        continue;
      }
      v.forEach((item, i) => problems.push(...inputProblems(item, field.type, [...where, key, String(i)])));
    } else problems.push(...inputProblems(v, field.type, [...where, key]));
  }
  return problems;
}

/** The answer's data for `selections` of `type`, from `value`; problems as GitHub names them. */
function select(
  selections: Field[],
  type: OutputType,
  value: Record<string, unknown> | null,
  problems: string[],
): unknown {
  if (type === "scalar" || value === null) return value;
  const out: Record<string, unknown> = {};
  for (const field of selections) {
    const fieldType = type[field.name];
    if (fieldType === undefined) {
      problems.push(`Field '${field.name}' doesn't exist on type '${TYPE_NAMES.get(type) ?? "Ref"}'`);
      continue;
    }
    if (fieldType === "scalar" && field.selections)
      problems.push(`Selections can't be made on scalars (field '${field.name}')`);
    if (fieldType !== "scalar" && !field.selections)
      problems.push(`Field must have selections (field '${field.name}' returns an object)`);
    const v = value[field.name];
    out[field.name] =
      fieldType === "scalar"
        ? (v ?? null)
        : select(field.selections ?? [], fieldType, (v ?? null) as Record<string, unknown> | null, problems);
  }
  return out;
}

// ---- The mutation, applied to a real repository ------------------------------------------------------------

const BOT = { name: "github-actions[bot]", email: "41898282+github-actions[bot]@users.noreply.github.com" };

export interface FakeGraphQL {
  mutations: GraphQLMutationRecord[];
  /** Runs when a valid createCommitOnBranch arrives, before GitHub would read the branch (a push racing it). */
  beforeMutation?: (input: unknown) => void;
  /** The answer to one POST /graphql body: HTTP status and JSON. */
  answer(body: string): { status: number; json: unknown };
}

export function fakeGraphQL(options: GraphQLOptions): FakeGraphQL {
  const mutations: GraphQLMutationRecord[] = [];
  const keyDir = fs.mkdtempSync(path.join(os.tmpdir(), "fake-github-signing-"));
  const key = path.join(keyDir, "key");
  execFileSync("ssh-keygen", ["-q", "-t", "ed25519", "-N", "", "-C", "fake GitHub", "-f", key]);

  const error = (message: string, extra: Record<string, unknown> = {}) => ({ message, ...extra });

  function createCommit(input: Record<string, unknown>): {
    commit?: Record<string, unknown>;
    errors?: unknown[];
  } {
    fake.beforeMutation?.(input);
    const branchInput = input.branch as {
      id?: string;
      repositoryNameWithOwner?: string;
      branchName?: string;
    };
    const fail = (type: string, message: string) => ({
      errors: [error(message, { type, path: ["createCommitOnBranch"], locations: [{ line: 2, column: 3 }] })],
    });
    if (branchInput.id !== undefined || !branchInput.repositoryNameWithOwner || !branchInput.branchName)
      return fail(
        "UNPROCESSABLE",
        "The fake GitHub locates a branch by repositoryNameWithOwner and branchName only",
      );
    const dir = options.repositories[branchInput.repositoryNameWithOwner];
    if (!dir)
      return fail(
        "NOT_FOUND",
        `Could not resolve to a Repository with the name '${branchInput.repositoryNameWithOwner}'.`,
      );
    const git = (args: string[], stdin?: string | Buffer, env: Record<string, string> = {}) =>
      execFileSync("git", args, { cwd: dir, input: stdin, env: { ...process.env, ...env }, stdio: "pipe" })
        .toString("utf8")
        .trim();
    const ref = `refs/heads/${branchInput.branchName.replace(/^refs\/heads\//, "")}`;
    let head: string;
    try {
      head = git(["rev-parse", "--verify", `${ref}^{commit}`]);
    } catch {
      return fail("NOT_FOUND", `A ref named '${branchInput.branchName}' does not exist.`);
    }
    const expected = input.expectedHeadOid as string;
    if (head !== expected)
      return fail(
        "STALE_DATA",
        `Expected branch to point to "${expected}" but it did not. Pull and try again.`,
      );
    const changes = (input.fileChanges ?? {}) as {
      additions?: Array<{ path: string; contents: string }>;
      deletions?: Array<{ path: string }>;
    };
    const additions = changes.additions ?? [];
    const deletions = changes.deletions ?? [];
    const paths = [...additions, ...deletions].map((c) => c.path);
    const duplicate = paths.find((p, i) => paths.indexOf(p) !== i);
    if (duplicate !== undefined)
      return fail("UNPROCESSABLE", `A path was specified more than once in fileChanges: ${duplicate}`);
    const index = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "fake-github-index-")), "index");
    const env = { GIT_INDEX_FILE: index };
    git(["read-tree", head], undefined, env);
    for (const deletion of deletions) {
      try {
        git(["cat-file", "-e", `${head}:${deletion.path}`]);
      } catch {
        return fail(
          "UNPROCESSABLE",
          `A path was requested for deletion which does not exist as of commit oid \`${head}\``,
        );
      }
    }
    const records: string[] = deletions.map((d) => `0 ${"0".repeat(40)}\t${d.path}\0`);
    for (const addition of additions) {
      const oid = git(["hash-object", "-w", "--stdin"], Buffer.from(addition.contents, "base64"));
      records.push(`100644 ${oid}\t${addition.path}\0`);
    }
    git(["update-index", "-z", "--index-info"], records.join(""), env);
    const tree = git(["write-tree"], undefined, env);
    const messageInput = input.message as { headline: string; body?: string };
    const message = messageInput.body
      ? `${messageInput.headline}\n\n${messageInput.body}`
      : messageInput.headline;
    const oid = git(
      [
        "-c",
        "gpg.format=ssh",
        "-c",
        `user.signingkey=${key}`,
        "commit-tree",
        "-S",
        tree,
        "-p",
        head,
        "-F",
        "-",
      ],
      message,
      {
        GIT_AUTHOR_NAME: BOT.name,
        GIT_AUTHOR_EMAIL: BOT.email,
        GIT_COMMITTER_NAME: "GitHub",
        GIT_COMMITTER_EMAIL: "noreply@github.com",
      },
    );
    git(["update-ref", ref, oid, head]);
    const [headline = "", ...rest] = message.split("\n");
    return {
      commit: {
        oid,
        url: `${options.serverUrl}/${branchInput.repositoryNameWithOwner}/commit/${oid}`,
        abbreviatedOid: oid.slice(0, 7),
        message,
        messageHeadline: headline,
        messageBody: rest.join("\n").trim(),
      },
    };
  }

  function answer(body: string): { status: number; json: unknown } {
    let request: { query?: unknown; variables?: unknown };
    try {
      request = JSON.parse(body) as typeof request;
    } catch {
      return { status: 400, json: { message: "Problems parsing JSON" } };
    }
    if (typeof request.query !== "string")
      return {
        status: 200,
        json: { errors: [error("A query attribute must be specified and must be a string.")] },
      };
    let operation: Operation;
    try {
      operation = parseDocument(request.query);
    } catch (e) {
      if (e instanceof ParseError) return { status: 200, json: { errors: [error(e.message)] } };
      throw e;
    }
    const root = operation.selections;
    if (operation.type !== "mutation" || root.length !== 1 || root[0]?.name !== "createCommitOnBranch")
      return {
        status: 200,
        json: {
          errors: [
            error(
              `The fake GitHub answers the mutation createCommitOnBranch only (got ${operation.type} ${root.map((f) => f.name).join(", ")})`,
            ),
          ],
        },
      };
    const field = root[0];
    const argNames = Object.keys(field.args);
    if (argNames.length !== 1 || argNames[0] !== "input")
      return {
        status: 200,
        json: { errors: [error("Field 'createCommitOnBranch' takes exactly one argument, input")] },
      };
    const variable = field.args.input ?? "";
    const declared = operation.variables[variable];
    if (!declared || declared.name !== "CreateCommitOnBranchInput" || declared.list || !declared.nonNull)
      return {
        status: 200,
        json: {
          errors: [
            error(
              `Nullability mismatch or wrong type on variable $${variable} and argument input (${declared ? `${declared.name}${declared.nonNull ? "!" : ""}` : "undeclared"} / CreateCommitOnBranchInput!)`,
            ),
          ],
        },
      };
    const shapeProblems: string[] = [];
    select(field.selections ?? [], PAYLOAD, {}, shapeProblems);
    if (!field.selections)
      shapeProblems.push(
        "Field must have selections (field 'createCommitOnBranch' returns CreateCommitOnBranchPayload but has no selections.)",
      );
    if (shapeProblems.length) return { status: 200, json: { errors: shapeProblems.map((m) => error(m)) } };
    const input = ((request.variables ?? {}) as Record<string, unknown>)[variable];
    const problems = inputProblems(input, "CreateCommitOnBranchInput", []);
    if (problems.length) {
      const record = { input, errors: problems };
      mutations.push(record);
      return {
        status: 200,
        json: {
          errors: [
            error(
              `Variable $${variable} of type CreateCommitOnBranchInput! was provided invalid value${problems.map((p) => ` for ${p.path.join(".")} (${p.explanation})`).join(",")}`,
              { extensions: { value: input, problems } },
            ),
          ],
        },
      };
    }
    const made = createCommit(input as Record<string, unknown>);
    mutations.push({ input, oid: made.commit?.oid as string | undefined, errors: made.errors });
    if (made.errors)
      return { status: 200, json: { data: { createCommitOnBranch: null }, errors: made.errors } };
    const data = select(
      field.selections ?? [],
      PAYLOAD,
      {
        clientMutationId: (input as { clientMutationId?: string }).clientMutationId ?? null,
        commit: made.commit ?? null,
        ref: { name: (input as { branch: { branchName: string } }).branch.branchName, prefix: "refs/heads/" },
      },
      [],
    );
    return { status: 200, json: { data: { createCommitOnBranch: data } } };
  }

  const fake: FakeGraphQL = { mutations, answer };
  return fake;
}
