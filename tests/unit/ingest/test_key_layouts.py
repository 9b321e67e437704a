"""A private key is found however a file lays it out (issue 23): in comment lines, a C block
comment, Markdown quotes, numbered listings, one string literal per line (a comment after one),
encrypted with PEM headers; and a file that only names the format is not taken for one."""

from __future__ import annotations

import base64
import random
import textwrap
from dataclasses import dataclass

from hypothesis import example, given, settings
from hypothesis import strategies as st

from codecite_lsp.ingest.secrets import has_private_key

KINDS = ("RSA ", "EC ", "DSA ", "OPENSSH ", "ENCRYPTED ", "")
PREFIXES = ("", "# ", "#", "// ", " * ", "-- ", "; ", "> ", "% ", "' ")
NUMBERINGS = ("", "{n:03d}: ", "{n:>6}\t", "{n}. ", "{n} | ")
# How one line of the key is written in code: (literal, what follows it).
LITERALS = (
    ("{}", ""),
    ('"{}\\n"', ""),
    ('"{}\\n" +', ""),
    ("'{}',", ""),
    ('"{}\\n" ..', ""),
    ('b"{}\\n"', ""),
    ("`{}`", ""),
)
TRAILERS = ("", "  # test fixture", "  // not a real key", "  -- sample")
PROSE = ("the", "key", "below", "is", "parsed", "by", "load_pem", "with", "a", "header")


@dataclass(frozen=True)
class Layout:
    numbering: str
    indent: str
    prefix: str
    literal: tuple[str, str]
    trailer: str  # after the BEGIN line only

    def render(self, lines: list[str]) -> str:
        out = []
        for n, line in enumerate(lines, start=1):
            literal, after = self.literal
            written = literal.format(line) + after
            if n == 1:
                written += self.trailer
            out.append(self.numbering.format(n=n) + self.indent + self.prefix + written)
        return "\n".join(out) + "\n"


layouts = st.builds(
    Layout,
    numbering=st.sampled_from(NUMBERINGS),
    indent=st.sampled_from(("", "    ", "\t")),
    prefix=st.sampled_from(PREFIXES),
    literal=st.sampled_from(LITERALS),
    trailer=st.sampled_from(TRAILERS),
)


@st.composite
def pem_lines(draw: st.DrawFn) -> list[str]:
    kind = draw(st.sampled_from(KINDS))
    # Random bytes stand for DER (a key's bytes are random; Hypothesis's shrunk bytes are not):
    # what a key's base64 looks like is all the check may rely on.
    seed, size = draw(st.integers(0, 2**32)), draw(st.integers(48, 1200))
    der = random.Random(seed).randbytes(size)
    body = base64.b64encode(der).decode()
    wrapped = textwrap.wrap(body, draw(st.sampled_from((64, 70, 76))))
    headers: list[str] = []
    if draw(st.booleans()):
        iv = der[:16].hex().upper()
        headers = ["Proc-Type: 4,ENCRYPTED", f"DEK-Info: AES-128-CBC,{iv}", ""]
    return [
        f"-----BEGIN {kind}PRIVATE KEY-----",
        *headers,
        *wrapped,
        f"-----END {kind}PRIVATE KEY-----",
    ]


@settings(max_examples=400, deadline=None)
@given(layout=layouts, key=pem_lines(), before=st.sampled_from(("", "import ssl\n", "KEY = (\n")))
def test_a_key_is_found_in_any_layout(layout: Layout, key: list[str], before: str) -> None:
    text = before + layout.render(key) + "def load():\n    return KEY\n"
    assert has_private_key(text), text


@settings(max_examples=200, deadline=None)
@given(
    layout=layouts,
    kind=st.sampled_from(KINDS),
    prose=st.lists(
        st.lists(st.sampled_from(PROSE), min_size=1, max_size=8).map(" ".join),
        min_size=1,
        max_size=10,
    ),
)
def test_the_begin_line_followed_by_words_is_not_a_key(
    layout: Layout, kind: str, prose: list[str]
) -> None:
    text = layout.render([f"-----BEGIN {kind}PRIVATE KEY-----", *prose])
    assert not has_private_key(text), text


def test_a_hex_digest_after_the_begin_line_is_not_a_key() -> None:
    text = (
        'MARKER = "-----BEGIN RSA PRIVATE KEY-----"  # what load_pem looks for\n'
        '# fingerprint of the fixture: "da39a3ee5e6b4b0d3255bfef95601890afd80709"\n'
    )
    assert not has_private_key(text)


@settings(max_examples=100, deadline=None)
@given(key=pem_lines(), field=st.sampled_from(("tls.key", "client-key-data", "private_key")))
def test_a_key_encoded_once_more_is_found(key: list[str], field: str) -> None:
    # A Kubernetes Secret or a kubeconfig holds the whole PEM file base64-encoded.
    encoded = base64.b64encode(("\n".join(key) + "\n").encode()).decode()
    assert has_private_key(f"kind: Secret\ndata:\n  {field}: {encoded}\n")


def test_an_encoded_certificate_is_not_a_key() -> None:
    cert = b"-----BEGIN CERTIFICATE-----\nMIIDdzCCAl+gAwIBAgIEAgAAuTANBgkqhkiG9w0BAQUFADBa\n"
    assert not has_private_key(f"tls.crt: {base64.b64encode(cert).decode()}\n")


# Issue 42: something on both sides of every line (markup, cells, CSV fields, array items).
WRAPS = (
    ("<span>", "</span><br>"),
    ("<tr><td>{n}</td><td>", "</td></tr>"),
    ("{n},", ""),
    ('{n},"', '"'),
    ("| {n} | ", " |"),
    ('  "', '",'),
    ("<!-- ", " -->"),
    ("(", ") "),
    ("\\t<key>", "</key>"),
)


@settings(max_examples=300, deadline=None)
@given(
    wrap=st.sampled_from(WRAPS),
    key=pem_lines(),
    joined=st.sampled_from(("\n", "\\n", "\\\\n", "<br>\n")),
)
# A one-line body (an Ed25519 key's 48 bytes) with only three digits, '+' and '/' among 64.
@example(
    wrap=("<span>", "</span><br>"),
    key=[
        "-----BEGIN RSA PRIVATE KEY-----",
        "+rSx3CaP+tTYUDxIdOqlzsnSoLWGjVR4cjNfUSEDtsk/lxbsiZp/lkKdfqoR+xt6",
        "-----END RSA PRIVATE KEY-----",
    ],
    joined="\n",
)
def test_a_key_is_found_whatever_wraps_each_line(
    wrap: tuple[str, str], key: list[str], joined: str
) -> None:
    before, after = wrap
    lines = [before.format(n=n) + line + after for n, line in enumerate(key, 1)]
    assert has_private_key("<html>\n" + joined.join(lines) + "\n</html>\n")


@settings(max_examples=200, deadline=None)
@given(
    kind=st.sampled_from(KINDS),
    names=st.lists(
        st.lists(st.sampled_from((*PROSE, "Pem", "Der", "Pkcs8", "Rsa2048", "X509")), min_size=6)
        .map("".join)
        .map(lambda name: f"    key = {name}(data)  # {name.lower()}"),
        min_size=0,
        max_size=12,
    ),
)
def test_code_between_the_markers_is_not_a_key(kind: str, names: list[str]) -> None:
    # A parser names both markers with its code in between, camelCase names of 40+ letters.
    text = "\n".join(
        [
            f'BEGIN = "-----BEGIN {kind}PRIVATE KEY-----"',
            *names,
            f'END = "-----END {kind}PRIVATE KEY-----"',
        ]
    )
    assert not has_private_key(text), text
