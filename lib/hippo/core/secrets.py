"""Redact credentials from text before it is stored in the index or shown to the model.

Stdlib regexes only, tuned to cost a few tens of µs per 1.5 KB chunk so it can run on every
chunk (issue "Trust"). The one hard rule: redaction never changes the number of lines, so
line numbers reported for a chunk stay exact. Prefer running it on a whole file's text before
chunking: a private key split across two chunks is then still seen whole.
"""
from __future__ import annotations

import math
import re
import string
from collections import Counter

__all__ = ["redact", "redact_name", "looks_like_secret_value"]

_TAG = "[REDACTED:{}]"

# --- PEM private keys -------------------------------------------------------------------------
_PEM_BEGIN = r"-----BEGIN[ A-Z0-9]*PRIVATE KEY(?: BLOCK)?-----"
_PEM_END = r"-----END[ A-Z0-9]*PRIVATE KEY(?: BLOCK)?-----"
_PEM_BEGIN_RE = re.compile(_PEM_BEGIN)
_PEM_END_RE = re.compile(_PEM_END)
_PEM_OPEN = re.compile(f"({_PEM_BEGIN})(.*)\\Z", re.S)  # chunk cut before the END line
_KEY_MATERIAL = re.compile(r"[A-Za-z0-9+/=]{40,}")
_PEM_CLOSE = re.compile(f"\\A(.*?)({_PEM_END})", re.S)  # chunk starts inside a key

