"""secrets.redact: a planted corpus must come out clean, normal code must come out unchanged.

Planted secrets are generated at run time from a seeded RNG, so no credential-shaped literal is
committed (push protection and secret scanners would rightly complain).
"""
from __future__ import annotations

import base64
import random
import string

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hippo.core.secrets import redact

ALNUM = string.ascii_letters + string.digits


def _rand(rng: random.Random, n: int, alphabet: str = ALNUM) -> str:
    # Guarantee mixed classes so generated values look like real keys.
    s = [rng.choice(string.ascii_lowercase), rng.choice(string.ascii_uppercase), rng.choice(string.digits)]
    s += [rng.choice(alphabet) for _ in range(n - 3)]
    rng.shuffle(s)
    return "".join(s)


def _pem(rng: random.Random, label: str, lines: int) -> tuple[str, list[str]]:
    body = [_rand(rng, 64, ALNUM + "+/") for _ in range(lines)]
    return f"-----BEGIN {label}-----\n" + "\n".join(body) + f"\n-----END {label}-----", body


def planted_corpus(seed: int = 7) -> list[tuple[str, str, list[str]]]:
    """[(file name, text, secret substrings that must not survive)]."""
    rng = random.Random(seed)
    r = lambda n, a=ALNUM: _rand(rng, n, a)  # noqa: E731
    up = string.ascii_uppercase + string.digits
    files: list[tuple[str, str, list[str]]] = []

    gh, gho, ghs, pat = "ghp_" + r(36), "gho_" + r(36), "ghs_" + r(36), "github_pat_" + r(22) + "_" + r(59)
    aws_id, aws_sk = "AKIA" + "".join(rng.choices(up, k=16)), r(40, ALNUM + "/+")
    asia = "ASIA" + "".join(rng.choices(up, k=16))
    files.append(("settings.py", f'''"""Settings."""
import os

AWS_ACCESS_KEY_ID = "{aws_id}"
AWS_SECRET_ACCESS_KEY = "{aws_sk}"
SESSION_ID = '{asia}'
GITHUB_TOKEN = "{gh}"
DB_PASSWORD = "hunter2hunter2"
SECRET_KEY = 'django-insecure-{r(30)}'
API_KEY = os.environ.get("API_KEY")
DEBUG = True

def connect(password="S3cr3t!pass"):
    return client.login(token="{gho}", other="{ghs}")

PAT = "{pat}"
''', [aws_id, aws_sk, asia, gh, "hunter2hunter2", "django-insecure-", "S3cr3t!pass", gho, ghs, pat]))

    slack, slackb, stripe, rk = "xoxb-" + r(11, "0123456789") + "-" + r(24), "xoxp-" + r(30), \
        "sk_live_" + r(24), "rk_live_" + r(24)
    gkey = "AIza" + r(35, ALNUM + "_-")
    oai, ant = "sk-proj-" + r(48, ALNUM + "_-"), "sk-ant-api03-" + r(80, ALNUM + "_-")
    oai_old = "sk-" + r(48)
    hook = "https://hooks.slack.com/services/T" + r(8, up) + "/B" + r(8, up) + "/" + r(24)
    files.append(("config.js", f'''// runtime config
const config = {{
  slackToken: "{slack}",
  userToken: '{slackb}',
  stripe: {{ secretKey: "{stripe}", restricted: `{rk}` }},
  googleMapsKey: "{gkey}",
  openai: new OpenAI({{ apiKey: "{oai}" }}),
  legacy: "{oai_old}",
  anthropic: "{ant}",
  webhook: "{hook}",
  clientSecret: "{r(32)}",
}};
module.exports = config;
''', [slack, slackb, stripe, rk, gkey, oai, oai_old, ant, hook[30:], ]))
    files[-1][2].append(files[-1][1].split('clientSecret: "')[1].split('"')[0])

    glpat, url_pw, url_pw2 = "glpat-" + r(20, ALNUM + "_-"), r(14), r(18, ALNUM + "!%")
    yaml_pw, yaml_tok = r(16), r(40)
    files.append(("docker-compose.yaml", f'''services:
  db:
    image: postgres:16
    environment:
      POSTGRES_PASSWORD: {yaml_pw}
      DATABASE_URL: postgres://app:{url_pw}@db:5432/app
      REDIS_URL: "redis://default:{url_pw2}@cache:6379/0"
  ci:
    environment:
      - GITLAB_TOKEN={glpat}
      api_token: "{yaml_tok}"
''', [yaml_pw, url_pw, url_pw2, glpat, yaml_tok]))

    jwt = "eyJ" + r(20, ALNUM + "_-") + ".eyJ" + r(60, ALNUM + "_-") + "." + r(43, ALNUM + "_-")
    bearer, md_pw = r(40, ALNUM + "-_"), r(12)
    files.append(("README.md", f'''# Using the API

Call it with a token:

```bash
curl -H "Authorization: Bearer {bearer}" https://api.example.com/v1
export OPENAI_API_KEY=sk-{r(48)}
mysql -u root --password={md_pw}
```

A sample session token looks like `{jwt}`.
''', [bearer, jwt, md_pw]))
    files[-1][2].append(files[-1][1].split("OPENAI_API_KEY=")[1].split("\n")[0])

    rsa, rsa_body = _pem(rng, "RSA PRIVATE KEY", 25)
    ossh, ossh_body = _pem(rng, "OPENSSH PRIVATE KEY", 7)
    files.append(("tests/fixtures/keys.py", f'''import pytest

RSA_KEY = """{rsa}"""

OPENSSH = """
{ossh}
"""
''', rsa_body + ossh_body))

    sa_key_body = [r(64, ALNUM + "+/") for _ in range(4)]
    sa_key = "-----BEGIN PRIVATE KEY-----\\n" + "\\n".join(sa_key_body) + "\\n-----END PRIVATE KEY-----\\n"
    hf, npm, sg = "hf_" + r(34), "npm_" + r(36), "SG." + r(22, ALNUM + "_-") + "." + r(43, ALNUM + "_-")
    azure = r(86, ALNUM + "+/") + "=="
    json_pw, json_tok = r(20, ALNUM + "#!"), r(32, "0123456789abcdef")
    files.append(("service.json", f'''{{
  "type": "service_account",
  "private_key_id": "{r(40, "0123456789abcdef")}",
  "private_key": "{sa_key}",
  "hf": "{hf}",
  "npm": "{npm}",
  "sendgrid": "{sg}",
  "storage": "DefaultEndpointsProtocol=https;AccountName=acct;AccountKey={azure};EndpointSuffix=core.windows.net",
  "password": "{json_pw}",
  "access_token": "{json_tok}"
}}
''', sa_key_body + [hf, npm, sg, azure[:40], json_pw, json_tok]))

    env_pw, env_tok, env_secret = r(14), r(30), r(24, ALNUM + "+/=")
    files.append((".env.production", f'''# production
DB_HOST=db.internal
DB_PASSWORD={env_pw}
export STRIPE_WEBHOOK_SECRET=whsec_{env_secret}
SLACK_BOT_TOKEN={env_tok}
PORT=8080
''', [env_pw, env_secret, env_tok]))

    go_pw, rb_key = r(16), r(32)
    files.append(("main.go", f'''package main

const dbPassword = "{go_pw}"

func main() {{
	cfg := Config{{APIKey: "{rb_key}", Secret: "{r(24)}"}}
	_ = cfg
}}
''', [go_pw, rb_key]))
    files[-1][2].append(files[-1][1].split('Secret: "')[1].split('"')[0])

    php_pw = r(15)
    files.append(("config.php", f'''<?php
return [
    'db_password' => '{php_pw}',
    'token' => "{r(40)}",
];
''', [php_pw]))
    files[-1][2].append(files[-1][1].split("'token' => \"")[1].split('"')[0])
    return files


