// The baseline of bench/serve: a bare node http server answering single ranges of one file with
// fs.createReadStream (no framework, no auth, no database), on the port given.
import { createReadStream, statSync } from 'node:fs';
import { createServer } from 'node:http';

const [, , file, port] = process.argv;
const size = statSync(file).size;
createServer((req, res) => {
  const match = /^bytes=(\d+)-(\d+)$/.exec(req.headers.range ?? '');
  if (!match) {
    res.writeHead(200, { 'content-length': size });
    createReadStream(file).pipe(res);
    return;
  }
  const start = Number(match[1]);
  const end = Math.min(Number(match[2]), size - 1);
  res.writeHead(206, { 'content-length': end - start + 1, 'content-range': `bytes ${start}-${end}/${size}` });
  createReadStream(file, { start, end }).pipe(res);
}).listen(Number(port), '127.0.0.1', () => process.send?.('ready'));
