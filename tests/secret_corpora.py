"""Seeded generators of planted secrets for the redaction tests (test_secrets, test_trust_secrets).

Every value is built at run time from a seeded RNG, so no credential-shaped literal is committed.
"""
from __future__ import annotations

import random
import string

ALNUM = string.ascii_letters + string.digits


def rand_token(rng: random.Random, n: int, alphabet: str = ALNUM) -> str:
    # Guarantee mixed classes so generated values look like real keys.
    s = [rng.choice(string.ascii_lowercase), rng.choice(string.ascii_uppercase), rng.choice(string.digits)]
    s += [rng.choice(alphabet) for _ in range(n - 3)]
    rng.shuffle(s)
    return "".join(s)


def pem_block(rng: random.Random, label: str, lines: int) -> tuple[str, list[str]]:
    body = [rand_token(rng, 64, ALNUM + "+/") for _ in range(lines)]
    return f"-----BEGIN {label}-----\n" + "\n".join(body) + f"\n-----END {label}-----", body


def planted_corpus(seed: int = 7) -> list[tuple[str, str, list[str]]]:
    """[(file name, text, secret substrings that must not survive)]."""
    rng = random.Random(seed)
    r = lambda n, a=ALNUM: rand_token(rng, n, a)  # noqa: E731
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

    rsa, rsa_body = pem_block(rng, "RSA PRIVATE KEY", 25)
    ossh, ossh_body = pem_block(rng, "OPENSSH PRIVATE KEY", 7)
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
    r = lambda n, a=ALNUM: rand_token(rng, n, a)  # noqa: E731
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
