"""The request's layout features and text rules, grounding, and coverage-aware selection: pure functions, no model."""

from __future__ import annotations

import pytest
import torch

from tpc_core.engine.scoring.coverage import coverage_scores, section_ranks
from tpc_core.engine.selection.mmr import mmr_within_budget
from tpc_core.engine.task.grounding import is_grounded
from tpc_core.engine.task.request.features import FEATURE_NAMES, POSITION_CAP, layout_features
from tpc_core.engine.task.request.text import pick_request, request_text


def test_layout_features_mark_questions_options_and_ends():
    sentences = ["Read the passages.", "Paris is in France.", "Question: Where is Paris?", "A. France", "B. Peru"]
    features = layout_features(sentences)
    assert features.shape == (5, len(FEATURE_NAMES))
    column = {name: index for index, name in enumerate(FEATURE_NAMES)}
    assert features[:, column["question_mark"]].tolist() == [0, 0, 1, 0, 0]
    assert features[:, column["label_colon"]].tolist() == [0, 0, 1, 0, 0]
    assert features[:, column["option_marker"]].tolist() == [0, 0, 0, 1, 1]
    assert features[:, column["previous_question_mark"]].tolist() == [0, 0, 0, 1, 0]
    assert features[:, column["from_start"]].tolist() == [i / POSITION_CAP for i in range(5)]
    assert features[:, column["from_end"]].tolist() == [i / POSITION_CAP for i in reversed(range(5))]
    long = layout_features([f"Sentence {i}." for i in range(100)])
    assert long[50, column["from_start"]] == 1 and long[50, column["from_end"]] == 1  # capped
    assert layout_features([]).shape == (0, len(FEATURE_NAMES))


def test_pick_request_thresholds_caps_and_keeps_order():
    probabilities = torch.tensor([0.1, 0.9, 0.2, 0.7, 0.95])
    assert pick_request(probabilities, 0.5, 8) == [1, 3, 4]
    assert pick_request(probabilities, 0.5, 2) == [1, 4]  # the two most probable, in prompt order
    assert pick_request(probabilities, 0.99, 8) == []
    assert pick_request(torch.zeros(0), 0.5, 8) == []


def test_pick_request_takes_neighbours_over_the_lower_bar_only_next_to_a_pick():
    probabilities = torch.tensor([0.3, 0.1, 0.35, 0.9, 0.4, 0.05, 0.45])
    assert pick_request(probabilities, 0.8, 8) == [3]
    # 2 and 4 touch the pick; 6 is over the bar but not next to a picked sentence; 0 is cut off by 1
    assert pick_request(probabilities, 0.8, 8, 0.3) == [2, 3, 4]
    assert pick_request(probabilities, 0.8, 2, 0.3) == [2, 3]  # the cap holds
    assert pick_request(probabilities, 0.95, 8, 0.3) == []  # neighbours never start a request


def test_the_neighbour_threshold_is_checked_against_the_request_threshold():
    from tpc_core.config import AgnosticConfig

    assert AgnosticConfig(request_threshold=0.7, request_neighbour_threshold=0.2).request_neighbour_threshold == 0.2
    with pytest.raises(ValueError, match="request_neighbour_threshold"):
        AgnosticConfig(request_threshold=0.7, request_neighbour_threshold=0.8)
    with pytest.raises(ValueError, match="request_neighbour_threshold"):
        AgnosticConfig(request_neighbour_threshold=0.0)


def test_request_text_states_a_repeated_question_once():
    sentences = ["Q: Who won?", "Some text.", "Q:  Who won?"]
    assert request_text(sentences, [0, 2]) == "Who won?"
    assert request_text(sentences, [0, 1]) == "Who won? Some text."


@pytest.mark.parametrize(("sentence", "description"), [
    ('  "question": "Were they of the same nationality?"', "Were they of the same nationality?"),
    ("<question>when did they stop using 1000 dollar bills</question>", "when did they stop using 1000 dollar bills"),
    ("I have a question: who wrote yakkity yak", "who wrote yakkity yak"),
    ("**Question:** Who won?", "Who won?"),
    ('Key: "9993c962-d242"', 'Key: "9993c962-d242"'),  # the key's own quotes and its label stay
    ('"question": "Key: "9993c962-d242"",', 'Key: "9993c962-d242"'),
    ("Summarise the report in three bullet points.", "Summarise the report in three bullet points."),
])
def test_request_text_drops_the_wrapper_around_the_request(sentence, description):
    assert request_text([sentence], [0]) == description


def test_request_text_keeps_a_label_only_sentence_when_nothing_else_is_picked():
    assert request_text(["Question:", "What is X?"], [0, 1]) == "What is X?"
    assert request_text(["Question:"], [0]) == "Question:"


