// The CommonJS entry of @orrery/orrery/agent (see agent.js):
//
//   const { TimeShiftAgent } = require('@orrery/orrery/agent');
//   const agent = await TimeShiftAgent.create({ shiftFile: 'rank.json', job: 'resnet-1' });
'use strict';

let module_;

/** The ES module, loaded once. */
function esm() {
  module_ ??= import('./agent.js');
  return module_;
}

module.exports = {
  esm,
  /** TimeShiftAgent.create(options) of the ES module. */
  TimeShiftAgent: { create: async (options) => (await esm()).TimeShiftAgent.create(options) },
  /** readPlan(path, job) of the ES module, as a promise. */
  readPlan: async (path, job) => (await esm()).readPlan(path, job),
};
