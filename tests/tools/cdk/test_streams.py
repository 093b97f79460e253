"""Infrastructure: the table's stream reaches the history function as ``functions.streams``
writes it down — the table's stream view, one event source mapping per ``STREAMS`` entry on
the function's ``live`` alias with the code's filters, batching, retries and bisect, an
encrypted failure queue, and the stream's alarms (iterator age, failure queue depth)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from functions.streams import STREAMS
from infra.cdk.stack import STAGES
from shared.adapters.dynamo import schema
from tests.tools.cdk.cfn import functions_by_handler, render, resources

STAGE_NAMES = sorted(STAGES)


def _mapping(template: dict[str, Any]) -> dict[str, Any]:
    (mapping,) = resources(template, "AWS::Lambda::EventSourceMapping").values()
    return mapping


@pytest.mark.parametrize("stage", STAGE_NAMES)
def test_the_table_streams_old_and_new_images(synthesized, stage):
    (table,) = resources(synthesized.templates[stage], "AWS::DynamoDB::Table").values()
    assert table["StreamSpecification"] == {"StreamViewType": schema.STREAM_VIEW_TYPE}
    assert schema.STREAM_VIEW_TYPE == "NEW_AND_OLD_IMAGES"


@pytest.mark.parametrize("stage", STAGE_NAMES)
def test_the_mapping_is_the_codes_definition(synthesized, stage):
    template = synthesized.templates[stage]
    assert list(STREAMS) == ["history"]
    source = STREAMS["history"]
    mapping = _mapping(template)
    (table_id,) = resources(template, "AWS::DynamoDB::Table")
    assert render(mapping["EventSourceArn"]) == f"<{table_id}.StreamArn>"
    assert mapping["StartingPosition"] == source.starting_position == "TRIM_HORIZON"
    assert mapping["BatchSize"] == source.batch_size == 100
    assert mapping["MaximumBatchingWindowInSeconds"] == source.batching_window_s
    assert mapping["MaximumRetryAttempts"] == source.retry_attempts
    assert mapping["MaximumRecordAgeInSeconds"] == source.max_record_age_s
    assert mapping["BisectBatchOnFunctionError"] is True
    assert mapping["FunctionResponseTypes"] == ["ReportBatchItemFailures"]
    patterns = [json.loads(f["Pattern"]) for f in mapping["FilterCriteria"]["Filters"]]
    assert patterns == [json.loads(text) for text in source.filter_json()]
    assert patterns == list(source.filters)


@pytest.mark.parametrize("stage", STAGE_NAMES)
def test_the_mapping_invokes_the_live_alias_of_the_history_function(synthesized, stage):
    template = synthesized.templates[stage]
    mapping = _mapping(template)
    function_id, _ = functions_by_handler(template)["functions.history.handler"]
    # CDK names an alias by "<function name>:live" (the alias's Ref is its ARN)
    parts = mapping["FunctionName"]["Fn::Join"][1]
    assert parts[1] == ":live"
    alias_id = parts[0]["Fn::Select"][1]["Fn::Split"][1]["Ref"]
    alias = template["Resources"][alias_id]
    assert alias["Type"] == "AWS::Lambda::Alias"
    assert alias["Properties"]["Name"] == "live"
    assert alias["Properties"]["FunctionName"] == {"Ref": function_id}


@pytest.mark.parametrize("stage", STAGE_NAMES)
def test_failed_batches_go_to_an_encrypted_queue(synthesized, stage):
    template = synthesized.templates[stage]
    mapping = _mapping(template)
    destination = mapping["DestinationConfig"]["OnFailure"]["Destination"]
    (queue_id, queue) = next(iter(resources(template, "AWS::SQS::Queue").items()))
    assert render(destination) == f"<{queue_id}.Arn>"
    assert queue["SqsManagedSseEnabled"] is True
    assert queue["MessageRetentionPeriod"] == 14 * 24 * 3600
    policies = resources(template, "AWS::SQS::QueuePolicy").values()
    statements = [s for p in policies for s in p["PolicyDocument"]["Statement"]]
    assert any(
        s["Effect"] == "Deny" and s["Condition"] == {"Bool": {"aws:SecureTransport": "false"}}
        for s in statements
    )


def _alarm(template: dict[str, Any], anchor: str) -> dict[str, Any]:
    (alarm,) = [
        props
        for props in resources(template, "AWS::CloudWatch::Alarm").values()
        if props["AlarmDescription"].endswith(f"#{anchor}")
    ]
    return alarm


@pytest.mark.parametrize("stage", STAGE_NAMES)
def test_the_stream_alarms_watch_the_iterator_age_and_the_failure_queue(synthesized, stage):
    template = synthesized.templates[stage]
    function_id, _ = functions_by_handler(template)["functions.history.handler"]
    age = _alarm(template, "streamiteratorage")
    assert (age["Namespace"], age["MetricName"], age["Statistic"]) == (
        "AWS/Lambda",
        "IteratorAge",
        "Maximum",
    )
    assert age["Dimensions"] == [{"Name": "FunctionName", "Value": {"Ref": function_id}}]
    assert age["Threshold"] == 600_000
    assert age["EvaluationPeriods"] == 3
    depth = _alarm(template, "streamfailurequeue")
    (queue_id,) = resources(template, "AWS::SQS::Queue")
    assert depth["MetricName"] == "ApproximateNumberOfMessagesVisible"
    assert depth["Namespace"] == "AWS/SQS"
    assert render(depth["Dimensions"][0]["Value"]) == f"<{queue_id}.QueueName>"
    assert depth["Threshold"] == 1


@pytest.mark.parametrize("stage", STAGE_NAMES)
def test_the_failure_queue_url_is_an_output_for_the_runbook(synthesized, stage):
    template = synthesized.templates[stage]
    (queue_id,) = resources(template, "AWS::SQS::Queue")
    assert template["Outputs"]["HistoryFailureQueueUrl"]["Value"] == {"Ref": queue_id}
    runbook = (Path(__file__).resolve().parents[3] / "infra" / "RUNBOOK.md").read_text()
    assert "`HistoryFailureQueueUrl`" in runbook
