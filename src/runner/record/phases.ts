// Where the run's time went: the sandbox's start steps and the run's own phases, from the run's start, in
// the order they began.
import type { RecordSection } from "./section.js";

export const phasesSection: RecordSection = (p) => {
  const origin = p.start.origin ?? p.runStart;
  const offset = (at: number) => Math.max(0, Math.round(at - p.runStart));
  const phases = [
    ...p.start.phases.map((s) => ({
      name: s.phase,
      startOffsetMs: offset(origin + s.startMs),
      durationMs: Math.round(s.durationMs),
    })),
    ...p.phases.map((s) => ({
      name: s.name,
      startOffsetMs: offset(s.start),
      durationMs: Math.round(s.end - s.start),
    })),
  ];
  return {
    fields: { phases: phases.length ? phases.sort((a, b) => a.startOffsetMs - b.startOffsetMs) : undefined },
  };
};
