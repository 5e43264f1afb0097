// ESM entry point of `sessionkit/openai-agents` (the same class as CommonJS).
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);

export const { SessionkitSession } = require('./openai-agents.js');
