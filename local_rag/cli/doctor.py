"""``local-rag doctor``: what this machine and install can run."""

from __future__ import annotations

import importlib.metadata as md
import json
import platform
from typing import TYPE_CHECKING, Any

import click

from local_rag.cli.main import handle_errors, load, settings_options

if TYPE_CHECKING:
    from local_rag.settings import Settings

PACKAGES = (
    "local-rag", "numpy", "bm25s", "PyStemmer", "faiss-cpu", "faiss-gpu-cu12", "torch", "transformers",
    "sentence-transformers", "onnxruntime", "onnxruntime-gpu", "llama_cpp_python", "nvidia-ml-py",
    "pytrec-eval-terrier",
)


def _version(name: str) -> str | None:
    try:
        return md.version(name)
    except md.PackageNotFoundError:
        return None


def fallback_facts(report: dict[str, Any]) -> dict[str, Any]:
    """The facts `local_rag.device.silent_fallbacks` decides on, from a `collect` report (plus a probe session)."""
    import shutil

    from local_rag.device import gpu_listed, onnx_probe_providers

    torch_info = report.get("torch")
    facts: dict[str, Any] = {
        "gpu_listed": bool(report["gpus"]) or gpu_listed(), "nvml": _version("nvidia-ml-py") is not None,
        "nvcc": shutil.which("nvcc") is not None, "faiss_gpus": report["faiss"]["gpus"],
        "onnx_available": report["onnxruntime_providers"],
        "llama_offload": None if report["llama_cpp"] is None else report["llama_cpp"]["gpu_offload"],
    }
    if torch_info is not None:
        facts["torch_cuda_build"] = torch_info["cuda_build"]
        facts["torch_cuda_available"] = torch_info["cuda_available"]
    if facts["gpu_listed"]:
        facts["onnx_session"] = onnx_probe_providers()
    return facts


def collect(settings: Settings) -> dict[str, Any]:
    from local_rag.adaptation import adaptations
    from local_rag.device import amx_tiles_granted, cpu_has_amx, faiss_gpu_count, nvml_gpus, silent_fallbacks
    from local_rag.modelstore import Manifest
    from local_rag.settings import list_profiles
    from local_rag.sysinfo import cpu_name

    report: dict[str, Any] = {
        "python": platform.python_version(),
        "platform": platform.platform(),
        "cpu": cpu_name(),
        "cpu_amx": cpu_has_amx(),
        "cpu_amx_tiles": amx_tiles_granted(),
        "packages": {name: _version(name) for name in PACKAGES},
        "gpus": nvml_gpus(),
        "profile": settings.profile,
        "profiles": list_profiles(),
    }
    try:
        import torch

        report["torch"] = {"version": torch.__version__, "cuda_build": torch.version.cuda, "cuda_available": torch.cuda.is_available()}
    except ImportError:
        report["torch"] = None
    report["faiss"] = {"gpus": faiss_gpu_count(), "build": "gpu" if faiss_gpu_count() else ("cpu" if _version("faiss-cpu") else None)}
    try:
        import onnxruntime as ort

        report["onnxruntime_providers"] = ort.get_available_providers()
    except ImportError:
        report["onnxruntime_providers"] = None
    from local_rag.corpus.documents import CODE_KINDS, DOC_SUFFIXES, unreadable_formats
    from local_rag.corpus.ocr import ocr_missing

    missing = unreadable_formats()
    report["documents"] = {"readable": [s for s in DOC_SUFFIXES if not any(s in v for v in missing.values())],
                           "missing": {module: list(suffixes) for module, suffixes in missing.items()},
                           "chat_exports": ["Slack", "Discord", "Telegram", "Google Chat", "Mattermost", "Google Keep", "ChatGPT",
                                                            "Claude"],  # `local_rag.corpus.chats`: no library
                           "code": len(CODE_KINDS)}  # `--code` (`local_rag.corpus.code`): no library

    report["ocr"] = None if ocr_missing() else {"rapidocr-onnxruntime": _version("rapidocr-onnxruntime"),
                                                "pypdfium2": _version("pypdfium2")}
    report["servers"] = {"serve": _version("fastapi") and _version("uvicorn"), "mcp": _version("mcp")}
    report["llama_cpp"] = None
    if _version("llama_cpp_python"):
        from local_rag.llm.cpu_build import advice, amx_hint, probe

        build = probe()  # in a child process first: a build for another CPU would kill this one at import
        hint = amx_hint(build, bool(report["cpu_amx_tiles"]))
        report["llama_cpp_cpu_build"] = build | {"advice": advice(build), "amx_hint": hint}
        if "error" not in build:
            from local_rag.llm.native import import_llama_cpp

            llama_cpp = import_llama_cpp()
            report["llama_cpp"] = {"version": llama_cpp.__version__,
                                   "gpu_offload": bool(llama_cpp.llama_supports_gpu_offload())}
    manifest = Manifest.load(settings.models_dir)
    report["models"] = {
        name: {"role": e.role, "present": manifest.is_present(e), "source": e.source} for name, e in manifest.entries.items()
    }
    wanted = {settings.embedder.model, settings.llm.model}
    report["profile_models_present"] = {m: bool(m in manifest.entries and manifest.is_present(manifest.entries[m])) for m in wanted}
    report["cpu_fallbacks"] = silent_fallbacks(fallback_facts(report))
    report["models_dir"], report["indexes_dir"] = str(settings.models_dir), str(settings.indexes_dir)
    report["adaptations"] = adaptations(settings.indexes_dir, settings.models_dir)
    return report