# --- fixed-format tokens: (kind, literal needles, pattern). Each pattern is one line at most.
# A regex alternation of all of them costs ~0.8 ms per chunk in CPython; plain substring checks
# on the needles first make a clean chunk cost a few µs.
_TOKENS: list[tuple[str, tuple[str, ...], str]] = [
    ("aws_access_key_id", (r"A(?:KIA|SIA|BIA|CCA|GPA|IDA|IPA|NPA|NVA|ROA|PKA|SCA)[A-Z0-9]{16}",), r"A(?:KIA|SIA|BIA|CCA|GPA|IDA|IPA|NPA|NVA|ROA|PKA|SCA)[A-Z0-9]{16}\b"),
    ("github_token", ("ghp_", "gho_", "ghu_", "ghs_", "ghr_"), r"gh[pousr]_[A-Za-z0-9]{36,255}\b"),
    ("github_token", ("github_pat_",), r"github_pat_[A-Za-z0-9_]{22,255}"),
    ("gitlab_token", ("glpat-", "gldt-", "glptt-", "glrt-", "glcbt-"), r"gl(?:pat|dt|ptt|rt|cbt)-[A-Za-z0-9_\-]{20,}"),
    ("slack_token", ("xox",), r"xox[abposr]-[A-Za-z0-9\-]{10,}"),
    ("slack_webhook", ("hooks.slack.com",), r"https://hooks\.slack\.com/services/[A-Za-z0-9/_\-]{20,}"),
    ("stripe_key", ("_live_", "_test_"), r"(?:sk|rk|pk)_(?:live|test)_[A-Za-z0-9]{16,}"),
    ("google_api_key", ("AIza",), r"AIza[0-9A-Za-z_\-]{35}"),
    ("anthropic_key", ("sk-ant-",), r"sk-ant-[A-Za-z0-9_\-]{20,}"),
    ("openai_key", ("sk-",),
     # (lookaheads bounded: unbounded ones rescanned the whole run from every "sk-" in "sk-sk-sk-...")
     r"sk-(?:proj-|svcacct-|admin-)?(?=[A-Za-z0-9_\-]{0,100}[0-9])(?=[A-Za-z0-9_\-]{0,100}[A-Za-z])[A-Za-z0-9_\-]{20,}"),
    # (no start inside a run of token characters: "eyJeyJeyJ..." made every start rescan the run)
    ("jwt", ("eyJ",), r"(?<![A-Za-z0-9_\-])eyJ[A-Za-z0-9_\-]{8,}\.eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]*"),
    ("npm_token", ("npm_",), r"npm_[A-Za-z0-9]{36}\b"),
    ("pypi_token", ("pypi-AgE",), r"pypi-AgE[A-Za-z0-9_\-]{40,}"),
    ("huggingface_token", ("hf_",), r"hf_[A-Za-z0-9]{30,}\b"),
    ("sendgrid_key", ("SG.",), r"SG\.[A-Za-z0-9_\-]{20,}\.[A-Za-z0-9_\-]{20,}"),
    ("azure_key", ("ccountKey=", "ccessKey="), r"(?:AccountKey|SharedAccessKey)=[A-Za-z0-9+/=]{20,}"),
    # Vendor formats, each recognised by its own prefix (issue 19 found these stored and shown).
    ("vault_token", ("hvs.", "hvb.", "hvr."), r"hv[sbr]\.[A-Za-z0-9_\-]{24,}"),
    ("shopify_token", ("shp",), r"shp(?:at|ss|ca|pa)_[a-fA-F0-9]{32}\b"),
    ("digitalocean_token", ("_v1_",), r"do[por]_v1_[a-f0-9]{64}\b"),
    ("telegram_bot_token", (r":AA[A-Za-z0-9_\-]{33}",), r"(?<![0-9])[0-9]{8,10}:AA[A-Za-z0-9_\-]{33}(?![A-Za-z0-9_\-])"),
    ("grafana_token", ("glc_", "glsa_"), r"gl(?:c|sa)_[A-Za-z0-9_+/\-]{32,}=*"),
    ("age_secret_key", ("AGE-SECRET-KEY-",), r"AGE-SECRET-KEY-1[0-9A-Z]{50,}"),
    ("twilio_key", ("SK",), r"SK[0-9a-fA-F]{32}\b"),
    ("mailgun_key", ("key-",), r"key-[0-9a-f]{32}\b"),
    ("mailchimp_key", (r"-us[0-9]",), r"[0-9a-f]{32}-us[0-9]{1,2}\b"),
    ("databricks_token", ("dapi",), r"dapi[0-9a-f]{32}(?:-[0-9])?\b"),
    ("doppler_token", ("dp.",), r"dp\.(?:pt|st|ct|sa|scim|audit)\.[A-Za-z0-9]{40,}"),
    ("pulumi_token", ("pul-",), r"pul-[0-9a-f]{40}\b"),
    ("linear_key", ("lin_",), r"lin_(?:api|oauth)_[A-Za-z0-9]{40}\b"),
    ("notion_token", ("ntn_", "secret_"), r"(?:ntn_[A-Za-z0-9]{40,}|secret_[A-Za-z0-9]{43})\b"),
    ("atlassian_token", ("ATATT", "ATCTT"), r"AT[AC]TT[A-Za-z0-9_\-=]{60,}"),
    ("bitbucket_app_password", ("ATBB",), r"ATBB[A-Za-z0-9_\-=.]{28,}"),
    ("postman_key", ("PMAK-",), r"PMAK-[0-9a-f]{24}-[0-9a-f]{34}"),
    ("newrelic_key", ("NRAK-", "NRAA-", "NRII-"), r"NR(?:AK|AA|II)-[A-Za-z0-9]{27,32}"),
    ("sentry_token", ("sntry",), r"sntry[usy]_[A-Za-z0-9+/=_]{40,}"),
    ("supabase_token", ("sbp_",), r"sbp_[0-9a-f]{40}\b"),
    ("flyio_token", ("fo1_", "fm1", "fm2_"), r"(?:fo1_[A-Za-z0-9_\-]{40,}|fm[12][ar]?_[A-Za-z0-9+/=_\-]{40,})"),
    ("planetscale_token", ("pscale_",), r"pscale_(?:tkn|pw|oauth)_[A-Za-z0-9_\-.]{32,64}"),
    ("dockerhub_token", ("dckr_",), r"dckr_(?:pat|oat)_[A-Za-z0-9_\-]{24,}"),
    ("rubygems_key", ("rubygems_",), r"rubygems_[0-9a-f]{48}\b"),
    ("clojars_token", ("CLOJARS_",), r"CLOJARS_[a-z0-9]{60}\b"),
    ("discord_webhook", ("/api/webhooks/",),
     r"https://(?:[a-z]+\.)?discord(?:app)?\.com/api/webhooks/[0-9]{5,30}/[A-Za-z0-9_\-]{40,}"),
    ("discord_bot_token", (r"\.[A-Za-z0-9_\-]{6}\.[A-Za-z0-9_\-]{27}",),
     r"(?<![A-Za-z0-9_\-.])[MNO][A-Za-z0-9_\-]{23,25}\.[A-Za-z0-9_\-]{6}\.[A-Za-z0-9_\-]{27,38}(?![A-Za-z0-9_\-])"),
    ("facebook_token", ("EAA",), r"EAA[A-Za-z0-9]{90,}"),
    ("twitter_bearer", ("AAAAAAAAAAAAAAAAAAAA",), r"(?<![A-Za-z0-9+/])A{20,24}[A-Za-z0-9]{8,}%3D[A-Za-z0-9%]{20,}"),
    ("fcm_server_key", (":APA91b",), r"AAAA[A-Za-z0-9_\-]{7}:APA91b[A-Za-z0-9_\-]{100,}"),
    ("terraform_token", (".atlasv1.",), r"[A-Za-z0-9]{14}\.atlasv1\.[A-Za-z0-9_\-=]{60,}"),
    # A PEM private key, base64-encoded once more (kubeconfig `client-key-data`, Kubernetes secrets).
    ("private_key", ("LS0tLS1CRUdJTi",), r"LS0tLS1CRUdJTi[A-Za-z0-9+/]{20,}={0,2}"),
]
# Kinds whose token may follow a letter (`.../bot<token>/...`, `AccountKey=`).
_INSIDE_WORDS = frozenset({"azure_key", "telegram_bot_token"})
# A needle is a plain substring, or (when it holds a backslash or a bracket) a pattern that starts with a
# literal: re finds a literal prefix fast, while a pattern that starts with a class tries every position.
_TOKEN_RES = [(kind, tuple(re.compile(n) if "\\" in n or "[" in n else n for n in needles), re.compile(p))
              for kind, needles, p in _TOKENS]
# For the scan in `redact`: which formats each plain needle can start, and the formats gated by a pattern.
_BY_NEEDLE: dict[str, list[int]] = {}
for _i, (_kind, _needles, _rx) in enumerate(_TOKEN_RES):
    for _n in _needles:
        if isinstance(_n, str):
            _BY_NEEDLE.setdefault(_n, []).append(_i)
_GATED = [(i, tuple(n for n in needles if not isinstance(n, str)))
          for i, (_k, needles, _r) in enumerate(_TOKEN_RES) if any(not isinstance(n, str) for n in needles)]


def _present(needles: tuple[str | re.Pattern[str], ...], text: str) -> bool:
    return not needles or any(n in text if isinstance(n, str) else n.search(text) for n in needles)
# The patterns start with a literal (fast to search for); the word boundary before it is
# checked in Python instead of with a leading \b, which would disable that fast path.
_WORDISH = frozenset(string.ascii_letters + string.digits + "_")
_WORDISH_DASH = _WORDISH | {"-", "."}

# Authorization headers: keep the scheme, hide the credential.
_BEARER_RE = re.compile(r"(?i)((?:bearer|basic|token)[ \t]+)([A-Za-z0-9_\-\.=+/]{20,})")

