'use strict';
// `sessionkit/langgraph` for require(): SessionkitSaver over the CommonJS
// build of `@langchain/langgraph-checkpoint` (see langgraph-saver.js).

const { defineSessionkitSaver } = require('./langgraph-saver.js');

const SessionkitSaver = defineSessionkitSaver(require('@langchain/langgraph-checkpoint'));

module.exports = { SessionkitSaver };
