'use strict';
// `pg:MS`: `SELECT pg_sleep($1)` through node-postgres' Pool of `pg_pool` connections,
// waiting up to `--pg-wait` for one (HikariCP's 30 s, as the other targets): the pool,
// not the model, caps concurrent queries. Errors map as the Rust targets' do: pool timeout
// and unreachable server 503, an error PostgreSQL answered 502.

const { Pool } = require('pg');
const { WorkError, causes } = require('../answers');

const SQL = 'SELECT pg_sleep($1)';

/** SQLSTATE classes 08 (connection), 53 (resources, e.g. too many connections), 57P (shutdown). */
const unavailableState = (code) => /^(08|53|57P)/.test(code);

class Pg {
  constructor(url, poolSize, waitMs) {
    this.waitMs = waitMs;
    this.pool = new Pool({
      connectionString: url,
      max: poolSize,
      connectionTimeoutMillis: waitMs,
      application_name: 'iolab',
    });
    // An idle connection PostgreSQL drops is an event, not a crash; the pool replaces it.
    this.pool.on('error', (e) => process.stderr.write(`pg: idle connection lost: ${causes(e)}\n`));
  }

  /** One pg_sleep of `micros`; resolves null (it fetches nothing). */
  async sleep(micros) {
    try {
      await this.pool.query(SQL, [micros / 1e6]);
      return null;
    } catch (e) {
      throw this.error(e);
    }
  }

  error(e) {
    if (e.message === 'timeout exceeded when trying to connect') {
      return new WorkError(503, `backend 'pg' pool timeout after ${this.waitMs} ms`);
    }
    const sqlState = typeof e.code === 'string' && /^[0-9A-Z]{5}$/.test(e.code) ? e.code : null;
    if (sqlState && !unavailableState(sqlState)) return new WorkError(502, `backend 'pg': ${causes(e)}`);
    return new WorkError(503, `backend 'pg' unavailable: ${causes(e)}`);
  }

  close() {
    return this.pool.end();
  }
}

module.exports = { Pg };
