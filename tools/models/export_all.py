#!/usr/bin/python3
"""Exports every test model: /usr/bin/python3 tools/models/export_all.py --out DIR

The small models (rnn_loop, branch, transformer, lstm, resblock, and issue 26's
length workloads lstm_stack, lstm_cell_loop, seq_insert_loop, gru_decoder,
transformer_encoder; each under 1 MB) are committed under tests/models/ and
regenerated with

    /usr/bin/python3 tools/models/export_all.py --out tests/models --small-only

The large ones (resnet18, mobilenet_v2) are only written to the model cache,
where tests/models/run_models_test.cc looks for them:

    /usr/bin/python3 tools/models/export_all.py --large-only

(--out defaults to $RIVET_MODEL_CACHE, else ~/.cache/rivet/models.)
"""
import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import common  # noqa: E402
import export_branch  # noqa: E402
import export_gru_decoder  # noqa: E402
import export_lstm  # noqa: E402
import export_lstm_cell_loop  # noqa: E402
import export_lstm_stack  # noqa: E402
import export_mobilenet_v2  # noqa: E402
import export_resblock  # noqa: E402
import export_resnet18  # noqa: E402
import export_rnn_loop  # noqa: E402
import export_seq_insert_loop  # noqa: E402
import export_transformer  # noqa: E402
import export_transformer_encoder  # noqa: E402

SMALL = [export_rnn_loop, export_branch, export_transformer, export_lstm,
         export_resblock,
         # issue 26's length workloads (tools/bench/compare_engines.py --suite lengths)
         export_lstm_stack, export_lstm_cell_loop, export_seq_insert_loop,
         export_gru_decoder, export_transformer_encoder]
LARGE = [export_resnet18, export_mobilenet_v2]


def main():
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--out", default=common.model_cache_dir(),
                   help="where the model folders go (default: %(default)s)")
    g = p.add_mutually_exclusive_group()
    g.add_argument("--small-only", action="store_true",
                   help="only the small models that are committed under tests/models")
    g.add_argument("--large-only", action="store_true",
                   help="only the large models (resnet18, mobilenet_v2)")
    p.add_argument("--only", default="",
                   help="comma-separated model names (default: all selected)")
    args = p.parse_args()

    scripts = SMALL if args.small_only else LARGE if args.large_only else SMALL + LARGE
    if args.only:
        wanted = set(args.only.split(","))
        unknown = wanted - {s.NAME for s in SMALL + LARGE}
        if unknown:
            p.error(f"unknown model(s): {', '.join(sorted(unknown))}")
        scripts = [s for s in scripts if s.NAME in wanted]
    os.makedirs(args.out, exist_ok=True)
    for s in scripts:
        s.export(args.out)


if __name__ == "__main__":
    main()
