"""Reading a sample: load, schema, safetensors, statistics, tokens. Shipped to the box."""
