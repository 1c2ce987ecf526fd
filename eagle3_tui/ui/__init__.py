"""The Textual front end. Imported only when the TUI starts; never imports torch."""