# scheme://user:password@host -> keep scheme, user and host.
_URL_RE = re.compile(r"([a-zA-Z][a-zA-Z0-9+.\-]{1,20}://[^\s:/@'\"`<>]{0,100}:)([^\s@/:,'\"`<>]{1,200})(@)")
# scheme://token@host, no password: a Sentry DSN's key, `https://<token>@github.com`. Only generated users.
_URL_USER_RE = re.compile(r"(://)([A-Za-z0-9_\-]{32,200})(@)")

# AWS secret keys: 40 base64 chars near an aws/secret word on the same line, or under the name STS and
# the SDKs give them in JSON ("SecretAccessKey": "...", no "aws" in sight).
_AWS_SECRET_RE = re.compile(r"(?i)((?:aws[\w\-.]{0,30}(?:secret|sk)[\w\-.]{0,20}|secret_?access_?key)[\"']?\s*(?:[:=]|=>)\s*[\"']?)"
                            r"([A-Za-z0-9/+]{40})(?![A-Za-z0-9/+])")

# Signed URLs: an Azure SAS token's `sig=`, S3 and GCS presigned signatures (credentials until they expire).
_SIGNED_URL_RE = re.compile(r"([?&;](?:sig|X-Amz-Signature|X-Goog-Signature)=)([A-Za-z0-9%+/=_\-]{30,1000})")

# Connection strings (SQL Server, ODBC, ADO.NET): `...;Password=...;` or `Pwd=`; a value may hold spaces
# and `#`, or be {braced}.
_CONN_PW_RE = re.compile(r"(?i)(?<=[;\"'`])(?P<pre>[ \t]*(?:password|pwd)[ \t]*=[ \t]*)"
                         r"(?P<val>\{[^}\n]{1,200}\}|[^;\"'`\n]{1,200}?)(?=[ \t]*(?:;|[\"'`]|$))")

# Passwords on command lines, where the flag alone says so: `sshpass -p X`, `mysql -pX` (attached: `-p X`
# would prompt and take X as a database), `docker login -p X`, `redis-cli -a X`. The words between the
# command and the flag are matched token by token, at most 10 of them: linear on hostile input.
_ARG = r"(?P<q>[\"']?)(?P<val>[^\s\"'`;|&]{1,200})(?P=q)"


def _before(flag: str) -> str:
    return r"(?:[ \t]+(?!" + flag + r")[^\s|;&]{1,100}){0,10}?[ \t]+"


# Go's MySQL DSN: `user:password@tcp(host:3306)/db`.
_GO_DSN_RE = re.compile(r"(?<![\w/])(?P<pre>[\w.\-]{1,64}:)(?P<q>)(?P<val>[^\s@/:'\"`]{1,200})(?=@(?:tcp|unix)\()")
# .pgpass lines: host:port:database:user:password (a pgpass file has no other shape; port 5432 or `*`).
_PGPASS_NEEDLES = (":5432:", ":*:", ":5433:")
_PGPASS_RE = re.compile(r"(?m)^(?P<pre>[A-Za-z0-9.\-*]{1,253}:(?:[0-9]{1,5}|\*):[\w.\-*]{1,63}:[\w.\-*@]{1,63}:)"
                        r"(?P<q>)(?P<val>[^\s]{8,200})[ \t]*$")
# netrc: `machine h login u password p` on one line, or `password p` alone on a line under a machine entry.
_NETRC_INLINE = re.compile(r"\bmachine[ \t]+\S{1,253}(?:[ \t]+(?:login|account|port)[ \t]+\S{1,200}){1,3}"
                           r"[ \t]+(?P<pre>password[ \t]+)(?P<q>)(?P<val>[^\s\"'`]{1,200})")
_NETRC_LINE = re.compile(r"^(?P<pre>[ \t]*password[ \t]+)(?P<q>)(?P<val>[^\s\"'`]{1,200})[ \t]*$")
_NETRC_ENTRY = re.compile(r"^[ \t]*(?:machine|default|login|account)\b")

# `user:password` after an auth flag; the user may be empty (`curl -u :token`).
_USERPASS = r"(?P<q>[\"']?)[^\s:\"'`;|&]{0,100}:(?P<val>[^\s\"'`;|&]{1,200})(?P=q)"

_CMD_PW_RES = [
    (("sshpass",), re.compile(r"\bsshpass" + _before("-p") + r"(?P<pre>-p[ \t]*)" + _ARG)),
    # (these two start with their literal, fast to search for; the word start is checked in _sub_command)
    (("curl",), re.compile(r"curl" + _before("-u|--user|-U|--proxy-user")
                           + r"(?P<pre>(?:-u|--user|-U|--proxy-user)(?:[ \t]*|=))" + _USERPASS)),
    ((" -a ", "--auth"), re.compile(r"http(?:s|ie)?" + _before("-a|--auth")
                                  + r"(?P<pre>(?:-a|--auth)(?:[ \t]+|=))" + _USERPASS)),
    (("mysql", "mariadb"), re.compile(r"\b(?:mysql|mariadb)[\w-]{0,12}" + _before("-p") + r"(?P<pre>-p)" + _ARG)),
    (("login",), re.compile(r"\b(?:docker|podman|buildah|skopeo|helm|oras)(?:[ \t]+registry)?[ \t]+login"
                            + _before("-p") + r"(?P<pre>-p[ \t]+)" + _ARG)),
    (("redis-cli",), re.compile(r"\bredis-cli" + _before("-a") + r"(?P<pre>-a[ \t]+)" + _ARG)),
]

