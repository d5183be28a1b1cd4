"""What conol sends and accepts (docs/protocol.md): the wire format and its readings, server-sent
events, the fields of an event, when a session's turn is over, agent failures, where a follow-up's
new turn begins, model pinning calls, and the account answers. Imports no other room of the core."""
