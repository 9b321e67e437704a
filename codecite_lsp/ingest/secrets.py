"""What must never be indexed or sent to a model: secret paths by name, credentials by content.

A file holding a private key (``has_private_key``, however quoted, commented, wrapped or split)
or a high-confidence credential (``find_credential``: AWS, GitHub, GitLab, npm, Slack, Stripe,
OpenAI, Anthropic, Google formats and credential files, Docker registry logins, JSON Web
Tokens) is skipped whole, never redacted, so every chunk stays equal to the file's lines.
"""

from __future__ import annotations

import base64
import binascii
import re
from dataclasses import dataclass

# Folders whose every file holds credentials.
SECRET_DIRS = frozenset({".ssh", ".gnupg", ".aws", ".azure", ".kube", ".docker", ".password-store"})

_SECRET_NAMES = frozenset(
    {
        "credentials", ".npmrc", ".pypirc", ".netrc", "_netrc", ".htpasswd", ".pgpass",
        ".git-credentials", ".dockercfg", ".s3cfg", ".boto", ".vault-token",
        # system credential files and shell/REPL histories (commands typed with tokens in them)
        "shadow", "shadow-", "gshadow", "gshadow-", "master.passwd", ".histfile", ".lesshst",
        ".viminfo",
        # what else an SSH or GnuPG folder holds: who may log in where, the keyrings
        "authorized_keys", "authorized_keys2", "known_hosts", "pubring.kbx", "trustdb.gpg",
    }
)  # fmt: skip
_SECRET_SUFFIXES = (
    ".pem", ".key", ".p12", ".pfx", ".jks", ".keystore", ".ppk", ".kdbx", ".tfstate",
    ".tfstate.backup", ".tfvars", ".credentials", ".env", ".gpg",
)  # fmt: skip
_KEY_FILE_PREFIXES = ("id_rsa", "id_dsa", "id_ecdsa", "id_ed25519")
# Data formats a secret is stored in; "secrets.py" (stdlib) or "secret_manager.ts" are code.
_DATA_SUFFIXES = (
    ".json", ".yaml", ".yml", ".toml", ".ini", ".cfg", ".conf", ".xml", ".properties", ".txt",
)  # fmt: skip

