"""Whether a name or a value looks like a credential: by name (HF_TOKEN, *_API_KEY, *PASSWORD*) and by shape
(the formats vendors give their tokens and keys, each with its source).

Pure: strings in, a verdict out. A value is never repeated whole in what this module says about it (`masked`).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from functools import lru_cache
from itertools import pairwise
from typing import Literal

Level = Literal["error", "warning"]


@dataclass(frozen=True, slots=True)
class Shape:
    """A credential format: what it is, the text that has it, and where the vendor states it."""

    what: str
    pattern: re.Pattern[str]
    source: str


_START = r"(?<![A-Za-z0-9_-])"
"""A token starts where no word character or dash precedes it."""
_MIXED = r"(?=[A-Za-z0-9_-]*[A-Z])(?=[A-Za-z0-9_-]*[a-z])"
"""Random characters hold upper and lower case letters; a name someone wrote (`sk-learn-...`) seldom does."""

# Formats as their issuers document them, read 2026-11-27.
SHAPES: tuple[Shape, ...] = (
    Shape(
        "an AWS access key id",
        re.compile(r"(?<![A-Z0-9])(?:AKIA|ASIA)[A-Z0-9]{16}(?![A-Z0-9])"),
        "https://docs.aws.amazon.com/IAM/latest/UserGuide/reference_identifiers.html#identifiers-prefixes "
        "(AKIA: an access key, ASIA: a temporary STS key; 20 characters)",
    ),
    Shape(
        "a Hugging Face token",
        re.compile(_START + r"hf_" + _MIXED + r"[A-Za-z0-9]{30,}"),
        "https://huggingface.co/docs/hub/security-tokens (User Access Tokens, `hf_` and 34 letters and digits)",
    ),
    Shape(
        "a GitHub token",
        re.compile(_START + r"(?:gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{22,})"),
        "https://github.blog/changelog/2021-03-31-authentication-token-format-updates-are-generally-available "
        "(ghp_ personal, gho_ OAuth, ghu_ user-to-server, ghs_ server-to-server, ghr_ refresh) and "
        "https://docs.github.com/en/authentication/keeping-your-account-and-data-secure/about-authentication-to-github"
        "#githubs-token-formats (github_pat_ fine-grained)",
    ),
    Shape(
        "a GitLab personal access token",
        re.compile(_START + r"glpat-[A-Za-z0-9_.-]{20,}"),
        "https://docs.gitlab.com/security/tokens/#token-prefixes (glpat-)",
    ),
    Shape(
        "a Slack token",
        re.compile(_START + r"(?:xox[abprs]-[A-Za-z0-9-]{10,}|xapp-[0-9]+-[A-Za-z0-9-]{10,})"),
        "https://api.slack.com/authentication/token-types (xoxb- bot, xoxp- user, xapp- app-level; "
        "xoxa-, xoxr-, xoxs- legacy)",
    ),
    Shape(
        "an OpenAI or Anthropic API key",
        re.compile(_START + r"sk-" + _MIXED + r"[A-Za-z0-9_-]{32,}"),
        "https://platform.openai.com/docs/api-reference/authentication (sk-, sk-proj-) and "
        "https://docs.anthropic.com/en/api/overview (sk-ant-api03-)",
    ),
    Shape(
        "a Google API key",
        re.compile(r"(?<![A-Za-z0-9_-])AIza[0-9A-Za-z_-]{35}(?![0-9A-Za-z_-])"),
        "https://cloud.google.com/docs/authentication/api-keys (a key string, `AIza` and 35 characters)",
    ),
    Shape(
        "a PEM private key",
        re.compile(r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY-----"),
        "https://www.rfc-editor.org/rfc/rfc7468 (PRIVATE KEY, ENCRYPTED PRIVATE KEY; RSA, EC and OPENSSH keys alike)",
    ),
    Shape(
        "a Google Cloud service account key (JSON)",
        re.compile(r'"private_key"\s*:'),
        "https://cloud.google.com/iam/docs/keys-create-delete (the JSON key file's `private_key`)",
    ),
    Shape(
        "a JSON Web Token",
        re.compile(_START + r"eyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}"),
        "https://www.rfc-editor.org/rfc/rfc7519 (three base64url parts; a JSON header encodes as `eyJ`); "
        "Kubernetes service account tokens are JWTs",
    ),
    Shape(
        "a URL with a password",
        re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://[^/\s:@]+:(?![$])[^/\s@]+@"),
        "https://www.rfc-editor.org/rfc/rfc3986#section-3.2.1 (user:password in a URL's userinfo, deprecated)",
    ),
)
"""Every credential format recognised anywhere in a value."""

AWS_SECRET_KEY = Shape(
    "an AWS secret access key",
    re.compile(r"[A-Za-z0-9/+]{40}"),
    "https://docs.aws.amazon.com/IAM/latest/UserGuide/id_credentials_access-keys.html (40 characters)",
)
"""A format too plain to recognise on its own (a git commit is 40 characters too): only where the name says so."""

_MARKERS = ("AKIA", "ASIA", "hf_", "ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_", "glpat-", "xox", "xapp-")
_MARKERS += ("sk-", "AIza", "PRIVATE KEY", '"private_key"', "eyJ", "://")
_MARKER = re.compile("|".join(map(re.escape, _MARKERS)))
"""Text every format holds (its prefix): a value with none of them is read no further, which keeps a stack of
thousands of jobs fast."""

_ABOUT = frozenset(
    re.findall(
        r"\w+",
        "NAME NAMES FILE FILES PATH DIR REF URL URI ENDPOINT HOST ARN LENGTH LEN SIZE TTL TIMEOUT EXPIRY EXPIRATION "
        "EXPIRES HEADER TYPE MODE ENABLED ENABLE DISABLED DISABLE REGION COUNT LIMIT ENV VAR PROVIDER SOURCE METHOD "
        "HELPER STORE KIND FORMAT PREFIX POLICY ROTATION SCOPE SCOPES AUDIENCE ISSUER LOCATION",
    )
)
"""A last word that makes a name about a credential (where it is, what it is called), not one."""
_TOKENIZER = frozenset(re.findall(r"\w+", "PAD BOS EOS UNK SEP CLS MASK START END STOP SPECIAL IMAGE VISION AUDIO"))
"""Words before TOKEN in the names of a tokenizer's special tokens (PAD_TOKEN: `<pad>`)."""
_NAMED = frozenset(
    {"KAGGLE_KEY", "AZURE_STORAGE_KEY", "AZURE_STORAGE_CONNECTION_STRING", "NGC_CLI_API_KEY", "DOCKER_AUTH_CONFIG"}
)
"""Credentials whose names say so in no word this module reads."""
_PAIRS = (("API", "KEY"), ("ACCESS", "KEY"), ("PRIVATE", "KEY"), ("AUTH", "KEY"), ("ACCOUNT", "KEY"))


