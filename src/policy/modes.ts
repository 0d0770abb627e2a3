// The permission modes' names, apart from the zod schemas that check them (schema.ts): the CLI's help lists
// them without loading zod.
export const PERMISSION_MODES = ["default", "plan", "acceptEdits", "bypassPermissions"] as const;
