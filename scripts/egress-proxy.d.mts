export function bundleEgressProxy(): Promise<string>;
export function egressProxyPlugin(): import("esbuild").Plugin;
