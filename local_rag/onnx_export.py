"""Exporting a local transformers encoder folder to ONNX (``model.onnx`` beside its tokenizer files)."""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

from local_rag._optional import require
from local_rag.device import enforce_offline
from local_rag.errors import ModelError

_COPY = ("tokenizer.json", "tokenizer_config.json", "special_tokens_map.json", "vocab.txt", "config.json")


def export_folder(
    source: str | Path,
    dest: str | Path,
    auto_class: str,
    output_name: str,
    output_axes: dict[int, str],
    pick: Callable[[Any], Any],
    opset: int = 17,
) -> Path:
    """Export ``transformers.<auto_class>`` loaded from ``source`` to ``dest/model.onnx``, atomically: written in a
    folder of this process's own, then swapped in for any ``dest`` there (a damaged one included).

    Inputs are ``input_ids``, ``attention_mask``, ``token_type_ids`` with dynamic batch and sequence axes; ``pick``
    selects the output tensor from the model's output.
    """
    enforce_offline()
    source, dest = Path(source), Path(dest)
    torch = require("torch", "ONNX export")
    transformers = require("transformers", "ONNX export")
    require("onnx", "ONNX export")
    if not (source / "config.json").exists():
        raise ModelError(f"{source} is not a transformers model folder (no config.json)")
    model = getattr(transformers, auto_class).from_pretrained(str(source), local_files_only=True)
    model.eval()
    tmp = dest.with_name(f"{dest.name}.exporting-{os.getpid()}")  # two processes exporting at once: one folder each
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    try:
        for name in _COPY:
            if (source / name).exists():
                shutil.copy2(source / name, tmp / name)
        if (source / "1_Pooling").exists():
            shutil.copytree(source / "1_Pooling", tmp / "1_Pooling")

        module: Any = torch.nn.Module  # torch is imported lazily: a variable, not a type to mypy

        class _Wrapper(module):
            def __init__(self, inner: Any) -> None:
                super().__init__()
                self.inner = inner

            def forward(self, input_ids: Any, attention_mask: Any, token_type_ids: Any) -> Any:  # torch tensors
                return pick(self.inner(input_ids=input_ids, attention_mask=attention_mask, token_type_ids=token_type_ids))

        ids = torch.ones((2, 8), dtype=torch.long)
        axes = {0: "batch", 1: "sequence"}
        with torch.inference_mode():
            torch.onnx.export(
                _Wrapper(model), (ids, torch.ones_like(ids), torch.zeros_like(ids)), str(tmp / "model.onnx"),
                input_names=["input_ids", "attention_mask", "token_type_ids"], output_names=[output_name],
                dynamic_axes={"input_ids": axes, "attention_mask": axes, "token_type_ids": axes, output_name: output_axes},
                opset_version=opset, dynamo=False,
            )
        if dest.exists():
            shutil.rmtree(dest)
        tmp.rename(dest)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return dest


def quantize_int8(source: str | Path, dest: str | Path) -> Path:
    """``dest``: a copy of the ONNX folder ``source`` whose ``model.onnx`` is quantised with onnxruntime's dynamic
    int8 (weights int8, activations quantised at run time: the usual CPU choice for transformer encoders)."""
    quantization = require("onnxruntime.quantization", "int8 quantisation")
    source, dest = Path(source), Path(dest)
    if not (source / "model.onnx").exists():
        raise ModelError(f"no model.onnx in {source}")
    tmp = dest.with_name(dest.name + ".quantizing")
    shutil.rmtree(tmp, ignore_errors=True)
    shutil.copytree(source, tmp, ignore=shutil.ignore_patterns("model.onnx", "model.onnx.data"))
    try:
        quantization.quantize_dynamic(str(source / "model.onnx"), str(tmp / "model.onnx"),
                                      weight_type=quantization.QuantType.QInt8)
        if dest.exists():
            shutil.rmtree(dest)
        tmp.rename(dest)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return dest
