"""`mlcompare schema`: the models that validate the files, printed as JSON Schema for editors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import REPO, modules_after, run_cli

from mlcompare import cli
from mlcompare.config import fields
from mlcompare.config.cards import Card
from mlcompare.config.experiment_schema import ExperimentModel
from mlcompare.config.pairing import PairingModel
from mlcompare.config.yamlfile import load_yaml_mapping
from mlcompare.pairings import CATALOG_DIR

try:
    import jsonschema
except ImportError:  # not a dependency: the structure is checked by hand then
    jsonschema = None

FILES = {
    "experiment": sorted((REPO / "experiments").glob("*.yaml")),
    "pairing": sorted(CATALOG_DIR.glob("*.yaml")),
    "dataset": sorted((REPO / "datasets").glob("*.yaml")),
}
MODELS = {"experiment": ExperimentModel, "pairing": PairingModel, "dataset": Card}


def _schema(kind: str, capsys) -> dict:
    assert cli.main(["schema", kind]) == 0
    return json.loads(capsys.readouterr().out)


@pytest.mark.parametrize("kind", sorted(FILES))
def test_each_kind_prints_a_json_schema(kind, capsys):
    schema = _schema(kind, capsys)
    assert schema["$id"] == f"urn:mlcompare:schema:{kind}" and schema["title"].startswith("mlcompare ")
    assert schema["type"] == "object" and schema["additionalProperties"] is False
    for name, prop in schema["properties"].items():
        assert prop.get("description"), f"{kind}.{name} has no description"
    if jsonschema is not None:
        jsonschema.Draft202012Validator.check_schema(schema)
        for path in FILES[kind]:
            jsonschema.validate(load_yaml_mapping(path), schema)


def test_the_schemas_keep_real_types(capsys):
    experiment = _schema("experiment", capsys)["properties"]
    assert experiment["repeats"].items() >= {"type": "integer", "minimum": 1, "maximum": 1000, "default": 1}.items()
    assert experiment["rounds"].items() >= {"type": "integer", "minimum": 1, "maximum": 100, "default": 6}.items()
    assert experiment["min_rounds"].items() >= {"type": "integer", "minimum": 1, "default": 6}.items()
    assert experiment["precision"].items() >= {"type": "number", "minimum": 0, "maximum": 1, "default": 0.1}.items()
    assert experiment["system_metrics"]["type"] == "boolean"
    assert experiment["dtype"]["enum"] == ["float32", "float64"]
    assert experiment["timeout_s"]["type"] == "number"
    assert experiment["datasets"]["type"] == "array" and len(experiment["datasets"]["items"]["oneOf"]) == 3
    pairing = _schema("pairing", capsys)
    assert set(pairing["required"]) == {"name", "task", "implementations"}
    assert pairing["$defs"]["ImplementationModel"]["properties"]["device"]["enum"] == ["cpu", "gpu"]
    card = _schema("dataset", capsys)
    assert card["$defs"]["CardSource"]["properties"]["retries"].items() >= {"type": "integer", "minimum": 0}.items()


@pytest.mark.parametrize("kind,path", [(kind, path) for kind, paths in FILES.items() for path in paths],
                         ids=lambda p: p.name if isinstance(p, Path) else p)
def test_every_shipped_file_validates_through_its_model(kind, path):
    assert FILES[kind], f"no {kind} files found"
    model = fields.validate(MODELS[kind], load_yaml_mapping(path), str(path))
    assert isinstance(model, MODELS[kind])


def test_an_unknown_kind_is_one_line_and_exit_2(workdir):
    result = run_cli("schema", "experiments", cwd=workdir)
    assert result.returncode == 2 and result.stdout == ""
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("mlcompare: error: kind: invalid choice: 'experiments'")


def test_printing_a_schema_does_not_import_mlflow():
    assert "mlflow" not in modules_after("schema", "experiment")
