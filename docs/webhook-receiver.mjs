#!/usr/bin/env node
// A webhook receiver for trying Ferry's custom webhooks: it answers 200 to every
// request, appends each body as one JSON line to LOGFILE, and prints a short line
// per event. A GET answers "ok" (to check that it runs).
//
//   node docs/webhook-receiver.mjs 127.0.0.1:7600 events.log
import fs from 'node:fs';
import http from 'node:http';

const [listen = '127.0.0.1:7600', logFile = 'events.log'] = process.argv.slice(2);
const colon = listen.lastIndexOf(':');
const host = listen.slice(0, colon);
const port = Number(listen.slice(colon + 1));

const server = http.createServer((req, res) => {
  const chunks = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', () => {
    if (req.method === 'GET') return void res.end('ok\n');
    const text = Buffer.concat(chunks).toString('utf8');
    try {
      const event = JSON.parse(text);
      fs.appendFileSync(logFile, `${JSON.stringify(event)}\n`);
      console.log(`${event.event_time} ${event.event_type} ${event.object?.id} "${event.object?.name}" (${event.object?.total_files} files, ${event.object?.size} bytes)`);
      res.end('ok\n');
    } catch {
      res.statusCode = 400;
      res.end('not JSON\n');
    }
  });
});
server.listen(port, host, () => console.log(`logging webhook events sent to http://${listen}/ into ${logFile}`));
for (const sig of ['SIGINT', 'SIGTERM']) process.on(sig, () => process.exit(0));
