"""An executed notebook's printed text does not depend on how the kernel cut it into messages."""

from sentemb.notebooks import merged_streams, strip_timestamps


def test_one_print_split_in_two_messages_is_stored_as_one_output():
    split = [
        {"output_type": "stream", "name": "stdout", "text": "16 significant at 0.05."},
        {"output_type": "stream", "name": "stdout", "text": "\n"},
    ]
    assert merged_streams(split) == [{"output_type": "stream", "name": "stdout", "text": "16 significant at 0.05.\n"}]


def test_other_outputs_and_other_streams_stay_apart():
    outputs = [
        {"output_type": "stream", "name": "stdout", "text": ["a\n", "b"]},
        {"output_type": "stream", "name": "stderr", "text": "warning\n"},
        {"output_type": "stream", "name": "stdout", "text": "c\n"},
        {"output_type": "display_data", "data": {"text/plain": "x"}, "metadata": {}},
        {"output_type": "stream", "name": "stdout", "text": "d\n"},
        {"output_type": "stream", "name": "stdout", "text": "e\n"},
    ]
    merged = merged_streams([dict(o) for o in outputs])
    assert [o.get("name", o["output_type"]) for o in merged] == ["stdout", "stderr", "stdout", "display_data", "stdout"]
    assert merged[-1]["text"] == "d\ne\n" and merged[0]["text"] == ["a\n", "b"]


def test_strip_timestamps_merges_each_cells_streams():
    notebook = {
        "metadata": {},
        "cells": [
            {
                "metadata": {},
                "outputs": [
                    {"output_type": "stream", "name": "stdout", "text": "x"},
                    {"output_type": "stream", "name": "stdout", "text": "y\n"},
                ],
            }
        ],
    }
    assert strip_timestamps(notebook)["cells"][0]["outputs"] == [
        {"output_type": "stream", "name": "stdout", "text": "xy\n"}
    ]
