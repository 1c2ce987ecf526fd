"""The engines: what runs next to the data, shipped to the remote box and run there by the agent.

    read/      a sample from disk, safely: load, schema, safetensors, the normal form, statistics, tokens
    model/     the target model and the drafter: identify and its fault catalogue, conventions,
               drafter, accept, vocab
    compare/   a training sample against an inference capture, the mismatch named
    scan/      the per-file part of a dataset scan: records, rows, options, the drafter's agreement
    results/   the shapes of what they return (one module per engine), error_result, finding
    finding_codes.py  every finding code once: severity, title, meaning

Everything here imports torch and the standard library only (transformers and tokenizers inside
functions, for the optional extras). Import torch lazily where a cheap import matters.
"""
