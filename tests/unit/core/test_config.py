"""Configuration layers: pyproject < .codecite.toml < environment < explicit settings."""

from pathlib import Path

import pytest

from codecite_lsp.core.config import Config, ConfigError, load_config, load_config_lenient


def test_defaults_match_the_contract(tmp_path: Path) -> None:
    config = load_config(tmp_path, environ={})
    assert config.model == "extractive"
    assert config.embedding == "default"
    assert config.resolved_index_dir(tmp_path) == tmp_path / ".codecite"


def test_layers_override_in_order(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text(
        '[tool.codecite]\nmodel = "openai/gpt-4o-mini"\nchunk_budget = 900\nembedding = "none"\n'
    )
    (tmp_path / ".codecite.toml").write_text("chunk_budget = 1200\n")
    config = load_config(
        tmp_path,
        overrides={"embedding": "default"},
        environ={"CODECITE_HOVER": "false", "CODECITE_TRUST_REPO_CONFIG": "1"},
    )
    assert config.model == "openai/gpt-4o-mini"  # only pyproject sets it
    assert config.chunk_budget == 1200  # .codecite.toml beats pyproject
    assert config.hover is False  # from the environment
    assert config.embedding == "default"  # explicit settings beat files


def test_relative_index_dir_is_under_the_repo(tmp_path: Path) -> None:
    config = load_config(tmp_path, overrides={"index_dir": "idx"}, environ={})
    assert config.resolved_index_dir(tmp_path) == tmp_path / "idx"


def test_strict_loading_names_every_bad_value(tmp_path: Path) -> None:
    (tmp_path / ".codecite.toml").write_text('chunk_budget = "big"\ncolour = "blue"\n')
    with pytest.raises(ConfigError) as caught:
        load_config(tmp_path, environ={"CODECITE_MODEL_TIMEOUT": "soon"})
    text = str(caught.value)
    assert "chunk_budget" in text and "'colour'" in text and "model_timeout" in text


def test_lenient_loading_keeps_defaults_for_bad_values(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text("this is [not toml")
    config, problems = load_config_lenient(
        tmp_path, overrides={"chunk_budget": -5, "hover": "maybe", "model": "m"}, environ={}
    )
    assert config.chunk_budget == Config().chunk_budget
    assert config.hover is True
    assert config.model == "m"
    assert len(problems) == 3


def test_api_key_env_takes_a_variable_name_not_a_key(tmp_path: Path) -> None:
    config = load_config(tmp_path, overrides={"api_key_env": "MY_TEAM_OPENAI_KEY"}, environ={})
    assert config.api_key_env == "MY_TEAM_OPENAI_KEY"
    with pytest.raises(ConfigError, match="api_key_env"):
        load_config(tmp_path, overrides={"api_key_env": "sk-live abc"}, environ={})


HOSTILE = (
    'model = "openai/gpt-4o"\napi_key_env = "AWS_SECRET_ACCESS_KEY"\n'
    'embedding = "openai/text-embedding-3-small"\nindex_dir = "{outside}"\nchunk_budget = 900\n'
)


def test_an_untrusted_repository_cannot_route_code_or_keys(tmp_path: Path) -> None:
    repo, outside = tmp_path / "repo", tmp_path / "victim"
    repo.mkdir()
    (repo / ".codecite.toml").write_text(HOSTILE.format(outside=outside))
    notices: list[str] = []
    config = load_config(repo, environ={}, notices=notices)
    assert config.model == "extractive" and config.api_key_env is None
    assert config.embedding == "default"
    assert config.resolved_index_dir(repo) == repo / ".codecite"
    assert config.chunk_budget == 900  # harmless settings still apply
    text = " ".join(notices)
    for key in ("'model' ignored", "'api_key_env' ignored", "'embedding' ignored"):
        assert key in text
    assert "'index_dir' refused" in text and "CODECITE_TRUST_REPO_CONFIG=1" in text
    _, problems = load_config_lenient(repo, environ={})  # the server shows the same words
    assert problems == notices


@pytest.mark.parametrize(
    ("overrides", "environ"),
    [({}, {"CODECITE_TRUST_REPO_CONFIG": "1"}), ({"trusted": True}, {}),
     ({"trust_repository_settings": "true"}, {})],
)  # fmt: skip
def test_a_trusted_repository_decides_its_model(
    tmp_path: Path, overrides: dict[str, object], environ: dict[str, str]
) -> None:
    repo, outside = tmp_path / "repo", tmp_path / "victim"
    repo.mkdir()
    (repo / ".codecite.toml").write_text(HOSTILE.format(outside=outside))
    notices: list[str] = []
    config = load_config(repo, overrides, environ=environ, notices=notices)
    assert config.model == "openai/gpt-4o" and config.api_key_env == "AWS_SECRET_ACCESS_KEY"
    # ... but never where its index is written outside itself
    assert config.resolved_index_dir(repo) == repo / ".codecite"
    assert notices and "'index_dir' refused" in notices[0]


def test_the_user_may_put_the_index_anywhere(tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    config = load_config(tmp_path, overrides={"index_dir": str(elsewhere)}, environ={})
    assert config.resolved_index_dir(tmp_path) == elsewhere
    (tmp_path / ".codecite.toml").write_text('index_dir = "build/index"\n')
    assert load_config(tmp_path, environ={}).resolved_index_dir(tmp_path) == (
        tmp_path / "build/index"
    )


def test_no_retry_is_a_setting_but_no_chunks_is_not(tmp_path: Path) -> None:
    config = load_config(tmp_path, environ={"CODECITE_MODEL_RETRIES": "0"})
    assert config.model_retries == 0
    with pytest.raises(ConfigError, match="model_retries must be 0 or more"):
        load_config(tmp_path, environ={"CODECITE_MODEL_RETRIES": "-1"})
    with pytest.raises(ConfigError, match="context_chunks must be positive"):
        load_config(tmp_path, environ={"CODECITE_CONTEXT_CHUNKS": "0"})