def test_section_ranks_restart_at_passage_headers():
    document = "Intro line.\nPassage 1:\nA one. A two.\nPassage 2:\nB one. B two. B three."
    sentences = ["Intro line.", "Passage 1:", "A one.", "A two.", "Passage 2:", "B one.", "B two."]
    spans, position = [], 0
    for sentence in sentences:
        start = document.index(sentence, position)
        spans.append((start, start + len(sentence)))
        position = start + len(sentence)
    assert section_ranks(document, spans) == [0, -1, 0, 1, -1, 0, 1]
    assert section_ranks("No sections. At all.", [(0, 12), (13, 20)]) == [0, 1]


def test_coverage_scores_combine_relevance_centrality_and_lead():
    embeddings = torch.nn.functional.normalize(torch.tensor([[1.0, 0.0], [1.0, 0.1], [0.0, 1.0]]), dim=-1)
    relevance = torch.tensor([0.1, 0.2, 0.3])
    only_relevance = coverage_scores(relevance, embeddings, [0, 1, 2], relevance_weight=1.0, centrality_weight=0.0,
                                     position_weight=0.0)
    assert torch.allclose(only_relevance, relevance)
    lead = coverage_scores(relevance, embeddings, [0, 1, 3], relevance_weight=0.0, centrality_weight=0.0,
                           position_weight=1.0)
    assert torch.allclose(lead, torch.tensor([1.0, 2 ** -0.5, 0.5]))
    central = coverage_scores(relevance, embeddings, [0, 0, 0], relevance_weight=0.0, centrality_weight=1.0,
                              position_weight=0.0)
    assert central[0] > central[2] and central[1] > central[2]  # two of three sentences point the same way


def test_select_diverse_skips_a_near_duplicate_and_respects_the_budget():
    embeddings = torch.nn.functional.normalize(torch.tensor([[1.0, 0.0], [1.0, 0.01], [0.0, 1.0]]), dim=-1)
    scores = [1.0, 0.95, 0.6]
    counts = [5, 5, 5]
    assert mmr_within_budget(scores, embeddings, counts, 10, redundancy=0.0) == [0, 1]
    assert mmr_within_budget(scores, embeddings, counts, 10, redundancy=1.0) == [0, 2]
    assert mmr_within_budget(scores, embeddings, [5, 5, 20], 12, redundancy=1.0) == [0, 1]  # 2 never fits
    assert mmr_within_budget(scores, embeddings, counts, 10, redundancy=1.0, force_keep=[False, True, False]) == [1, 2]
    assert mmr_within_budget([], torch.zeros(0, 2), [], 10, redundancy=1.0) == []
    with pytest.raises(ValueError, match="3 scores, 2 token counts"):
        mmr_within_budget(scores, embeddings, [1, 2], 10, redundancy=0.0)


def test_a_generated_description_must_be_grounded_in_the_prompt():
    prompt = "The Tiber flows through Rome. Extract the founding year and the river of the city."
    assert is_grounded("The prompt asks: Extract the founding year and the river.", prompt)
    assert not is_grounded("The prompt asks: What is this?", prompt)  # no content words at all
    assert not is_grounded("The prompt asks: Who painted the Mona Lisa?", prompt)  # invented
    assert not is_grounded("Rome", prompt)  # too little to go on


def test_sentence_core_peels_markup_and_one_label():
    from tpc_core.engine.task.request.text import sentence_core

    assert sentence_core('",\n  "question": "who played daisy duke"') == ("question", 'who played daisy duke"')
    assert sentence_core("<question>who wrote it</question>")[1] == "who wrote it</question>"
    assert sentence_core("I have a question: when do the comics come out") == \
        ("I have a question", "when do the comics come out")
    assert sentence_core("### Question") == ("", "Question")
    assert sentence_core("Plain sentence, no label.") == ("", "Plain sentence, no label.")


def test_wrapper_independent_cues_fire_alike_in_xml_json_markdown_and_label_styles():
    column = {name: i for i, name in enumerate(FEATURE_NAMES)}
    wrappers = ["<question>who wrote the declaration</question>",
                '",\n  "question": "who wrote the declaration"',
                "Query: who wrote the declaration",
                "My question is: who wrote the declaration"]
    for wrapped in wrappers:
        features = layout_features(["Some context sentence here.", wrapped, "Answer:"])
        assert features[1, column["cue_label"]] == 1.0, wrapped
        assert features[1, column["asking_core"]] == 1.0, wrapped
        assert features[1, column["next_answer_cue"]] == 1.0, wrapped
        assert features[0, column["cue_label"]] == 0.0
    heading = layout_features(["### Question", "how many countries are in opec", "### Answer"])
    assert heading[1, column["previous_cue_only"]] == 1.0 and heading[1, column["lower_start"]] == 1.0
    assert heading[1, column["next_answer_cue"]] == 1.0 and heading[0, column["short_line"]] == 1.0


