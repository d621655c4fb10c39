// libuv runs Node's blocking calls (file system, DNS lookups) on a pool of threads
// that it sizes once, from UV_THREADPOOL_SIZE, when first used: 4 by default. The
// embedded store writes each large body past the page cache one 1 MiB write at a
// time, and the agent writes downloads in positional writes, all on that pool: on
// a disk whose writes each take long, 4 threads leave 8 parts in flight waiting on
// one another (docs/hosted-api-notes/uploads-downloads.md has the figures). A value
// the user set is kept.
//
// CommonJS, and loaded before anything else: Node's ES module loader reads the
// entry module on the pool, which starts it, so an ES module comes too late.
if (!process.env.UV_THREADPOOL_SIZE) process.env.UV_THREADPOOL_SIZE = '16';