# --- secret-looking assignments ----------------------------------------------------------------
# Only lines containing one of these words are examined at all (cheap prefilter).
_HINT_RE = re.compile(r"pass|pwd|pw|secret|token|key|auth|credential|cookie|hmac|salt|dsn|sig")
_NAME = r"[A-Za-z_$@][\w.\-$]{0,80}"
# Quotes may be escaped (`\"`): code inside a JSON string, as in .ipynb cells.
_ASSIGN_Q = re.compile(
    r"""(?P<pre>(?<![\w.\-$@])(?:\\?["'])?(?P<name>""" + _NAME + r""")(?:\\?["'])?"""
    r"""(?:[ \t]*:[ \t]*[A-Za-z_][\w.]{0,30}(?:\[[\w., |]{0,40}\])?(?=[ \t]*=))?"""  # `token: str = "..."`
    r"""\s*(?::=|=>|==|[:=])\s*(?:[rbuf]{0,2})"""
    r"""(?P<q>\\?["'`]))(?P<val>[^"'`\n\\]{1,400})(?P=q)""")
# Unquoted: YAML, .properties, INI, .env, shell. The value runs to the end of the line and may hold `#`
# and `(` (a comment needs whitespace before its `#`); code-shaped values are told apart in _code_like.
_ASSIGN_U = re.compile(
    r"""(?P<pre>^[ \t]*(?:-[ \t]+)?(?:export[ \t]+)?(?P<name>""" + _NAME + r""")[ \t]*[:=][ \t]*)"""
    r"""(?P<val>[^\s"'`]{8,400})(?:[ \t]+#.*)?[ \t]*$""")
# `PGPASSWORD=x psql ...`, `docker run -e DB_PASSWORD=x img`: an environment assignment before a command.
_ENV_PREFIX = re.compile(
    r"""(?:^|(?<=[\s;&|(`]))(?P<pre>(?P<name>[A-Z_][A-Z0-9_]{1,60})=(?P<q>["']?))"""
    r"""(?P<val>[^\s"'`;|&\\,()\[\]{}<>]{1,400})(?P=q)(?=[ \t]+\S)""")
# YAML block scalar under a secret name: `password: |` then more-indented lines hold the value.
_BLOCK_HEAD = re.compile(r"""^(?P<ind>[ \t]*)(?:-[ \t]+)?["']?(?P<name>""" + _NAME + r""")["']?[ \t]*:[ \t]*"""
                         r"""[|>][+-]?[1-9]?[ \t]*(?:#.*)?$""")
# A line that is one JSON string (an .ipynb cell's source line): its text is matched as a line of its own.
_JSON_LINE = re.compile(r"""^(?P<head>[ \t]*")(?P<inner>.*?)(?P<tail>(?:\\n)?",?[ \t]*)$""")
# A value that starts like a call or an index (`get_token(`, `Optional[`, `tokens[0]`, `sha256(x)`): code
# when the name has the shape of an identifier (snake, camel, Pascal, CONSTANT, dotted), also when a chunk
# ends mid-call. `hZGE8F(s7Fx)` has no such shape: a password with a parenthesis.
_CALL_HEAD = re.compile(r"^([A-Za-z_$@][\w.$@]*)[\[(]")
_IDENT_SHAPE = re.compile(r"[a-z_][a-z0-9_]*|_*[a-z]+(?:[A-Z][a-z]+)+|_*[A-Z]+[a-z]+(?:[A-Z]+[a-z]+)*|_*[A-Z][A-Z_]*")
# HTTP headers (`X-Api-Key: v`, `Private-Token: v`): a hyphenated name, a colon, a token-shaped value.
_HEADER = re.compile(r"(?<![\w\-])(?P<pre>(?P<name>[A-Za-z][A-Za-z0-9]*(?:-[A-Za-z0-9]+){1,5})[ \t]*:[ \t]*)"
                     r"(?P<val>[A-Za-z0-9_\-.=+/~]{8,400})(?![\w\-.=+/~])")
# Cookie headers: every `name=value` pair after `Cookie:` / `Set-Cookie:`.
_COOKIE_HEAD = re.compile(r"(?i)\b(?:set-)?cookie[ \t]*:")
_COOKIE_PAIR = re.compile(r"(?P<pre>(?<![\w.\-])(?P<name>[\w.\-]{1,60})=)(?P<val>[^;\s\"'`,]{8,400})")
# `name=value` in the middle of a line (a URL query, a commit message, `f(secret=x)`): token-shaped values
# only, and not a call, an index or an attribute.
_INLINE = re.compile(r"(?P<pre>(?<![\w.\-$@])(?P<name>[A-Za-z_][\w.\-]{0,60})=)"
                     r"(?P<val>[A-Za-z0-9_\-.+/~%]{8,400}={0,2})(?![\w(\[.\-+/~%=])")
# XML: `<password>v</password>`, and .NET appSettings `<add key="ApiKey" value="v" />`.
_XML_ELEMENT = re.compile(r"<(?P<name>[A-Za-z_][\w.\-]{0,60})>(?P<val>[^<>\n]{1,400})</(?P=name)>")
_XML_KEY_VALUE = re.compile(r"""\bkey=(?P<kq>["'])(?P<name>[^"'\n]{1,80})(?P=kq)[ \t]+(?P<pre>value=(?P<q>["']))"""
                            r"""(?P<val>[^"'\n]{1,400})(?P=q)""")
# `auth=("user", "password")`, `HTTPBasicAuth("user", "password")`.
_AUTH_PAIR = re.compile(r"""(?P<pre>(?:(?<![\w])auth[ \t]*[=:]|(?:Basic|Digest|Proxy)Auth[ \t]*\()[ \t]*[(\[]?[ \t]*"""
                        r"""(?P<q1>["'])[^"'\n]{0,100}(?P=q1)[ \t]*,[ \t]*)(?P<q>["'])(?P<val>[^"'\n]{1,200})(?P=q)""")
_FLAG = re.compile(r"""(?P<pre>(?<![\w-])--?(?P<name>[A-Za-z][\w\-]{0,60})(?:=|[ \t]+)(?P<q>["']?))"""
                   r"""(?P<val>[^\s"'`;|&]{1,400})(?P=q)""")
