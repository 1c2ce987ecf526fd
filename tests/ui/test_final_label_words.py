"""Issue 41: a final state whose format says "post-norm" while its own norms say a residual's size
reads `?` in the b column, and the header must not put a side into words the label does not hold:
it said "final state is before the final norm" for every label that was not "post"."""

from __future__ import annotations

from tests.helpers.tui import screen_text, text_app, wait_until


async def test_a_final_whose_side_is_not_known_is_not_called_before_the_norm(demo, tmp_path):
    path = demo / "infer" / "fault_final_prenorm_s12.ckpt"  # SpecForge's layout, the residual at L inside
    app = text_app(path, None, tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        main = app.main_screen
        await wait_until(pilot, lambda: main.shown is not None, what="the capture shown")
        text = screen_text(app)
        assert "before or after the final norm not known" in text, text
        assert "final state is before the final norm" not in text
        assert "final state is after the final norm" not in text
