"""Parse cost of an lm-eval ``results_<ts>.json`` of 57 tasks (MMLU's subjects: configs, versions, n-shot, ...):
``json.loads`` against ``effstats._user_files.json_loads`` (the ``json_object`` hook refusing a key named twice),
alternated in one process, CPU time (``process_time``) of 200 parses each, six rounds.

Usage: .venv/bin/python benchmarks/lm_eval_results_json.py
"""
import json
import time

from effstats._user_files import json_loads

cfg = {"task": "t", "dataset_path": "cais/mmlu", "test_split": "test", "fewshot_split": "dev",
       "doc_to_text": "{{question.strip()}}\nA. {{choices[0]}}\nB. {{choices[1]}}\nC. {{choices[2]}}\nD. "
                      "{{choices[3]}}\nAnswer:", "doc_to_target": "answer", "doc_to_choice": ["A", "B", "C", "D"],
       "description": "The following are multiple choice questions (with answers) about x.\n\n",
       "target_delimiter": " ", "fewshot_delimiter": "\n\n", "fewshot_config": {"sampler": "first_n"},
       "num_fewshot": 5, "metric_list": [{"metric": "acc", "aggregation": "mean", "higher_is_better": True}],
       "output_type": "multiple_choice", "repeats": 1, "should_decontaminate": False,
       "metadata": {"version": 1.0}}
tasks = [f"mmlu_subject_{k:02d}" for k in range(57)]
doc = {"results": {t: {"alias": t, "acc,none": 0.5, "acc_stderr,none": 0.05} for t in tasks},
       "group_subtasks": {"mmlu": tasks}, "configs": {t: {**cfg, "task": t} for t in tasks},
       "versions": {t: 1.0 for t in tasks}, "n-shot": {t: 5 for t in tasks},
       "higher_is_better": {t: {"acc": True} for t in tasks},
       "n-samples": {t: {"original": 100, "effective": 100} for t in tasks},
       "config": {"model": "hf", "model_args": "pretrained=org/m", "batch_size": 1, "limit": None},
       "git_hash": "abc", "date": 1.0, "model_name": "org/m"}
text = json.dumps(doc, indent=2)
print(f"{len(text) / 1e3:.0f} kB, {text.count(':')} pairs")
res = {"json.loads": [], "json_loads": []}
for rep in range(6):
    for name, f in (("json.loads", json.loads), ("json_loads", json_loads)):
        t = time.process_time()
        for _ in range(200):
            f(text)
        res[name].append((time.process_time() - t) / 200 * 1e3)
for name, v in res.items():
    print(f"{name}: {min(v):.3f} ms fastest, {sorted(v)[len(v) // 2]:.3f} ms median per parse")
