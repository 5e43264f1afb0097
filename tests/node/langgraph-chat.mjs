// The chat graph of langgraph-graph.test.mjs, imported by the test and by the
// processes it starts: a growing list of LangChain messages (a concat
// reducer), an assistant node, and a review node that interrupts for a
// human's answer before the turn ends.
import { AIMessage, HumanMessage } from '@langchain/core/messages';
import { Annotation, END, START, StateGraph, interrupt } from '@langchain/langgraph';
import { SessionkitSaver } from 'sessionkit/langgraph';

export const ChatState = Annotation.Root({
  messages: Annotation({ reducer: (left, right) => left.concat(right), default: () => [] }),
});

/** The graph compiled with a SessionkitSaver on `project` and `home`. */
export function chatGraph({ project, home }) {
  const saver = new SessionkitSaver({ project, home });
  const graph = new StateGraph(ChatState)
    .addNode('assistant', ({ messages }) => ({
      messages: [new AIMessage(`echo: ${messages.at(-1).content}`)],
    }))
    .addNode('review', ({ messages }) => {
      const answer = interrupt({ question: 'send it?', draft: messages.at(-1).content });
      return { messages: [new HumanMessage(`review: ${answer}`)] };
    })
    .addEdge(START, 'assistant')
    .addEdge('assistant', 'review')
    .addEdge('review', END)
    .compile({ checkpointer: saver });
  return { graph, saver };
}

/** Each message as `role: text`, to compare histories. */
export function transcript(messages) {
  return messages.map((m) => `${m.getType()}: ${m.content}`);
}
