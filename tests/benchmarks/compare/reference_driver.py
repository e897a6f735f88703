"""One scenario through the reference implementation (`rlms`), printing one JSON line.

Run with the reference's own environment: imports only its package and the standard library.
`python reference_driver.py SCENARIO_JSON BASE_URL`.
"""

from __future__ import annotations

import json
import sys
import time


def main() -> None:
    scenario = json.loads(sys.argv[1])
    base_url = sys.argv[2]
    from rlm import RLM

    rlm = RLM(
        backend="openai",
        backend_kwargs={"model_name": "test-model", "base_url": base_url, "api_key": "sk-bench"},
        environment="local",
        max_depth=scenario["max_depth"],
        max_iterations=scenario["max_turns"],
        max_budget=scenario["max_cost_usd"],
    )
    started = time.perf_counter()
    status, answer, error = "completed", "", None
    try:
        result = rlm.completion(prompt=scenario["document"], root_prompt=scenario["question"])
        answer = str(result.response)
        usage = result.usage_summary.to_dict()
    except Exception as failure:  # the reference raises for a cap it enforces
        status, error, usage = type(failure).__name__, str(failure)[:200], {}
    wall = time.perf_counter() - started
    calls = input_tokens = output_tokens = 0
    for summary in (usage.get("model_usage_summaries") or {}).values():
        calls += int(summary.get("total_calls", 0))
        input_tokens += int(summary.get("total_input_tokens", 0))
        output_tokens += int(summary.get("total_output_tokens", 0))
    print(
        json.dumps(
            {
                "status": status,
                "answer": answer,
                "error": error,
                "wall_s": wall,
                "calls": calls,
                "input_tokens": input_tokens,
                "output_tokens": output_tokens,
            }
        )
    )


if __name__ == "__main__":
    main()