def words(name: str) -> list[str]:
    """A name's words, upper case: `HF_TOKEN`, `hfToken`, `--hf-token` and `hf.token` all give HF, TOKEN."""
    spaced = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", name)
    return [w.upper() for w in re.split(r"[^A-Za-z0-9]+", spaced) if w]


@lru_cache(maxsize=4096)
def is_credential_name(name: str) -> bool:
    """Whether a name (an environment variable, a flag, a key) names a credential: *_TOKEN, *SECRET*,
    *PASSWORD*, *PASSWD*, *_API_KEY, *APIKEY*, *ACCESS_KEY*, *PRIVATE_KEY*, *CREDENTIALS*; not one that names where
    a credential is (HF_TOKEN_PATH, SECRET_NAME) nor a tokenizer's special token (PAD_TOKEN)."""
    parts = words(name)
    if not parts or parts[-1] in _ABOUT:
        return False
    if "_".join(parts) in _NAMED:
        return True
    if parts[-1] in ("TOKEN", "PAT"):
        return len(parts) < 2 or parts[-2] not in _TOKENIZER
    if any(p in ("SECRET", "APIKEY", "CREDENTIAL", "CREDENTIALS", "PASSPHRASE") or "PASSW" in p for p in parts):
        return True
    return any(pair in _PAIRS for pair in pairwise(parts))


_REFERENCE = re.compile(r"^\$\([A-Za-z_][A-Za-z0-9_.-]*\)$|^\$\{[^}]+\}$|^\$[A-Za-z_][A-Za-z0-9_]*$|^\{\{.*\}\}$")
"""Kubernetes' `$(VAR)`, a shell's `$VAR` / `${VAR}`, a template's `{{ ... }}`: where a credential comes from."""
_SCALAR = re.compile(r"^(?:true|false|yes|no|on|off|none|null|[0-9]+(?:\.[0-9]+)?)$", re.IGNORECASE)
_PLACEHOLDER = re.compile(
    r"^(?:change[-_ ]?me|replace[-_ ]?me|todo|tbd|fixme|dummy|placeholder|example|sample|test|secret|password|"
    r"passwd|token|redacted|nil|\*+|x+)$|^<[^<>]*>$|example|your[-_ ]?(?:[a-z]+[-_ ])?(?:token|key|secret|password)",
    re.IGNORECASE,
)
"""A value that stands for a credential to come: `changeme`, `<token>`, `xxxx`, `your-api-key`, AWS's documented
`...EXAMPLE...` keys."""


