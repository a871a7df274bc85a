// The graphile-worker worker of tickstep-bench's peers section: enqueues its share of the jobs
// with `addJobs` (each with its `runAt`), prints `ready`, then runs them until killed.
// Settings and why: docs/peers.md.
'use strict';
const { run, makeWorkerUtils } = require('graphile-worker');
const { parseArgs, dueUs, nowUs, append } = require('./job');

async function main() {
  const args = parseArgs(process.argv);
  const utils = await makeWorkerUtils({ connectionString: args.url });
  await utils.migrate();
  const started = Date.now();
  for (let i = 0; i < args.ids.length; i += 5000) {
    const specs = args.ids.slice(i, i + 5000).map((id) => ({ identifier: 'job', payload: { id }, runAt: new Date(dueUs(args, id) / 1000) }));
    await utils.addJobs(specs);
  }
  await utils.release();
  console.log(`ready ${Date.now() - started}`);
  await run({
    connectionString: args.url,
    concurrency: 10,
    maxPoolSize: 12,
    pollInterval: 100,
    noHandleSignals: false,
    preset: { worker: { localQueue: { size: 11 }, completeJobBatchDelay: 0 } },
    taskList: {
      job: async (payload, helpers) => {
        const startedUs = nowUs();
        await append((sql, values) => helpers.query(sql, values), args, payload.id, startedUs);
      },
    },
  });
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
