"""PPO and its relatives, from a played rollout to updated adapters.

``algorithms`` (the presets: an estimator, a ratio level, a critic or not), ``advantages``
(the pure BAD and GAE math), ``estimators`` (the registered advantage estimators: per token,
action, turn or group), ``buffer`` (the scored rollout: log-probs, values, advantages),
``losses`` (the loss terms) and ``update`` (the PPO update: epochs, minibatches, clipping).
"""
