'use strict';
// Entry point of the launcher (./start): validate the flags, then supervise the workers.
// A bad flag is one line on stderr and exit code 2, before anything starts.

const { parseSettings, UsageError } = require('./settings');

let settings;
try {
  settings = parseSettings(process.argv.slice(2));
} catch (e) {
  if (!(e instanceof UsageError)) throw e;
  process.stderr.write(`error: ${e.message}\n`);
  process.exit(2);
}
if (settings.help) {
  process.stdout.write(settings.help);
  process.exit(0);
}
require('./supervisor').start(settings);
