# Issue 24, session 27: the IDK gate's phases (score, then the answer's own prefill and decode) against a plain answer, two rounds.
# flock /tmp/heavy.lock .venv/bin/python docs/benchmarks/decider-pidk/latency_phases.py > docs/benchmarks/decider-pidk/latency_phases.txt
import time, sys
sys.argv=['x']
exec(open('docs/benchmarks/decider-pidk/latency.py').read().split('times: dict')[0])
L = llm._llama
for r in range(2):
    llm.forget_prompts()
    t0=time.perf_counter(); llm.score(messages, settings.generate.idk_answer, stage="idk-gate", n_tokens=4); t1=time.perf_counter()
    d=llm.run(messages, stage="generate", max_tokens=32); t2=time.perf_counter()
    print('gate: score', round(t1-t0,2), 'run', round(t2-t1,2), 'prefill', round(d.call.prefill_s,2), 'decode', round(d.call.decode_s,2), d.call.completion_tokens, d.call.cached_tokens)
    llm.forget_prompts()
    t1=time.perf_counter(); d=llm.run(messages, stage="generate", max_tokens=32); t2=time.perf_counter()
    print('plain: run', round(t2-t1,2), 'prefill', round(d.call.prefill_s,2), 'decode', round(d.call.decode_s,2), d.call.completion_tokens)
