"""Where the demo puts what: its folders, the training run's indices and batches, the capture of
another run's layer ids. Shared by the writer (demo/dataset.py) and README.txt (demo/readme.py)."""

README_MARK = "eagle3-tui demo dataset"
SHARD = "rows_0-2000"
N_TRAIN = 26  # global indices 0..25, minus MISSING
MISSING = (7, 19)  # skipped by the producer (SpecForge drops samples with NaN)
GZIPPED = 3  # this index is stored as data_3.ckpt.gz
BATCH = 4  # SpecForge pads each batch on the right to its longest row
MODEL_DIR = "model"  # the demo's target model: config.json, model.safetensors, tokenizer.json
DRAFTER_DIR = "drafter"  # a trained EAGLE-3 drafter, when the demo writes one (see _write_drafter)
# issue 9's capture: a run written with SpecForge layer ids [0, 2, 3] (boundaries 1, 3, 4), its
# capture with the ids read under the other convention (boundaries 0, 2, 3: each one shallower)
CONVENTION_IDS = (0, 2, 3)
CONVENTION_INDEX = 20
CONVENTION_DIR = "train_ids_0_2_3"
