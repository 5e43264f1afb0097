// Types of the ES module entry point (index.mjs). It re-exports the CommonJS
// module's objects, so this re-exports index.d.ts's types: one `Store` class
// whether a program imports or requires the package. The default export is
// the CommonJS module object, as index.mjs exports it.
export * from './index.js';
export { default } from './index.js';
