'use strict';
// skillweave: Node's fetch through the sandbox's egress proxy (HTTP_PROXY, HTTPS_PROXY), for
// Node versions that do not read the proxy variables themselves (NODE_USE_ENV_PROXY came with
// Node 24 and 22.21). Loaded with --require by runs that may reach the network; a plain http
// URL goes to the proxy as an absolute URL, an https one through a CONNECT tunnel (TLS end to
// end). Everything else of fetch (Request, Headers, Response) is Node's own.
(() => {
  const proxy = process.env.HTTPS_PROXY || process.env.HTTP_PROXY;
  const [major, minor] = process.versions.node.split('.').map(Number);
  const native = major >= 24 || (major === 22 && minor >= 21);
  if (!proxy || native || typeof globalThis.fetch !== 'function') return;
  const http = require('http');
  const https = require('https');
  const tls = require('tls');
  const { Readable } = require('stream');
  const via = new URL(proxy);

  function send(request, url, headers, body) {
    return new Promise((resolve, reject) => {
      const finish = (req) => {
        req.on('error', reject);
        if (body) req.write(body);
        req.end();
      };
      if (url.protocol === 'http:') {
        finish(http.request({
          host: via.hostname, port: via.port, method: request.method, path: url.href,
          headers: { ...headers, host: url.host },
        }, resolve));
        return;
      }
      const tunnel = http.request({
        host: via.hostname, port: via.port, method: 'CONNECT',
        path: `${url.hostname}:${url.port || 443}`,
      });
      tunnel.on('connect', (answer, socket) => {
        if (answer.statusCode !== 200) {
          socket.destroy();
          reject(new TypeError(`fetch failed: the egress proxy answered ${answer.statusCode}`));
          return;
        }
        finish(https.request({
          method: request.method, host: url.hostname, path: url.pathname + url.search, headers,
          createConnection: () => tls.connect({ socket, servername: url.hostname }),
        }, resolve));
      });
      tunnel.on('error', reject);
      tunnel.end();
    });
  }

  const original = globalThis.fetch;
  globalThis.fetch = async function fetch(input, init) {
    const request = new Request(input, init);
    const url = new URL(request.url);
    if (url.protocol !== 'http:' && url.protocol !== 'https:') return original(input, init);
    const body = request.body ? Buffer.from(await request.arrayBuffer()) : undefined;
    const answer = await send(request, url, Object.fromEntries(request.headers), body);
    const headers = new Headers();
    for (const [name, value] of Object.entries(answer.headers)) {
      for (const item of [].concat(value)) headers.append(name, item);
    }
    const empty = request.method === 'HEAD' || [101, 204, 205, 304].includes(answer.statusCode);
    return new Response(empty ? null : Readable.toWeb(answer), {
      status: answer.statusCode, statusText: answer.statusMessage, headers,
    });
  };
})();
