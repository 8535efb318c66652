'use strict';
// `http:MS`: `GET {base}/delay?ms=MS` on iolab's delay service through undici, with no cap
// on connections (as the Rust targets: the delay service is not the resource under study).

const { Agent, request } = require('undici');
const { millisText } = require('../steps');
const { WorkError, causes } = require('../answers');

/** Longest an answer may take: the longest step (1 h) and a minute more. */
const TIMEOUT_MS = 3600000 + 60000;

class Http {
  constructor(base) {
    this.base = base;
    this.agent = new Agent({
      connections: null,
      connectTimeout: 5000,
      headersTimeout: TIMEOUT_MS,
      bodyTimeout: TIMEOUT_MS,
    });
  }

  /** One delay call of `micros`; resolves null. */
  async delay(micros) {
    let res;
    try {
      res = await request(`${this.base}/delay?ms=${millisText(micros)}`, { dispatcher: this.agent });
      await res.body.dump();
    } catch (e) {
      throw new WorkError(503, `backend 'http' unavailable: ${causes(e)}`);
    }
    if (res.statusCode !== 200) throw new WorkError(502, `backend 'http': delay service answered ${res.statusCode}`);
    return null;
  }

  close() {
    return this.agent.close();
  }
}

module.exports = { Http };
