"""A cloned repository must not steer where hippo writes or deletes (review findings: planted config / symlinks)."""
from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from hippo.config import load_settings
from repo_helpers import git, hippo_in_process, write_files


def _repo(tmp_path, files):
    root = tmp_path / "repo"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    write_files(root, files)
    git(root, "add", "-A")
    git(root, "-c", "user.name=t", "-c", "user.email=t@e", "commit", "-qm", "init")
    return root


def _index(root):
    """`hippo index` in this process (the session fixture already cleared HIPPO_INDEX_DIR)."""
    return hippo_in_process(["index", "--quiet", "--repo", str(root)], env={"HIPPO_MODEL": "fake"})


@pytest.mark.parametrize("config_file", ["hippo.toml", ".hippo/config.toml"])
def test_repo_config_cannot_choose_index_dir_model_or_remote(tmp_path, config_file):
    victim = tmp_path / "victim"
    (victim / "db").mkdir(parents=True)
    (victim / "db" / "keep.txt").write_text("precious")
    root = tmp_path / "r"
    root.mkdir()
    write_files(root, {config_file: f'[hippo]\nindex_dir = "{victim}"\nmodel = "evil/model"\n'
                                    'shared_index = "s3://evil/x"\ndefault_k = 3\n'})
    s = load_settings(root, env={})
    assert s.index_dir == "" and s.model != "evil/model" and s.shared_index == ""
    assert s.default_k == 3  # harmless settings still come from the repo file
    assert load_settings(root, env={"HIPPO_INDEX_DIR": str(victim)}).index_dir == str(victim)  # env still can


def test_planted_index_dir_in_config_leaves_outside_files_alone(tmp_path):
    victim = tmp_path / "victim"
    (victim / "db").mkdir(parents=True)
    (victim / "db" / "keep.txt").write_text("precious")
    root = _repo(tmp_path, {"a.py": "x = 1\n", "hippo.toml": f'[hippo]\nindex_dir = "{victim}"\n'})
    assert _index(root).returncode == 0
    assert (victim / "db" / "keep.txt").read_text() == "precious"
    assert sorted(p.name for p in victim.iterdir()) == ["db"]
    assert (root / ".hippo" / "state.json").exists()


def test_committed_hippo_symlink_is_refused(tmp_path):
    victim = tmp_path / "victim2"
    (victim / "db").mkdir(parents=True)
    (victim / "db" / "keep.txt").write_text("precious")
    root = tmp_path / "repo"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    (root / "a.py").write_text("x = 1\n")
    os.symlink(victim, root / ".hippo")
    git(root, "add", "-A")
    git(root, "-c", "user.name=t", "-c", "user.email=t@e", "commit", "-qm", "init")
    proc = _index(root)
    assert proc.returncode == 1 and b"symlink" in proc.stderr and b"Traceback" not in proc.stderr
    assert (victim / "db" / "keep.txt").read_text() == "precious"
    assert sorted(p.name for p in victim.iterdir()) == ["db"]


def test_committed_symlink_inside_hippo_is_refused_and_target_untouched(tmp_path):
    target = tmp_path / "keys"
    target.write_text("ssh-ed25519 AAAA important")
    root = tmp_path / "repo"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    (root / "a.py").write_text("x = 1\n")
    (root / ".hippo").mkdir()
    os.symlink(target, root / ".hippo" / "lock")
    git(root, "add", "-f", "-A")
    git(root, "-c", "user.name=t", "-c", "user.email=t@e", "commit", "-qm", "init")
    proc = _index(root)
    assert proc.returncode == 1 and b"Traceback" not in proc.stderr
    assert target.read_text() == "ssh-ed25519 AAAA important"
    # the hooks stay silent (and write nothing through the link) too
    payload = {"session_id": "s", "cwd": str(root), "hook_event_name": "PostToolUseFailure", "tool_name": "Bash",
               "tool_input": {"command": "python a.py"}, "error": "Exit code 1\nValueError: boom"}
    hook = subprocess.run([sys.executable, "-m", "hippo", "hook", "tool-failure"], input=json.dumps(payload).encode(),
                          env={**os.environ, "HIPPO_MODEL": "fake", "HIPPO_NO_SERVER": "1", "HIPPO_NO_BACKGROUND_INDEX": "1"}, capture_output=True,
                          timeout=60)
    assert hook.returncode == 0 and hook.stdout == b""
    assert target.read_text() == "ssh-ed25519 AAAA important"


def test_tracked_regular_files_under_hippo_are_refused(tmp_path):
    root = _repo(tmp_path, {"a.py": "x = 1\n"})
    (root / ".hippo").mkdir()
    (root / ".hippo" / "state.json").write_text("{}")
    git(root, "add", "-f", ".hippo/state.json")
    git(root, "-c", "user.name=t", "-c", "user.email=t@e", "commit", "-qm", "ship an index")
    proc = _index(root)
    assert proc.returncode == 1 and b"git tracks files under" in proc.stderr