# A whole private key, not a parser's constant: the BEGIN line followed by base64 key material
# (through real newlines or "\n" escapes inside a string literal, after optional PEM headers).
PRIVATE_KEY_RE = re.compile(
    r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----"
    r"(?:\s|\\[nr])+(?:[\w-]+: [^\n\\]*(?:\s|\\[nr])+)*[A-Za-z0-9+/]{16,}"
)
_KEY_BEGIN = re.compile(r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----")
# The same key written line by line inside something else: comment lines (``# ``, ``// ``, a C
# block's `` * ``), Markdown quotes (``> ``), numbered listings (``12: ``), one string literal
# per line (joined with ``+``, ``..``, ``,``; a comment after one). Each line's prefixes are
# dropped, then the lines after the BEGIN line, past PEM headers (``Proc-Type``, ``DEK-Info``)
# and commentary, must start with key material.
_KEY_WINDOW = 2000  # characters after the BEGIN line that are looked at
_KEY_LOOKAHEAD = 8  # lines after the BEGIN line in which the key material must start
_ESCAPED_NEWLINE = re.compile(r"\\+[nr]")  # "\n", and "\\n" in a string inside a string
_NUMBERING = r"\d{1,6}(?:\s*[:.)|\]]\s*|\s+)"
_COMMENT = r"#+|//+|/\*+|\*+|--+|;+|%+|!|<!--|(?i:rem)\b"
_QUOTING = r"[\s\"'`+,.()\[\]{}>\\]|\b[rbuf]{1,2}(?=[\"'])"
_LINE_PREFIX = re.compile(rf"(?P<numbering>{_NUMBERING})|(?P<comment>{_COMMENT})|{_QUOTING}")
_PEM_HEADER = re.compile(r"[A-Za-z][A-Za-z0-9-]*:\s")
_KEY_MATERIAL = re.compile(r"[A-Za-z0-9+/]{40,}")
_UPPER, _LOWER = re.compile("[A-Z]"), re.compile("[a-z]")
# A whole PEM file base64-encoded once more (a Kubernetes Secret's ``tls.key``, a kubeconfig's
# ``client-key-data``): "-----BEGIN " always encodes to this, and a key follows when the rest
# of the BEGIN line decodes to a private key's.
_ENCODED_BEGIN = "LS0tLS1CRUdJTi"
_ENCODED_PEM = re.compile(_ENCODED_BEGIN + r"[A-Za-z0-9+/]{66,}")


# The same key with anything around each line, before and after (HTML tags, table cells, CSV
# fields, a JSON array's quotes, escapes inside one string): the BEGIN marker anywhere in a line,
# the next END marker within a window, and between them lines that carry base64 runs, one of
# them long and mixed like random bytes' base64. A parser names the markers with code between.
_KEY_END = re.compile(r"-----END (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----")
_BLOCK_WINDOW = 32_000  # a 16384-bit RSA key is ~13,000 characters of base64
_ESCAPED_SLASH = re.compile(r"\\+/")  # JSON may write "/" as "\/"
_BASE64_RUN = re.compile(r"[A-Za-z0-9+/]{16,}")
_LONG_RUN = 40
_NOT_LETTER = re.compile("[0-9+/]")
# Lines between the markers that carry no run: the rest of the BEGIN line, the start of the END
# line, a blank line after headers, PGP's checksum line, PEM headers.
_BARE_LINES_ALLOWED = 5


def has_private_key(text: str) -> bool:
    """Whether ``text`` holds a private key, however it is quoted, prefixed, wrapped, split or
    encoded."""
    if _ENCODED_BEGIN in text and any(map(_encoded_key, _ENCODED_PEM.finditer(text))):
        return True
    if "PRIVATE KEY" not in text:  # nearly every file: one substring search
        return False
    if PRIVATE_KEY_RE.search(text):
        return True
    return any(
        _material_follows(text, begin.end()) or _armoured_block(text, begin.end())
        for begin in _KEY_BEGIN.finditer(text)
    )


def _armoured_block(text: str, end: int) -> bool:
    """Whether key material, however each line is wrapped, lies between a BEGIN marker ending
    at ``end`` and the next END marker."""
    closing = _KEY_END.search(text, end, end + _BLOCK_WINDOW)
    if closing is None:
        return False
    body = _ESCAPED_SLASH.sub("/", _ESCAPED_NEWLINE.sub("\n", text[end : closing.start()]))
    carrying = bare = 0
    mixed = False
    for line in body.split("\n"):
        runs = _BASE64_RUN.findall(line)
        if runs:
            carrying += 1
            mixed = mixed or any(map(_random_base64, runs))
        elif line.strip():
            bare += 1
    return mixed and bare <= carrying + _BARE_LINES_ALLOWED


def _random_base64(run: str) -> bool:
    """Base64 of random bytes: long, about 40% capitals, 40% small letters and 19% digits, `+`
    and `/` (a camelCase name, a hex digest or a word is far from it). The last bound sits far
    below its share: one 64-character line (a whole Ed25519 key) may hold only three of them."""
    size = len(run)
    if size < _LONG_RUN:
        return False
    # Random bytes almost never repeat three characters (0.007 repeats expected in a line of
    # 64); a name built of repeated words (`thePemPemRsa2048Rsa2048X509`) repeats many.
    trigrams = size - 2
    if len({run[i : i + 3] for i in range(trigrams)}) * 10 < trigrams * 9:
        return False
    upper, lower = len(_UPPER.findall(run)), len(_LOWER.findall(run))
    return upper * 5 >= size and lower * 5 >= size and len(_NOT_LETTER.findall(run)) * 32 >= size


def _encoded_key(match: re.Match[str]) -> bool:
    head = match.group()[:80]  # 60 bytes: the BEGIN line and the start of the key
    try:
        decoded = base64.b64decode(head, validate=True).decode("ascii", errors="replace")
    except (binascii.Error, ValueError):
        return False
    return PRIVATE_KEY_RE.match(decoded) is not None or _KEY_BEGIN.match(decoded) is not None


def _material_follows(text: str, end: int) -> bool:
    """Whether key material starts within a few lines after a BEGIN line ending at ``end``."""
    window = _ESCAPED_NEWLINE.sub("\n", text[end : end + _KEY_WINDOW])
    lines = window.split("\n")[1 : 1 + _KEY_LOOKAHEAD]  # the rest of the BEGIN line is not key
    for line in lines:
        rest, commented = _strip_prefixes(line)
        if not rest or _PEM_HEADER.match(rest):
            continue
        material = _KEY_MATERIAL.match(rest)
        if material is not None:
            # Base64 of random bytes mixes cases; a hex digest or a long word does not.
            found = material.group()
            return bool(_UPPER.search(found) and _LOWER.search(found))
        if not commented:  # code after the BEGIN line: a parser's constant, not a key
            return False
    return False


def _strip_prefixes(line: str) -> tuple[str, bool]:
    """The line without its leading comment, quote, numbering and string-literal marks, and
    whether a comment mark was among them."""
    pos, commented = 0, False
    while (prefix := _LINE_PREFIX.match(line, pos)) is not None and prefix.end() > pos:
        commented = commented or prefix.group("comment") is not None
        pos = prefix.end()
    return line[pos:], commented


# Credentials in formats precise enough that ordinary code never matches them: a file holding
# one is skipped whole (never redacted: chunk text must equal the file's lines for citations to
# verify). A cold index reads every file, so each group of formats has cheap hints first: a
# pattern with a literal prefix is searched fast (sre skips to the prefix), and most files hold
# none of these, so the format patterns run on few files.
# Anthropic precedes OpenAI: "sk-ant-..." also fits the OpenAI shape.
_CREDENTIAL_GROUPS = tuple(
    (
        tuple(re.compile(hint) for hint in hints),
        tuple((kind, re.compile(pattern)) for kind, pattern in formats),
    )
    for hints, formats in (
        (
            ("A(?:KIA|SIA|Iza)",),
            (
                ("AWS access key id", r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b"),
                ("Google API key", r"\bAIza[0-9A-Za-z_-]{35}"),
            ),
        ),
        (
            ("ecret", "ECRET"),
            (
                (
                    "AWS secret access key",
                    r"(?i:aws_?secret_?(?:access_?)?key)[\"']?\s*(?::|=>?)\s*[\"']?"
                    r"(?P<value>[A-Za-z0-9/+]{40})(?![A-Za-z0-9/+=])",
                ),
            ),
        ),
        (
            ("g(?:h[pousr]_|ithub_pat_)",),
            (("GitHub token", r"\bgh[pousr]_[A-Za-z0-9]{36,}|\bgithub_pat_[A-Za-z0-9_]{60,}"),),
        ),
        (
            ("xox", "hooks.slack"),
            (
                ("Slack token", r"\bxox[abposre]-[0-9A-Za-z-]{10,}"),
                (
                    "Slack webhook URL",
                    r"hooks\.slack\.com/services/T[0-9A-Z]{8,}/B[0-9A-Z]{8,}/"
                    r"(?P<value>[0-9A-Za-z]{20,})",
                ),
            ),
        ),
        (("glpat-",), (("GitLab token", r"\bglpat-[0-9A-Za-z_-]{20,}"),)),
        (
            ('"auths"',),  # ~/.docker/config.json: base64 of "user:password" per registry
            (("Docker registry login", r'"auth"\s*:\s*"(?P<value>[A-Za-z0-9+/]{12,}={0,2})"'),),
        ),
        (("npm_",), (("npm token", r"\bnpm_[A-Za-z0-9]{36}\b"),)),
        (("GOCSPX-",), (("Google OAuth client secret", r"\bGOCSPX-[0-9A-Za-z_-]{28}"),)),
        (("1//0",), (("Google OAuth refresh token", r"\b1//0[0-9A-Za-z_-]{40,}"),)),
        (
            # gcloud's application_default_credentials.json, a service account's key file:
            # the type names the file, a secret field's value is the credential, whatever
            # wraps the lines (quotes escaped once or twice, HTML entities, cells, CSV fields).
            ("authorized_user", "service_account", "external_account"),
            (
                (
                    "Google credentials file",
                    r"(?:client_secret|refresh_token)\b(?:\\*[\"'`]|&quot;|&#34;|[\s:=,|])*"
                    r"(?P<value>(?=[\w./-]*\d)(?=[\w./-]*[a-z])(?=[\w./-]*[A-Z])[\w./-]{20,})",
                ),
            ),
        ),
        (
            ("eyJ",),
            (
                (
                    "JSON Web Token",
                    r"\beyJ[A-Za-z0-9_-]{10,}\.eyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{16,}",
                ),
            ),
        ),
        (("k_live_",), (("Stripe live key", r"\b[sr]k_live_[0-9A-Za-z]{20,}"),)),
        (
            ("sk-",),
            (
                ("Anthropic API key", r"\bsk-ant-[A-Za-z0-9_-]{40,}"),
                ("OpenAI API key", r"\bsk-(?:proj-)?[A-Za-z0-9_-]{40,}"),
            ),
        ),
    )
)
# A documented example (AWS's AKIAIOSFODNN7EXAMPLE) or a filler such as "ghp_xxxx...xxxx" is
# not a credential; a random token of these lengths has far more distinct characters.
_PLACEHOLDER_WORD = "EXAMPLE"
_PLACEHOLDER_MAX_DISTINCT = 9


@dataclass(frozen=True)
class Credential:
    kind: str  # e.g. "AWS access key id"
    line: int  # 1-based

    @property
    def reason(self) -> str:
        return f"contains a credential ({self.kind}) at line {self.line}; never indexed"


def find_credential(text: str) -> Credential | None:
    """The first high-confidence credential in ``text`` (placeholders aside), or None."""
    found = [
        (match.start(), kind)
        for hints, formats in _CREDENTIAL_GROUPS
        if any(hint.search(text) for hint in hints)
        for kind, pattern in formats
        if (match := _first_real(pattern, text)) is not None
    ]
    if not found:
        return None
    offset, kind = min(found, key=lambda item: item[0])  # on a tie, the format listed first
    return Credential(kind, text.count("\n", 0, offset) + 1)


def _first_real(pattern: re.Pattern[str], text: str) -> re.Match[str] | None:
    for match in pattern.finditer(text):
        token = match.groupdict().get("value") or match.group()  # a value, not its name
        if _PLACEHOLDER_WORD not in token.upper() and len(set(token)) > _PLACEHOLDER_MAX_DISTINCT:
            return match
    return None


REASON_SECRET_NAME = "secret file (name matches a credentials pattern); never indexed"
REASON_SECRET_DIR = "secret folder (holds credentials); never indexed"
REASON_PRIVATE_KEY = "contains a private key (PEM block); never indexed"


def is_secret_path(rel_path: str) -> bool:
    """True for paths that hold credentials by name.

    Every ``.env`` variant is a secret, ``.env.example`` included: templates are often filled in
    by mistake, and a missing example costs the user nothing.
    """
    parts = rel_path.lower().split("/")
    if any(part in SECRET_DIRS for part in parts[:-1]):
        return True
    name = parts[-1]
    if name in _SECRET_NAMES or name.startswith(".env") or name.startswith(_KEY_FILE_PREFIXES):
        return True
    if name.startswith(".") and name.endswith("_history"):  # .bash_history, .psql_history ...
        return True
    if name.endswith(_SECRET_SUFFIXES):
        return True
    if name.endswith(_DATA_SUFFIXES):
        stem = name.rsplit(".", 1)[0]
        return (
            "secret" in stem
            or stem == "credentials"
            or "service-account" in stem
            or "service_account" in stem
        )
    return False
