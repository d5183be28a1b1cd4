"""One stream of text (the answer, or the reasoning) built from conol's cumulative snapshots."""

from __future__ import annotations

ENTRY_SEPARATOR = "\n\n"


# --- one stream of text (the answer, or the reasoning) ------------------------------------------


class SnapshotText:
    """Text built from cumulative snapshots of several entries, streamed as suffixes.

    Each preview entry (keyed by stage and position) holds its latest snapshot; the channel's text
    is the entries joined. What has been streamed is remembered, so only a true extension yields
    a delta: a rewritten snapshot yields nothing until the text extends what was streamed again.
    """

    __slots__ = ("_committed", "_keys", "_texts", "emitted", "rewritten")

    def __init__(self) -> None:
        self._texts: list[str] = []
        self._keys: dict[tuple[str, str, int], int] = {}
        self._committed: set[int] = set()
        self.emitted = ""
        self.rewritten = False

    def set_snapshot(self, key: tuple[str, str, int], text: str) -> None:
        index = self._keys.get(key)
        if index is None:
            self._keys[key] = len(self._texts)
            self._texts.append(text)
        elif index not in self._committed:  # a committed message is authoritative over previews
            self._texts[index] = text

    def commit(self, text: str) -> None:
        """A completed message from the logs: it replaces the preview it completes."""
        if any(self._texts[i] == text for i in self._committed):
            return  # the same committed message again (a replay or another stage's copy)
        open_entries = [i for i in range(len(self._texts)) if i not in self._committed]
        target = next((i for i in open_entries if self._texts[i] and text.startswith(self._texts[i])), None)
        if target is None and open_entries:
            target = open_entries[-1]  # the preview was rewritten; the commit is its final form
        if target is None:
            target = len(self._texts)
            self._texts.append(text)
        self._texts[target] = text
        self._committed.add(target)

    @property
    def text(self) -> str:
        texts = [t for t in self._texts if t]
        if len(texts) <= 1:
            return texts[0] if texts else ""  # the common case: no copy
        return _join_entries(texts)

    @property
    def has_commit(self) -> bool:
        return bool(self._committed)

    def take_delta(self, current: str | None = None) -> str:
        """What extends the text streamed so far: of the whole text, or of ``current`` (the part
        of it that may be shown now)."""
        if current is None:
            current = self.text
        if len(current) == len(self.emitted):
            if current != self.emitted:
                self.rewritten = True
            return ""
        if current.startswith(self.emitted):
            delta = current[len(self.emitted) :]
            self.emitted = current
            return delta
        self.rewritten = True
        return ""


def _join_entries(texts: list[str]) -> str:
    # Entries that carry their own whitespace are concatenated as they are; a paragraph break is
    # added only where two entries would otherwise run together ("…up.Step 2").
    joined = texts[0]
    for text in texts[1:]:
        glue = "" if joined[-1].isspace() or text[0].isspace() else ENTRY_SEPARATOR
        joined = joined + glue + text
    return joined
