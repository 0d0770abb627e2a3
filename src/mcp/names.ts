// The names of the MCP resource tools, apart from the tools themselves (tools.ts): the run's tool set names them
// without loading the MCP SDK, which a run loads only when it has servers.
export const LIST_RESOURCES_TOOL = "ListMcpResourcesTool";
export const READ_RESOURCE_TOOL = "ReadMcpResourceTool";
