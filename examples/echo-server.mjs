// A small local echo service for integration-action.yaml: answers every POST with its JSON body under "echo".
//   node examples/echo-server.mjs [PORT]        (default 8787; listens on 127.0.0.1 only)
import { Buffer } from 'node:buffer';
import { createServer } from 'node:http';

const port = Number(process.argv[2] ?? process.env.ECHO_PORT ?? 8787);
const server = createServer((req, res) => {
  const chunks = [];
  req.on('data', (chunk) => chunks.push(chunk));
  req.on('end', () => {
    let body;
    try {
      body = JSON.parse(Buffer.concat(chunks).toString('utf8') || 'null');
    } catch {
      res.writeHead(400, { 'content-type': 'application/json' }).end('{"error":"not JSON"}');
      return;
    }
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ echo: body, path: req.url }));
  });
});
server.listen(port, '127.0.0.1', () => console.log(`echo service listening on http://127.0.0.1:${port}`));
process.on('SIGTERM', () => server.close(() => process.exit(0)));
