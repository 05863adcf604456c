"""A checkpoint names the languages it was trained on; a prompt mostly in a script none of them is written in gets a
one-time notice that names a registered checkpoint for that script where one exists (tpc-mini is English: a Chinese
or Arabic prompt is noticed, an English one is not)."""

from __future__ import annotations

import copy
import warnings

import pytest

from tpc_core.config import TPCConfig
from tpc_core.diagnostics.language import LanguageNotice, dominant_script, language_scripts, script_of
from tpc_core.diagnostics.notices import TPCRuntimeWarning
from tpc_core.loading.registry import REGISTRY, checkpoints_by_script, language_notice

CHINESE = ("本合同由出租人与承租人签订。房屋位于北京市朝阳区。租期为两年。租金逾期五天后，承租人须支付五十元滞纳金。"
           "滞纳金每逾期一天增加十元。承租人应保持房屋清洁。出租人负责房屋的主要维修。承租人不得擅自转租。")
ARABIC = ("تم إبرام هذا العقد بين المؤجر والمستأجر. تقع الشقة في وسط المدينة. مدة الإيجار سنتان. "
          "يدفع المستأجر غرامة تأخير بعد اليوم الخامس من الشهر. يجب على المستأجر الحفاظ على نظافة الشقة.")
ENGLISH = ("This lease is made between the landlord and the tenant. The flat is in the city centre. The term is two "
           "years. A late fee applies after the fifth day of the month. The tenant keeps the flat clean.")


def _notices(caught) -> list[str]:
    return [str(warning.message) for warning in caught if issubclass(warning.category, TPCRuntimeWarning)]


def test_scripts_are_read_from_the_letters():
    assert [script_of(char) for char in "a中あア한ب ж".replace(" ", "")] == \
        ["Latin", "Han", "Kana", "Kana", "Hangul", "Arabic", "Cyrillic"]
    assert dominant_script([CHINESE])[0] == "Han" and dominant_script([ARABIC])[0] == "Arabic"
    assert dominant_script([ENGLISH]) == ("Latin", 1.0)
    script, share = dominant_script(["Use the Python function: ", CHINESE])  # a few English words in Chinese text
    assert script == "Han" and 0.5 < share < 1.0
    assert dominant_script(["1234 ... !!", ""]) is None
    assert language_scripts(["en", "fr"]) == {"Latin"} and language_scripts(["ja"]) == {"Han", "Kana"}
    assert language_scripts(["xx"]) == frozenset()


def test_a_notice_is_given_once_per_script_and_names_a_checkpoint_that_serves_it():
    notice = LanguageNotice("en-model", ["en"], {"Han": ["zh-model"]})
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        notice.check([(ENGLISH,), ("Bonjour, le locataire paie le loyer.",)])  # Latin: its script is the model's
        notice.check([(CHINESE,), (CHINESE + "再一次。",)])
        notice.check([(ARABIC,), (CHINESE,), (ARABIC,)])
    shown = _notices(caught)
    assert len(shown) == 2 and all(warning.filename == __file__ for warning in caught)
    assert "mostly in Han script" in shown[0] and "use 'zh-model'" in shown[0] and "'en-model'" in shown[0]
    assert "mostly in Arabic script" in shown[1]
    assert "No registered checkpoint was trained on text in Arabic" in shown[1]


def test_the_registry_says_which_checkpoint_serves_which_script():
    assert REGISTRY["tpc-mini"].languages == ("en",)
    assert checkpoints_by_script() == {"Latin": ["tpc-mini", "cpc-llama-1b", "cpc-mistral-7b"]}
    assert language_notice("my-model", None) is None and language_notice("my-model", []) is None
    # a checkpoint trained on Chinese, given an English prompt, is pointed at the registered English ones
    message = language_notice("zh-lease", ["zh"]).message("Latin")
    assert "For Latin text use 'tpc-mini' or 'cpc-llama-1b' or 'cpc-mistral-7b'" in message
    # tpc-mini itself, given Chinese: no registered checkpoint serves it, and it says so
    assert "No registered checkpoint was trained on text in Han script" in language_notice("tpc-mini", ["en"]).message(
        "Han")


def test_the_config_declares_languages_and_checks_them(tmp_path):
    shipped = TPCConfig.load(REGISTRY["tpc-mini"].local_dir)
    assert shipped.languages == ["en"]
    shipped.save(tmp_path)
    assert TPCConfig.load(tmp_path).languages == ["en"]
    undeclared = TPCConfig.from_dict({"cse": {"base_model": "org/model"}})
    assert undeclared.languages is None and "languages" not in undeclared.to_dict()  # older readers still read it
    for bad in ("en", [""], [1]):
        with pytest.raises(ValueError, match="tpc_config.languages must be a list of language codes"):
            TPCConfig.from_dict({"cse": {"base_model": "org/model"}, "languages": bad})


@pytest.mark.slow
def test_tpc_mini_notices_a_chinese_and_an_arabic_prompt_once_each_and_an_english_one_never(tpc_mini):
    compressor = copy.deepcopy(tpc_mini)  # a fresh engine: nothing noticed yet
    assert compressor.info()["languages"] == ["en"]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        compressor.compress(ENGLISH, question="When does the late fee apply?", rate=0.5)
        compressor.compress(CHINESE, question="逾期支付租金的滞纳金规定是什么？", rate=0.5)
        compressor.compress(CHINESE, question="租期多长？", rate=0.5)  # the same script again: no second notice
        compressor.compress_batch([ARABIC, ENGLISH], question="When does the late fee apply?", rate=0.5)
    shown = _notices(caught)
    assert len(shown) == 2, shown
    assert shown[0].startswith("The checkpoint 'tpc-mini' was trained on text in en (ISO 639-1), and this prompt is "
                               "mostly in Han script")
    assert "mostly in Arabic script" in shown[1]
    assert all(warning.filename == __file__ for warning in caught if issubclass(warning.category, TPCRuntimeWarning))