# Name endings that make an assignment secret. Short words must be a whole name segment.
_PASSWORD_WORDS = ("password", "passwd", "passphrase")
_PASSWORD_SEGMENTS = ("pwd", "pass", "pw")
_STRONG_WORDS = ("secret", "token", "apikey", "api_key", "access_key", "private_key",
                 "secret_key", "authtoken", "credentials", "access_token", "refresh_token",
                 "secretkey", "privatekey", "private_key_id", "key_data")  # camelCase names lower-case to these
_STRONG_SEGMENTS = ("auth",)
_WEAK_WORDS = ("signature", "credential", "cookie", "hmac")
_WEAK_SEGMENTS = ("key", "salt", "dsn", "sig")
_PLACEHOLDER_WORDS = {
    "changeme", "change_me", "password", "passwd", "secret", "token", "example", "dummy",
    "placeholder", "redacted", "none", "null", "nil", "true", "false", "undefined", "test",
    "testing", "sample", "your_password", "yourpassword", "mypassword", "your-secret",
    "notasecret", "not-a-secret", "fake", "foobar", "foo", "bar", "todo", "fixme", "required",
    "optional", "default", "hidden", "masked", "string", "str", "bytes", "int", "any",
}
_PLACEHOLDER_RE = re.compile(
    r"(?i)^(?:x+|\*+|\.+|-+|#+|_+|0+|1234\w*|<[^>]*>|\{[^}]*\}|\$\w+|.*\$\{.*|.*\{\{.*|%\(?\w*\)?s?|.*your[_\- ].*|.*example.*"
    r"|.*placeholder.*|.*changeme.*|.*dummy.*|.*fake.*|.*xxxx.*|.*\*\*\*.*|.*REDACTED.*)$")
_REF_RE = re.compile(r"^(?:[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+(?:\(\))?|_*[A-Z][A-Z0-9_]*"
                     r"|_*[a-z][a-z0-9]*(?:[_\-]+[a-z0-9]+)+|_+[a-z][a-z0-9]*)$")
# A value holding a machine-made run (`live_<hex>`, `<id>.<random>.<random>`, a UUID) is a literal, even
# when its shape would pass for a reference (`snake_case`, `dotted.name`) or code.
_SEGMENT_SPLIT = re.compile(r"[._\-:/~+=]")
_UUID_RE = re.compile(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}")
_CODE_RE = re.compile(r"^(?:[a-z]+|[A-Za-z]+(?:[_\-][A-Za-z]+)*|[\w.\-]*/[\w.\-/]*|[\w\-]+\.[a-z]{2,4})$")


def _entropy(s: str) -> float:
    n = len(s)
    return -sum(c / n * math.log2(c / n) for c in Counter(s).values())


_HEX_RUN = re.compile(r"[0-9a-f]+|[0-9A-F]+")
_PIECES = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|[0-9]+")


def _random_run(seg: str, min_len: int = 12) -> bool:
    """A segment a generator made: 12+ ASCII letters and digits (both) in short pieces. Cut into words
    (`Private`, `Key`, `25519`), random alphanumerics average under 2 characters a piece (95% of
    20-character ones under 2.5), names with digits 3.3 or more (`X25519PublicKey` 3.75, `sha256Digest` 4)."""
    if len(seg) < min_len or not seg.isascii() or not seg.isalnum() or seg.isdigit() or seg.isalpha():
        return False
    if len(seg) >= max(16, min_len) and _HEX_RUN.fullmatch(seg):
        return True  # a digest or key in hex (with letters and digits both, as checked above)
    return len(seg) < 3.0 * len(_PIECES.findall(seg)) and _entropy(seg) >= 3.0


def _generated(v: str, min_len: int = 12) -> bool:
    """Does the value hold a machine-made run of `min_len`+ characters (or is it a UUID)?"""
    return bool(_UUID_RE.fullmatch(v)) or any(_random_run(seg, min_len) for seg in _SEGMENT_SPLIT.split(v))


def _classes(s: str) -> int:
    return sum((any(c.islower() for c in s), any(c.isupper() for c in s),
                any(c.isdigit() for c in s), any(not c.isalnum() for c in s)))


def _ends(n: str, words: tuple[str, ...], segments: tuple[str, ...]) -> bool:
    return n.endswith(words) or any(n == w or n.endswith("_" + w) for w in segments)


# Tokens that are no credential: pagination cursors and idempotency keys (AWS's `NextToken`,
# `ClientRequestToken`, `ChangeToken` hold UUIDs and random ids in every API example).
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")
_NOT_CREDENTIAL = ("next_token", "page_token", "pagination_token", "continuation_token", "change_token",
                   "request_token", "idempotency_token", "idempotency_key", "action_token", "sync_token")


def _name_strength(name: str) -> int:
    """3 = a password, 2 = a secret by name, 1 = secret only if the value looks random, 0 = no."""
    if _CAMEL.sub("_", name).lower().replace("-", "_").endswith(_NOT_CREDENTIAL):
        return 0
    n = name.lower().replace("-", "_").replace(".", "_").strip("_$@").rstrip("0123456789_")
    if _ends(n, _PASSWORD_WORDS, _PASSWORD_SEGMENTS):
        return 3
    if _ends(n, _STRONG_WORDS, _STRONG_SEGMENTS):
        return 2
    if _ends(n, _WEAK_WORDS, _WEAK_SEGMENTS):
        return 1
    return 0


_SELF_WORDS = ("password", "passwd", "secret", "token", "changeme")
_KEYISH_RE = re.compile(r"^[A-Za-z0-9+/=_\-.~]+$")
_PATHISH_RE = re.compile(r"/.*\.[a-z]{2,8}$")


