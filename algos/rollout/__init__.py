"""Playing episodes with the policy: the env steps, an engine samples.

``play`` (the rollout loop), ``records`` (what a rollout leaves: actions with their exact
contexts, episodes), ``codec`` (observations to context tokens, action tokens to text),
``engine`` (the rollout engine interface and registry) with ``hf`` (sampling in the training
process) and ``vllm`` (sampling in a vLLM process of its own, ``vllm_worker``, talked to through
``worker_link``), ``branching``
(ARPO's tree rollouts from env snapshots) and ``groups`` (what group methods do to a played
rollout: group rewards, dynamic sampling).
"""
