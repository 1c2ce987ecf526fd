"""The per-file part of a dataset scan: records, rows, options, the drafter's agreement. Shipped to the box."""
