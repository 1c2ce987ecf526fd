"""Where the bytes live: local folders and SSH hosts, behind one Source interface."""
