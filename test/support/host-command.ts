// Whether this machine has a program on its PATH, as the shell finds it (`command -v`).
import { spawnSync } from "node:child_process";

export function hasCommand(command: string): boolean {
  return spawnSync("sh", ["-c", `command -v ${command}`], { stdio: "ignore" }).status === 0;
}
