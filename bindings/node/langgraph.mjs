// `sessionkit/langgraph` for import: SessionkitSaver over the ES module build
// of `@langchain/langgraph-checkpoint`, the one an importing program's
// LangGraph uses (see langgraph-saver.js).
import { createRequire } from 'node:module';

import * as checkpoint from '@langchain/langgraph-checkpoint';

const require = createRequire(import.meta.url);
const { defineSessionkitSaver } = require('./langgraph-saver.js');

export const SessionkitSaver = defineSessionkitSaver(checkpoint);