def planted_gaps(seed: int = 12) -> list[tuple[str, str, list[str]]]:
    """The kinds issue 12 found missing: [(file name, text, secret substrings that must not survive)]."""
    rng = random.Random(seed)
    r = lambda n, a=ALNUM: _rand(rng, n, a)  # noqa: E731
    up = string.ascii_uppercase + string.digits
    files: list[tuple[str, str, list[str]]] = []

    hash_pw, paren_pw, block_pw, block_tok = r(6) + "#" + r(7), r(5) + "(" + r(7), r(18), r(30)
    files.append(("config/app.yaml", f"""db:
  host: db.internal
  password: {hash_pw}   # rotated monthly
  replica_password: {paren_pw}
tls:
  passphrase: |
    {block_pw}
  cert: server.crt
api:
  secret_token: >-
    {block_tok}
    {block_tok[::-1]}
  timeout: 30
""", [hash_pw, paren_pw, block_pw, block_tok, block_tok[::-1]]))

    props_pw, ini_pw = r(7) + "#" + r(5), r(6) + "(" + r(4) + ")"
    files.append(("config/application.properties", f"""spring.datasource.url=jdbc:postgresql://db/app
spring.datasource.password={props_pw}
""", [props_pw]))
    files.append(("config/settings.ini", f"""[database]
user = app
password = {ini_pw}
""", [ini_pw]))

    sql_pw, odbc_pw, braced = r(14), r(11), r(6) + ";" + r(6)
    files.append(("config/appsettings.json", f"""{{
  "ConnectionStrings": {{
    "Default": "Server=tcp:app.database.windows.net,1433;Initial Catalog=app;User ID=app;Password={sql_pw};Encrypt=True;",
    "Legacy": "Driver={{ODBC Driver 18 for SQL Server}};Server=db;Uid=sa;Pwd={odbc_pw};",
    "Braced": "Server=db;Uid=sa;Pwd={{{braced}}};"
  }}
}}
""", [sql_pw, odbc_pw, braced]))

    pg_pw, sshpass_pw, mysql_pw, docker_pw, redis_pw, mysql_env = r(13), r(12), r(12), r(16), r(20), r(12)
    files.append(("scripts/deploy.sh", f"""#!/bin/sh
PGPASSWORD={pg_pw} psql -h db -U app -c 'select 1'
sshpass -p '{sshpass_pw}' ssh deploy@web1 'sudo systemctl restart app'
mysqldump -u root -p{mysql_pw} app > dump.sql
docker login -u ci -p {docker_pw} registry.example.com
redis-cli -h cache -a {redis_pw} ping
docker run -e MYSQL_ROOT_PASSWORD={mysql_env} mysql:8
""", [pg_pw, sshpass_pw, mysql_pw, docker_pw, redis_pw, mysql_env]))

    nb_pw, nb_key, nb_env = r(14), r(32), r(15)
    files.append(("notebooks/explore.ipynb", "\n".join([
        '{', ' "cells": [', '  {', '   "cell_type": "code",', '   "source": [',
        '    "import psycopg\\n",',
        f'    "password = \\"{nb_pw}\\"\\n",',
        f'    "api_key = \\"{nb_key}\\"\\n",',
        f'    "DB_PASSWORD={nb_env}\\n"',
        '   ]', '  }', ' ]', '}', '']), [nb_pw, nb_key, nb_env]))

    sts_id, sts_secret, sts_token = "ASIA" + "".join(rng.choices(up, k=16)), r(40, ALNUM + "/+"), r(300, ALNUM + "/+=")
    files.append(("config/sts-credentials.json", f"""{{
    "Credentials": {{
        "AccessKeyId": "{sts_id}",
        "SecretAccessKey": "{sts_secret}",
        "SessionToken": "{sts_token}",
        "Expiration": "2030-01-01T00:00:00Z"
    }}
}}
""", [sts_id, sts_secret, sts_token[:60]]))

    sas_sig = r(24) + "%2B" + r(16) + "%3D"
    amz_sig = "".join(rng.choices("0123456789abcdef", k=64))
    files.append(("src/storage.py", "\n".join([
        'BLOB_URL = ("https://acct.blob.core.windows.net/backups/db.bak?sv=2022-11-02&ss=b&srt=o&sp=r"',
        f'            "&se=2030-01-01T00:00:00Z&spr=https&sig={sas_sig}")',
        f'PRESIGNED = "https://b.s3.amazonaws.com/k?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Signature={amz_sig}"',
        '']), [sas_sig, amz_sig]))
    return files


