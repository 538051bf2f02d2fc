"""Load test of `local-rag serve` (``scripts/bench_server.py``): N concurrent OpenAI clients x M requests against
the real server.

    flock /tmp/cpu-heavy.lock .venv/bin/python scripts/bench_server.py --profile cpu-test --clients 20 --requests 5

Builds the bundled docs (the demo corpus) into a temporary index with the profile's embedder, starts
``python -m local_rag serve`` on a free loopback port, then runs the clients (threads, the official ``openai``
client with retries off; every other request streamed). A request refused with 429 is counted and the client goes
on to its next one (``--attempts N``: it waits the server's ``Retry-After`` and tries again, up to N times). Every
attempt is recorded: 200, 429 or error, with the server's per-stage timings of each answer.
Writes ``<out>.json`` (every attempt, the summary, the machine) and ``<out>.md``.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from local_rag.demo import SCRIPT, ensure_demo_index
from local_rag.settings import load_settings
from local_rag.stats import percentile
from local_rag.sysinfo import machine

if TYPE_CHECKING:
    import openai
    from openai.types.chat import ChatCompletionMessageParam


def conversation(i: int) -> list[ChatCompletionMessageParam]:
    """The i-th conversation: one of the demo questions; the follow-up comes after its first turn."""
    q = SCRIPT[i % len(SCRIPT)]
    if q == SCRIPT[1]:
        return [{"role": "user", "content": SCRIPT[0]}, {"role": "assistant", "content": "Builds go to a temporary "
                "folder that replaces the old index only when complete."}, {"role": "user", "content": q}]
    return [{"role": "user", "content": q}]


def start_server(args: argparse.Namespace, env: dict[str, str]) -> tuple[subprocess.Popen[str], str, float, list[str]]:
    cmd = [sys.executable, "-m", "local_rag", "serve", "--profile", args.profile, "--index", "bench", "--port", "0",
           "--queue", str(args.queue)]
    started = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=env)
    log: list[str] = []
    assert proc.stderr is not None
    for line in proc.stderr:
        log.append(line)
        found = re.search(r"Uvicorn running on (http://\S+)", line)
        if found:
            threading.Thread(target=lambda: log.extend(proc.stderr), daemon=True).start()  # type: ignore[arg-type]
            return proc, found.group(1), time.perf_counter() - started, log
    raise SystemExit("the server did not start:\n" + "".join(log))


def one_request(oa: openai.OpenAI, i: int, stream: bool) -> dict[str, Any]:
    import openai

    started = time.perf_counter()
    rec: dict[str, Any] = {"stream": stream}
    try:
        if stream:
            first = None
            text = ""
            extra: dict[str, Any] = {}
            for chunk in oa.chat.completions.create(model="local", messages=conversation(i), stream=True):
                piece = chunk.choices[0].delta.content if chunk.choices else None
                if piece and first is None:
                    first = time.perf_counter() - started
                text += piece or ""
                extra = (chunk.model_extra or {}).get("local_rag", extra)
            rec["ttft_s"] = first
        else:
            reply = oa.chat.completions.create(model="local", messages=conversation(i))
            text, extra = reply.choices[0].message.content or "", (reply.model_extra or {}).get("local_rag", {})
        timings = extra.get("timings_s", {})
        rec.update(status=200, chars=len(text), kind=extra.get("kind"), queue_s=extra.get("queue_s"),
                   turn_s=timings.get("total"), stages={k: v for k, v in timings.items() if "." not in k},
                   completion_tokens=sum(c.get("completion_tokens", 0) for c in extra.get("llm_calls", [])))
    except openai.RateLimitError as exc:
        rec.update(status=429, retry_after=int(exc.response.headers.get("retry-after", "1")))
    except Exception as exc:  # recorded and counted as an error in the summary
        rec.update(status="error", error=f"{type(exc).__name__}: {exc}"[:300])
    rec["latency_s"] = time.perf_counter() - started
    return rec


def client(k: int, url: str, args: argparse.Namespace, out: list[dict[str, Any]], lock: threading.Lock) -> None:
    import openai

    oa = openai.OpenAI(base_url=f"{url}/v1", api_key="none", max_retries=0, timeout=args.timeout)
    for r in range(args.requests):
        i = k * args.requests + r
        for attempt in range(1, args.attempts + 1):
            rec = one_request(oa, i, stream=bool(i % 2))
            rec.update(client=k, request=r, attempt=attempt, t=time.perf_counter())
            with lock:
                out.append(rec)
            if rec["status"] != 429:
                break
            time.sleep(min(rec["retry_after"], 60))


def summarize(attempts: list[dict[str, Any]], wall: float, n_requests: int) -> dict[str, Any]:
    ok = [a for a in attempts if a["status"] == 200]
    final = {(a["client"], a["request"]): a["status"] for a in attempts}  # the last attempt of each request
    lat = [a["latency_s"] for a in ok]
    ttft = [a["ttft_s"] for a in ok if a.get("ttft_s") is not None]

    def ms(v: float) -> float:
        return round(v * 1000, 1)

    return {
        "requests": n_requests, "attempts": len(attempts), "wall_s": round(wall, 2),
        "answered": sum(1 for s in final.values() if s == 200), "refused": sum(1 for s in final.values() if s == 429),
        "status_200": len(ok), "status_429": sum(1 for a in attempts if a["status"] == 429),
        "errors": sum(1 for a in attempts if a["status"] == "error"),
        "throughput_answers_per_s": round(len(ok) / wall, 3) if wall else 0.0,
        "latency_ms": {"p50": ms(percentile(lat, 0.5)), "p95": ms(percentile(lat, 0.95)), "max": ms(max(lat, default=0))},
        "ttft_ms_streamed": {"p50": ms(percentile(ttft, 0.5)), "p95": ms(percentile(ttft, 0.95))},
        "server_turn_ms": {"p50": ms(percentile([a["turn_s"] for a in ok if a.get("turn_s")], 0.5)),
                           "p95": ms(percentile([a["turn_s"] for a in ok if a.get("turn_s")], 0.95))},
        "server_queue_ms": {"p50": ms(percentile([a["queue_s"] for a in ok if a.get("queue_s") is not None], 0.5)),
                            "p95": ms(percentile([a["queue_s"] for a in ok if a.get("queue_s") is not None], 0.95))},
        "kinds": {k: sum(1 for a in ok if a.get("kind") == k) for k in sorted({str(a.get("kind")) for a in ok})},
        "stage_ms_p50": {k: ms(percentile([a["stages"][k] for a in ok if k in a.get("stages", {})], 0.5))
                         for k in sorted({k for a in ok for k in a.get("stages", {})})},
        "completion_tokens_p50": percentile([a.get("completion_tokens", 0) for a in ok], 0.5),
    }


def write_markdown(path: Path, report: dict[str, Any], command: str) -> None:
    s, m = report["summary"], report["machine"]
    rows = [
        ("clients x requests", f"{report['clients']} x {report['requests_per_client']} (every other one streamed)"),
        ("server queue", f"{report['queue']} waiting + 1 running; 429 past it"),
        ("client on a 429", "moves on to its next request" if report["attempts_per_request"] == 1 else
         f"waits Retry-After, tries again (at most {report['attempts_per_request']} attempts)"),
        ("model / profile", f"{report['model']} / {report['profile']} (index: the bundled docs, {report['index_passages']} chunks)"),
        ("server start-up (to listening)", f"{report['startup_s']:.1f} s"),
        ("wall time", f"{s['wall_s']} s"),
        ("attempts: 200 / 429 / errors", f"{s['status_200']} / {s['status_429']} / {s['errors']}"),
        ("requests answered / refused for good", f"{s['answered']} / {s['refused']} of {s['requests']}"),
        ("throughput", f"{s['throughput_answers_per_s']} answers/s"),
        ("latency of a 200 (client, incl. queue) p50 / p95 / max", f"{s['latency_ms']['p50']} / {s['latency_ms']['p95']} / {s['latency_ms']['max']} ms"),
        ("time to first token (streamed) p50 / p95", f"{s['ttft_ms_streamed']['p50']} / {s['ttft_ms_streamed']['p95']} ms"),
        ("server turn time p50 / p95", f"{s['server_turn_ms']['p50']} / {s['server_turn_ms']['p95']} ms"),
        ("server queue wait p50 / p95", f"{s['server_queue_ms']['p50']} / {s['server_queue_ms']['p95']} ms"),
        ("server stage times p50", ", ".join(f"{k} {v} ms" for k, v in s["stage_ms_p50"].items())),
        ("LLM tokens written per turn p50", f"{s['completion_tokens_p50']:.0f} (generate.max_tokens {report['max_tokens']})"),
        ("answer kinds", ", ".join(f"{k}: {v}" for k, v in s["kinds"].items())),
        ("server RSS at the end", f"{report['server_rss_mb']} MiB"),
        ("machine", f"{m['cpu']}, {m['cores']} cores, GPUs: {len(m['gpus']) or 'none'}; 1-min load average "
                    f"{report['loadavg_1min']['before']} before, {report['loadavg_1min']['after']} after (a shared machine)"),
    ]
    lines = [f"<!-- generated by {command} -->", "### `local-rag serve` under concurrent load", "", "| | |", "|---|---|"]
    lines += [f"| {k} | {v} |" for k, v in rows]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def run(args: argparse.Namespace, command: str) -> int:
    """Run the load test that ``args`` describe (see scripts/bench_server.py); returns the exit status (1 when a
    request failed)."""
    import httpx

    with tempfile.TemporaryDirectory(prefix="bench-server-") as tmp:
        settings = load_settings(args.profile, overrides={"indexes_dir": tmp, "index": "bench"})
        ensure_demo_index(settings, progress=False)
        passages = json.loads((settings.index_dir / "manifest.json").read_text()).get("chunks", 0)
        env = {**os.environ, "LOCAL_RAG_INDEXES_DIR": tmp}
        if args.max_tokens:
            env["LOCAL_RAG_GENERATE__MAX_TOKENS"] = str(args.max_tokens)
        proc, url, startup_s, log = start_server(args, env)
        try:
            attempts: list[dict[str, Any]] = []
            lock = threading.Lock()
            threads = [threading.Thread(target=client, args=(k, url, args, attempts, lock)) for k in range(args.clients)]
            load_before = os.getloadavg()[0]
            started = time.perf_counter()
            for t in threads:
                t.start()
            for t in threads:
                t.join()
            wall = time.perf_counter() - started
            load_after = os.getloadavg()[0]
            health = httpx.get(f"{url}/healthz", timeout=10).json()
            import psutil

            rss = round(psutil.Process(proc.pid).memory_info().rss / 2**20, 1)
        finally:
            proc.terminate()
            proc.wait(30)
    summary = summarize(attempts, wall, args.clients * args.requests)
    report = {
        "command": command, "profile": args.profile, "model": settings.llm.model, "clients": args.clients,
        "requests_per_client": args.requests, "queue": args.queue, "attempts_per_request": args.attempts,
        "max_tokens": args.max_tokens or settings.generate.max_tokens,
        "index_passages": passages, "startup_s": round(startup_s, 2), "server_rss_mb": rss, "healthz": health,
        "loadavg_1min": {"before": round(load_before, 2), "after": round(load_after, 2)},
        "summary": summary, "machine": machine(), "attempts": sorted(attempts, key=lambda a: a["t"]),
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.with_suffix(".json").write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    write_markdown(args.out.with_suffix(".md"), report, command)
    print(json.dumps(summary, indent=2))
    if summary["errors"]:
        print("errors:", [a["error"] for a in attempts if a["status"] == "error"][:5], file=sys.stderr)
        return 1
    return 0
