"""Benchmarks and memory planning on one machine: ``local-rag bench`` (per-stage latency, tokens/s, TTFT, memory,
decode speed against the memory-bandwidth bound, index build throughput) and ``local-rag plan`` (what each profile
needs in VRAM and RAM, from GGUF metadata and model files, before anything is loaded).

Modules: `conversations` (the fixed conversation sets), `runner` (turns, stage intervals, summaries), `memory`
(RSS / NVML / torch sampler), `bandwidth` (measured bandwidth and the decode bound), `build` (index build
throughput), `plan` (model sizes from `local_rag.modelstore.shapes`), `report` (JSON, Markdown, charts), `suite` (`run_bench`).
Nothing heavy is imported here.
"""