def harmless(value: str) -> bool:
    """Whether a value holds no credential whatever its name: empty, a reference to one (`$(HF_TOKEN)`), a path
    to a file that holds one, a boolean or a number."""
    text = value.strip()
    return (
        not text
        or bool(_REFERENCE.match(text))
        or bool(_SCALAR.match(text))
        or text.startswith(("/", "./", "../", "~/", "file://"))
    )


def placeholder(value: str) -> bool:
    """Whether a value is a placeholder where a credential goes (`changeme`, `<token>`, `hf_xxxx...`)."""
    text = value.strip()
    if _PLACEHOLDER.search(text):
        return True
    body = re.sub(r"^[A-Za-z]+[_-]", "", text)  # hf_xxxx..., sk-xxxx...
    return len(set(body)) == 1


def shape(value: str) -> Shape | None:
    """The credential format a value holds somewhere in it, or None."""
    if len(value) < 8 or not _MARKER.search(value):  # no format is shorter
        return None
    return next((s for s in SHAPES if s.pattern.search(value)), None)


@dataclass(frozen=True, slots=True)
class Verdict:
    """What a value is: a credential in plain text (an error), or a placeholder where one goes (a warning)."""

    level: Level
    what: str
    """What it looks like: `a Hugging Face token`, `a value for a credential's name`."""


@lru_cache(maxsize=65536)  # a stack of thousands of jobs repeats its images, flags and settings
def judge(name: str | None, value: str) -> Verdict | None:
    """Whether `value`, under `name` (an env variable, a flag, a key; None when nameless), is a credential in plain
    text (by its shape anywhere; by its name unless it is harmless), a placeholder for one, or neither."""
    found = shape(value)
    named = name is not None and is_credential_name(name)
    if found is not None:
        match = found.pattern.search(value)
        token = match.group() if match else value
        if placeholder(token):
            return Verdict("warning", f"a placeholder for {found.what}") if named else None
        return Verdict("error", found.what)
    if not named or harmless(value):
        return None
    if placeholder(value):
        return Verdict("warning", "a placeholder for a credential")
    if AWS_SECRET_KEY.pattern.fullmatch(value.strip()):
        return Verdict("error", AWS_SECRET_KEY.what)
    return Verdict("error", f"a plain value for a credential's name ({name})")


_FLAG = re.compile(r"^(-{1,2}[A-Za-z][A-Za-z0-9_.-]*)=(.*)$", re.DOTALL)
_ASSIGNMENT = re.compile(r"^([A-Za-z_][A-Za-z0-9_]*)=(.*)$", re.DOTALL)


def in_words(line: list[str]) -> Iterator[tuple[int, str, Verdict]]:
    """The credentials of a command line, each with the index of its word and the flag or variable it is given
    to (else the word, masked): a flag's value (`--hf-token=...`, `--hf-token ...`), an assignment
    (`HF_TOKEN=...`), and a format anywhere."""
    for n, word in enumerate(line):
        name: str | None = None
        value = word
        flag = _FLAG.match(word) if "=" in word else None
        assignment = _ASSIGNMENT.match(word) if "=" in word else None
        if flag:
            name, value = flag.group(1), flag.group(2)
        elif assignment:
            name, value = assignment.group(1), assignment.group(2)
        elif word.startswith("-") and n + 1 < len(line) and not line[n + 1].startswith("-"):
            verdict = judge(word, line[n + 1]) if is_credential_name(word) else None
            if verdict is not None:
                yield n + 1, word, verdict
            continue
        elif n > 0 and line[n - 1].startswith("-") and is_credential_name(line[n - 1]):
            continue  # judged with its flag
        verdict = judge(name, value)
        if verdict is not None:
            yield n, name or masked(word), verdict


def masked(value: str) -> str:
    """A value as a message may show it: its first characters, never the credential."""
    text = value.strip()
    return f"'{text[:4]}…' ({len(text)} characters)" if len(text) > 4 else "'…'"
