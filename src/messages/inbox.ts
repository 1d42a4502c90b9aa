import type { HostMessage } from "../core/host.js";
import type { SessionSlot } from "../core/session.js";

/**
 * Messages sent to a conversation (SendMessage) that it has not seen yet. The host delivers into it; the
 * recipient takes them at its next turn (the agent loop) or with its next tool result (an MCP session).
 */
export class Inbox {
  private pending: HostMessage[] = [];
  private readonly listeners = new Set<() => void>();

  deliver(message: HostMessage): void {
    this.pending.push(message);
    for (const listener of this.listeners) listener();
  }

  /** Calls `listener` on each delivery (an idle interactive host runs the messages as a turn). */
  onDelivery(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  get size(): number {
    return this.pending.length;
  }

  /** Every message not yet taken, oldest first; each is returned once. */
  take(): HostMessage[] {
    return this.pending.splice(0);
  }
}

/** Messages as the recipient's model reads them. */
export function renderMessages(messages: readonly HostMessage[]): string {
  return messages
    .map((m) => {
      const summary = m.summary ? ` summary=${JSON.stringify(m.summary)}` : "";
      return `<message from=${JSON.stringify(m.from)}${summary}>\n${m.message}\n</message>`;
    })
    .join("\n");
}

export const inboxSlot: SessionSlot<Inbox> = {
  key: "inbox",
  create: () => new Inbox(),
  // Unread messages survive a restart of a named session, like its work items.
  save: (inbox) => {
    const messages = inbox.take();
    for (const m of messages) inbox.deliver(m);
    return messages;
  },
  load: (data) => {
    const inbox = new Inbox();
    if (Array.isArray(data)) {
      for (const m of data as HostMessage[]) if (typeof m?.message === "string") inbox.deliver(m);
    }
    return inbox;
  },
};