GAP_KINDS = ["yaml #", "yaml (", "yaml block |", "yaml block >-", ".properties #", "INI (", "SQL Server Password=",
             "ODBC Pwd=", "PGPASSWORD=x psql", "sshpass -p", "mysql -pX", "docker login -p", "redis-cli -a",
             "-e VAR=x", ".ipynb assignments", "STS SecretAccessKey", "Azure SAS sig=", "S3 presigned"]


def test_issue_12_gaps_nothing_survives():
    corpus = planted_gaps()
    secrets = [s for _, _, ss in corpus for s in ss]
    assert len(secrets) >= len(GAP_KINDS)
    for name, text, planted in corpus:
        out, kinds = redact(text)
        assert out.count("\n") == text.count("\n"), name
        assert [s for s in planted if s in out] == [], f"{name}:\n{out}"
        assert kinds, name


@pytest.mark.parametrize("seed", range(5))
def test_issue_12_gaps_other_seeds(seed):
    for name, text, planted in planted_gaps(seed + 200):
        out, _ = redact(text)
        assert [s for s in planted if s in out] == [], f"{name}:\n{out}"


def test_issue_12_random_passwords_with_hash_or_paren():
    """Random passwords with a `#` or `(` anywhere, in YAML, INI and .properties lines: none survives.

    Not generated: a leading `!`/`*`/`&` (read as code: negation, dereference; YAML tags and aliases) and
    `%(` (a Python format string); docs/reliability.md lists them as known limits."""
    rng = random.Random(9)
    missed = []
    for _ in range(400):
        chars = list(_rand(rng, rng.randint(8, 20), ALNUM + "!@%^*-_+"))
        chars.insert(rng.randint(1, len(chars) - 1), rng.choice("(#"))
        pw = "".join(chars).lstrip("!*&").replace("%(", "%x(")
        for line in (f"db:\n  password: {pw}\n", f"password = {pw}\n", f"spring.datasource.password={pw}\n"):
            if pw in redact(line)[0]:
                missed.append(line.strip())
    assert missed == []


