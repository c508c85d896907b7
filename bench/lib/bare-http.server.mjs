// The floor: node:http serving, on GET /body/<name>, the exact bytes the app answered for that scenario
// (bodies.json: { name: body }). Serialized once at start: this is the cost of HTTP and the bytes alone.
// Run as a child by run.mjs: node bare-http.server.mjs <bodies.json>, env PORT.
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';

const bodies = JSON.parse(readFileSync(process.argv[2], 'utf8'));
const routes = new Map(Object.entries(bodies).map(([name, body]) => [`/body/${name}`, Buffer.from(body)]));

createServer((req, res) => {
  const body = routes.get(req.url);
  if (req.url === '/ready') return res.end('ok');
  if (!body) {
    res.statusCode = 404;
    return res.end();
  }
  res.writeHead(200, { 'content-type': 'application/json; charset=utf-8', 'content-length': body.length });
  res.end(body);
}).listen(Number(process.env.PORT), '127.0.0.1');