def looks_like_secret_value(value: str, strength: int = 2, quoted: bool = True) -> bool:
    """Would this literal be a real credential rather than a placeholder, path or identifier?"""
    v = value.strip()
    if len(v) < 8 or "REDACTED:" in v or any(c.isspace() for c in v):
        return False
    if v.endswith(".") and not _generated(v.rstrip(".")):  # the end of a sentence, unless a key ends so
        return False
    if "{" in v or "<" in v or ">" in v or "%s" in v or "%(" in v or "…" in v or "..." in v:
        return False  # templates, f-strings, format strings, <placeholders>, elided examples
    low = v.lower()
    if len(v) < 20 and any(w in low for w in _SELF_WORDS):
        return False  # "password1", "myToken123": demo values naming themselves
    if any(seq in low for seq in ("0123456789", "9876543210", "abcdefgh")):
        return False
    if v.lower() in _PLACEHOLDER_WORDS or _PLACEHOLDER_RE.match(v):
        return False
    if v.startswith(("http://", "https://", "os.environ", "process.env", "env(", "ENV[", "$(")):
        return False
    if len(set(v)) <= 3:
        return False
    generated = _generated(v)
    if _REF_RE.match(v) and not generated:  # a dotted name or CONSTANT: a reference to a secret, not the secret
        return False
    if not quoted and v.isidentifier() and not any(c.isdigit() for c in v):
        return False  # `password: SecretStr`, `token = tok`: code, not a literal
    if strength >= 3:
        return True
    random_looking = (len(v) >= 16 and _entropy(v) >= 3.5 and _classes(v) >= 2
                      and not v.isalpha())  # CamelCaseTypeNames are not keys
    if strength == 2:
        return random_looking or generated or not _CODE_RE.match(v)
    # Weak names ("..._key", "salt"): only values shaped like generated keys, which carry digits.
    # (a 16-digit hex value under `...Key` is as often a schema hash or an id: 20+ characters or a UUID)
    random_looking = ((random_looking or _generated(v, 20)) and any(c.isdigit() for c in v) and bool(_KEYISH_RE.match(v))
                      and not _PATHISH_RE.search(v))
    return random_looking and not _CODE_RE.match(v)


def _tag(kind: str, found: list[str]) -> str:
    found.append(kind)
    return _TAG.format(kind)


def _token(m: re.Match[str], kind: str, found: list[str]) -> str:
    start = m.start()
    if start and m.string[start - 1] in _WORDISH and kind not in _INSIDE_WORDS:
        return m.group(0)  # inside a longer word: not this token format
    if kind == "private_key" and not _encoded_private_key(m.group(0)):
        return m.group(0)
    return _tag(kind, found)