@pytest.mark.parametrize("text, expected", [
    ("password: ab#cd12(ef", "password: [REDACTED:password]"),
    ("password = Uh237(kY91vW", "password = [REDACTED:password]"),
    ("  password: Xy9#kLm2pQ  # note", "  password: [REDACTED:password]  # note"),
    ("- DB_PASSWORD=Xy9#kLm2pQ", "- DB_PASSWORD=[REDACTED:password]"),
    ('cs = "Server=db;Password=p@ss w0rd#1;"', 'cs = "Server=db;Password=[REDACTED:password];"'),
    ("PGPASSWORD=Xk9mP2qLw psql -h db", "PGPASSWORD=[REDACTED:password] psql -h db"),
    ("mysql -uroot -pXk9mP2qLw app", "mysql -uroot -p[REDACTED:password] app"),
    ('sshpass -p "Xk9mP2qLw" ssh h', 'sshpass -p "[REDACTED:password]" ssh h'),
    ("password: |\n  correct horse battery staple\nuser: x", "password: |\n  [REDACTED:password]\nuser: x"),
])
def test_issue_12_exact_replacements(text, expected):
    assert redact(text)[0] == expected


@pytest.mark.parametrize("text", [
    "password = get_password(user)", "token = tokens[0]", "token = operators[va",
    "password = base64.b16encode(random_bytes[8:])  # Must be valid UTF-8",
    "password = quote(parts.password, safe=\"%!$&'()*+,;=\")",
    "token = initial_token_data.get_frozen_token().token", "_request_auth: Optional[Dict[StrictStr, Any]] = None,",
    'conn = f"Server={host};Database={db};User ID={user};Password={password};"',
    'conn = "Server=x;Database=y;Password=${DB_PASSWORD};"', 'cs = "Server=db;Password=;"',
    "mysql -u root -p mydb", 'mysql -u root -p"$MYSQL_PWD" app', 'sshpass -p "$SSHPASS" ssh host',
    "PGPASSWORD=$PGPASS psql", "psql -h db -p 5432 -U app", "ssh -p 2222 deploy@host",
    "password: |\n  {{ vault_db_password }}\nuser: app", "key: |\n  some text block\n",
    '"AWS::IAM::AccessKey": "bf29289b78d371e3"', '    "Signature: 8a477f597d28d172789f06886806bc55\\n"',
    "SecretAccessKey: !Ref SecretKeyParam", 'url = "https://x.blob.core.windows.net/c?sig=<signature>"',
    "docker login -u ci -p $CI_TOKEN registry", 'redis-cli -a "$REDIS_PASSWORD" ping',
    '"source": ["token = tokenizer(text)\\n"]', "auth = HTTPBasicAuth(self.us",
    "self.session.auth = HTTPKerberosAuth(**self.kerb_kwargs)",
])
def test_issue_12_normal_code_untouched(text):
    assert redact(text) == (text, [])