@click.command()
@settings_options
@click.option("--verify", is_flag=True, help="Also check every model file's sha256 (slow for large models).")
@click.option("--json", "as_json", is_flag=True)
@handle_errors
def doctor(profile, config_file, index_name, verify, as_json):
    """Report Python, packages, torch/CUDA, faiss and onnxruntime builds, GPUs and free VRAM, and models."""
    settings = load(profile, config_file, index_name)
    report = collect(settings)
    if verify:
        from local_rag.modelstore import Manifest

        manifest = Manifest.load(settings.models_dir)
        report["verify"] = {name: manifest.verify(e) or "ok" for name, e in manifest.entries.items()}
    if as_json:
        click.echo(json.dumps(report, indent=2))
        return
    click.echo(f"python        {report['python']} on {report['platform']}")
    click.echo(f"cpu           {report['cpu']} (AMX: {'yes' if report['cpu_amx'] else 'no'})")
    for name, version in report["packages"].items():
        if version:
            click.echo(f"  {name:24} {version}")
    torch_info = report["torch"]
    click.echo(f"torch         {torch_info and torch_info['version']} (CUDA build {torch_info and torch_info['cuda_build']}, GPU usable: {torch_info and torch_info['cuda_available']})")
    click.echo(f"faiss         {report['faiss']['build']} build, {report['faiss']['gpus']} GPU(s)")
    click.echo(f"onnxruntime   providers {report['onnxruntime_providers']}")
    built_for = " ".join((report.get("llama_cpp_cpu_build") or {}).get("features") or [])
    documents = report["documents"]
    lacking = sorted(s for suffixes in documents["missing"].values() for s in suffixes)
    click.echo(f"documents     {len(documents['readable'])} formats and {', '.join(documents['chat_exports'])} "
               f"exports read, source code and configuration ({documents['code']} kinds of file) with --code" + (
        f"; not {' '.join(lacking)}: pip install 'local-rag[docs]'" if lacking else " (the docs extra installed)"))
    ocr = report["ocr"]
    click.echo(f"ocr           scanned PDF pages read by RapidOCR {ocr['rapidocr-onnxruntime']} (pypdfium2 "
               f"{ocr['pypdfium2']})" if ocr else "ocr           none: scanned PDFs are listed as unreadable (pip install "
               "'local-rag[ocr]')")
    servers = report["servers"]
    mcp = servers["mcp"] if servers["mcp"] and not servers["mcp"].startswith("1.") else None
    click.echo("servers       " + ("serve (OpenAI-compatible HTTP)" if servers["serve"] else
                                   "serve: not installed (pip install 'local-rag[server]')")
               + (f", mcp (MCP SDK {mcp})" if mcp else ", mcp: not installed (pip install 'local-rag[mcp]')"))
    click.echo(f"llama.cpp     {report['llama_cpp'] or 'not installed (bash scripts/install_llama_cpp.sh)'}"
               + (f", built for {built_for}" if report["llama_cpp"] and built_for else ""))
    if report["gpus"]:
        for gpu in report["gpus"]:
            click.echo(f"gpu {gpu['index']}         {gpu['name']}: {gpu['free'] / 2**30:.1f} of {gpu['total'] / 2**30:.1f} GiB free (driver {gpu['driver']})")
    else:
        click.echo("gpu           none seen by NVML: every stage runs on the CPU")
    build = report.get("llama_cpp_cpu_build") or {}
    if build.get("advice") or build.get("error"):
        click.echo(f"warning       {build.get('advice') or build.get('error')}")
    if build.get("amx_hint") and not (report["llama_cpp"] or {}).get("gpu_offload"):
        click.echo(f"note          {build['amx_hint']}")
    for warning in report["cpu_fallbacks"]:
        click.echo(f"warning       {warning}")
    click.echo(f"profile       {report['profile']} (available: {', '.join(report['profiles'])})")
    click.echo(f"folders       models {report['models_dir']}, indexes {report['indexes_dir']}")
    for name, info in report["models"].items():
        click.echo(f"model         {name:34} {info['role']:9} {'present' if info['present'] else 'MISSING'}  {info['source']}")
    for index, line in report["adaptations"].items():
        click.echo(f"adaptation    index {index}: {line}")
    for name, present in report["profile_models_present"].items():
        if not present:
            click.echo(f"warning       the profile's model {name!r} is not in {settings.models_dir}/: `local-rag models import|pull {name}`")
    if verify:
        for name, result in report["verify"].items():
            click.echo(f"verify        {name}: {result if result == 'ok' else '; '.join(result)}")
