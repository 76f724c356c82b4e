"""fcenv: a Gymnasium environment for training language models to call functions.

Importing the package registers ``fcenv/FunctionCalling-v0``; the environment module itself
is only imported when an environment is made.
"""

from gymnasium.envs.registration import register, registry

ENV_ID = "fcenv/FunctionCalling-v0"

if ENV_ID not in registry:
    register(id=ENV_ID, entry_point="fcenv.env:FunctionCallingEnv")

__version__ = "0.1.0"
__all__ = ["ENV_ID", "__version__"]