def test_planted_corpus_nothing_survives():
    corpus = planted_corpus()
    secrets = [s for _, _, ss in corpus for s in ss]
    assert len(secrets) >= 50
    kinds: set[str] = set()
    for name, text, planted in corpus:
        out, found = redact(text)
        kinds.update(found)
        assert out.count("\n") == text.count("\n"), name
        survivors = [s for s in planted if s in out]
        assert survivors == [], f"{name}: {survivors}\n{out}"
    assert len(kinds) >= 10, kinds


@pytest.mark.parametrize("seed", range(5))
def test_planted_corpus_other_seeds(seed):
    for name, text, planted in planted_corpus(seed + 100):
        out, _ = redact(text)
        assert [s for s in planted if s in out] == [], name


def test_pem_keeps_line_numbers_and_markers():
    rng = random.Random(1)
    pem, body = _pem(rng, "EC PRIVATE KEY", 5)
    text = f"line1\n{pem}\nafter = 1\n"
    out, kinds = redact(text)
    assert kinds == ["private_key"]
    lines = out.splitlines()
    assert len(lines) == len(text.splitlines())
    assert lines[1] == "-----BEGIN EC PRIVATE KEY-----"
    assert lines[2] == "[REDACTED:private_key]"
    assert lines[7] == "-----END EC PRIVATE KEY-----"
    assert lines[8] == "after = 1"


@pytest.mark.parametrize("cut", ["head", "tail"])
def test_pem_split_across_chunks(cut):
    pem, body = _pem(random.Random(2), "PRIVATE KEY", 6)
    lines = pem.split("\n")
    part = "\n".join(lines[:4]) if cut == "head" else "\n".join(lines[3:])
    out, kinds = redact(part)
    assert kinds == ["private_key"]
    assert out.count("\n") == part.count("\n")
    assert not any(b in out for b in body)


