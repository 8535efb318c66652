'use strict';
// `mc:KEY`: a memcached get through memjs (binary protocol, non-blocking). memjs keeps one
// connection per client and pipelines every get sent to it; so `mc_pool` = N is N clients,
// each get going to the one with the fewest gets outstanding. N = 1 is the E4 set-up (one
// connection for all), and memjs still has the E4 flaw: it copies its whole receive buffer
// on every chunk (Server.appendToBuffer), so a 1 MB value costs ~16 growing copies.

const memjs = require('memjs');
const { WorkError, causes } = require('../answers');

/** Longest one get may take (a hung server must not hang a target), as the Rust targets. */
const IO_TIMEOUT_S = 30;
const CONNECT_TIMEOUT_S = 5;

/** memjs logs with console.log: stdout is the launcher protocol's, so its lines go to stderr. */
const logger = { log: (...a) => process.stderr.write(`memjs: ${a.join(' ')}\n`) };

class Mc {
  constructor({ host, port, addr }, poolSize) {
    this.addr = addr;
    this.clients = Array.from({ length: poolSize }, () => ({
      // retries: 1 is one try: a retried get would be counted twice by memcached.
      client: memjs.Client.create(`${host}:${port}`, {
        timeout: IO_TIMEOUT_S,
        conntimeout: CONNECT_TIMEOUT_S,
        retries: 1,
        logger,
      }),
      outstanding: 0,
    }));
    this.next = 0;
  }

  /** The client with the fewest gets outstanding, rotating among equals. */
  pick() {
    let best = null;
    for (let i = 0; i < this.clients.length; i++) {
      const c = this.clients[(this.next + i) % this.clients.length];
      if (!best || c.outstanding < best.outstanding) best = c;
    }
    this.next = (this.next + 1) % this.clients.length;
    return best;
  }

  /** The value of `key` (a Buffer), or a WorkError: 502 for a miss, 503 for a broken server. */
  get(key) {
    const slot = this.pick();
    slot.outstanding++;
    return new Promise((resolve, reject) => {
      slot.client.get(key, (err, value) => {
        slot.outstanding--;
        if (err) {
          const text = typeof err === 'string' ? err : causes(err);
          if (/^MemJS GET:/.test(text)) reject(new WorkError(502, `backend 'mc': ${text}`));
          else reject(new WorkError(503, `backend 'mc' unavailable: ${this.addr}: ${text}`));
        } else if (value === null) {
          reject(
            new WorkError(502, `backend 'mc': key '${key}' not found (store it with \`iolab backend mc-fill --key ${key}\`)`),
          );
        } else {
          resolve(value);
        }
      });
    });
  }

  close() {
    this.clients.forEach((c) => c.client.close());
  }
}

module.exports = { Mc };
