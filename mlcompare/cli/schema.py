"""`mlcompare schema experiment|pairing|dataset`: the JSON Schema of a file kind, for editors.

The schemas are generated from the models that validate the files, so they cannot drift.
Point an editor at one, e.g. in a YAML file: `# yaml-language-server: $schema=experiment.json`.
"""

from __future__ import annotations

import argparse
import json
from typing import Any

from mlcompare.cli.command import Command, register

#: kind -> (module, model, title); imported on use, so a bad command line stays cheap.
KINDS = {
    "experiment": ("mlcompare.config.experiment_schema", "ExperimentModel", "mlcompare experiment file"),
    "pairing": ("mlcompare.config.pairing", "PairingModel", "mlcompare pairing file"),
    "dataset": ("mlcompare.config.cards", "Card", "mlcompare dataset card"),
}


def json_schema(kind: str) -> dict[str, Any]:
    """The JSON Schema (draft 2020-12) of one kind of file."""
    import importlib

    module, model, title = KINDS[kind]
    schema = getattr(importlib.import_module(module), model).model_json_schema()
    return {"$schema": "https://json-schema.org/draft/2020-12/schema", "$id": f"urn:mlcompare:schema:{kind}",
            **schema, "title": title}


@register
class Schema(Command):
    name = "schema"
    help = "print the JSON Schema of experiment files, pairing files or dataset cards"
    order = 60

    @classmethod
    def add_arguments(cls, parser: argparse.ArgumentParser) -> None:
        parser.add_argument("kind", choices=list(KINDS), help="which kind of file")

    @classmethod
    def run(cls, args: argparse.Namespace) -> int:
        print(json.dumps(json_schema(args.kind), indent=2))
        return 0