@pytest.mark.parametrize("text, expected", [
    ('url = "postgres://alice:pa55w0rdX@db.local/app"', 'url = "postgres://alice:[REDACTED:url_password]@db.local/app"'),
    ('password = "hunter2hunter2"', 'password = "[REDACTED:password]"'),
    ("DB_PASSWORD=hunter2hunter2  # prod", "DB_PASSWORD=[REDACTED:password]  # prod"),
    ('"auth": "Zm9vOmJhcjEyMzQ1Njc4OTA="', '"auth": "[REDACTED:secret]"'),
])
def test_exact_replacements(text, expected):
    assert redact(text)[0] == expected


@pytest.mark.parametrize("text", [
    'password = ""', 'password = "changeme"', "password = '<your password>'", 'token = "${TOKEN}"',
    'api_key = os.environ["API_KEY"]', 'password: "{{ vault_pw }}"', 'secret = "xxxxxxxxxxxx"',
    'token_type = "bearer_token"', 'tokenizer = "bert-base-uncased"', "max_tokens = 4096",
    'PASSWORD_FIELD = "password_confirmation"', 'secret = settings.SECRET_KEY',
    'auth = "django.contrib.auth"', 'sort_key = "created_at"', 'password = self.password_field',
    'url = "https://user@example.com/path"', 'url = "postgres://user:password@localhost/db"',
    'author = "Jane Developer"', 'key = "name"', 'DEFAULT_TOKEN = "GITHUB_TOKEN"',
    'sk-learn', 'password: str',
    "id = 'AKIA'", 'a = "sk-proj-short"', "We pass the token to the server.",
    'START = b"-----BEGIN OPENSSH PRIVATE KEY-----"\nEND = b"-----END OPENSSH PRIVATE KEY-----"',
    "e.g. `https://user:pass@host:port/path`", "password: SecretStr", "request_auth=_request_auth",
    '_token = "(%s)|(%s)" % (a, b)', 'key = "data/year=2019/part-0.parquet"', 'password="password1"',
    'DIRECT_KEY = b"0123456789abcdef"', 'signature = "float64|complex64"', "token: TextGenerationStreamToken",
    '"refresh_token": "hf_oauth__refresh_token"', 'mhu = Url("https://foo.com:123,foo:bar@bar.com/p")',
])
def test_placeholders_and_normal_code_untouched(text):
    assert redact(text) == (text, [])


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=400))
def test_line_count_never_changes(text):
    out, _ = redact(text)
    assert out.count("\n") == text.count("\n")
    assert len(out.splitlines()) == len(text.splitlines())


def test_redaction_is_idempotent():
    for _, text, _ in planted_corpus(3):
        once, _ = redact(text)
        twice, kinds = redact(once)
        assert twice == once and kinds == []


def test_detect_secrets_finds_nothing_left_after_redaction(tmp_path):
    """A second opinion: the detect-secrets plugin set (default filters and entropy limits) over the planted
    corpora, raw and after hippo's redaction. Raw it must find plenty (the detector works); redacted it may
    only see the BEGIN/END markers of private keys, which hippo keeps around a redacted body."""
    from detect_secrets import SecretsCollection
    from detect_secrets.settings import default_settings

    files: dict[str, str] = {}
    for seed in (7, 11):
        for name, text, _ in planted_corpus(seed) + planted_gaps(seed):
            files[f"s{seed}/{name}"] = text
    found: dict[str, list[str]] = {}
    for label, transform in (("raw", lambda t: t), ("redacted", lambda t: redact(t)[0])):
        base = tmp_path / label
        for rel, text in files.items():
            (base / rel).parent.mkdir(parents=True, exist_ok=True)
            (base / rel).write_text(transform(text), encoding="utf-8")
        with default_settings():
            scan = SecretsCollection(root=str(base))
            scan.scan_files(*files)
        found[label] = []
        for rel, secret in scan:
            line = (base / rel).read_text(encoding="utf-8").split("\n")[secret.line_number - 1]
            if secret.type == "Private Key" and "PRIVATE KEY-----" in line:
                continue  # the marker line; the key body below it is redacted (test_pem_keeps_line_numbers...)
            found[label].append(f"{rel}:{secret.line_number} {secret.type}: {line.strip()[:120]}")
    assert len(found["raw"]) >= 80, found["raw"]
    assert found["redacted"] == []


