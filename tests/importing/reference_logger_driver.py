"""One run of the reference implementation (`rlms`) with its `RLMLogger` writing a JSONL log.

Run in a process of its own (the reference executes model code in its host process):
`python reference_logger_driver.py SETTINGS_JSON BASE_URL LOG_DIR`. Prints the log's path, and
the exception's class name on a second line when the run raised (its log is kept as written).
"""

from __future__ import annotations

import json
import sys


def main() -> None:
    settings = json.loads(sys.argv[1])
    base_url, log_dir = sys.argv[2], sys.argv[3]
    from rlm import RLM
    from rlm.logger import RLMLogger

    logger = RLMLogger(log_dir=log_dir)
    rlm = RLM(
        backend="openai",
        backend_kwargs={"model_name": "test-model", "base_url": base_url, "api_key": "sk-test"},
        environment="local",
        max_depth=settings["max_depth"],
        max_iterations=settings["max_iterations"],
        logger=logger,
    )
    failure = ""
    try:
        rlm.completion(prompt=settings["document"], root_prompt=settings["question"])
    except Exception as error:  # the log is what the test reads, whatever the run did
        failure = type(error).__name__
    print(logger.log_file_path)
    print(failure)


if __name__ == "__main__":
    main()
