// The floor a Node HTTP server sets on this machine (issue 10, docs/benchmarks.md): node:http and nothing else.
// GET answers BENCH_BARE_GET (Kassa's own GET body, byte for byte); POST reads the whole request body, as any
// GraphQL server must before it knows the question, then answers BENCH_BARE_POST (Kassa's GraphQL answer), and so
// does a GET of /graphql (the question in its URL); a GET naming a document by id answers BENCH_BARE_DOCUMENT (the
// hosted page's own poll). No routing beyond that, no logging, no metrics, no rate limit: what is left is what
// Node's HTTP stack costs each shape.
import http from 'node:http';

const get = Buffer.from(process.env.BENCH_BARE_GET ?? '{}');
const post = Buffer.from(process.env.BENCH_BARE_POST ?? '{}');
const page = Buffer.from(process.env.BENCH_BARE_DOCUMENT ?? '{}');

function answer(res, body) {
  res.statusCode = 200;
  res.setHeader('Content-Type', 'application/json; charset=utf-8');
  res.setHeader('Content-Length', body.length);
  res.end(body);
}

const server = http.createServer((req, res) => {
  if (req.method !== 'POST')
    return answer(res, req.url.startsWith('/graphql?documentId=') ? page : req.url.startsWith('/graphql') ? post : get);
  const chunks = [];
  req.on('data', (chunk) => chunks.push(chunk));
  req.once('end', () => {
    JSON.parse(Buffer.concat(chunks).toString('utf8'));
    answer(res, post);
  });
});
server.listen(Number(process.env.PORT), '127.0.0.1', () => process.send?.('ready'));
