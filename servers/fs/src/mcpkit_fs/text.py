"""Text files as bytes: which encoding, byte order mark and line ending they use.

Decoding remembers all three so that an edit writes the file back the way it was: only
the edited text changes. Files that are not UTF-8 (with or without a BOM) or UTF-16 (with
a BOM) are read as Latin-1, which maps every byte to a character and back unchanged.
"""

import codecs
import re
import unicodedata
from collections.abc import Iterable, Sequence
from itertools import islice
from typing import Literal, NamedTuple

Eol = Literal["\n", "\r\n", "\r"]

SNIFF_BYTES = 8192  # what is looked at to tell text from binary


class BinaryFile(ValueError):
    """The bytes are not text (a NUL byte in a file without a UTF-16 BOM)."""


class Codec(NamedTuple):
    """How a file's text is stored: encoding, byte order mark, dominant line ending."""

    encoding: str
    bom: bytes = b""
    eol: Eol = "\n"

    @property
    def name(self) -> str:
        """The encoding as reported to clients, e.g. `utf-8` or `utf-8 (BOM)`."""
        return f"{self.encoding} (BOM)" if self.bom else self.encoding

    def encode(self, text: str) -> bytes:
        """Return `text` as this file's bytes, BOM included.

        Raises:
            UnicodeEncodeError: the text has characters the encoding cannot store.
        """
        return self.bom + text.encode(self.encoding)


# Made once, not per file: a search sniffs thousands of files.
_BOM_CODECS = (
    Codec("utf-8", codecs.BOM_UTF8),
    Codec("utf-16-le", codecs.BOM_UTF16_LE),
    Codec("utf-16-be", codecs.BOM_UTF16_BE),
)
_BOMS = tuple(codec.bom for codec in _BOM_CODECS)
_UTF_8 = Codec("utf-8")
_LATIN_1 = Codec("latin-1")


def sniff(head: bytes) -> Codec:
    """Return the codec of a file from its first bytes (line ending not yet known).

    Raises:
        BinaryFile: the bytes look binary.
    """
    if head.startswith(_BOMS):  # one test for the three: most files have no BOM
        for codec in _BOM_CODECS:
            if head.startswith(codec.bom):
                return codec
    if b"\0" in head[:SNIFF_BYTES]:
        raise BinaryFile("binary content")
    try:
        head.decode("utf-8")
    except UnicodeDecodeError as exc:
        # A character cut at the end of the sample is still UTF-8.
        if exc.start < len(head) - 3 or exc.reason != "unexpected end of data":
            return _LATIN_1
    return _UTF_8


def decode(data: bytes) -> tuple[str, Codec]:
    """Return the text of a whole file and its codec, line ending included.

    Raises:
        BinaryFile: the bytes look binary.
    """
    text, codec = text_of(data)
    return text, codec._replace(eol=line_ending(text))


def text_of(data: bytes) -> tuple[str, Codec]:
    """Return the text of a whole file and its codec, but for its line ending (LF).

    The encoding is the byte order mark's, else UTF-8 if the bytes are, else Latin-1:
    every read and search of a file gets the same text.

    Raises:
        BinaryFile: the bytes look binary.
    """
    codec = sniff(data[:SNIFF_BYTES])
    try:
        return data[len(codec.bom) :].decode(codec.encoding), codec
    except UnicodeDecodeError:
        return data.decode("latin-1"), Codec("latin-1")


def line_ending(text: str) -> Eol:
    """Return the line ending most lines of `text` use (LF when there is none)."""
    crlf = text.count("\r\n")
    lf = text.count("\n") - crlf
    cr = text.count("\r") - crlf
    if crlf > lf and crlf >= cr:
        return "\r\n"
    if cr > lf:
        return "\r"
    return "\n"


_LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+\Z")
_LINE_END = re.compile(r"\r\n|\r|\n")
# What str.splitlines() breaks lines at, newline aside: in a name, each would start a line.
OTHER_BREAKS = "\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"
_BREAK = re.compile(f"[\n{OTHER_BREAKS}]")


def split_lines(text: str) -> list[str]:
    """Split `text` into lines, keeping their endings; only CR, LF and CRLF end a line.

    Unlike `str.splitlines`, form feeds and other separators stay inside their line, so
    line numbers agree with editors and with `grep -n`.
    """
    return _LINE.findall(text)


