// Compares the recorded Claude Code cases committed under test/fixtures/reference/ with the newest recordings
// in ../shared/reference/, where that folder exists (the project's design notes sit beside the repository
// while it is developed; a clone from GitHub has none, and this check says so and passes). A committed case
// that differs from its newest recording fails: copy it again and play it. A newer recording that is not
// committed yet is named, not failed: it is played once it is copied in. A set's README is not a case: the
// repository keeps its own, naming the checker it carries.
import fs from "node:fs";
import path from "node:path";

const committed = path.join(import.meta.dirname, "..", "test", "fixtures", "reference");
const newest = path.join(import.meta.dirname, "..", "..", "shared", "reference");
if (!fs.existsSync(newest)) {
  console.log(
    "reference: no ../shared/reference beside the repository; the committed cases are played as they are",
  );
  process.exit(0);
}
let stale = 0;
for (const set of fs
  .readdirSync(committed)
  .filter((f) => fs.statSync(path.join(committed, f)).isDirectory())) {
  const from = path.join(newest, set);
  if (!fs.existsSync(from)) continue;
  for (const file of fs.readdirSync(from).sort()) {
    if (file === "README.md") continue;
    const ours = path.join(committed, set, file);
    if (!fs.existsSync(ours)) {
      console.log(`reference: ${set}/${file} is recorded but not committed (not played)`);
      continue;
    }
    if (!fs.readFileSync(ours).equals(fs.readFileSync(path.join(from, file)))) {
      console.error(
        `reference: ${set}/${file} differs from the newest recording; copy it from ../shared/reference/`,
      );
      stale++;
    }
  }
}
process.exit(stale ? 1 : 0);
