"""Prompt profiles: chosen by model-name pattern, overridden by name, the user's copies win."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from rlm_desktop import paths
from rlm_desktop.engine import ConfigError, ContextDocument, Run, RunConfig
from rlm_desktop.engine.profiles import (
    Profile,
    ProfileDraft,
    ProfileFolders,
    choose_profile,
    list_profiles,
    read_index,
    read_profiles,
    save_user_profile,
    write_index,
)


def write_user_profiles(home: Path, toml: str, prompts: dict[str, str]) -> Path:
    folder = home / "profiles"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "profiles.toml").write_text(toml, encoding="utf-8")
    for name, text in prompts.items():
        (folder / name).write_text(text, encoding="utf-8")
    return folder


@pytest.mark.parametrize(
    ("model", "profile"),
    [
        ("openai/test-model", "default"),
        ("anthropic/claude-sonnet-4-5", "default"),
        ("openai/gpt-5", "reasoning"),
        ("OpenAI/GPT-5-Mini", "reasoning"),
        ("deepseek/deepseek-reasoner", "reasoning"),
        ("ollama_chat/llama3.1:8b", "small"),
        ("anthropic/claude-3-5-haiku-latest", "small"),
        ("openai/gpt-4o-mini", "small"),
    ],
)
def test_the_first_matching_pattern_chooses_the_profile(model: str, profile: str) -> None:
    assert choose_profile(paths.profile_folders(), model).name == profile


@pytest.mark.parametrize(
    ("model", "profile"),
    [
        ("openai/qwen2.5-coder-q4.gguf", "local"),
        ("openai/test-model", "local"),
        ("openai/gemma-3-270m-it", "gemma"),
        ("ollama_chat/llama3.1:8b", "small"),
        ("openai/gpt-5", "reasoning"),
    ],
)
def test_a_model_on_the_users_own_server_gets_the_local_profile_unless_one_names_it(
    model: str, profile: str
) -> None:
    chosen = choose_profile(paths.profile_folders(), model, local_server=True)
    assert chosen.name == profile
    if profile == "local":
        hosted = choose_profile(paths.profile_folders(), model)
        assert hosted.name == "default"
        assert chosen.root_max_output_tokens < hosted.root_max_output_tokens


def test_a_run_on_a_local_server_reads_its_profile_as_local(tmp_path: Path) -> None:
    config = RunConfig(query="q", model="openai/house-model", api_base="http://127.0.0.1:9/v1")
    run = Run(config, [ContextDocument("a.txt", "text")], folders=paths.engine_folders())
    assert run.profile.name == "local"
    hosted = Run(
        dataclasses.replace(config, api_base=None),
        [ContextDocument("a.txt", "text")],
        folders=paths.engine_folders(),
    )
    assert hosted.profile.name == "default"


@pytest.mark.parametrize(
    "model",
    [
        "openai/gemma-3-270m-it",
        "openai//tmp/models/gemma-3-270m-q4_k_m.gguf",
        "ollama_chat/gemma3:4b",
        "groq/gemma2-9b-it",
        "gemini/gemma-3-27b-it",
        "openai/CodeGemma-7b",
    ],
)
def test_gemma_models_have_no_system_role_by_default(model: str) -> None:
    chosen = choose_profile(paths.profile_folders(), model)
    assert (chosen.name, chosen.system_role) == ("gemma", False)
    small = choose_profile(paths.profile_folders(), model, "small")
    assert chosen.prompt == small.prompt
    others = [p for p in list_profiles(paths.profile_folders()) if p.name != "gemma"]
    assert [p.system_role for p in others] == [True] * 4


def test_system_role_is_read_and_saved_and_a_wrong_value_is_one_line(isolated_home: Path) -> None:
    folder = paths.user_profiles_dir()
    draft = ProfileDraft(name="mine", prompt="Mine.", patterns=("mine/*",), system_role=False)
    save_user_profile(folder, draft)
    assert choose_profile(paths.profile_folders(), "mine/model").system_role is False
    assert read_index(folder)["mine"]["system_role"] is False
    save_user_profile(folder, dataclasses.replace(draft, system_role=True))
    assert choose_profile(paths.profile_folders(), "mine/model").system_role is True
    write_user_profiles(
        isolated_home, '[mine]\npatterns = ["*"]\nsystem_role = "no"\n', {"mine.txt": "Mine."}
    )
    with pytest.raises(ConfigError) as info:
        choose_profile(paths.profile_folders(), "openai/test-model")
    assert str(info.value) == (
        f"profile 'mine' in {folder / 'profiles.toml'}: system_role must be true or false, not 'no'"
    )


def test_bundled_profiles_give_reasoning_models_more_output_headroom() -> None:
    reasoning, default = (
        choose_profile(paths.profile_folders(), "openai/gpt-5"),
        choose_profile(paths.profile_folders(), "openai/test-model"),
    )
    assert reasoning.root_max_output_tokens > default.root_max_output_tokens
    for profile in list_profiles(paths.profile_folders()):
        assert profile.prompt.strip()
        assert profile.sub_max_output_tokens > 0


def test_a_requested_profile_overrides_the_pattern() -> None:
    assert choose_profile(paths.profile_folders(), "openai/gpt-5", "small").name == "small"
    assert (
        choose_profile(paths.profile_folders(), "openai/test-model", "reasoning").name
        == "reasoning"
    )


def test_an_unknown_profile_is_a_config_error_naming_the_choices() -> None:
    expected = r"^profile 'nope' is an unknown profile: .*default"
    with pytest.raises(ConfigError, match=expected) as info:
        choose_profile(paths.profile_folders(), "openai/test-model", "nope")
    assert info.value.setting == "profile"


def test_a_run_with_an_unknown_profile_is_refused_before_it_starts() -> None:
    config = RunConfig(query="q", model="openai/test-model", profile="nope")
    with pytest.raises(ConfigError, match="unknown profile"):
        Run(config, [ContextDocument(name="a.txt", text="text")], folders=paths.engine_folders())


def test_a_user_profile_wins_by_name(isolated_home: Path) -> None:
    folder = write_user_profiles(
        isolated_home,
        '[default]\nprompt = "mine.txt"\npatterns = ["*"]\nroot_max_output_tokens = 1234\n',
        {"mine.txt": "My own prompt for $context_shape."},
    )
    chosen = choose_profile(paths.profile_folders(), "openai/test-model")
    assert chosen.prompt == "My own prompt for $context_shape."
    assert chosen.root_max_output_tokens == 1234
    assert chosen.source == folder / "mine.txt"
    assert [p.name for p in list_profiles(paths.profile_folders())].count("default") == 1
    assert choose_profile(paths.profile_folders(), "openai/gpt-5").name == "reasoning"


def test_a_new_user_profile_is_matched_before_the_bundled_ones(isolated_home: Path) -> None:
    write_user_profiles(
        isolated_home,
        '[house]\npatterns = ["openai/test-*"]\n',
        {"house.txt": "House rules."},
    )
    assert choose_profile(paths.profile_folders(), "openai/test-model").name == "house"
    assert choose_profile(paths.profile_folders(), "openai/gpt-5").name == "reasoning"


def test_a_broken_user_profile_file_is_a_config_error(isolated_home: Path) -> None:
    write_user_profiles(isolated_home, "[default\nprompt =", {})
    with pytest.raises(ConfigError, match=r"profiles\.toml: not valid TOML"):
        choose_profile(paths.profile_folders(), "openai/test-model")


def test_a_missing_prompt_file_is_a_config_error(isolated_home: Path) -> None:
    write_user_profiles(isolated_home, '[lost]\nprompt = "gone.txt"\npatterns = ["*"]\n', {})
    with pytest.raises(ConfigError, match="gone.txt is missing"):
        choose_profile(paths.profile_folders(), "openai/test-model")


def test_placeholders_are_filled_and_unknown_ones_kept() -> None:
    profile = Profile("p", "ctx: $context_shape; $unknown", ("*",), 10, 10)
    assert profile.system_prompt(context_shape="a str") == "ctx: a str; $unknown"


LATIN1_PROMPT = b"Caf\xe9 rules for $context_shape."
MINE = '[mine]\nprompt = "mine.txt"\npatterns = ["mine/*"]\n'


def write_latin1_prompt(home: Path, toml: str = MINE) -> Path:
    """A user profile `mine` (for models `mine/*`) whose prompt file is Latin-1, not UTF-8."""
    folder = write_user_profiles(home, toml, {})
    prompt = folder / "mine.txt"
    prompt.write_bytes(LATIN1_PROMPT)
    return prompt


def test_a_prompt_file_that_is_not_utf8_is_one_line_naming_it(isolated_home: Path) -> None:
    prompt = write_latin1_prompt(isolated_home)
    with pytest.raises(ConfigError) as info:
        choose_profile(paths.profile_folders(), "mine/model")
    message = str(info.value)
    assert message == (
        f"profile 'mine': prompt file {prompt} is not UTF-8 text (byte 0xe9 at offset 3);"
        " save it as UTF-8"
    )
    with pytest.raises(ConfigError, match="is not UTF-8"):
        choose_profile(paths.profile_folders(), "openai/test-model", "mine")


def test_a_broken_prompt_file_loses_no_other_profile(isolated_home: Path) -> None:
    prompt = write_latin1_prompt(
        isolated_home, MINE + '[house]\nprompt = "house.txt"\npatterns = ["house/*"]\n'
    )
    (prompt.parent / "house.txt").write_text("House rules.", encoding="utf-8")
    assert choose_profile(paths.profile_folders(), "house/model").prompt == "House rules."
    assert choose_profile(paths.profile_folders(), "openai/gpt-5").name == "reasoning"
    found = read_profiles(paths.profile_folders())
    assert [p.name for p in found.usable] == [
        "house",
        "gemma",
        "reasoning",
        "small",
        "local",
        "default",
    ]
    (problem,) = found.problems
    assert problem.startswith(f"profile 'mine': prompt file {prompt} is not UTF-8")
    assert [p.name for p in list_profiles(paths.profile_folders())] == [
        p.name for p in found.usable
    ]
    assert prompt.read_bytes() == LATIN1_PROMPT  # left as it was, for the user to fix


def test_an_index_that_is_not_utf8_is_one_line_and_the_bundled_profiles_still_list(
    isolated_home: Path,
) -> None:
    folder = write_user_profiles(isolated_home, "", {})
    (folder / "profiles.toml").write_bytes(b'[caf\xe9]\npatterns = ["*"]\n')
    with pytest.raises(ConfigError) as info:
        choose_profile(paths.profile_folders(), "openai/test-model")
    assert str(info.value) == (
        f"{folder / 'profiles.toml'}: not UTF-8 text (byte 0xe9 at offset 4); save it as UTF-8"
    )
    found = read_profiles(paths.profile_folders())
    assert [p.name for p in found.usable] == ["gemma", "reasoning", "small", "local", "default"]
    assert found.problems == (str(info.value),)


def test_a_value_of_the_wrong_type_is_one_line_naming_the_profile(isolated_home: Path) -> None:
    folder = write_user_profiles(
        isolated_home,
        '[mine]\npatterns = ["*"]\nroot_max_output_tokens = "lots"\n',
        {"mine.txt": "Mine."},
    )
    with pytest.raises(ConfigError) as info:
        choose_profile(paths.profile_folders(), "openai/test-model")
    assert str(info.value) == (
        f"profile 'mine' in {folder / 'profiles.toml'}: root_max_output_tokens must be a whole"
        " number, not 'lots'"
    )


def test_a_copy_of_a_profile_keeps_how_its_replies_are_read(isolated_home: Path) -> None:
    """Copying the bundled `local` profile, or saving an edit, keeps `local_servers`,
    `code_stop` and `constrained_replies` as set, and any other setting of the entry."""
    folder = paths.user_profiles_dir()
    draft = ProfileDraft(
        name="mine", prompt="Mine.", patterns=(), code_stop="whole-reply",
        local_servers=True, constrained_replies=True,
    )  # fmt: skip
    save_user_profile(folder, draft)
    chosen = choose_profile(paths.profile_folders(), "openai/x", local_server=True)
    assert chosen.name == "mine"
    assert (chosen.code_stop, chosen.local_servers, chosen.constrained_replies) == (
        "whole-reply", True, True,
    )  # fmt: skip
    table = read_index(folder)
    table["mine"]["future_setting"] = "kept"
    write_index(folder, table)
    save_user_profile(folder, dataclasses.replace(draft, constrained_replies=False))
    assert read_index(folder)["mine"]["future_setting"] == "kept"
    assert not choose_profile(paths.profile_folders(), "openai/x", "mine").constrained_replies


def test_small_and_local_models_keep_one_block_a_turn_and_strong_coders_run_every_block() -> None:
    rules = {p.name: p.code_stop for p in list_profiles(paths.profile_folders())}
    assert rules == {
        "gemma": "first-block", "reasoning": "after-code", "small": "first-block",
        "local": "first-block", "default": "after-code",
    }  # fmt: skip


@pytest.mark.parametrize(
    ("legacy", "name", "rule"),
    [
        ("stop_after_code = false", "default", "whole-reply"),
        ("stop_after_code = true", "default", "after-code"),
        ("stop_after_code = true", "gemma", "first-block"),
        ("stop_after_code = true", "mine", "after-code"),
        ("", "small", "first-block"),
    ],
)
def test_a_profile_saved_before_code_stop_reads_as_it_meant(
    isolated_home: Path, legacy: str, name: str, rule: str
) -> None:
    """Every profile the editor saved said `stop_after_code = true` (the old default): it reads
    as the rule of the bundled profile it replaces, or the default for a new one; false was
    "read every reply to its end". Saving it again writes `code_stop` in its place."""
    folder = write_user_profiles(
        isolated_home, f'["{name}"]\nprompt = "p.txt"\n{legacy}\n', {"p.txt": "Mine."}
    )
    chosen = choose_profile(paths.profile_folders(), "openai/x", name)
    assert chosen.code_stop == rule
    save_user_profile(folder, ProfileDraft(name=name, prompt="Mine.", code_stop=chosen.code_stop))
    assert "stop_after_code" not in read_index(folder)[name]
    assert read_index(folder)[name]["code_stop"] == rule
    assert choose_profile(paths.profile_folders(), "openai/x", name).code_stop == rule


@pytest.mark.parametrize("written", ['"first block"', "true", '"AFTER-CODE"', "1"])
def test_a_code_stop_that_is_not_a_choice_is_one_line_naming_them(
    isolated_home: Path, written: str
) -> None:
    folder = write_user_profiles(
        isolated_home, f'[mine]\npatterns = ["*"]\ncode_stop = {written}\n', {"mine.txt": "M."}
    )
    with pytest.raises(ConfigError) as info:
        choose_profile(paths.profile_folders(), "openai/test-model")
    assert str(info.value).startswith(
        f"profile 'mine' in {folder / 'profiles.toml'}: code_stop must be one of"
        ' "after-code", "first-block", "whole-reply", not '
    )
    assert "\n" not in str(info.value)


@pytest.mark.parametrize("named", ["../../outside.txt", "/tmp/elsewhere.txt", "link.txt"])
def test_saving_a_profile_whose_index_names_a_file_elsewhere_writes_only_its_folder(
    tmp_path: Path, named: str
) -> None:
    """A profiles.toml pasted from elsewhere cannot make the editor write outside its folder."""
    outside = tmp_path / "outside.txt"
    outside.write_text("the user's file")
    folder = write_user_profiles(tmp_path / "home", "", {})
    if named == "link.txt":
        (folder / "link.txt").symlink_to(outside)
    elif named.startswith("/tmp"):
        named = str(outside)
    else:
        named = "../" * 2 + "outside.txt"
    write_index(folder, {"mine": {"prompt": named, "patterns": []}})
    written = save_user_profile(folder, ProfileDraft(name="mine", prompt="edited"))
    assert outside.read_text() == "the user's file"
    assert written.parent == folder
    assert written.read_text() == "edited"
    assert read_index(folder)["mine"]["prompt"] == written.name


WINDOWS_DEVICES = {"con", "prn", "aux", "nul", *(f"{k}{n}" for k in ("com", "lpt") for n in range(10))}


def test_profiles_are_kept_in_files_every_system_can_hold(tmp_path: Path) -> None:
    """Windows cannot hold a file named for a device (`con.txt`, `NUL.txt`), and Windows and
    macOS do not tell `Fast.txt` from `fast.txt`: each profile still gets a file of its own."""
    folder = tmp_path / "profiles"
    names = ["con", "NUL", "Com1", "lpt9.draft", "Fast", "fast", "FAST"]

    written = [save_user_profile(folder, ProfileDraft(name=n, prompt=f"I am {n}")) for n in names]

    files = [path.name for path in written]
    assert len({name.casefold() for name in files}) == len(names), files
    assert not [name for name in files if name.split(".")[0].casefold() in WINDOWS_DEVICES]
    listed = list_profiles(ProfileFolders(bundled=paths.resource("profiles"), user=folder))
    by_name = {profile.name: profile for profile in listed}
    assert {name: by_name[name].prompt for name in names} == {n: f"I am {n}" for n in names}
