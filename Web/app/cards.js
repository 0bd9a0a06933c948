// Message cards by type code (docs/protocol.md section 17): the app registers a decoder for each
// type it knows; a message of any other type, or one whose payload its decoder cannot read (it
// returns null or throws), is shown by its fallback text. An old page never fails on a new card.

/** A registry: `register(type, decode)` and `content(message)`. */
export function createCards() {
  const decoders = new Map();
  return {
    /** Reads messages of `type` with `decode(payload)`: a card, or null when it cannot. */
    register(type, decode) {
      decoders.set(type, decode);
    },
    /** The type codes this page reads. */
    types() {
      return [...decoders.keys()];
    },
    /**
     * What to show for `message`: `{ kind: 'text', text }`, `{ kind: 'card', card }`,
     * `{ kind: 'fallback', text }` or `{ kind: 'revoked' }`.
     */
    content(message) {
      if (message.revokedBy) return { kind: 'revoked' };
      if ((message.type ?? 'text') === 'text') return { kind: 'text', text: message.text ?? '' };
      const decode = decoders.get(message.type);
      if (decode) {
        try {
          const card = decode(message.payload);
          if (card !== null && card !== undefined) return { kind: 'card', card };
        } catch {
          // A payload the decoder cannot read: shown by its fallback, as an unknown card is.
        }
      }
      return { kind: 'fallback', text: fallbackText(message) };
    },
  };
}

/** A card's text for any client: its fallback, else its text, else its type. */
export function fallbackText(message) {
  if (typeof message.fallback === 'string' && message.fallback !== '') return message.fallback;
  if (typeof message.text === 'string' && message.text !== '') return message.text;
  return String(message.type ?? '');
}
