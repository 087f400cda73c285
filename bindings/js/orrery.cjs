// The CommonJS entry of @orrery/orrery: require('@orrery/orrery') in code
// that is not an ES module. The package is an ES module (orrery.js); this
// file loads it with a dynamic import, so its functions are asynchronous:
//
//   const { load } = require('@orrery/orrery');
//   const orrery = await load();            // an Orrery, as the ES module's load()
//   const res = orrery.link({ capacity_gbps: 50, jobs: [...] });
//
// esm() resolves to the whole ES module (OrreryError, TrapError, ...);
// isOrreryError(e) tells an error response without it.
'use strict';

let module_;

/** The ES module, loaded once. */
function esm() {
  module_ ??= import('./orrery.js');
  return module_;
}

/** load(source?) of the ES module: a promise of an Orrery. */
async function load(...args) {
  return (await esm()).load(...args);
}

/** Whether e is an error response of the engine (an OrreryError). */
function isOrreryError(e) {
  return e instanceof Error && e.name === 'OrreryError';
}

module.exports = { load, esm, isOrreryError, ABI_VERSION: 1, MAX_REQUEST_BYTES: 64 << 20 };
