"""Pasted failure output becomes a focused query and message-template phrases."""
from hippo.retrieval import pasted

TRACEBACK = '''Exit code 1
Traceback (most recent call last):
  File "app/main.py", line 96, in <module>
    main()
  File "app/main.py", line 89, in run_app
    run(sys.argv[1:])
BadParameter: 'medium' is not one of 'fast', 'slow'.'''


def test_focus_drops_boilerplate_and_keeps_message_and_function_names():
    focus = pasted.focus_text(TRACEBACK)
    assert "Traceback" not in focus and "Exit code" not in focus and "app/main.py" not in focus
    assert "run_app" in focus and "BadParameter: 'medium' is not one of 'fast', 'slow'." in focus


def test_phrases_skip_quoted_values_so_they_match_the_template():
    phr = pasted.phrases(TRACEBACK)
    assert "is not one of" in phr
    assert not any("medium" in p or "fast" in p for p in phr)
    template = 'ngettext("{value!r} is not {choice}.", "{value!r} is not one of {choices}.", n)'
    assert "is not one of" in pasted.normalise(template)


def test_a_quoted_sentence_is_text_not_a_value():
    out = "  error: 'The build option is protected, and can not be retrieved in this way'\n  code: 'ERR_X'"
    assert "option is protected and" in pasted.phrases(out)


def test_test_runner_and_log_noise_is_dropped():
    out = ("2024-03-02 10:15:07,411 ERROR app.worker: job 67 failed: TypeError: 'count' is not valid with 'is_flag'.\n"
           "=========================== short test summary info ============================\n"
           "FAILED tests/test_x.py::test_case - ValueError: bad thing happened here\n1 failed in 0.31s")
    focus = pasted.focus_text(out)
    assert "short test summary" not in focus and "1 failed" not in focus and "10:15" not in focus
    assert "ValueError: bad thing happened here" in focus
    assert "is not valid with" in pasted.phrases(out)


def test_phrase_regex_tolerates_punctuation_between_words():
    import re

    rx = pasted.phrase_regex(["is not one of"])
    assert re.search(rx.replace("(?i)", ""), "{value!r} is not one of {choices}")
    assert re.search(rx.replace("(?i)", ""), "x is  not\tone of y")


def test_questions_are_not_treated_as_pasted():
    assert not pasted.looks_pasted("where are expired tokens rejected")
    assert pasted.looks_pasted(TRACEBACK)
