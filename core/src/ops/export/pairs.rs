//! Which tool calls of an active path go to an agent as calls, and which
//! results as their answers. Both agents send the model a call only with its
//! answer after it (the model refuses an unanswered call) and an answer only
//! after its call; anything else is flattened to text by the exporter.

use std::collections::{HashMap, HashSet};

use serde_json::{Map, Value};

use crate::format::tool_calls::{tool_calls, tool_results};

pub(super) struct Pairs {
    /// The last message answering each call id.
    answered: HashMap<String, usize>,
    open: HashSet<String>,
    done: HashSet<String>,
}

impl Pairs {
    pub(super) fn new(messages: &[Value]) -> Pairs {
        let mut answered = HashMap::new();
        for (i, m) in messages.iter().enumerate() {
            for r in m.as_object().map(tool_results).unwrap_or_default() {
                if let Some(c) = r.call_id {
                    answered.insert(c.to_owned(), i);
                }
            }
        }
        Pairs {
            answered,
            open: HashSet::new(),
            done: HashSet::new(),
        }
    }

    /// Whether call `id` of message `i` goes as a call: its result follows,
    /// and the id was not used before.
    pub(super) fn call(&mut self, id: &str, i: usize) -> bool {
        let ok = self.answered.get(id).is_some_and(|&j| j > i)
            && !self.open.contains(id)
            && !self.done.contains(id);
        if ok {
            self.open.insert(id.to_owned());
        }
        ok
    }

    /// Whether a result for call `id` goes as its answer (the call went).
    pub(super) fn answer(&mut self, id: &str) -> bool {
        let ok = self.open.remove(id);
        if ok {
            self.done.insert(id.to_owned());
        }
        ok
    }

    /// Message `i` is written as it is: its calls and results count as sent.
    pub(super) fn skip(&mut self, i: usize, m: &Map<String, Value>) {
        for c in tool_calls(m) {
            if let Some(id) = c.id {
                self.call(id, i);
            }
        }
        for r in tool_results(m) {
            if let Some(id) = r.call_id {
                self.answer(id);
            }
        }
    }
}
