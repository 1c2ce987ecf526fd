"""Natural order as a user expects it, however the pages of a listing arrive."""

import random

from eagle3_tui.sources.base import Entry, NaturalListing, natural_key


def test_numbers_compare_as_numbers_and_ties_fall_back_to_the_name():
    names = ["data_10.ckpt", "data_2.ckpt", "Data_3", "a-1", "a10", "a2", "a1b", "a01", "a1", "1", "01", "", "ß1", "ss1"]
    assert sorted(names, key=natural_key) == [
        "", "01", "1", "a01", "a1", "a1b", "a2", "a10", "a-1", "data_2.ckpt", "Data_3", "data_10.ckpt", "ss1", "ß1",
    ]


def test_pages_in_any_order_and_any_size_give_folders_first_then_natural_order():
    names = [f"data_{i}.ckpt" for i in range(3000)] + ["rows_10000-12000", "rows_0-2000", "rows_2000-4000"]
    entries = [Entry(n, "dir" if n.startswith("rows") else "file") for n in names]
    expected = ["rows_0-2000", "rows_2000-4000", "rows_10000-12000"] + [f"data_{i}.ckpt" for i in range(3000)]
    rng = random.Random(3)
    for _ in range(5):
        rng.shuffle(entries)
        listing = NaturalListing()
        i = 0
        while i < len(entries):
            size = rng.choice([1, 7, 64, 65, 500])
            listing.add(entries[i : i + size])
            if rng.random() < 0.3:  # a UI reads between pages
                assert [e.name for e in listing.entries] == sorted(
                    [e.name for e in entries[: i + size]], key=lambda n: (not n.startswith("rows"), natural_key(n))
                )
            i += size
        assert [e.name for e in listing.entries] == expected
        assert len(listing) == len(expected)


def test_pages_are_merged_as_they_arrive_so_the_last_read_merges_few_runs():
    """A 20,000-name folder arrives in ~200 pages; merging them all after the last one was
    ~0.1 s of the listing's critical path (bench ssh_list_20k). Runs are merged while the next
    page is on the wire: at most log2(pages) + 1 runs are left for the read."""
    rng = random.Random(5)
    names = [f"data_{i}.ckpt" for i in range(20_000)]
    rng.shuffle(names)
    listing = NaturalListing()
    for i in range(0, len(names), 100):
        listing.add([Entry(n, "file") for n in names[i : i + 100]])
    assert len(listing._runs) <= 9  # 200 pages: 2**8 > 200
    assert [e.name for e in listing.entries] == [f"data_{i}.ckpt" for i in range(20_000)]
