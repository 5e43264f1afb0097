// ESM entry point: the same objects as the CommonJS one (one addon instance).
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const sk = require('./index.js');

export const { Store, Remote, Follower, BackgroundPush, Session, SessionView, Subagent, ErrorCode, errorKinds, version, projectCode, conversationSessionId, poolRoundTrip, importTranscripts, listAllSessions, nextChannelVersion } = sk;
export default sk;
