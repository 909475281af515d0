"""Every command's exit code comes from the error's family (docs/cli.md): 2 when the caller must change
something, 1 for a fault. Real processes, a real daemon.

Before: ``init-repo`` and ``config show`` turned every error into exit 1, a conflict or a broken config
included, and only the daemon-backed commands read the kind.
"""

from __future__ import annotations

from support.sandbox import Sandbox, hm


def test_caller_mistakes_exit_2(sandbox: Sandbox) -> None:
    repo = sandbox.make_repo()
    # Through the daemon: an unknown corpus (NotFound), a path out of the corpus (UnsafePath).
    unknown = hm(sandbox, "read", "repo:sample:wki", "architecture.md", cwd=repo)
    assert unknown.returncode == 2 and "repo:sample:wiki" in unknown.stderr
    unsafe = hm(sandbox, "read", "repo:sample:wiki", "../x.md", cwd=repo)
    assert unsafe.returncode == 2 and "'..'" in unsafe.stderr
    # Without the daemon: the repository exists already (Conflict), a broken config (ConfigError).
    again = hm(sandbox, "init-repo", "sample", cwd=repo)
    assert again.returncode == 2 and "already exists" in again.stderr
    (repo / ".hallouminate" / "config.toml").write_text("[[repository]\n")
    broken = hm(sandbox, "config", "show", cwd=repo)
    assert broken.returncode == 2 and "malformed TOML" in broken.stderr
    for out in (unknown, unsafe, again, broken):
        assert "Traceback" not in out.stderr


def test_local_commands_exit_2_for_caller_mistakes(sandbox: Sandbox) -> None:
    """Before: `config init` over an existing config and `model status --model` with a model we do not
    provision exited 1, as if we were at fault."""
    repo = sandbox.make_repo(wiki=None)
    sandbox.config_file.unlink(missing_ok=True)
    first = hm(sandbox, "config", "init", cwd=repo)
    assert first.returncode == 0, first.stderr
    exists = hm(sandbox, "config", "init", cwd=repo)
    assert exists.returncode == 2 and "already exists" in exists.stderr and "--force" in exists.stderr
    bad_name = hm(sandbox, "init-repo", "two words", "--path", str(sandbox.root / "other"), cwd=repo)
    assert bad_name.returncode == 2 and "whitespace" in bad_name.stderr
    unknown_model = hm(sandbox, "model", "status", "--model", "no-such-model", cwd=repo)
    assert unknown_model.returncode == 2 and "not a model hallouminate provisions" in unknown_model.stderr
    # A broken baseline (not only a broken repository layer) is a caller mistake too.
    sandbox.config_file.write_text("[search\n")
    broken = hm(sandbox, "config", "show", cwd=repo)
    assert broken.returncode == 2 and "malformed TOML" in broken.stderr
    for out in (exists, bad_name, unknown_model, broken):
        assert "Traceback" not in out.stderr


def test_a_fault_exits_1(sandbox: Sandbox) -> None:
    sandbox.write_config(f'[embeddings]\ncache_dir = "{sandbox.root / "no-model"}"\n')
    repo = sandbox.make_repo()
    out = hm(sandbox, "ground", "the daemon", cwd=repo)
    assert out.returncode == 1 and "hallouminate model install" in out.stderr
    assert "Traceback" not in out.stderr