def test_a_question_mark_counts_before_closing_markup():
    column = FEATURE_NAMES.index("question_mark")
    sentences = ["<question>Were they the same?</question>", '"question": "who is it?"', "Is it? [/INST]",
                 "Not a question.</p>", "?" + '"' * 5000, "a" + " " * 5000 + "b"]
    assert layout_features(sentences)[:, column].tolist() == [1.0, 1.0, 1.0, 0.0, 1.0, 0.0]


def test_match_sentences_finds_the_sentences_a_description_restates():
    from tpc_core.engine.task.grounding import match_sentences

    sentences = ["Document [1] (Title: The Bold and the Beautiful) Sheila Carter is a character.",
                 "I have a question: who plays sheila carter on the bold and the beautiful",
                 "Here are the search results I found:"]
    assert match_sentences("The prompt asks: Who plays Sheila Carter?", sentences, share=0.8) == [1]
    # too few of its words anywhere, or too few content words at all: no match
    assert match_sentences("The prompt asks: Who directed Titanic in 1997?", sentences, share=0.8) == []
    assert match_sentences("What is it?", sentences, share=0.8) == []
    assert match_sentences("Sheila Carter", [], share=0.8) == []


def test_match_sentences_takes_the_neighbours_that_hold_the_rest_of_the_request():
    from tpc_core.engine.task.grounding import match_sentences

    sentences = ["The paper studies retrieval.", "Which is the approach's contribution?",
                 "A. Manually constructed identifiers.", "B. Multi-task pre-training.", "It was published in 2023."]
    options = ("The prompt asks: Which is the approach's contribution? A. Manually constructed identifiers. "
               "B. Multi-task")
    assert match_sentences(options, sentences, share=0.8) == [1, 2, 3]
    # two sentences hold 5 of its 7 content words: under the share, no match
    assert match_sentences(options, sentences, share=0.8, max_sentences=2) == []
    assert match_sentences("The prompt asks: Which is the approach's contribution?", sentences, share=0.8) == [1]


def test_complete_request_keeps_a_multiple_choice_stem_with_its_options():
    from tpc_core.engine.task.request.text import complete_request

    sentences = ["Some text.", "Question 1.", "Which of the following is a gem?", "Select all that apply.",
                 "A. ruby", "B. oak", "C. jade", "Answer:"]
    # the head fired on an option: the whole run of options, the short line above it and the stem
    assert complete_request(sentences, [5]) == [2, 3, 4, 5, 6]
    # the head fired on the stem: the short line after it and the options follow
    assert complete_request(sentences, [2]) == [2, 3, 4, 5, 6]
    assert request_text(sentences, [4]) == ("Which of the following is a gem? Select all that apply. A. ruby B. oak "
                                            "C. jade")
    # a stem that is itself a question takes nothing more above it; a sentence with no options is left alone
    assert complete_request(["Intro.", "Who won?", "(a) Ann", "(b) Bo"], [3]) == [1, 2, 3]
    assert complete_request(["Intro.", "Who won?", "More text."], [1]) == [1]
    assert complete_request([], []) == []


def test_request_covered_counts_the_share_of_the_requests_content_words():
    from tpc_core.engine.task.grounding import content_words, request_covered

    request = "3. The ship sank near Malta in 1942, True or False?"
    assert content_words(request) == ["ship", "sank", "near", "malta", "1942", "true", "false"]
    assert request_covered(request, "The ship sank near Malta in 1942, true or false")
    assert not request_covered(request, "Summarise the main points of the text.")
    assert not request_covered(request, None)
    # 5 of 7 words (0.71) is under the default share of 0.8, over a share of 0.7
    assert not request_covered(request, "ship sank near malta 1942")
    assert request_covered(request, "ship sank near malta 1942", share=0.7)


def test_the_old_import_path_keeps_its_names_and_names_the_version_that_dropped_the_per_sentence_head():
    import tpc_core.engine.task.request as request
    from tpc_core.engine.task import grounding
    from tpc_core.engine.task.request import features, text

    homes = {**{name: features for name in features.__all__}, **{name: text for name in text.__all__},
             **{name: grounding for name in grounding.__all__}}
    for name in request.__all__:
        if name in homes:
            assert getattr(request, name) is getattr(homes[name], name)
    moved = {"is_grounded", "match_sentences", "request_covered", "request_text", "layout_features"}
    assert moved <= set(request.__all__)
    with pytest.raises(ImportError, match="dropped in tpc-langchain 0.1.0.*python -m training.request_head"):
        from tpc_core.engine.task.request import RequestHead  # noqa: F401
    with pytest.raises(AttributeError, match="no attribute 'nothing'"):
        request.nothing  # noqa: B018
