// The Engine API client (dockerode), in a module of its own: dockerode carries its SSH and gRPC transports,
// megabytes a command that never reaches an engine (`--help`, a config error, `--print-context`) does not load.
// A run gets it through `connectEngine()` (engine.ts) when it first reaches the engine.
import Docker from "dockerode";

export function createDockerClient(): Docker {
  // dockerode reads DOCKER_HOST, DOCKER_TLS_VERIFY and DOCKER_CERT_PATH itself.
  return new Docker();
}
