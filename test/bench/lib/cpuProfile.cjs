// Preloaded (NODE_OPTIONS=--require) into the processes a benchmark starts when
// it is asked for CPU profiles: node refuses --cpu-prof in NODE_OPTIONS, so the
// profiler is started over the inspector and its profile written at exit, as
// --cpu-prof would, into FERRY_CPU_PROF_DIR (one .cpuprofile per process and thread).
'use strict';
const inspector = require('node:inspector');
const { writeFileSync } = require('node:fs');
const { join } = require('node:path');
const { threadId } = require('node:worker_threads');

const dir = process.env.FERRY_CPU_PROF_DIR;
if (dir) {
  const session = new inspector.Session();
  session.connect();
  session.post('Profiler.enable');
  session.post('Profiler.setSamplingInterval', { interval: 1000 });
  session.post('Profiler.start');
  // A session on the same thread answers synchronously, so this runs to its end inside 'exit'.
  process.once('exit', () => {
    session.post('Profiler.stop', (err, res) => {
      if (!err) writeFileSync(join(dir, `${process.argv.slice(2, 4).join('-').replace(/[^\w.-]/g, '_')}-${process.pid}-${threadId}.cpuprofile`), JSON.stringify(res.profile));
    });
  });
}
