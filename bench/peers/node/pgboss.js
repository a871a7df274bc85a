// The pg-boss worker of tickstep-bench's peers section: enqueues its share of the jobs with
// `insert` (each with its `startAfter`), prints `ready`, then works them until killed.
// Settings and why: docs/peers.md.
'use strict';
const PgBoss = require('pg-boss');
const { Pool } = require('pg');
const { parseArgs, dueUs, nowUs, append } = require('./job');

const QUEUE = 'job';

async function main() {
  const args = parseArgs(process.argv);
  const boss = new PgBoss({ connectionString: args.url, max: 10, maintenanceIntervalSeconds: 5 });
  boss.on('error', (e) => console.error(e));
  await boss.start();
  await boss.createQueue(QUEUE, { name: QUEUE, expireInSeconds: 10 });
  const started = Date.now();
  for (let i = 0; i < args.ids.length; i += 5000) {
    const jobs = args.ids.slice(i, i + 5000).map((id) => ({ name: QUEUE, data: { id }, startAfter: new Date(dueUs(args, id) / 1000) }));
    await boss.insert(jobs);
  }
  console.log(`ready ${Date.now() - started}`);
  const pool = new Pool({ connectionString: args.url, max: 10 });
  const query = (sql, values) => pool.query(sql, values);
  // pg-boss 10 runs one fetch loop per work() call and fetches a batch per polling interval:
  // four loops of batches of 1,000 every 0.5 s take up to 8,000 jobs a second, enough for the
  // full run's 10,000 due a second only with the batches' own pace; each job is appended in a
  // transaction of its own.
  for (let i = 0; i < 4; i++) {
    await boss.work(QUEUE, { pollingIntervalSeconds: 0.5, batchSize: 1000 }, async (jobs) => {
      const startedUs = nowUs();
      await Promise.all(jobs.map((job) => append(query, args, job.data.id, startedUs)));
    });
  }
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
