// Types of the ES module entry point of `sessionkit/openai-agents`
// (openai-agents.mjs), which re-exports the CommonJS module's class.
export * from './openai-agents.js';
