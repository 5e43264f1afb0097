// ESM entry point: the same objects as the CommonJS one (one addon instance,
// one set of error classes, so `instanceof` holds across the two).
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const sk = require('./index.js');

export const {
  Store,
  Remote,
  Follower,
  BackgroundPush,
  Session,
  SessionView,
  Subagent,
  ErrorCode,
  errorKinds,
  SessionkitError,
  NotFoundError,
  BusyError,
  ConflictError,
  InvalidInputError,
  CorruptError,
  IoError,
  UnsupportedError,
  InternalError,
  enums,
  defaults,
  version,
  projectCode,
  conversationSessionId,
  poolRoundTrip,
  importTranscripts,
  listAllSessions,
  nextChannelVersion,
} = sk;
export default sk;
