// Waiting for an event by polling a check, never for a fixed time.

/** Waits until `check` returns a value (polling), or fails after `timeoutMs`. */
export async function until<T>(
  what: string,
  check: () => Promise<T | undefined> | T | undefined,
  timeoutMs = 60_000,
  everyMs = 100,
): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined && value !== null && value !== false) return value as T;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}