def _encoded_private_key(b64: str) -> bool:
    """Does this base64 text decode to a PEM private key's BEGIN line?"""
    import base64
    import binascii

    head = b64[:80]
    try:
        return b"PRIVATE KEY" in base64.b64decode(head[: len(head) // 4 * 4])
    except (binascii.Error, ValueError):
        return False


def _code_like(v: str, cut: bool = False) -> bool:
    """An unquoted value that is code, not a literal: a call, an index, an expression, a statement end.

    `cut`: the value ends the text without a newline, so a chunk boundary may have cut a call short."""
    return (v.endswith((",", ";", "{", "(", "[", ":", "=")) or v.startswith(("(", "[", "{", "<", "!", "&", "*"))
            or any(op in v for op in ("()", "=>", "->", "::", "||", "&&", "==", "),"))
            or _call_shaped(v, cut))


def _call_shaped(v: str, cut: bool) -> bool:
    """`get_password(user)`, `tokens[0]`, `base64.b16encode(raw` are code; `ab(K3xYz9q` is a password: the
    name must have an identifier's shape and the brackets must close, unless the name is dotted or cut."""
    m = _CALL_HEAD.match(v)
    if m is None:
        return False
    name = m.group(1).strip(".$@")
    if "." in name:
        return True
    if not _IDENT_SHAPE.fullmatch(name):
        return False
    return cut or (v.count("(") == v.count(")") and v.count("[") == v.count("]"))


def _sub_assign(m: re.Match[str], found: list[str], cut: bool = False, min_strength: int = 1) -> str:
    strength = _name_strength(m.group("name"))
    if strength < min_strength:
        return m.group(0)
    quoted = "q" in m.groupdict() and bool(m.group("q"))
    val = m.group("val")
    if not strength or (not quoted and _code_like(val, cut)) or not looks_like_secret_value(val, strength, quoted):
        return m.group(0)
    kind = "password" if strength == 3 else "secret"
    found.append(kind)
    whole = m.group(0)
    return whole[: m.start("val") - m.start()] + _TAG.format(kind) + whole[m.end("val") - m.start():]


def _sub_cookie(m: re.Match[str], found: list[str]) -> str:
    if not looks_like_secret_value(m.group("val"), 1, False):
        return m.group(0)
    return m.group("pre") + _tag("cookie", found)


def _sub_xml(m: re.Match[str], found: list[str]) -> str:
    """`<password>v</password>`: the element's text, when the element's name is a secret's."""
    strength = _name_strength(m.group("name"))
    val = m.group("val")
    if not strength or not looks_like_secret_value(val, strength, True):
        return m.group(0)
    kind = "password" if strength == 3 else "secret"
    return m.group(0)[: m.start("val") - m.start()] + _tag(kind, found) + m.group(0)[m.end("val") - m.start():]


def _keep_lines(body: str, kind: str) -> str:
    """Replace `body` by one tag, padded with as many newlines as it had."""
    newlines = body.count("\n")
    if newlines == 0:
        return _TAG.format(kind)
    return "\n" + _TAG.format(kind) + "\n" * (newlines - 1) if body.startswith("\n") else \
        _TAG.format(kind) + "\n" * newlines


def _redact_pem(text: str, found: list[str]) -> str:
    # Each BEGIN up to the first END after it. Searched by hand: a lazy `BEGIN(.*?)END` regex rescans to
    # the end of the text from every BEGIN that has no END (quadratic on a file of BEGIN lines).
    out, pos = [], 0
    while (begin := _PEM_BEGIN_RE.search(text, pos)) and (end := _PEM_END_RE.search(text, begin.end())):
        body = text[begin.end():end.start()]
        out.append(text[pos:begin.start()] + begin.group(0))
        if _KEY_MATERIAL.search(body):
            found.append("private_key")
            body = _keep_lines(body, "private_key")
        out.append(body + end.group(0))  # markers only (parsers, already redacted text) stay as they are
        pos = end.end()
    text = "".join(out) + text[pos:]
    m = _PEM_CLOSE.search(text)
    if m and "-----BEGIN" not in m.group(1) and _KEY_MATERIAL.search(m.group(1)):
        found.append("private_key")
        text = _keep_lines(m.group(1), "private_key") + text[m.start(2):]
    m = _PEM_OPEN.search(text)
    if m and "-----END" not in m.group(2) and _KEY_MATERIAL.search(m.group(2)):
        found.append("private_key")
        text = text[: m.end(1)] + _keep_lines(m.group(2), "private_key")
    return text


def redact(text: str) -> tuple[str, list[str]]:
    """Return (text with secrets replaced by "[REDACTED:<kind>]", kinds, one per redaction).

    Never adds or removes a line: replacements contain no newline, and multi-line private
    keys keep their line breaks.
    """
    found: list[str] = []
    if "PRIVATE KEY" in text:
        text = _redact_pem(text, found)

    # Every token format is 16+ characters without whitespace: the needles are looked for in the long words
    # only (a fifth of normal code), which cuts the cost of ~80 substring scans by three.
    area = " ".join([w for w in text.split() if len(w) >= 16])
    hit = {i for n, idx in _BY_NEEDLE.items() if n in area for i in idx} if area else set()
    hit.update(i for i, gates in _GATED if area and any(g.search(area) for g in gates))
    for i in sorted(hit):  # in _TOKENS order: a longer format before the shorter one it contains
        kind, _needles, rx = _TOKEN_RES[i]
        text = rx.sub(lambda m, k=kind: _token(m, k, found), text)
    if "://" in text and "@" in text:
        def url(m: re.Match[str]) -> str:
            pw = m.group(2)
            if (pw.lower() in _PLACEHOLDER_WORDS or _PLACEHOLDER_RE.match(pw) or "REDACTED:" in pw
                    or (pw.isalpha() and pw.islower() and len(pw) <= 10)):  # user:pass@host in docs
                return m.group(0)
            found.append("url_password")
            return m.group(1) + _TAG.format("url_password") + m.group(3)
        text = _URL_RE.sub(url, text)

        def url_user(m: re.Match[str]) -> str:
            if not m.string.endswith(("http", "https"), 0, m.start()) or not _generated(m.group(2)):
                return m.group(0)
            return m.group(1) + _tag("url_token", found) + m.group(3)
        text = _URL_USER_RE.sub(url_user, text)
    if "@tcp(" in text or "@unix(" in text:
        text = _GO_DSN_RE.sub(lambda m: _sub_flag_password(m, found), text)

    lower = text.lower()
    if "bearer" in lower or "authorization" in lower:
        def header(m: re.Match[str]) -> str:
            if not looks_like_secret_value(m.group(2), 1):
                return m.group(0)
            return m.group(1) + _tag("bearer_token", found)
        text = _BEARER_RE.sub(header, text)

    if "aws" in lower or "secretaccesskey" in lower or "secret_access_key" in lower:
        text = _AWS_SECRET_RE.sub(lambda m: m.group(1) + _tag("aws_secret_key", found), text)

    if "sig=" in lower or "signature=" in lower:
        def signed(m: re.Match[str]) -> str:
            v = m.group(2)
            if not (_entropy(v) >= 3.5 and _classes(v) >= 2):
                return m.group(0)
            return m.group(1) + _tag("signed_url", found)
        text = _SIGNED_URL_RE.sub(signed, text)

    for needles, rx in _CMD_PW_RES:
        if any(n in lower for n in needles):
            text = rx.sub(lambda m: _sub_command(m, found), text)

    if "machine" in lower and "password" in lower:
        text = _redact_netrc(text, found)
    if any(n in area for n in _PGPASS_NEEDLES):  # a pgpass line is one 16+ character word
        text = _PGPASS_RE.sub(lambda m: _sub_flag_password(m, found), text)

    if _HINT_RE.search(lower):
        text = _redact_assignments(text, found)
    return text, found


def _sub_command(m: re.Match[str], found: list[str]) -> str:
    if m.start() and m.string[m.start() - 1] in _WORDISH_DASH:
        return m.group(0)  # `xcurl`, `my-http`: not the command
    return _sub_flag_password(m, found)


def _sub_flag_password(m: re.Match[str], found: list[str]) -> str:
    if not looks_like_secret_value(m.group("val"), 3, bool(m.group("q"))):
        return m.group(0)
    found.append("password")
    return m.string[m.start():m.start("val")] + _TAG.format("password") + m.string[m.end("val"):m.end()]


def _plausible_password(v: str) -> bool:
    """A connection-string password: may hold spaces; not empty, a placeholder or a template."""
    v = v.strip()
    if v.startswith("{") and v.endswith("}"):
        v = v[1:-1]
    if len(v) < 4 or "REDACTED:" in v or len(set(v)) <= 2:
        return False
    if v.lower() in _PLACEHOLDER_WORDS or _PLACEHOLDER_RE.match(v) or _REF_RE.match(v):
        return False
    return not any(t in v for t in ("$", "%s", "%(", "{{", "<", ">", "…", "..."))


def _redact_netrc(text: str, found: list[str]) -> str:
    lines = text.split("\n")
    entry = False  # the previous non-empty line belongs to a netrc entry
    for i, line in enumerate(lines):
        if "machine" in line:
            lines[i] = line = _NETRC_INLINE.sub(lambda m: _sub_flag_password(m, found), line)
        elif entry and line.lstrip().startswith("password"):
            lines[i] = line = _NETRC_LINE.sub(lambda m: _sub_flag_password(m, found), line)
        if line.strip():
            entry = bool(_NETRC_ENTRY.match(line))
    return "\n".join(lines)


def _sub_conn(m: re.Match[str], found: list[str]) -> str:
    if not _plausible_password(m.group("val")):
        return m.group(0)
    found.append("password")
    return m.group("pre") + _TAG.format("password")


def _block_value_line(line: str, kind: str, found: list[str]) -> str:
    """One line inside a secret-named YAML block scalar: keep the indentation, hide the text."""
    body = line.strip()
    if (not body or "REDACTED:" in body or body.startswith("-----") or _PLACEHOLDER_RE.match(body)
            or body.lower() in _PLACEHOLDER_WORDS):
        return line
    found.append(kind)
    return line[: len(line) - len(line.lstrip())] + _TAG.format(kind)


def _redact_assignments(text: str, found: list[str]) -> str:
    """Run the assignment patterns only on lines that mention a secret-ish word (and on the lines of a
    YAML block scalar opened by such a line)."""
    lines = text.split("\n")
    block_indent, block_kind = -1, "secret"  # inside a secret-named block scalar: its key's indentation
    for i, line in enumerate(lines):
        if block_indent >= 0:
            stripped = line.strip()
            if not stripped or len(line) - len(line.lstrip()) > block_indent:
                lines[i] = _block_value_line(line, block_kind, found)
                continue
            block_indent = -1
        low = line.lower()
        if not _HINT_RE.search(low):
            continue
        head = _BLOCK_HEAD.match(line)
        if head and _name_strength(head.group("name")) >= 2:
            block_indent = len(head.group("ind").expandtabs())
            block_kind = "password" if _name_strength(head.group("name")) == 3 else "secret"
            continue
        new = line
        if ";" in new or "pwd" in low or "password" in low:
            new = _CONN_PW_RE.sub(lambda m: _sub_conn(m, found), new) if "=" in new and ";" in new else new
        new = _ASSIGN_Q.sub(lambda m: _sub_assign(m, found), new)
        cut = i == len(lines) - 1  # no newline after it: maybe a chunk boundary
        new = _ASSIGN_U.sub(lambda m, cut=cut: _sub_assign(m, found, cut), new)
        json_line = _JSON_LINE.match(new) if new.lstrip().startswith('"') else None
        if json_line:  # `"DB_PASSWORD=...\n",` in a notebook: the string's text is a line of its own
            inner = _ASSIGN_U.sub(lambda m: _sub_assign(m, found) if _name_strength(m.group("name")) >= 2
                                  else m.group(0), json_line.group("inner"))  # not "Signature: <hash>"
            new = json_line.group("head") + inner + json_line.group("tail")
        if "=" in new:
            new = _ENV_PREFIX.sub(lambda m: _sub_assign(m, found), new)
            new = _INLINE.sub(lambda m: _sub_assign(m, found, min_strength=2), new)
        if ":" in new:
            new = _HEADER.sub(lambda m: _sub_assign(m, found, min_strength=2), new)
        if "cookie" in low and (head := _COOKIE_HEAD.search(new)):
            new = new[:head.end()] + _COOKIE_PAIR.sub(lambda m: _sub_cookie(m, found), new[head.end():])
        if "</" in new:
            new = _XML_ELEMENT.sub(lambda m: _sub_xml(m, found), new)
        if "key=" in new:
            new = _XML_KEY_VALUE.sub(lambda m: _sub_assign(m, found), new)
        if "auth" in low:
            new = _AUTH_PAIR.sub(lambda m: _sub_flag_password(m, found), new)
        if "-" in new:
            new = _FLAG.sub(lambda m: _sub_assign(m, found), new)
        lines[i] = new
    return "\n".join(lines)


# --- names: branches and file paths ---------------------------------------------------------------
# A run of name characters long enough to hold a token; names without one (nearly all) cost one search.
_NAME_RUN = re.compile(r"[A-Za-z0-9_\-]{16,}")  # every token format holds such a run (a JWT, `hvs.`: after the dot)
_NAME_SECRET_WORD = re.compile(r"(?i)secret|token|passw(?:or)?d|api[_\-]?key|auth|credential|private[_\-]?key")
_NAME_SEGMENT = re.compile(r"[A-Za-z0-9]+")


def redact_name(name: str) -> str:
    """A branch name or repo path with its tokens replaced: known token formats anywhere, and machine-made
    runs in a component that names a secret (`api_key_live_<hex>.md`). Text shown as a name, so kept on
    one line; unchanged when nothing looks like a token."""
    if not any(any(c.isdigit() for c in run) for run in _NAME_RUN.findall(name)):
        return name
    out = name
    for kind, needles, rx in _TOKEN_RES:  # the token formats only: a name holds no assignment or URL
        if _present(needles, name):
            out = rx.sub(lambda m, k=kind: _token(m, k, []), out)
    parts = out.split("/")
    for i, part in enumerate(parts):
        if _NAME_SECRET_WORD.search(part) and "REDACTED:" not in part:
            parts[i] = _NAME_SEGMENT.sub(lambda m: _TAG.format("secret") if _random_run(m.group(0)) else m.group(0), part)
    return "/".join(parts)
