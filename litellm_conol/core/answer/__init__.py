"""The answer a client gets: the assembler (conol events to text, reasoning and tool calls), the
snapshot text it keeps per stage, the cutter that ends an answer at the caller's limits, and the
structured-output checks and repair turns."""