def one_line(text: str) -> str:
    r"""Return `text` with its line breaks escaped as Python writes them: `\n`, `\u2028`.

    A name shown within a line stays in it: unescaped, `evil\n[FILE] injected` would read
    as two entries of a listing. Few names hold a break, so the check in C comes first.
    """
    return text if text.isprintable() else _BREAK.sub(_escape, text)


def _escape(line_break: re.Match[str]) -> str:
    return repr(line_break.group())[1:-1]


def line_count(text: str) -> int:
    """Return how many lines `split_lines` finds in `text`, without making them."""
    ends = text.count("\n") + text.count("\r") - text.count("\r\n")
    return ends + (1 if text and text[-1] not in "\r\n" else 0)


def some_lines(text: str, start: int, stop: int) -> list[str]:
    """Return `split_lines(text)[start:stop]`, making only those lines."""
    return [line.group() for line in islice(_LINE.finditer(text), start, stop)]


def to_lf(text: str) -> str:
    """Return `text` with every line ending (CRLF, CR) made LF."""
    return _LINE_END.sub("\n", text) if "\r" in text else text


def with_eol(text: str, eol: Eol) -> str:
    """Return `text` with every line ending made `eol`."""
    text = to_lf(text)
    return text if eol == "\n" else text.replace("\n", eol)


def with_endings(edited: str, original: str, eol: Eol) -> str:
    """Return `edited`, an LF version of `original` after edits, with its own line endings.

    Lines the edits left as they were keep the ending they had in `original`; changed and
    new lines get `eol`, the one most lines use. So an edit changes no other line, even in
    a file whose lines end in different ways.
    """
    old_lines = split_lines(original)
    old_ends = [line[len(line.rstrip("\r\n")) :] for line in old_lines]
    if all(end in (eol, "") for end in old_ends):  # one kind of ending: the usual case
        return with_eol(edited, eol)
    old_bare = [line.rstrip("\r\n") for line in old_lines]
    new_bare = bare_lines(edited)
    ends = [eol] * len(new_bare)
    if ends and not edited.endswith("\n"):
        ends[-1] = ""
    # Lines before the first change and after the last are matched at once; only those
    # between go to difflib, with its junk heuristic, which keeps it linear even for a
    # file of many equal lines (a blank line may then take `eol`).
    import difflib  # here, not at start-up: only files with mixed endings need it

    head, tail = common_ends(old_bare, new_bare)
    old_end, new_end = len(old_bare) - tail, len(new_bare) - tail
    middle = difflib.SequenceMatcher(None, old_bare[head:old_end], new_bare[head:new_end])
    blocks = [(0, 0, head), (old_end, new_end, tail)]
    blocks += [(head + a, head + b, size) for a, b, size in middle.get_matching_blocks()]
    for old_start, new_start, size in blocks:
        for k in range(size):
            if ends[new_start + k]:
                ends[new_start + k] = old_ends[old_start + k] or eol
    for i in range(1, len(ends)):
        if ends[i - 1] == "\r" and not new_bare[i] and ends[i] == "\n":
            ends[i] = "\r\n"  # CR then an empty LF line would read as one CRLF line
    return "".join(line + end for line, end in zip(new_bare, ends, strict=True))


def common_ends(a: Sequence[str], b: Sequence[str]) -> tuple[int, int]:
    """Return how many lines `a` and `b` have alike at their start, then at their end.

    A line is counted once: the lines alike at the end are after those at the start.
    """
    head = _alike(a, b)
    return head, min(_alike(reversed(a), reversed(b)), len(a) - head, len(b) - head)


def _alike(a: Iterable[str], b: Iterable[str]) -> int:
    """Return how many lines `a` and `b` have alike, from the first on."""
    size = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        size += 1
    return size


def bare_lines(text: str) -> list[str]:
    """Return the lines of `text` (as `split_lines` finds them) without their endings."""
    # str.split is several times faster than a regular expression, which CRs need.
    lines = _LINE_END.split(text) if "\r" in text else text.split("\n")
    if not lines[-1]:  # text ends with a line ending, or is empty: no line follows
        lines.pop()
    return lines


def composed(text: str) -> str:
    """Return `text` in Unicode's composed form (NFC): é as one character, not e and a mark.

    Names and text that differ only in form look the same: a name written on macOS (NFD)
    and the one a model types (NFC). ASCII, most text, is returned as it is.
    """
    return text if text.isascii() else unicodedata.normalize("NFC", text)
