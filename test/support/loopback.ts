// One way for the tests' servers to listen: on loopback, on a port the system picks, closed with every
// connection still open (a keep-alive client would otherwise hold close() until it times out).
import type { AddressInfo, Server } from "node:net";

export interface Listening {
  port: number;
  /** http://127.0.0.1:PORT */
  url: string;
  close(): Promise<void>;
}

export async function listenOnLoopback(
  server: Server & { closeAllConnections?: () => void },
): Promise<Listening> {
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      server.off("error", reject);
      resolve();
    });
  });
  const { port } = server.address() as AddressInfo;
  return {
    port,
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections?.();
        server.close(() => resolve());
      }),
  };
}
