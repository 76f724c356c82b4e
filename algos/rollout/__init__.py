"""Playing episodes with the policy: the env steps, the engine samples.

``play`` (the rollout loop and its records), ``codec`` (observations to context tokens, action
tokens to text), ``branching`` (ARPO's tree rollouts from env snapshots) and ``groups``
(what group methods do to a played rollout: dynamic sampling).
"""
