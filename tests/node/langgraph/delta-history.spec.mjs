// The same package's getDeltaChannelHistory suite, which `validate()` leaves
// out (it is opt-in: the package's own savers call it as here). The saver
// answers it from the core's delta history, not the base class's walk.
import { deltaChannelHistoryTests } from '@langchain/langgraph-checkpoint-validation';

import { checkpointerName, createCheckpointer, destroyCheckpointer } from './saver.mjs';

deltaChannelHistoryTests({ checkpointerName, createCheckpointer, destroyCheckpointer });
