import type { TrackedReader } from "../redis/tracked-reader.js";

/** A read of a token key on a tracking connection, from its start until the tick after its reply. */
export interface InFlightRead {
  readonly key: string;
  readonly pair: TrackedReader;
  /** The pair's epoch when the read started. */
  readonly epoch: number;
  /** A change of the key came while the read was in flight. */
  readonly poisoned: boolean;
  /** Past the tick its reply came in: later invalidations no longer see it. */
  readonly settled: boolean;
}

/**
 * The reads of the token cache in flight, by key. An invalidation and the
 * reply of a read of the same key come on two sockets, so the invalidation
 * may overtake the reply: it poisons the read, whose record is then not kept.
 */
export interface InFlightReads {
  start(key: string, pair: TrackedReader): InFlightRead;
  /** The read is over: no later invalidation concerns it. */
  settle(read: InFlightRead): void;
  poison(key: string): void;
  poisonPrefix(prefix: string): void;
  poisonAll(): void;
}

interface Ticket {
  key: string;
  pair: TrackedReader;
  epoch: number;
  poisoned: boolean;
  settled: boolean;
}

export function createInFlightReads(): InFlightReads {
  const byKey = new Map<string, Ticket[]>();
  const poisonEach = (tickets: Ticket[] | undefined) => {
    for (const ticket of tickets ?? []) {
      ticket.poisoned = true;
    }
  };
  return {
    start(key, pair) {
      const ticket: Ticket = { key, pair, epoch: pair.epoch, poisoned: false, settled: false };
      const tickets = byKey.get(key);
      if (tickets === undefined) {
        byKey.set(key, [ticket]);
      } else {
        tickets.push(ticket);
      }
      return ticket;
    },
    settle(read) {
      const tickets = byKey.get(read.key) ?? [];
      const ticket = tickets.find((t) => t === read);
      if (ticket === undefined) {
        return;
      }
      ticket.settled = true;
      tickets.splice(tickets.indexOf(ticket), 1);
      if (tickets.length === 0) {
        byKey.delete(read.key);
      }
    },
    poison(key) {
      poisonEach(byKey.get(key));
    },
    poisonPrefix(prefix) {
      for (const [key, tickets] of byKey) {
        if (key.startsWith(prefix)) {
          poisonEach(tickets);
        }
      }
    },
    poisonAll() {
      for (const tickets of byKey.values()) {
        poisonEach(tickets);
      }
    },
  };
}
