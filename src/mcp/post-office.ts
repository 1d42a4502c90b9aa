import type { HostMessage } from "../core/host.js";
import type { Session } from "../core/session.js";
import { inboxSlot } from "../messages/inbox.js";

interface Box {
  /** The session's name: the client's name and the connection's number ("claude-code-2"), known after initialize. */
  name(): string;
  session: Session;
}

/** Turns a client's name into a recipient name one can type: lower case, dashes. */
export function recipientName(clientName: string | undefined, ordinal: number): string {
  const base = (clientName ?? "client")
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, "-")
    .replace(/^-+|-+$/g, "");
  return `${base || "client"}-${ordinal}`;
}

/**
 * The sessions of one MCP server that can message each other (SendMessage). A message goes to the
 * recipient's inbox and reaches its model with its next tool result.
 */
export class PostOffice {
  private readonly boxes = new Set<Box>();
  private ordinal = 0;

  /** Registers a session; returns its ordinal and the function that removes it when the connection ends. */
  open(name: (ordinal: number) => string, session: Session): { ordinal: number; close: () => void } {
    const ordinal = ++this.ordinal;
    const box: Box = { name: () => name(ordinal), session };
    this.boxes.add(box);
    return { ordinal, close: () => this.boxes.delete(box) };
  }

  recipients(): string[] {
    return [...this.boxes].map((b) => b.name());
  }

  deliver(message: HostMessage): boolean {
    const box = [...this.boxes].find((b) => b.name() === message.to);
    if (!box || box.session.isDisposed) return false;
    box.session.get(inboxSlot).deliver(message);
    return true;
  }
}
