"""fcenv: a Gymnasium environment for training language models to call functions.

Importing the package registers ``fcenv/FunctionCalling-v0``; the environment module itself is
only imported when an environment is made. Modules, described in docs/layout.md#the-folders:
the environment (``env``, ``episode``, ``chat_view``, ``spaces``, ``rewards``, ``prompts``,
``prompt_variations``, ``tool_formats``, ``chat_mode``, ``multi_turn/``, ``agentic/``,
``backends/``, ``search/``); data (``data``, ``loader``, ``problems``, ``answerable``, ``tasks``,
``bundled/``, ``sources/``, ``bfcl_data``, ``bfcl_sample``); the commands (``cli``, ``arguments``,
``flags``, ``evaluate``, ``score_card``, ``bfcl_models``, ``result_record``,
``format_sensitivity``, ``pretrained``); the doors into TRL, SkyRL-gym and verl (``trl``,
``skyrl``, ``verl``, over ``doors/``). At the repository's top, linked here: ``handlers/``
(decoders), ``checkers/`` (BFCL's verdicts), ``algos/`` (the trainers and their commands); this
package never imports ``fcenv.algos``.
"""

from gymnasium.envs.registration import register, registry

ENV_ID = "fcenv/FunctionCalling-v0"

if ENV_ID not in registry:
    register(id=ENV_ID, entry_point="fcenv.env:FunctionCallingEnv")

__version__ = "0.1.0"
__all__ = ["ENV_ID", "__version__"]