# --- issue 19: prefixed, dotted and vendor formats ------------------------------------------------------
_R19 = random.Random(19)
HEX19 = "0123456789abcdef"


def _hex(n: int) -> str:
    return "".join(_R19.choice(HEX19[:10]) + _R19.choice(HEX19[10:]) for _ in range(n // 2))


def _an(n: int) -> str:
    return _rand(_R19, n)


ISSUE_19_CASES = [  # (text, expected); values built at run time, prefixes are the vendors' public ones
    (f'VAULT = "hvs.{_an(90)}"', 'VAULT = "[REDACTED:vault_token]"'),
    (f"shop = Shopify('shpat_{_hex(32)}')", "shop = Shopify('[REDACTED:shopify_token]')"),
    (f"+ DO_CLI dop_v1_{_hex(64)} list", "+ DO_CLI [REDACTED:digitalocean_token] list"),
    (f"POST https://api.telegram.org/bot{_R19.randrange(10**8, 10**9)}:AA{_an(33)}/sendMessage",
     "POST https://api.telegram.org/bot[REDACTED:telegram_bot_token]/sendMessage"),
    (f"grafana: glc_{_an(100)}==", "grafana: [REDACTED:grafana_token]"),
    (f"identity: AGE-SECRET-KEY-1{''.join(_R19.choice('QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L') for _ in range(58))}",
     "identity: [REDACTED:age_secret_key]"),
    (f'dsn: "https://{_hex(32)}@o1234.ingest.sentry.io/5678"', 'dsn: "https://[REDACTED:url_token]@o1234.ingest.sentry.io/5678"'),
    (f"curl -u ops:{_an(18)} https://api.example.org/", "curl -u ops:[REDACTED:password] https://api.example.org/"),
    (f'curl --user "deploy:{_an(18)}" https://x.org', 'curl --user "deploy:[REDACTED:password]" https://x.org'),
    (f"http -a admin:{_an(18)} POST https://x.org", "http -a admin:[REDACTED:password] POST https://x.org"),
    (f'curl -H "X-Api-Key: {_hex(32)}" https://x.org', 'curl -H "X-Api-Key: [REDACTED:secret]" https://x.org'),
    (f"Private-Token: {_an(26)}", "Private-Token: [REDACTED:secret]"),
    (f"Cookie: theme=dark; session={_an(40)}", "Cookie: theme=dark; session=[REDACTED:cookie]"),
    (f"machine api.example.org login ops password {_an(20)}",
     "machine api.example.org login ops password [REDACTED:password]"),
    (f"machine h\n  login ops\n  password {_an(20)}\n", "machine h\n  login ops\n  password [REDACTED:password]\n"),
    (f"db.internal:5432:app:app:{_an(20)}", "db.internal:5432:app:app:[REDACTED:password]"),
    (f'sql.Open("mysql", "app:{_an(16)}@tcp(db:3306)/app")', 'sql.Open("mysql", "app:[REDACTED:password]@tcp(db:3306)/app")'),
    (f'  "private_key_id": "{_hex(40)}",', '  "private_key_id": "[REDACTED:secret]",'),
    (f"    client-key-data: {base64.b64encode(b'-----BEGIN RSA PRIVATE KEY-----' + _an(60).encode()).decode()}",
     "    client-key-data: [REDACTED:private_key]"),
    (f'<add key="ApiKey" value="{_an(32)}" />', '<add key="ApiKey" value="[REDACTED:secret]" />'),
    (f"<password>{_an(16)}</password>", "<password>[REDACTED:password]</password>"),
    (f'session.auth = ("deploy", "{_an(18)}")', 'session.auth = ("deploy", "[REDACTED:password]")'),
    (f"https://dl.example.org/a.tgz?access_token={_an(40)}", "https://dl.example.org/a.tgz?access_token=[REDACTED:secret]"),
    (f"fix webhook (secret=whsec_{_an(32)})", "fix webhook (secret=[REDACTED:secret])"),
    # secret-named assignments: word-and-underscore prefixes, dotted values, UUIDs, a type annotation
    (f'api_key = "live_{_hex(32)}"', 'api_key = "[REDACTED:secret]"'),
    (f"export API_TOKEN=sec_{_hex(32)}", "export API_TOKEN=[REDACTED:secret]"),
    (f'client_secret: "{_an(12)}.{_an(20)}.{_an(16)}"', 'client_secret: "[REDACTED:secret]"'),
    ("api_key: ae3f9c1b-7d2e-4b8a-9c0d-1e2f3a4b5c6d", "api_key: [REDACTED:secret]"),
    (f'access_token: str = "live_{_hex(32)}"', 'access_token: str = "[REDACTED:secret]"'),
]


@pytest.mark.parametrize("text, expected", ISSUE_19_CASES)
def test_issue_19_exact_replacements(text, expected):
    assert redact(text)[0] == expected


@pytest.mark.parametrize("text", [
    "MLKEM768X25519PrivateKey = rust_openssl.hpke.MLKEM768X25519PrivateKey",
    "    public_key: x25519.X25519PublicKey",
    '"ChangeToken": "abcd12f2-46da-4fdb-b8d5-fbd4c466928f",',
    '"ClientRequestToken": "a8ca07e4-61ec-4399-99f4-19853801bcd5",',
    '"NextToken": "a8ca07e4-61ec-4399-99f4-19853801bcd5",',
    "token: str = token_value",
    "api_key = settings.stripe.api_key",
    "secret=SECRET_KEY,",
    "secret_key = get_secret(name)",
    'curl -u "$USER:$TOKEN" https://x.org',
    "the machine learning password requirements are documented below",
    "set the machine name, then the password ab7!cdefgh1",
    "Content-Type: application/json",
    "X-Request-Id: ae3f9c1b-7d2e-4b8a-9c0d-1e2f3a4b5c6d",
    "<password>{{ db_password }}</password>",
    'session.auth = (user, password)',
    'SSH endpoint, e.g. "ssh://687fb701029421ae5549d998@ssh.hf.jobs"',
    "monkey = turkey_sandwich_v2",
    "cache_key = f'user:{user_id}'",
    "ls -a /tmp && http -a",
    "auth_header = build_header(token)",
])
def test_issue_19_normal_code_untouched(text):
    assert redact(text) == (text, [])


def test_redact_name_hides_tokens_in_branches_and_paths():
    from hippo.core.secrets import redact_name

    gh, hexv = "ghp_" + _an(36), _hex(32)
    assert redact_name(f"fix/{gh}") == "fix/[REDACTED:github_token]"
    assert redact_name(f"config/tokens/{gh}.json") == "config/tokens/[REDACTED:github_token].json"
    assert redact_name(f"docs/api_key_live_{hexv}.md") == "docs/api_key_live_[REDACTED:secret].md"
    for name in ("main", "feature/issue-19-redaction", "lib/hippo/core/secrets.py", "tests/test_trust_planted_secrets.py",
                 "migrations/versions/3f2a9c1b4d5e_add_users.py", "static/main.3f2a9c1b4d5e6f70.js",
                 "docs/token_rotation_2024_v2.md", "dependabot/npm_and_yarn/lodash-4.17.21"):
        assert redact_name(name) == name


def test_a_path_holding_a_token_is_a_secret_path():
    from hippo.core.repo_read import is_secret_path

    assert is_secret_path(f"backups/sk_live_{_an(24)}.txt")
    assert is_secret_path(f"keys/hvs.{_an(91)}/notes.md")
    assert not is_secret_path("backups/customers_2024_export.txt")
