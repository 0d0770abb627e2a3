/** Bundles an MCP server with its dependencies into one ES module's text. */
export function bundleServer(entry: string): Promise<string>;
