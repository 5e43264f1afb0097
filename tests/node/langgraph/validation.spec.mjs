// LangGraph's own conformance suite for JS checkpointers
// (@langchain/langgraph-checkpoint-validation), in its library form: its
// `validate-checkpointer` CLI is broken in 1.1.1. Run by tests/node/run.sh
// with `vitest run --globals`, which then checks that all 718 tests ran and
// passed (none skipped: the suite skips tests only for the savers it names).
import { validate } from '@langchain/langgraph-checkpoint-validation';

import { checkpointerName, createCheckpointer, destroyCheckpointer } from './saver.mjs';

validate({ checkpointerName, createCheckpointer, destroyCheckpointer });
