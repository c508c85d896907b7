// A webhook receiver on 127.0.0.1 that records every request and answers 200.
import { createServer } from 'node:http';

export async function startReceiver() {
  const requests = [];
  const server = createServer((req, res) => {
    const chunks = [];
    req.on('data', (chunk) => chunks.push(chunk));
    req.on('end', () => {
      requests.push({ path: req.url, headers: req.headers, body: Buffer.concat(chunks).toString('utf8'), at: Date.now() });
      res.writeHead(200).end();
    });
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const baseUrl = `http://127.0.0.1:${server.address().port}`;
  return {
    requests,
    url: (path) => baseUrl + path,
    to: (path) => requests.filter((request) => request.path === path),
    close: () => {
      server.closeAllConnections();
      return new Promise((resolve) => server.close(resolve));
    },
  };
}
