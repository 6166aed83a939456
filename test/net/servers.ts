// Real HTTP servers on loopback for the net tests: each records who connected and what arrived, and
// `closeAll` tears every one of them down (connections included) so no socket outlives a test.
import * as http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

export interface RecordedRequest {
  readonly host: string | undefined;
  readonly url: string;
  readonly authorization: string | undefined;
  readonly headers: http.IncomingHttpHeaders;
}

export interface TestServer {
  readonly server: http.Server;
  readonly port: number;
  readonly host: string;
  readonly origin: string;
  readonly requests: RecordedRequest[];
  connections: number;
  /** Sockets closed so far (by either side). */
  closed: number;
}

export class ServerPool {
  private readonly servers: TestServer[] = [];

  async start(handler: http.RequestListener, host = '127.0.0.1', port = 0): Promise<TestServer> {
    const server = http.createServer();
    const rec: TestServer = { server, port: 0, host, origin: '', requests: [], connections: 0, closed: 0 };
    server.on('connection', (s: Socket) => {
      rec.connections++;
      s.on('close', () => rec.closed++);
    });
    server.on('request', (req, res) => {
      rec.requests.push({ host: req.headers.host, url: req.url ?? '', authorization: req.headers.authorization, headers: req.headers });
      handler(req, res);
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, host, () => resolve());
    });
    const addr = server.address() as AddressInfo;
    const mutable = rec as { port: number; origin: string };
    mutable.port = addr.port;
    mutable.origin = `http://${host.includes(':') ? `[${host}]` : host}:${addr.port}`;
    this.servers.push(rec);
    return rec;
  }

  async closeAll(): Promise<void> {
    const all = this.servers.splice(0);
    await Promise.all(
      all.map(
        (s) =>
          new Promise<void>((resolve) => {
            s.server.closeAllConnections();
            s.server.close(() => resolve());
          }),
      ),
    );
  }
}

export const text = (body: string, type = 'text/html; charset=utf-8'): http.RequestListener => (_req, res) => {
  res.writeHead(200, { 'content-type': type });
  res.end(body);
};

export const redirectTo = (location: string, status = 302): http.RequestListener => (_req, res) => {
  res.writeHead(status, { location });
  res.end();
};
