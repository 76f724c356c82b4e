"""Train a function-calling policy (the same as ``fcenv train``); ``--help`` lists every flag.

``python train_fctncalling.py`` trains the embedded default: a tiny model built offline on the
bundled dataset, in a few minutes on two CPU cores. The training itself is ``fcenv.algos.train``.
"""

import sys

from fcenv.algos.train import main

if __name__ == "__main__":
    sys.exit(main())
