// The sandbox: its image and runtime, its Node.js, its network and egress proxy, setup commands, the
// environment passed in and its limits.
import { EGRESS_PRESET_NAMES } from "../sandbox/egress/allowlist-presets.js";
import { NETWORK_POLICIES } from "../policy/network.js";
import { type OptionDef } from "./types.js";
import { DEFAULT_SETUP_CACHE_MAX_AGE_DAYS } from "./values.js";

const PRESETS = EGRESS_PRESET_NAMES.join(", ");

export const SANDBOX_OPTIONS = {
  image: {
    action: {
      default: "",
      description:
        "Sandbox image. Empty uses agent-ci's default image, pulled by digest from the release's registry where it is reachable, else built from Dockerfile.sandbox on first use.",
    },
    cli: {
      flags: "--image <name>",
      description: "sandbox image (default: agent-ci's, pulled by digest or built on first use)",
      group: "Sandbox",
    },
  },
  image_registry: {
    action: {
      default: "",
      description:
        "A mirror of agent-ci's prebuilt images (host[/path], holding agent-ci-sandbox and agent-ci-toolbelt under the recorded digests). Empty uses the registry the release recorded.",
    },
    cli: {
      flags: "--image-registry <registry>",
      description:
        "a mirror of agent-ci's prebuilt images, e.g. registry.example.com/agent-ci (default: AGENT_CI_REGISTRY, else the release's)",
      group: "Sandbox",
    },
  },
  runtime: {
    action: {
      default: "",
      description:
        "OCI runtime of the sandbox's container, as the engine registers it: runsc runs it under gVisor (a kernel of its own between the agent and the host's). Empty: the engine's default (runc).",
    },
    cli: {
      flags: "--runtime <name>",
      description:
        "OCI runtime of the sandbox's container, as the engine registers it (runsc: gVisor; default: the engine's)",
      group: "Sandbox",
    },
  },
  node_version: {
    action: {
      default: "",
      description:
        "The sandbox's Node.js (node, npm, npx) on any image: 20, v20.11.1, >=18, lts/*, lts/iron, node, or system for the image's own. Empty: on the default image, the repository's pin (.nvmrc, .node-version, .tool-versions, package.json volta.node), else the node on the step's PATH (what the job set up, e.g. actions/setup-node; not the Node.js this Action runs on), else the image's own Node.js 24.",
    },
    cli: {
      flags: "--node-version <version>",
      description:
        "the Bash tool's Node.js on any image (20, v20.11.1, >=18, lts/*, system: the image's own); default: the project's pin",
      group: "Sandbox",
    },
  },
  network: {
    action: {
      default: "none",
      description:
        "Network in the sandbox: none; setup (only the setup commands, through the ecosystem presets); allowlist (only allowed_domains, through agent-ci's egress proxy); or on (anything).",
    },
    cli: {
      flags: "--network <policy>",
      description:
        "network in the sandbox: none, setup (only for --setup), allowlist (named domains through agent-ci's proxy), on",
      group: "Network",
      choices: NETWORK_POLICIES,
      default: "none",
    },
  },
  allowed_domains: {
    action: {
      default: "",
      list: true,
      description: `With network: allowlist, the domains the sandbox may reach, one per line or comma-separated: example.com, *.example.com, host:port, or a preset (${PRESETS}).`,
    },
    cli: {
      flags: "--allow-domain <domain>",
      description: `with --network allowlist: a host, *.domain, :port, or a preset (${PRESETS}); repeatable`,
      group: "Network",
      parse: "collect",
    },
  },
  setup_allowed_domains: {
    action: {
      default: "",
      list: true,
      description:
        "With network: setup, what the setup commands may reach, as allowed_domains (default: every preset).",
    },
    cli: {
      flags: "--setup-allow-domain <domain>",
      description:
        "with --network setup: what setup commands reach, as --allow-domain (default: every preset); repeatable",
      group: "Network",
      parse: "collect",
    },
  },
  allow_private_hosts: {
    action: {
      default: "",
      list: true,
      description:
        "With network: allowlist or setup, allowed hosts that may resolve to a private address (never the metadata address), one per line or comma-separated; NAME=ADDRESS also maps the name (a registry mirror inside your network).",
    },
    cli: {
      flags: "--allow-private-host <name[=address]>",
      description:
        "an allowed host that may resolve to a private address (never the metadata address); =ADDRESS maps the name (repeatable)",
      group: "Network",
      parse: "collect",
    },
  },
  inject_secrets: {
    action: {
      default: "",
      list: true,
      description:
        "With network: allowlist or setup, secrets the egress proxy adds for one host, as NAME=header:host[:port] (one per line or comma-separated): the value comes from the step's environment variable NAME (set it from a repository secret in the step's env), and the proxy puts it in place of a placeholder in that header, over TLS to that host only; the sandbox's NAME holds the placeholder, never the value. See docs/network.md.",
    },
    cli: {
      flags: "--inject-secret <NAME=header:host>",
      description:
        "the egress proxy puts the value of the environment variable NAME in that header for that host, over TLS; the sandbox's NAME holds a placeholder (repeatable)",
      group: "Network",
      parse: "collect",
    },
  },
  ca_cert: {
    action: {
      default: "",
      description:
        "A PEM file (relative to the workspace, or absolute) of certificates the sandbox's commands trust besides the image's: a self-hosted runner behind a TLS-inspecting proxy needs it on the first run.",
    },
    cli: {
      flags: "--ca-cert <file>",
      description:
        "a PEM file of CA certificates commands in the sandbox trust besides the image's (a company proxy's); curl, git, pip, npm and Node read it",
      group: "Network",
    },
  },
  setup: {
    action: {
      default: "",
      description:
        "Commands run in the sandbox before the agent, one per line (need network setup, allowlist or on).",
    },
    cli: {
      flags: "--setup <command>",
      description:
        "run before the agent (repeatable); with --network setup through the setup allowlist, which ends before the agent starts",
      group: "Sandbox",
      parse: "collect",
    },
  },
  setup_refresh: {
    action: {
      default: "",
      description:
        "Commands run after a setup snapshot is restored, in place of setup, one per line (e.g. npm run build). See docs/setup-cache.md.",
    },
    cli: {
      flags: "--setup-refresh <command>",
      description:
        "run after a setup snapshot is restored, in place of --setup (repeatable; e.g. npm run build)",
      group: "Sandbox",
      parse: "collect",
    },
  },
  setup_cache: {
    action: {
      default: "true",
      description:
        "Start from a snapshot of an earlier run's setup with the same key (image, setup, lockfiles, environment, network), kept as an image on the engine; false runs the whole setup every time. Only push, schedule and workflow_dispatch on the default branch write entries every run reads; a pull request's runs write entries only that pull request reads. See docs/setup-cache.md.",
    },
    cli: {
      flags: "--no-setup-cache",
      description: "run the whole --setup every time: no setup snapshot is read or written",
      group: "Sandbox",
    },
  },
  setup_cache_key_files: {
    action: {
      default: "",
      list: true,
      description:
        "Files whose bytes are in the setup cache's key, one per line or comma-separated (default: the lockfiles and manifests found per ecosystem).",
    },
    cli: {
      flags: "--setup-cache-key-files <path>",
      description:
        "a file whose bytes are in the setup cache's key (repeatable; default: lockfiles and manifests found per ecosystem)",
      group: "Sandbox",
      parse: "collect",
    },
  },
  setup_cache_max_age: {
    action: {
      default: String(DEFAULT_SETUP_CACHE_MAX_AGE_DAYS),
      description:
        "Days a setup snapshot is used after it was made: an older entry is not restored (setup runs and writes a fresh one), and `agent-ci cache rm --expired` removes it.",
    },
    cli: {
      flags: "--setup-cache-max-age <days>",
      description: `days a setup snapshot is used after it was made (default: ${DEFAULT_SETUP_CACHE_MAX_AGE_DAYS}); older ones are not restored`,
      group: "Sandbox",
      parse: "positiveNumber",
    },
  },
  env: {
    action: {
      default: "",
      list: true,
      description:
        "Environment variables passed to the sandbox's commands by name, one per line or comma-separated, as the CLI's --env: the value is the step's. Never a secret: the agent can read and print it (the Action's own credentials, GITHUB_TOKEN, ACTIONS_* and INPUT_*, are refused).",
    },
    cli: {
      flags: "--env <name>",
      description: "pass this environment variable into the sandbox, by name (repeatable)",
      group: "Sandbox",
      parse: "collect",
    },
  },
  memory_limit: {
    action: {
      default: "",
      description:
        "Memory limit of the sandbox container, as the CLI's --memory (e.g. 4g). Empty uses the CLI's default.",
    },
    cli: { flags: "--memory <size>", description: "memory limit, e.g. 4g", group: "Sandbox", parse: "size" },
  },
  cpus: {
    action: {
      default: "",
      description:
        "CPU limit of the sandbox container, as the CLI's --cpus (e.g. 2). Empty uses the CLI's default.",
    },
    cli: { flags: "--cpus <n>", description: "CPU limit", group: "Sandbox", parse: "positiveNumber" },
  },
} as const satisfies Record<string, OptionDef>;
