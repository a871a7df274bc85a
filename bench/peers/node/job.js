// What both Node workers share with tickstep's worker (crates/tickstep-bench/src/peers/worker.rs):
// the command line the bench passes, the due time of job `id`, and the handler's append.
//
// argv: <database URL> <jobs> <t0 Unix µs> <span µs> <first id to enqueue> <step> <worker name>
// A worker enqueues ids first, first + step, … below jobs (none when first = jobs), so two
// workers each hold half of every stretch of due times.
'use strict';

function parseArgs(argv) {
  const [url, n, t0, span, first, step, name] = argv.slice(2);
  if (name === undefined) {
    throw new Error('usage: <url> <jobs> <t0_us> <span_us> <first> <step> <worker name>');
  }
  const args = { url, n: Number(n), t0: Number(t0), span: Number(span), name };
  args.ids = [];
  for (let id = Number(first); id < args.n; id += Number(step)) {
    args.ids.push(id);
  }
  return args;
}

// Job `id` is due at t0 + id × span / n (µs), the same integer formula in every worker.
function dueUs(args, id) {
  return args.t0 + Math.floor((id * args.span) / args.n);
}

function nowUs() {
  return Math.round((performance.timeOrigin + performance.now()) * 1000);
}

// The handler's work: append the job's id to peers_done in a transaction of its own (one
// autocommitted statement), with when the handler started.
async function append(query, args, id, startedUs) {
  await query('INSERT INTO peers_done (id, worker, started_us) VALUES ($1, $2, $3)', [id, args.name, startedUs]);
}

module.exports = { parseArgs, dueUs, nowUs, append };
