'use strict';
// `pg:MS`: `SELECT pg_sleep($1)` through node-postgres' Pool of `pg_pool` connections,
// waiting up to `--pg-wait` for one (HikariCP's 30 s, as the other targets): the pool,
// not the model, caps concurrent queries. Errors map as the Rust targets' do: pool timeout
// and unreachable server 503, an error PostgreSQL answered 502.
//
// node-postgres has one `connectionTimeoutMillis` for both waiting in its queue and
// connecting, so a short --pg-wait would also cut connects short: the wait is a Lease of
// `pg_pool` in front (the Pool then never queues), and connecting gets its own 5 s.

const { Pool } = require('pg');
const { WorkError, causes } = require('../answers');
const { Lease } = require('./lease');

const CONNECT_TIMEOUT_MS = 5000;

const SQL = 'SELECT pg_sleep($1)';

/** SQLSTATE classes 08 (connection), 53 (resources, e.g. too many connections), 57P (shutdown). */
const unavailableState = (code) => /^(08|53|57P)/.test(code);

class Pg {
  constructor(url, poolSize, waitMs) {
    this.waitMs = waitMs;
    this.lease = new Lease(poolSize);
    this.pool = new Pool({
      connectionString: url,
      max: poolSize,
      connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
      application_name: 'iolab',
    });
    // An idle connection PostgreSQL drops is an event, not a crash; the pool replaces it.
    this.pool.on('error', (e) => process.stderr.write(`pg: idle connection lost: ${causes(e)}\n`));
  }

  /** One pg_sleep of `micros`; resolves null (it fetches nothing). */
  async sleep(micros) {
    try {
      await this.lease.acquire(this.waitMs);
    } catch {
      throw new WorkError(503, `backend 'pg' pool timeout after ${this.waitMs} ms`);
    }
    try {
      await this.pool.query(SQL, [micros / 1e6]);
      return null;
    } catch (e) {
      throw this.error(e);
    } finally {
      this.lease.release();
    }
  }

  error(e) {
    const sqlState = typeof e.code === 'string' && /^[0-9A-Z]{5}$/.test(e.code) ? e.code : null;
    if (sqlState && !unavailableState(sqlState)) return new WorkError(502, `backend 'pg': ${causes(e)}`);
    return new WorkError(503, `backend 'pg' unavailable: ${causes(e)}`);
  }

  close() {
    return this.pool.end();
  }
}

module.exports = { Pg };
