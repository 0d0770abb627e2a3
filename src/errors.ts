// Errors that several layers throw or recognise, defined below all of them so that any layer may import them
// (docs/ARCHITECTURE.md). A layer's own errors stay in its room.

/** The run's configuration is wrong: the user must change a flag, an input or a file. Exit reason config_error. */
export class ConfigError extends Error {
  override readonly name = "ConfigError";
}
